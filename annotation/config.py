"""What a reviewer sees: item kinds, the Label Studio labeling config, and the task data of one item.

One project holds every item of a build, whatever its kind, so the labeling config is built from the kinds the
build contains and everything that differs between items travels in the task data:

- the images, as a list the ``Repeater`` tag turns into a grid of ``Image`` tags titled "Image 1..N", each with
  zoom (1 to MAX_IMAGES images per item, with no empty slots);
- the context, question, options and proposed answer, as escaped HTML;
- the choices for "the correct option" (dynamic ``Choices``): the lettered options of an MCQ, ``yes``/``no`` for a
  yes/no item; an open (VQA) item gets a text box instead.

The correction controls only appear once the reviewer picks the verdict ``fix``.
"""

from __future__ import annotations

import html
import os
from pathlib import Path
from typing import Any, Iterable, Mapping
from urllib.parse import quote

from builders.items import OPTION_LETTERS, Item
from builders.registry import ITEM_KINDS
from builders.review import ISSUE_TAGS, VERDICTS
from builders.semantics.format import answer_format, letter_index
from builders.semantics.prompt import lettered

MCQ, YES_NO, VQA = ITEM_KINDS
KIND_NAMES = {MCQ: "multiple choice", YES_NO: "yes/no", VQA: "open answer"}
KINDS = {"option": MCQ, "yes_no": YES_NO, "open": VQA}
"""The review kind of each answer format (:func:`builders.semantics.format.answer_format`)."""

# control names in the labeling config: pull reads annotations by these names
VERDICT = "verdict"
CORRECT_OPTION = "correct_option"
CORRECT_TEXT = "correct_text"
ISSUES = "issues"
COMMENT = "comment"
OBJECT = "item"  # the HyperText every control points at
RECORD = "record"  # the HyperText of the builder's record, below the verdict

ITEM_ID_FIELD = "mirage_id"
"""The task-data field holding the item id: the key of idempotent push and of pull."""

LOCAL_FILES_PREFIX = "/data/local-files/?d="

MAX_IMAGES = 32
"""Most images one task shows: MIOH asks about up to 10, a Mementos sequence has up to ~25 frames."""


def item_kind(item: Item) -> str:
    """``mcq``, ``yes_no`` or ``vqa`` (open answer): the item's answer format, so a reviewer judges the question
    the model is asked (an MCQ whose answer names no option is an MCQ here, and the reviewer picks its option)."""
    return KINDS[answer_format(item)]


def correction_choices(item: Item) -> dict[str, str]:
    """The values offered as "the correct option", mapped to the answer each one means.

    MCQ: ``"B. dog" -> "B"``; yes/no: ``"yes" -> "yes"``; open answers: empty (they get a text box).
    """
    kind = item_kind(item)
    if kind == MCQ:
        return {shown: OPTION_LETTERS[i] for i, shown in enumerate(lettered(item.options))}
    if kind == YES_NO:
        return {"yes": "yes", "no": "no"}
    return {}


def answer_label(item: Item, answer: str | None = None) -> str:
    """How an answer is shown to reviewers: ``"B. dog"`` for an MCQ letter, the answer itself otherwise."""
    answer = item.answer if answer is None else answer
    index = letter_index(answer, item.options) if item_kind(item) == MCQ else None
    return answer if index is None else lettered(item.options)[index]


def resolve_image(build_dir: Path, image: str) -> Path:
    """The file of an item image: relative paths are relative to the build dir."""
    p = Path(image)
    return (p if p.is_absolute() else Path(build_dir) / p).resolve()


def local_files_url(path: Path, files_root: Path) -> str:
    """The URL under which Label Studio's local-files storage serves ``path`` (relative to the server)."""
    # not resolved: a symbolic link in the serving folder must keep its own path
    rel = Path(os.path.abspath(path)).relative_to(Path(files_root).resolve())
    return LOCAL_FILES_PREFIX + quote(rel.as_posix(), safe="/")


