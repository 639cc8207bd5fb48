"""Authoring: people write the reference descriptions of sequences a builder cannot describe by itself.

Mementos' robot and comic sequences need a description written by a person (the paper's descriptions were), and
``builders.mementos`` skips a sequence without one ("no description (write description.txt beside it)"). This
module turns that dead end into a Label Studio round:

- ``author push``: every robot episode or comic without a description (read by the same readers the builder uses,
  ``sources.robot.read_robot_episodes`` and ``sources.comics.read_comics``) becomes a task showing its frames, as
  the builder will sample them (the Mementos policy of the source; every panel of a comic), titled
  "Frame k (t = s)", with a required text box; images are served through the same folder of links as reviews;
- ``author pull``: each submitted description is validated (one paragraph, at least ``min_words`` words) and
  written to exactly the file the reader looks for: ``<folder>/description.txt`` beside a frame folder or comic,
  ``<video>.txt`` beside a video file (``sources.video.description_beside``). An existing file is never
  overwritten; a different text for it is reported.

Pull also records who wrote each text in the sidecar ``<file>.authors.json`` (:mod:`builders.authorship`); the
builders copy it into the item's ``provenance.author``. What was authored then goes through the ordinary
three-reviewer validation (build, then ``annotation push``/``pull`` the build like any other), and ``pull`` does not
count the author's own vote on it (:func:`annotation.resolve.resolve`).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from annotation.client import LabelStudioClient
from annotation.config import DM_HIDDEN_META, config_interface, local_files_url
from annotation.errors import AnnotationError
from annotation.push import STORAGE_TITLE
from annotation.serving import check_files_root, link_images, serving_folder

AUTHOR_ID_FIELD = "mirage_author_id"
DESCRIPTION = "description"
OBJECT = "sequence"
MIN_WORDS = 8
"""A description shorter than this cannot name the objects and the behaviours Mementos extracts keywords from."""

GUIDE = (
    "Describe what happens across the frames, in order, in one paragraph: the objects, what each does and how "
    "things change. Only what the frames show: no guesses about what came before or after."
)


@dataclass(frozen=True)
class SequenceToDescribe:
    """One sequence to describe: its key, the file the reader will look for, and the frames to show."""

    key: str
    source: str
    target: Path
    frames: tuple[Path, ...]
    titles: tuple[str, ...]


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


def description_rule(min_words: int = MIN_WORDS) -> str:
    """What ``author pull`` accepts, said where the person writes (a shorter text is not used)."""
    return f"One paragraph, at least {min_words} words; a shorter text is not used."


def description_config(min_words: int = MIN_WORDS) -> str:
    """The labeling config of a description project (validated by the SDK's LabelInterface before use)."""
    return f"""<View>
  <Style>{AUTHORING_STYLE}</Style>
  <Header value="$header" size="6"/>
  <View className="mirage-grid">
    <Repeater on="$images" indexFlag="{{{{idx}}}}">
      <View className="mirage-cell">
        <Header value="$images[{{{{idx}}}}].title" size="5"/>
        <Image name="frame_{{{{idx}}}}" value="$images[{{{{idx}}}}].url" zoom="true" zoomControl="true" maxWidth="100%"/>
      </View>
    </Repeater>
  </View>
  <HyperText name="{OBJECT}" value="$guide" inline="true"/>
  <Header value="Description ({description_rule(min_words)})" size="5"/>
  <TextArea name="{DESCRIPTION}" toName="{OBJECT}" rows="5" editable="true" showSubmitButton="false" required="true"
            requiredMessage="Write the description: {description_rule(min_words)}"
            placeholder="What happens across the frames, in order"/>
</View>
"""


def _frames_of(record: Any, source: str, cache_dir: Path | None) -> tuple[tuple[Path, ...], tuple[str, ...]]:
    from sources.video import sample_video

    if source == "comics":
        panels = tuple(Path(p) for p in record.meta["panels"])
        return panels, tuple(f"Panel {k}" for k in range(1, len(panels) + 1))
    sampled = sample_video(record, "robotics", cache_dir, on_error="fail")
    fps = sampled.fps
    titles = tuple(
        f"Frame {k} (t = {i / fps:.2f} s)" if fps else f"Frame {k} (frame {i})"
        for k, i in enumerate(sampled.indices, 1)
    )
    return tuple(Path(p) for p in sampled.frames), titles


def _description_target(rec: Any) -> Path:
    """The file the reader looks for: ``<folder>/description.txt`` beside frames or panels, ``<video>.txt``."""
    from sources.video import DESCRIPTION_FILE

    path = Path(rec.file)
    return (path / DESCRIPTION_FILE if path.is_dir() else path.with_suffix(".txt")).resolve()


def _sequence_records(robot: Path | None, comics: Path | None) -> list[tuple[str, Any]]:
    """``(source, record)`` of every robot episode and comic, read by the readers the builder uses."""
    from sources.comics import read_comics
    from sources.robot import read_robot_episodes

    out = []
    for source, root, reader in (("robot", robot, read_robot_episodes), ("comics", comics, read_comics)):
        if root is not None:
            out.extend((source, rec) for rec in reader(root))
    return out


def description_targets(robot: Path | None = None, comics: Path | None = None) -> dict[str, Path]:
    """``{key: file}`` for every sequence: where ``author pull`` writes a description. Tasks carry only the key
    (every member of the room can read task data; no path of the maintainer's machine is shown)."""
    return {f"{source}/{rec.id}": _description_target(rec) for source, rec in _sequence_records(robot, comics)}


def sequences_to_describe(
    robot: Path | None = None, comics: Path | None = None, cache_dir: Path | None = None
) -> list[SequenceToDescribe]:
    """The robot episodes and comics that have no description yet, with the frames the builder would show."""
    out: list[SequenceToDescribe] = []
    for source, rec in _sequence_records(robot, comics):
        if rec.meta.get("description"):
            continue
        frames, titles = _frames_of(rec, source, cache_dir)
        out.append(SequenceToDescribe(f"{source}/{rec.id}", source, _description_target(rec), frames, titles))
    return out


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
    client: LabelStudioClient, project: str, config: str, images: Sequence[Path], files_root: Path,
    storage_title: str, **settings: Any,
) -> AuthoringProject:
    """Find or create ``project`` with ``config`` (validated first), serve exactly ``images`` from a folder of
    its own under the files root and connect only that folder: the part every authoring push shares."""
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
        client.add_local_storage(pid, str(folder), storage_title)
    known = {(t.get("data") or {}).get(AUTHOR_ID_FIELD) for t in client.iter_tasks(pid)}
    return AuthoringProject(pid, root, links, known)


