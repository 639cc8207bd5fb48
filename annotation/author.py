"""Authoring: people write what a builder cannot derive, in Label Studio, through one flow for every benchmark.

Each benchmark declares its authoring flows as hooks in its own package (the spec's ``authoring``,
:class:`builders.authoring.AuthoringHook`: Mementos' descriptions of robot episodes and comics, MM-SAP's
questions, the predictive benchmark's pattern entries). This module runs any of them:

- ``author push``: the hook's subjects (what is not written yet) become tasks, idempotent by key, each showing its
  images in order with their titles and the hook's form (text boxes, choices) under a guide; the images are
  served through a folder of links of the project's own, as reviews are;
- ``author pull``: each task's latest submitted annotation goes back to the hook, which validates it with the
  builder's own reader and says what to write; the files are written atomically, never over a file the hook
  keeps (a description beside a sequence), each with the sidecar ``<file>.authors.json``
  (:mod:`builders.authorship`): the builders copy it into the item's ``provenance.author``, and ``pull`` of the
  build's review does not count the author's own vote on it (:func:`annotation.resolve.resolve`).

What was authored then goes through the ordinary three-reviewer validation (build, then ``annotation push`` /
``pull`` the build like any other).
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from annotation.client import LabelStudioClient
from annotation.config import DM_HIDDEN_META, config_interface, local_files_url
from annotation.errors import AnnotationError
from annotation.pull import write_shared
from annotation.push import STORAGE_TITLE
from annotation.resolve import reviewer_name
from annotation.serving import check_files_root, link_images, serving_folder
from builders.authoring import Answer, AuthoringHook, Field, Form, Inputs, Output, Subject
from builders.authorship import authors_json, authors_sidecar
from builders.registry import load, specs

AUTHOR_ID_FIELD = "mirage_author_id"
SUBJECT = "subject"
"""The HyperText (the guide) every field of an authoring form points at."""

AUTHORING_STYLE = """
.lsf-sidepanels { padding-right: 0 !important; padding-left: 0 !important; }
.lsf-sidepanels__wrapper { display: none !important; }
.mirage-grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(280px, 1fr)); gap: 8px; }
.mirage-grid div:has(.mirage-cell) { display: contents; }
.mirage-cell { border: 1px solid #ddd; padding: 4px; }
"""
"""What every authoring screen shares with the review screen: no empty side panels (see ``annotation.config``)."""

AUTHORING_HIDDEN = ("guide", "images", "image", "header", "files", "target")
"""Task-data fields an authoring project's Data Manager hides (HTML, JSON, paths): its key stays as a column."""


def hooks() -> dict[str, AuthoringHook]:
    """Every authoring flow the known benchmarks declare, by kind (a kind declared twice is an error)."""
    out: dict[str, AuthoringHook] = {}
    for spec in specs():
        for path in spec.authoring:
            hook = load(path)
            if hook.kind in out:
                raise AnnotationError(f"authoring kind {hook.kind!r} is declared by both {out[hook.kind].benchmark} "
                                      f"and {spec.name}")
            out[hook.kind] = hook
    return out


def hook(kind: str) -> AuthoringHook:
    """The authoring flow ``kind``; a one-line error naming the known ones otherwise."""
    known = hooks()
    if kind not in known:
        raise AnnotationError(f"no authoring flow {kind!r}; known: {', '.join(sorted(known))}")
    return known[kind]


def _attr(value: str) -> str:
    return html.escape(value, quote=True)


def _field_xml(f: Field) -> str:
    head = f'  <Header value="{_attr(f.label)}" size="5"/>\n'
    required = f' required="{str(f.required).lower()}"'
    if f.kind == "choice":
        choices = "\n".join(f'    <Choice value="{_attr(c)}"/>' for c in f.choices)
        return (f'{head}  <Choices name="{f.name}" toName="{SUBJECT}" choice="single-radio" showInline="true"'
                f'{required}>\n{choices}\n  </Choices>\n')
    extra = (f' requiredMessage="{_attr(f.required_message)}"' if f.required_message else "") + \
        (f' placeholder="{_attr(f.placeholder)}"' if f.placeholder else "")
    return (f'{head}  <TextArea name="{f.name}" toName="{SUBJECT}" rows="{f.rows}" editable="true" '
            f'showSubmitButton="false"{required}{extra}/>\n')


def form_config(form: Form) -> str:
    """The labeling config of an authoring project: the subject's images in a grid, titled, then the guide and
    the form's fields (validated by the SDK's LabelInterface before use)."""
    return f"""<View>
  <Style>{AUTHORING_STYLE}</Style>
  <Header value="$header" size="6"/>
  <View className="mirage-grid">
    <Repeater on="$images" indexFlag="{{{{idx}}}}">
      <View className="mirage-cell">
        <Header value="$images[{{{{idx}}}}].title" size="5"/>
        <Image name="image_{{{{idx}}}}" value="$images[{{{{idx}}}}].url" zoom="true" zoomControl="true" maxWidth="100%"/>
      </View>
    </Repeater>
  </View>
  <HyperText name="{SUBJECT}" value="$guide" inline="true"/>
{"".join(_field_xml(f) for f in form.fields)}</View>
"""


@dataclass(frozen=True)
class AuthoringProject:
    """An authoring project ready for new tasks: its id, where each image is served from, and the
    ``AUTHOR_ID_FIELD`` values its tasks already have (pushes are idempotent by that key)."""

    id: int
    root: Path
    links: dict[Path, Path]
    known: set[str]

    def url(self, image: Path) -> str:
        return local_files_url(self.links[Path(image).resolve()], self.root)


def open_authoring_project(
    client: LabelStudioClient, project: str, config: str, images: Sequence[Path], files_root: Path, **settings: Any,
) -> AuthoringProject:
    """Find or create ``project`` with ``config`` (validated first), serve exactly ``images`` from a folder of
    its own under the files root and connect only that folder."""
    root = check_files_root(files_root)
    folder = serving_folder(Path("/authoring") / re.sub(r"\W+", "-", project), root)
    links = link_images(images, folder)
    config_interface(config)
    proj = client.find_project(project)
    if proj is None:
        proj = client.create_project({"title": project, "label_config": config, "maximum_annotations": 1,
                                      "show_skip_button": True, "skip_queue": "REQUEUE_FOR_ME", **settings})
        client.create_view(int(proj["id"]), "Mirage authoring", AUTHORING_HIDDEN, DM_HIDDEN_META)
    elif str(proj.get("label_config") or "").strip() != config.strip():
        proj = client.update_project(int(proj["id"]), {"label_config": config})
    pid = int(proj["id"])
    if str(folder) not in {s.get("path") for s in client.local_storages(pid)}:
        client.add_local_storage(pid, str(folder), STORAGE_TITLE)
    known = {(t.get("data") or {}).get(AUTHOR_ID_FIELD) for t in client.iter_tasks(pid)}
    return AuthoringProject(pid, root, links, known)


def push(client: LabelStudioClient, flow: AuthoringHook, inputs: Inputs, project: str, files_root: Path,
         subjects: Sequence[Subject] | None = None) -> tuple[int, int]:
    """Create or reuse ``project`` and import the flow's subjects it lacks; ``(imported, already there)``.
    ``subjects``: those to push (default all the flow finds in ``inputs``)."""
    subjects = flow.subjects(inputs) if subjects is None else subjects
    if not subjects:
        raise AnnotationError(f"author push --kind {flow.kind}: nothing to write about (every subject is written)")
    form = flow.form(inputs)
    guide = f"<p>{html.escape(form.guide)}</p>"
    ap = open_authoring_project(client, project, form_config(form), [f for s in subjects for f in s.images],
                                files_root, expert_instruction=guide, show_instruction=False)
    tasks = [{"data": {
        **s.data, AUTHOR_ID_FIELD: s.key, "header": s.header, "guide": guide,
        "images": [{"url": ap.url(f), "title": t} for f, t in zip(s.images, s.titles)],
    }} for s in subjects if s.key not in ap.known]
    if tasks:
        client.import_tasks(ap.id, tasks)
    return len(tasks), len(subjects) - len(tasks)


def latest_answer(task: dict[str, Any]) -> tuple[dict[str, Any], dict[str, list[str]]] | None:
    """The task's latest submitted annotation and its texts and choices by control name; None when nobody has
    written it yet (a later submission replaces an earlier one: the author corrected themselves)."""
    submitted = [a for a in task.get("annotations") or [] if not a.get("was_cancelled")]
    if not submitted:
        return None
    ann = max(submitted, key=lambda a: int(a["id"]))
    values: dict[str, list[str]] = {}
    for r in ann.get("result") or []:
        v = r.get("value") or {}
        values.setdefault(r.get("from_name"), []).extend(v.get("text") or v.get("choices") or [])
    return ann, values


def answers(client: LabelStudioClient, flow: AuthoringHook, project: str) -> list[Answer]:
    """The latest submitted answer of every task of ``project``, in task order, with its author's e-mail."""
    proj = client.find_project(project)
    if proj is None:
        raise AnnotationError(f"no project {project!r} on {client.url}: run `annotation author push --kind "
                              f"{flow.kind}` first")
    tasks = sorted(json.loads(client.export_raw(int(proj["id"]))), key=lambda t: int(t["id"]))
    users = {int(u["id"]): u.get("email") or f"user {u['id']}" for u in client.users()}
    out = []
    for task in tasks:
        data = task.get("data") or {}
        if not data.get(AUTHOR_ID_FIELD) or (latest := latest_answer(task)) is None:
            continue
        ann, values = latest
        out.append(Answer(str(data[AUTHOR_ID_FIELD]), int(task["id"]), data, values,
                          reviewer_name(ann.get("completed_by"), users)))
    return out


def write_outputs(outputs: Sequence[Output]) -> dict[str, list[str]]:
    """Write each output and its authors' sidecar; ``{written, unchanged, problems}``. A kept file that exists is
    left alone: the same text is unchanged (its sidecar written if missing), another text a problem."""
    report: dict[str, list[str]] = {"written": [], "unchanged": [], "problems": []}
    for out in outputs:
        sidecar = authors_sidecar(out.path)
        if out.keep_existing and out.path.exists():
            if out.path.read_bytes() != out.body:
                report["problems"].append(f"{out.path} exists with another text; left alone (delete it to replace)")
                continue
            report["unchanged"].append(str(out.path))
            if not sidecar.exists():
                write_shared(sidecar, authors_json(dict(out.authors)))
            continue
        write_shared(out.path, out.body)
        write_shared(sidecar, authors_json(dict(out.authors)))  # who wrote each record: kept out of its review
        report["written"].extend(out.written)
    return report


def pull(client: LabelStudioClient, flow: AuthoringHook, inputs: Inputs, project: str,
         log: Callable[[str], None] = print) -> dict[str, list[str]]:
    """Write what people submitted where the builder reads it; ``{written, unchanged, problems}`` (each problem
    also logged, one line)."""
    outputs, problems = flow.outputs(answers(client, flow, project), inputs)
    report = write_outputs(outputs)
    report["problems"] = problems + report["problems"]
    for line in report["problems"]:
        log(line)
    return report
