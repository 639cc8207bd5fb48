"""POPE's questions as Mirage items: benchmark ``pope``, task ``existence``, question type ``yes_no``, pressure the
setting (``random`` / ``popular`` / ``adversarial`` from the file name, POPEv2's ``normal`` / ``counterfactual``,
``unknown`` otherwise; :mod:`sources.pope`).

POPE asks three "yes" and three "no" questions per image and setting, so the import promises the lint a balanced
yes/no group per (image, setting): ``{"yes_no_pairs": ["setting"]}``. POPEv2 asks one question of an image and one
of its edited copy, with answers that need not balance, and promises nothing (:func:`promises`).

Image names. An item's id hashes its images' file *names* (:func:`builders.items.item_id`), and the lint compares
names too; POPEv2's edited image has the file name of its original (``images/000000000139.jpg`` beside
``normal_images/000000000139.jpg``), which gave 1,000 questions 500 ids, made every pair a "contradiction" and
made scoring refuse the second prediction of each id. So where two different images of an import share a file
name, each is named by its path as the file writes it, ``/`` turned into ``-`` (``images-000000000139.jpg``,
``normal_images-000000000139.jpg``), and a build made with ``--images DIR`` holds a copy under that name in its
``images/`` folder (:func:`images_to_copy`); an image whose name is its own keeps it and stays where it is. The
images of POPEv2's parquet release (Hugging Face ``Monosail/POPEv2``) are in the file: a build holds them all.
``provenance.image_file`` keeps the path as the file writes it.

Ids. POPE's three splits (random, popular, adversarial) ask the same "yes" questions of the same images, and
popular and adversarial share some "no" questions too; a content id alone gave the three files 5,127 ids for
9,000 questions, the lint 6,211 "exact duplicates" and scoring a refusal of a prediction file with one line per
question. So an item's id is its content's id and its setting (``<id>-random``): unique per split and question,
and the same whichever files are imported together. A question that several splits ask lists them in
``provenance.shared_by``, which the lint's duplicates check reads as shared, not duplicated.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Sequence

from builders.items import Item, make_item
from builders.registry import BenchmarkSpec, Paper, licences
from sources.errors import ConfigError
from sources.pope import PopeQuestion, parquet_images, read_pope

BENCHMARK = "pope"
PAIRED: dict[str, Any] = {"yes_no_pairs": ["setting"]}
POPEV2_SETTINGS = frozenset({"normal", "counterfactual"})

SPEC = BenchmarkSpec(
    name=BENCHMARK,
    pretty="POPE",
    paper=Paper(
        title="Evaluating Object Hallucination in Large Vision-Language Models",
        authors=("Yifan Li", "Yifan Du", "Kun Zhou", "Jinpeng Wang", "Wayne Xin Zhao", "Ji-Rong Wen"),
        venue="EMNLP 2023",
        identifiers=("arXiv:2305.10355",),
    ),
    description="Object hallucination: \"Is there a/an X in the image?\" asked of COCO images in three "
    "splits (random, popular, adversarial absent objects). `python -m scoring pope` reads answers by POPE's "
    "own rule (evaluate.py: \"no\" when the first sentence holds no/No/not, else \"yes\"), so numbers "
    "compare with the paper's, and reports the strict reading of Mirage's one extractor beside it.",
    scorer="scoring.pope",
    review_kinds=("yes_no",),
    imports={"pope": "builders.imports.pope"},
    licences=licences("coco"),
    twin=False,
)
"""POPE is imported, never built: the registry knows it for its paper, scorer and importer."""


def image_names(written: Iterable[str]) -> dict[str, str]:
    """The name each image (as a file writes it) gets in Mirage: its file name, unless another image of the
    import has the same one; then its path with ``/`` turned into ``-``."""
    written = sorted(set(written))
    by_name: dict[str, list[str]] = defaultdict(list)
    for w in written:
        by_name[PurePosixPath(w).name].append(w)
    names = {w: (PurePosixPath(w).name if len(by_name[PurePosixPath(w).name]) == 1 else w.replace("/", "-"))
             for w in written}
    taken: dict[str, str] = {}
    for w, name in names.items():
        if name in taken:
            raise ConfigError(f"images {taken[name]!r} and {w!r} would both be named {name!r} in Mirage")
        taken[name] = w
    return names


def read(paths: Sequence[Path], images_dir: Path | None = None, warnings: list[str] | None = None) -> list[Item]:
    """Items of POPE files (``warnings``: unused, POPE's readers fail on bad input)."""
    questions = [(path, q) for path in paths for q in read_pope(path)]
    names = image_names(q.image for _, q in questions)
    items: list[Item] = []
    for path, q in questions:
        items.append(make_item(
            benchmark=BENCHMARK, task="existence", question_type="yes_no", pressure=q.setting,
            images=[_image(q, names[q.image], images_dir)], question=q.question, options=(), answer=q.label,
            provenance={"source": "pope", "file": path.name, "line": q.line, "question_id": q.question_id,
                        "object": q.target_object, "setting": q.setting, "image_file": q.image,
                        **({"image_id": q.image_id} if q.image_id else {})},
        ))
    return per_setting_ids(items)


def per_setting_ids(items: Sequence[Item]) -> list[Item]:
    """Items with ids unique per setting and question (``<content id>-<setting>``), a question asked in several
    settings naming them all in ``provenance.shared_by`` (the module docstring)."""
    settings: dict[str, set[str]] = defaultdict(set)
    for it in items:
        settings[it.id].add(it.pressure)
    out = []
    for it in items:
        shared = sorted(settings[it.id])
        provenance = {**it.provenance, "shared_by": shared} if len(shared) > 1 else it.provenance
        out.append(replace(it, id=f"{it.id}-{it.pressure}", provenance=provenance))
    return out


def _image(q: PopeQuestion, name: str, images_dir: Path | None) -> str:
    """Where the item's image is: the user's file where it keeps its name, else a copy in the build (always for
    an image embedded in the file: POPEv2's parquet release)."""
    if q.embedded:
        return f"images/{name}"
    if name != PurePosixPath(q.image).name:
        return f"images/{name}" if images_dir else name
    return str(images_dir / q.image) if images_dir else q.image


def images_to_copy(items: Sequence[Item], images_dir: Path | None, paths: Sequence[Path] = ()
                   ) -> dict[str, Path | bytes]:
    """``{name in the build's images/: the user's file, or the bytes embedded in a parquet file}`` for the images
    a build holds itself: those renamed by :func:`image_names`, and every image of POPEv2's parquet release."""
    embedded = {p.name: p for p in paths if p.suffix.lower() == ".parquet"}
    data = {name: parquet_images(p) for name, p in embedded.items()}
    out: dict[str, Path | bytes] = {}
    for it in items:
        name, written = PurePosixPath(it.images[0]).name, it.provenance["image_file"]
        if it.provenance["file"] in data:
            out[name] = data[it.provenance["file"]][written]
        elif images_dir is not None and name != PurePosixPath(written).name:
            out[name] = images_dir / written
    return out


def promises(items: Sequence[Item]) -> dict[str, Any]:
    """What the import promises the lint: POPE's balanced yes/no per (image, setting); nothing for POPEv2."""
    return {} if any(it.pressure in POPEV2_SETTINGS for it in items) else dict(PAIRED)