def builder_record(item: Item) -> str:
    """The facts behind the proposed answer, as the builder recorded them, so a reviewer can check them one by one:
    per image its label for the probe and its difficulty (MIOH's hard positives / negatives), and the probe.
    Empty when the provenance records none."""
    prov = item.provenance or {}
    parts = []
    probe = prov.get("probe")
    if probe:
        parts.append("probe: " + (" ".join(map(str, probe)) if isinstance(probe, (list, tuple)) else str(probe)))
    images = prov.get("images")
    if isinstance(images, list) and images and all(isinstance(i, dict) for i in images):
        cells = []
        for k, info in enumerate(images, 1):
            label = info.get("label")
            if label is None:
                continue
            difficulty = info.get("difficulty")
            extra = f", {difficulty}" if difficulty and difficulty != "easy" else ""
            signal = f" ({info['signal']})" if info.get("signal") else ""
            cells.append(f"Image {k}: {label}{extra}{signal}")
        if cells:
            parts.append("; ".join(cells))
    return " | ".join(parts)


OPTION_CELL = {"present": "yes", "absent": "no", "undecidable": "?"}


def option_table(item: Item) -> str:
    """Per option probe and per image, the label and difficulty the builder recorded (MIOH's ``option_labels``), as a
    compact grey table: where the hard negatives are distractors, it shows which image makes which option hard.
    Empty when the provenance records none (options that are not probes, other benchmarks)."""
    rows = (item.provenance or {}).get("option_labels")
    if not isinstance(rows, list) or not rows or not all(isinstance(r, dict) and r.get("images") for r in rows):
        return ""
    e = html.escape
    n = max(len(r["images"]) for r in rows)
    head = "".join(f"<th>Image {k}</th>" for k in range(1, n + 1))
    body = []
    for r in rows:
        cells = []
        for c in r["images"]:
            text = OPTION_CELL.get(c.get("label"), str(c.get("label")))
            hard = c.get("difficulty") not in (None, "easy")
            cells.append(f'<td class="mirage-hard">{e(text)}, hard</td>' if hard else f"<td>{e(text)}</td>")
        body.append(f"<tr><th>{e(str(r.get('option', '')))}</th>{''.join(cells)}</tr>")
    return (f'<table class="mirage-record mirage-option-labels"><caption>Does each option hold in each image '
            f'(yes / no / ? undecidable; hard: hard to see)</caption><tr><th></th>{head}</tr>{"".join(body)}</table>')


def item_html(item: Item, models_answer: str | None = None) -> str:
    """What the verdict is about, kept in view beside the images: context, question, options, proposed answer,
    and for a re-review (``models_answer``) the answer most models gave, right below the proposed one."""
    e = html.escape
    kind = item_kind(item)
    parts = ['<div class="mirage-item">']
    if item.context.strip():
        parts.append(f'<p class="mirage-context"><b>Context shown to the model:</b> {e(item.context)}</p>')
    parts.append(f'<p class="mirage-question"><b>Question:</b> {e(item.question)}</p>')
    if kind == MCQ:
        # explicit letters: Label Studio's CSS removes list markers
        many = " mirage-many" if len(item.options) > 6 else ""  # two columns: the verdict stays in view
        parts.append(f'<div class="mirage-options{many}">')
        parts.extend(f"<div>{e(shown)}</div>" for shown in lettered(item.options))
        parts.append("</div>")
    elif kind == YES_NO:
        parts.append('<p class="mirage-options"><i>Answer: yes or no</i></p>')
    else:
        parts.append('<p class="mirage-options"><i>Open answer</i></p>')
    parts.append(f'<p class="mirage-proposed"><b>Proposed answer:</b> {e(answer_label(item))}</p>')
    if models_answer:
        parts.append(f'<p class="mirage-models" style="background: #fff3e0; padding: 4px 6px;">'
                     f'<b>Most models answered:</b> {e(models_answer)}. This item is '
                     "back because the models' answers suggest the proposed answer may be wrong; judge it from "
                     "the images as usual.</p>")
    parts.append("</div>")
    return "".join(parts)