def push_descriptions(
    client: LabelStudioClient, sequences: Sequence[SequenceToDescribe], project: str, files_root: Path,
    min_words: int = MIN_WORDS,
) -> tuple[int, int]:
    """Create or reuse the description project and import the sequences it lacks; ``(imported, already there)``."""
    if not sequences:
        raise AnnotationError("every sequence already has a description: nothing to author")
    guide = f"<p>{html.escape(GUIDE)} {html.escape(description_rule(min_words))}</p>"
    ap = open_authoring_project(
        client, project, description_config(min_words), [f for s in sequences for f in s.frames], files_root,
        "Mirage frames (serving only; do not sync)",
        expert_instruction=guide, show_instruction=False,
    )
    todo = [s for s in sequences if s.key not in ap.known]
    tasks = [{"data": {
        AUTHOR_ID_FIELD: s.key,
        "header": f"{s.source} / {s.key} / {len(s.frames)} {'panels' if s.source == 'comics' else 'frames'}: "
        "write the description",
        "guide": guide,
        "images": [{"url": ap.url(f), "title": t} for f, t in zip(s.frames, s.titles)],
    }} for s in todo]
    if tasks:
        client.import_tasks(ap.id, tasks)
    return len(tasks), len(sequences) - len(tasks)


def validate_description(text: str, min_words: int = MIN_WORDS) -> str | None:
    """Why a description cannot be used, or ``None``: empty, shorter than ``min_words`` words, several paragraphs."""
    if not text.strip():
        return "empty"
    if "\n\n" in text.strip():
        return "several paragraphs (write one)"
    words = len(re.findall(r"\w+", text))
    if words < min_words:
        return f"{words} word(s), fewer than {min_words}"
    return None


def exported_tasks(client: LabelStudioClient, project: str, push_command: str) -> tuple[list[dict], dict[int, str]]:
    """``(tasks by id, user e-mails by id)`` of an authoring project's export: what every authoring pull reads."""
    import json

    proj = client.find_project(project)
    if proj is None:
        raise AnnotationError(f"no project {project!r} on {client.url}: run `{push_command}` first")
    tasks = json.loads(client.export_raw(int(proj["id"])))
    users = {int(u["id"]): u.get("email") or f"user {u['id']}" for u in client.users()}
    return sorted(tasks, key=lambda t: int(t["id"])), users