def record_html(item: Item) -> str:
    """What helps check the proposed answer, below the verdict: the builder's record, per option and image, and
    what ``fix`` asks for."""
    e = html.escape
    kind = item_kind(item)
    parts = ['<div class="mirage-more">']
    record = builder_record(item)
    if record:
        parts.append(f'<p class="mirage-record"><b>What the builder recorded:</b> {e(record)}</p>')
    parts.append(option_table(item))
    hint = {
        MCQ: "If the proposed answer is wrong but the question is sound, choose <i>fix</i> and pick the correct option.",
        YES_NO: "If the proposed answer is wrong but the question is sound, choose <i>fix</i> and pick yes or no.",
        VQA: "If the reference answer is wrong but the question is sound, choose <i>fix</i> and type the correct answer.",
    }[kind]
    parts.append(f'<p class="mirage-hint">{hint}</p>')
    parts.append("</div>")
    return "".join(parts)


def task_data(
    item: Item, build_dir: Path, files_root: Path, links: Mapping[Path, Path] | None = None,
    models_answer: str | None = None,
) -> dict[str, Any]:
    """The Label Studio task data of one item; ``links`` maps an image file to the link that serves it;
    ``models_answer`` (a re-review, :mod:`annotation.recheck`) is shown beside the proposed answer."""
    kind = item_kind(item)
    links = links or {}
    images = []
    for title, p in zip(image_titles(item), item.images):
        path = resolve_image(build_dir, p)
        url = local_files_url(links.get(path, path), files_root)
        size = _image_size(path)
        images.append({
            "url": url,
            "title": title,
            "link": f'<a class="mirage-native" href="{html.escape(url)}" target="_blank" rel="noopener">'
            f'{html.escape(title)} at native size{f" ({size[0]}x{size[1]})" if size else ""}</a>',
        })
    # key order is the Data Manager's column order: what a reviewer scans first comes first
    data = {
        "question": item.question,
        "proposed_answer": answer_label(item),
        "task": item.task,
        "pressure": item.pressure,
        "question_type": item.question_type,
        "kind": KIND_NAMES[kind],
        "n_images": len(item.images),
        "benchmark": item.benchmark,
        ITEM_ID_FIELD: item.id,
        "header": f"{item.benchmark} / {item.task} / {item.question_type} / {KIND_NAMES[kind]} / "
        f"{len(item.images)} image{'s' if len(item.images) != 1 else ''} / item {item.id}",
        "images": images,
        "item_html": item_html(item, models_answer),
        "record_html": record_html(item),
        "choices": [{"value": v} for v in correction_choices(item)],
    }
    if models_answer:
        data["models_answer"] = models_answer
    return data


def image_titles(item: Item) -> list[str]:
    """How each image is named to the reviewer: "Image k"; "Panel k" for a comic's panels (provenance ``policy``
    ``panels``, as ``builders.mementos`` records them, and as the authoring screen named them); "Frame k (t = s)"
    for frames sampled from a video (provenance ``frame_indices`` and ``fps``; "Frame k (frame i)" without the
    rate)."""
    prov = item.provenance or {}
    if prov.get("policy") == "panels":
        return [f"Panel {k}" for k in range(1, len(item.images) + 1)]
    frames = prov.get("frame_indices")
    if isinstance(frames, list) and len(frames) == len(item.images):
        fps = prov.get("fps")
        if isinstance(fps, (int, float)) and fps > 0:
            return [f"Frame {k} (t = {f / fps:.2f} s)" for k, f in enumerate(frames, 1)]
        return [f"Frame {k} (frame {f})" for k, f in enumerate(frames, 1)]
    return [f"Image {k}" for k in range(1, len(item.images) + 1)]


def _image_size(path: Path) -> tuple[int, int] | None:
    try:
        from PIL import Image

        with Image.open(path) as im:
            return im.size
    except (OSError, ValueError):
        return None


DM_HIDDEN_COLUMNS = ("item_html", "record_html", "images", "choices", "header")
"""Task-data fields the Data Manager hides (raw HTML and JSON); question, proposed answer, task, pressure, kind and
item id stay as columns."""

DM_HIDDEN_META = (
    "inner_id", "annotations_results", "annotations_ids", "predictions_score", "predictions_model_versions",
    "predictions_results", "file_upload", "storage_filename", "created_at", "updated_at", "updated_by",
    "avg_lead_time", "draft_exists", "total_predictions",
)
"""Label Studio's own columns that push the data columns off screen and mean nothing for a review."""

HOTKEYS = {"accept": "1", "fix": "2", "reject": "3"}
"""One hotkey scheme for every project: the verdicts on 1-3, the issue tags on q, w, e, r, t, y."""
TAG_HOTKEYS = "qwerty"