def pull_descriptions(
    client: LabelStudioClient,
    project: str,
    *,
    targets: Mapping[str, Path] | None = None,
    min_words: int = MIN_WORDS,
    log: Callable[[str], None] = print,
) -> dict[str, list[str]]:
    """Write each submitted, valid description where the reader looks for it; ``{written, unchanged, problems}``.

    ``targets``: :func:`description_targets` of the folders pushed (a task pushed by an older Mirage carries its
    file in ``target`` instead)."""
    from annotation.pull import write_shared
    from annotation.resolve import reviewer_name
    from builders.authorship import authors_json, authors_sidecar

    tasks, users = exported_tasks(client, project, "annotation author push")
    report: dict[str, list[str]] = {"written": [], "unchanged": [], "problems": []}
    for task in tasks:
        data = task.get("data") or {}
        key = data.get(AUTHOR_ID_FIELD)
        target = (targets or {}).get(key) or data.get("target")
        if not key or (latest := latest_answer(task)) is None:
            continue
        if not target:
            report["problems"].append(f"{key} (task {task['id']}): no such robot episode or comic in the folders "
                                      "given (pass the --robot / --comics of author push); not written")
            continue
        ann, values = latest
        text = " ".join(str(t) for t in values.get(DESCRIPTION, [])).strip()
        who = reviewer_name(ann.get("completed_by"), users)
        problem = validate_description(text, min_words)
        if problem:
            report["problems"].append(f"{key} (task {task['id']}, by {who}): description {problem}; not written")
            continue
        path = Path(target)
        body = text + "\n"
        if path.exists():
            if path.read_text(encoding="utf-8") == body:
                report["unchanged"].append(str(path))
                if not authors_sidecar(path).exists():
                    write_shared(authors_sidecar(path), authors_json({path.name: who}))
            else:
                report["problems"].append(f"{key}: {path} exists with another text; left alone (delete it to replace)")
            continue
        write_shared(path, body.encode("utf-8"))
        write_shared(authors_sidecar(path), authors_json({path.name: who}))  # its author stays out of its review
        report["written"].append(str(path))
    for line in report["problems"]:
        log(line)
    return report



# ------------------------------------------------------------------------------------------- MM-SAP questions
QUESTION, ANSWER, SUBSET, TYPE, DISTRACTORS = "question", "answer", "subset", "type", "distractors"
IMAGE_OBJECT = "image"


def question_types() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(know types, basic types)`` exactly as ``builders.mmsap`` validates an authored record's ``type``."""
    from builders.mmsap.questions import DEMO_BASIC_TYPES, KNOW_DOMAINS
    from builders.mmsap.vqa import type_map

    return tuple(KNOW_DOMAINS), tuple(dict.fromkeys((*type_map().names, *DEMO_BASIC_TYPES)))


def question_config() -> str:
    """One image; the person writes a question, its answer, picks subset and type, and may give distractors."""
    know, basic = question_types()
    types = "\n".join(f'    <Choice value="{t}"/>' for t in (*know, *basic))
    return f"""<View>
  <Style>{AUTHORING_STYLE}</Style>
  <Header value="$header" size="6"/>
  <Image name="{IMAGE_OBJECT}" value="$image" zoom="true" zoomControl="true" maxWidth="100%"/>
  <Header value="Question (answerable from this image; for know: needs world knowledge)" size="5"/>
  <TextArea name="{QUESTION}" toName="{IMAGE_OBJECT}" rows="2" editable="true" showSubmitButton="false" required="true"/>
  <Header value="Answer (short)" size="5"/>
  <TextArea name="{ANSWER}" toName="{IMAGE_OBJECT}" rows="1" editable="true" showSubmitButton="false" required="true"/>
  <Header value="Subset" size="5"/>
  <Choices name="{SUBSET}" toName="{IMAGE_OBJECT}" choice="single-radio" showInline="true" required="true">
    <Choice value="know"/>
    <Choice value="basic"/>
  </Choices>
  <Header value="Type (know: {', '.join(know)}; basic: {', '.join(basic)})" size="5"/>
  <Choices name="{TYPE}" toName="{IMAGE_OBJECT}" choice="single-radio" showInline="true" required="true">
{types}
  </Choices>
  <Header value="Wrong options (up to 3, one per line; optional)" size="5"/>
  <TextArea name="{DISTRACTORS}" toName="{IMAGE_OBJECT}" rows="3" editable="true" showSubmitButton="false"/>
</View>
"""