# The screen (1280x720 and up): the images on the left, two side by side, each at least 400 px wide; on the right,
# in view while the images scroll, the question, options, proposed answer and the verdict; below them, scrolling on
# their own, the correction, the builder's record, issue tags and comment. Label Studio's side panels (Info,
# History, Regions, Relations) hold nothing for this config and take 320 px: hidden. Each image's toolbar (pan,
# zoom) lies in its title row instead of beside the image. No ">" in the CSS: Label Studio escapes it. The
# Repeater wraps each repetition in two anonymous divs, which "display: contents" takes out of the layout so the
# cells become the grid's children.
_STYLE = """
.lsf-sidepanels { padding-right: 0 !important; padding-left: 0 !important; }
.lsf-sidepanels__wrapper { display: none !important; }
.mirage-layout { display: flex; gap: 14px; align-items: flex-start; }
.mirage-left { flex: 1 1 0; min-width: 0; }
.mirage-right { flex: 0 0 clamp(350px, 29vw, 440px); position: sticky; top: 0; display: flex;
  flex-direction: column; max-height: calc(100vh - 180px); }
.mirage-top { flex: 0 0 auto; }
.mirage-bottom { flex: 1 1 auto; min-height: 60px; overflow-y: auto; border-top: 1px solid #ddd; margin-top: 4px; }
.mirage-grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(400px, 1fr)); gap: 6px; }
.mirage-native { font-size: 12px; }
.mirage-grid div:has(.mirage-cell) { display: contents; }
.mirage-cell { border: 1px solid #ddd; padding: 2px 3px; box-sizing: border-box; position: relative; }
.mirage-cell h4, .mirage-cell h5 { margin: 2px 0 !important; }
.mirage-cell .lsf-object { position: static !important; }
.mirage-cell .lsf-toolbar { position: absolute !important; top: 0 !important; right: 2px !important;
  left: auto !important; margin: 0 !important; width: auto !important; height: auto !important;
  background: transparent !important;
  box-shadow: none !important; transform: scale(0.75); transform-origin: top right; }
.mirage-cell .lsf-toolbar__group { display: flex !important; flex-direction: row !important; padding: 0 !important;
  box-shadow: none !important; background: transparent !important; }
.mirage-item { font-size: 15px; line-height: 1.4; }
.mirage-item p { margin: 0 0 4px 0; }
.mirage-context { white-space: pre-wrap; background: #fff8e1; padding: 4px 6px; }
.mirage-proposed { background: #e8f5e9; padding: 4px 6px; }
.mirage-hint { color: #666; font-size: 13px; }
.mirage-record { color: #444; font-size: 13px; background: #f3f3f3; padding: 4px 6px; }
.mirage-option-labels { border-collapse: collapse; margin: 4px 0; }
.mirage-option-labels caption { text-align: left; font-size: 12px; }
.mirage-option-labels th, .mirage-option-labels td { padding: 0 6px; font-size: 12px; text-align: left; }
.mirage-option-labels td.mirage-hard { font-weight: bold; }
.mirage-options { margin: 2px 0 4px 16px; }
.mirage-many { column-count: 2; column-gap: 12px; }
"""