def push_question_images(client: LabelStudioClient, images: Sequence[Path], project: str, files_root: Path) -> int:
    """One authoring task per image (idempotent by file name); returns how many were imported."""
    if not images:
        raise AnnotationError("no images to write questions about")
    ap = open_authoring_project(client, project, question_config(), images, files_root,
                                STORAGE_TITLE)
    tasks = [{"data": {AUTHOR_ID_FIELD: Path(p).name, "header": f"write a question about {Path(p).name}",
                       "image": ap.url(p)}}
             for p in images if Path(p).name not in ap.known]
    if tasks:
        client.import_tasks(ap.id, tasks)
    return len(tasks)


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


def pull_questions(client: LabelStudioClient, project: str, out: Path) -> dict[str, list[str]]:
    """Write the submitted questions as the authored-questions JSONL ``builders.mmsap --authored`` reads, each record
    validated by the builder's own reader (``builders.mmsap.authored.read_authored``); invalid ones are reported and
    left out. ``out`` is written whole (atomically), sorted by image and question."""
    import json
    import tempfile

    from annotation.pull import write_shared
    from annotation.resolve import reviewer_name
    from builders.authorship import authors_json, authors_sidecar, question_key
    from builders.mmsap.answers import answer_table
    from builders.mmsap.authored import read_authored
    from builders.mmsap.layout import refusal_wording
    from sources.errors import SourceError

    tasks, users = exported_tasks(client, project, "annotation author push --kind questions")
    know, basic = question_types()
    table, refusal = answer_table(), refusal_wording()
    records, problems = [], []
    authors: dict[str, str] = {}
    for task in tasks:
        image = (task.get("data") or {}).get(AUTHOR_ID_FIELD)
        if not image or (latest := latest_answer(task)) is None:
            continue
        ann, values = latest
        record = {
            "image": image,
            "question": " ".join(" ".join(values.get(QUESTION, [])).split()),
            "answer": " ".join(" ".join(values.get(ANSWER, [])).split()),
            "subset": (values.get(SUBSET) or [""])[0],
            "type": (values.get(TYPE) or [""])[0],
            "distractors": [d.strip() for t in values.get(DISTRACTORS, []) for d in str(t).splitlines() if d.strip()],
        }
        who = reviewer_name(ann.get("completed_by"), users)
        with tempfile.TemporaryDirectory() as tmp:  # the builder's reader is the validator
            one = Path(tmp) / "one.jsonl"
            one.write_text(json.dumps(record) + "\n", encoding="utf-8")
            try:
                read_authored(one, basic, refusal, table)
            except SourceError as exc:
                problems.append(f"{image} (task {task['id']}, by {who}): {exc.problem}; left out")
                continue
        records.append(record)
        authors[question_key(record["image"], record["question"])] = who
    records.sort(key=lambda r: (r["image"], r["question"]))
    write_shared(Path(out), "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records).encode())
    write_shared(authors_sidecar(out), authors_json(authors))  # who wrote each record: kept out of its review
    return {"written": [f"{r['image']}: {r['question']}" for r in records], "problems": problems}


# ----------------------------------------------------------------------------------- predictive pattern entries
PATTERN, PRED, DIMENSION = "pattern", "pred", "dimension"
PATTERN_OBJECT = "sequence"


def pattern_config() -> str:
    """3 to 5 images in order; the person writes the pattern, the prediction, and picks the dimension."""
    from builders.predictive.patterns.base import DIMENSIONS

    dims = "\n".join(f'    <Choice value="{d}"/>' for d in DIMENSIONS)
    return f"""<View>
  <Style>{AUTHORING_STYLE}</Style>
  <Header value="$header" size="6"/>
  <View className="mirage-grid">
    <Repeater on="$images" indexFlag="{{{{idx}}}}">
      <View className="mirage-cell">
        <Header value="$images[{{{{idx}}}}].title" size="5"/>
        <Image name="img_{{{{idx}}}}" value="$images[{{{{idx}}}}].url" zoom="true" maxWidth="100%"/>
      </View>
    </Repeater>
  </View>
  <HyperText name="{PATTERN_OBJECT}" value="$guide" inline="true"/>
  <Header value="Pattern: what changes from image to image" size="5"/>
  <TextArea name="{PATTERN}" toName="{PATTERN_OBJECT}" rows="3" editable="true" showSubmitButton="false" required="true"/>
  <Header value="Prediction: what the next image will show" size="5"/>
  <TextArea name="{PRED}" toName="{PATTERN_OBJECT}" rows="2" editable="true" showSubmitButton="false" required="true"/>
  <Header value="Dimension" size="5"/>
  <Choices name="{DIMENSION}" toName="{PATTERN_OBJECT}" choice="single-radio" showInline="true">
{dims}
  </Choices>
</View>
"""


def pattern_sequences(root: Path) -> list[tuple[str, tuple[Path, ...]]]:
    """``(id, images in natural order)`` for each sub-folder of ``root`` holding 3 to 5 images."""
    from builders.predictive.authored import MAX_IMAGES, MIN_IMAGES
    from sources.video import frame_images, natural_key

    out = []
    for folder in sorted((p for p in Path(root).iterdir() if p.is_dir()), key=lambda p: natural_key(p.name)):
        frames = tuple(Path(f) for f in frame_images(folder))
        if MIN_IMAGES <= len(frames) <= MAX_IMAGES:
            out.append((folder.name, frames))
    return out


def push_patterns(client: LabelStudioClient, root: Path, project: str, files_root: Path) -> int:
    """One task per sequence folder of ``root`` (idempotent by folder name); returns how many were imported."""
    seqs = pattern_sequences(root)
    if not seqs:
        raise AnnotationError(f"{root}: no sub-folder with 3 to 5 images")
    ap = open_authoring_project(client, project, pattern_config(), [f for _, frames in seqs for f in frames],
                                files_root, STORAGE_TITLE)
    guide = ("<p>Write the rule the images follow (the pattern) and what the next image will show (the "
             "prediction), as in the predictive-reasoning paper's authored entries.</p>")
    root = Path(root).resolve()
    tasks = [{"data": {
        AUTHOR_ID_FIELD: key, "files": [f.resolve().relative_to(root).as_posix() for f in frames], "guide": guide,
        "header": f"{key}: {len(frames)} images in order",
        "images": [{"url": ap.url(f), "title": f"Image {k}"} for k, f in enumerate(frames, 1)],
    }} for key, frames in seqs if key not in ap.known]
    if tasks:
        client.import_tasks(ap.id, tasks)
    return len(tasks)


def pull_patterns(
    client: LabelStudioClient, project: str, out: Path, images: Path | None = None
) -> dict[str, list[str]]:
    """Write the submitted entries as the JSONL ``builders.predictive --authored`` reads (image paths relative to
    ``out`` where possible), each validated by ``builders.predictive.authored.read_authored``; invalid ones are
    listed and left out. Tasks name their images relative to the folder pushed (``images``, the ``--images`` of
    ``author push``; by default the folder of ``out``)."""
    import json
    import os
    import tempfile

    from annotation.pull import write_shared
    from annotation.resolve import reviewer_name
    from builders.authorship import authors_json, authors_sidecar
    from builders.predictive.authored import read_authored
    from sources.errors import SourceError

    tasks, users = exported_tasks(client, project, "annotation author push --kind patterns")
    out = Path(out).resolve()
    root = Path(images).resolve() if images is not None else out.parent
    entries, problems = [], []
    authors: dict[str, str] = {}
    for task in tasks:
        data = task.get("data") or {}
        if not data.get(AUTHOR_ID_FIELD) or (latest := latest_answer(task)) is None:
            continue
        ann, values = latest
        entry = {
            "id": data[AUTHOR_ID_FIELD],
            "images": [os.path.relpath(root / f, out.parent) for f in data.get("files") or []],
            "pattern": " ".join(" ".join(values.get(PATTERN, [])).split()),
            "pred": " ".join(" ".join(values.get(PRED, [])).split()),
        }
        if values.get(DIMENSION):
            entry["dimension"] = values[DIMENSION][0]
        who = reviewer_name(ann.get("completed_by"), users)
        with tempfile.NamedTemporaryFile("w", suffix=".jsonl", dir=out.parent, delete=False) as fh:
            fh.write(json.dumps(entry) + "\n")
        try:
            read_authored(fh.name)
        except SourceError as exc:
            problems.append(f"{entry['id']} (task {task['id']}, by {who}): {exc.problem}; left out")
            continue
        finally:
            os.unlink(fh.name)
        entries.append(entry)
        authors[entry["id"]] = who
    entries.sort(key=lambda e: e["id"])
    write_shared(out, "".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in entries).encode())
    write_shared(authors_sidecar(out), authors_json(authors))  # who wrote each entry: kept out of its review
    return {"written": [e["id"] for e in entries], "problems": problems}