def labeling_config(kinds: Iterable[str]) -> str:
    """The labeling config for a project holding items of these kinds."""
    kinds = set(kinds)
    choice_kinds = kinds & {MCQ, YES_NO}
    correction = []
    if choice_kinds:
        correction.append(
            '    <Header value="Correct option (multiple-choice and yes/no items)" size="5"/>'
            if VQA in kinds
            else '    <Header value="Correct option" size="5"/>'
        )
        correction.append(
            f'    <Choices name="{CORRECT_OPTION}" toName="{OBJECT}" value="$choices" choice="single-radio"/>'
        )
    if VQA in kinds:
        correction.append('    <Header value="Correct answer (open-answer items)" size="5"/>')
        correction.append(
            f'    <TextArea name="{CORRECT_TEXT}" toName="{OBJECT}" rows="2" editable="true" '
            'showSubmitButton="false" placeholder="The correct answer"/>'
        )
    verdicts = "\n".join(f'    <Choice value="{v}" hotkey="{HOTKEYS[v]}"/>' for v in VERDICTS)
    tags = "\n".join(f'    <Choice value="{t}" hotkey="{k}"/>' for t, k in zip(ISSUE_TAGS, TAG_HOTKEYS))
    return f"""<View>
  <Style>{_STYLE}</Style>
  <Header value="$header" size="6"/>
  <View className="mirage-layout">
  <View className="mirage-left">
  <View className="mirage-grid">
    <Repeater on="$images" indexFlag="{{{{idx}}}}">
      <View className="mirage-cell">
        <Header value="$images[{{{{idx}}}}].title" size="5"/>
        <Image name="image_{{{{idx}}}}" value="$images[{{{{idx}}}}].url" zoom="true" zoomControl="true" maxWidth="100%"/>
        <HyperText name="native_{{{{idx}}}}" value="$images[{{{{idx}}}}].link" inline="true"/>
      </View>
    </Repeater>
  </View>
  </View>
  <View className="mirage-right">
  <View className="mirage-top">
  <HyperText name="{OBJECT}" value="$item_html" inline="true"/>
  <Header value="Verdict (keys 1 2 3)" size="5"/>
  <Choices name="{VERDICT}" toName="{OBJECT}" choice="single-radio" showInline="true" required="true" requiredMessage="Choose accept, fix or reject">
{verdicts}
  </Choices>
  </View>
  <View className="mirage-bottom">
  <View visibleWhen="choice-selected" whenTagName="{VERDICT}" whenChoiceValue="fix">
{chr(10).join(correction)}
  </View>
  <HyperText name="{RECORD}" value="$record_html" inline="true"/>
  <Header value="Issues (any that apply; keys q w e r t y)" size="5"/>
  <Choices name="{ISSUES}" toName="{OBJECT}" choice="multiple" showInline="true">
{tags}
  </Choices>
  <Header value="Comment" size="5"/>
  <TextArea name="{COMMENT}" toName="{OBJECT}" rows="2" editable="true" showSubmitButton="false" placeholder="Optional: what is wrong, or why"/>
  </View>
  </View>
  </View>
</View>
"""


def config_interface(config: str) -> Any:
    """The labeling config parsed and validated by ``label_studio_sdk.label_interface.LabelInterface`` (the SDK's
    schema, unique names and ``toName`` checks, as the server applies them); a broken config is an error here,
    before any project is touched."""
    from label_studio_sdk.label_interface import LabelInterface

    try:
        interface = LabelInterface(config)
        interface.validate()
    except Exception as exc:  # the SDK raises its own validation errors and lxml's parse errors
        from annotation.errors import AnnotationError

        raise AnnotationError(f"the labeling config does not validate: {str(exc).splitlines()[0]}") from None
    return interface


def annotation_errors(interface: Any, result: list) -> list[str]:
    """What ``LabelInterface`` finds wrong in an annotation's result: unknown controls, values outside a control's
    static labels, wrong value types (dynamic choices, read from each task, are Mirage's own check)."""
    return list(interface.validate_prediction({"result": list(result or [])}, return_errors=True) or [])


INSTRUCTIONS = """<p><b>Mirage review.</b> Judge each question on its own: do not discuss items with other reviewers.</p>
<ul>
<li><b>accept</b> (key 1): the question is clear, can only be answered by looking at the images, and the proposed
answer is correct.</li>
<li><b>fix</b> (key 2): the question is sound but the proposed answer is wrong; pick the correct option or type the
correct answer.</li>
<li><b>reject</b> (key 3): the question cannot be kept: two possible referents, two options that mean nearly the
same, objects too many to count for sure, answerable without the images, about a tiny or background detail,
wording that changes the meaning, or unsuitable images.</li>
</ul>
<p>The context (yellow) may mislead on purpose: judge against the images. Small or occluded objects may be meant to
be hard: zoom in (the buttons above each image; the link under it opens it at native size). Tag every issue you
see (keys q w e r t y) and say in the comment what is wrong and in which image. When in doubt between accept and
reject, reject and say why. Skip only an item you cannot judge at all (a broken image): it comes back to you at the
end, and an item you skip for good counts as "unsure".</p>
"""
