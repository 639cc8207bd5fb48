"""Re-review of the items a model health check suspected (``push --recheck`` / ``pull --recheck``, issue 44).

``python -m scoring health`` writes ``health.json``; its ``suspected_label_errors`` are item ids of a release,
which are the build's ids (an id hashes what a model sees, never the answer). The suspects go to the rooms in a
project of their own, so their first review's annotations stay where they are and the new votes are counted
afresh by the same rules (:func:`annotation.resolve.resolve`, majority of three). Each task shows the answer the
release carries (the first review's, fixed or not) as the proposed answer and, beside it, the answer most models
gave, with how many gave it: the reviewers judge the gold knowing why the item came back.

``pull --recheck`` resolves the project over the suspects alone and writes ``recheck.json`` beside
``review.json`` (one round per project: the health file's digest, the decisions, the votes, the answer before and
the models' answer), then rewrites ``reviewed.jsonl`` with the re-review applied on top of the first review
(:func:`builders.review.apply_rechecks`). ``data_cards release`` reads both, and the next version's changelog and
card say what changed and why. Only a reviewed build can be re-reviewed: the answer shown is the reviewed one.
Items the re-review leaves without a majority keep their first decision (``adjudications.json`` settles the first
review only).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from pathlib import Path
from typing import Any, Mapping

from annotation.builddir import Build, read_json
from annotation.config import answer_label
from annotation.errors import AnnotationError
from annotation.resolve import reviewed_items
from builders.items import Item
from builders.review import RECHECK_FILE, apply_rechecks

MODELS_FIELD = "models_answer"
"""The task-data field (and the line of the item's view) with the models' answer; only re-review tasks have it."""


def read_health(path: str | Path) -> tuple[dict[str, dict[str, Any]], str]:
    """``({item id: what the models answered}, sha256 of the file)`` for the suspects of a ``health.json``."""
    path = Path(path)
    try:
        raw = path.read_bytes()
        data = json.loads(raw)
    except FileNotFoundError:
        raise AnnotationError(f"{path}: not found (python -m scoring health writes it)") from None
    except (OSError, ValueError) as exc:
        raise AnnotationError(f"{path}: not a readable JSON file ({exc})") from None
    suspects = data.get("suspected_label_errors") if isinstance(data, dict) else None
    entries = data.get("items") if isinstance(data, dict) else None
    if not isinstance(suspects, list) or not isinstance(entries, dict):
        raise AnnotationError(f"{path}: not a health.json (no 'suspected_label_errors' list and 'items')")
    out = {}
    for iid in suspects:
        entry = entries.get(iid) if isinstance(iid, str) else None
        if not isinstance(entry, dict) or not isinstance(entry.get("likely_answer"), str):
            raise AnnotationError(f"{path}: suspect {iid!r} has no item entry with its 'likely_answer'")
        out[iid] = {"answer": entry["likely_answer"], "count": entry.get("likely_answer_count"),
                    "models": entry.get("models"), "p_label_error": entry.get("p_label_error")}
    return out, hashlib.sha256(raw).hexdigest()


def recheck_build(build: Build, suspects: Mapping[str, Mapping[str, Any]], project: str) -> Build:
    """The build narrowed to the suspects, each with the answer the release carries: the first review's with the
    re-review rounds of *other* projects applied (so pulling this round again shows the same answer)."""
    path = build.path / "review.json"
    if not path.is_file():
        raise AnnotationError(f"{build.path}: no review.json; a re-review starts from a reviewed build (push and "
                              "pull it first)")
    review = read_json(path)
    rechecks = read_rechecks(build.path)
    others = {"rounds": {k: v for k, v in (rechecks.get("rounds") or {}).items() if k != project}}
    reviewed = {it.id: it for it in reviewed_items(build.items, {**review, "items": apply_rechecks(
        review.get("items") or {}, others, {it.id: it.answer for it in build.items})})}
    missing = sorted(set(suspects) - reviewed.keys())
    if missing:
        where = "in the build" if missing[0] not in {it.id for it in build.items} else "among its reviewed items"
        raise AnnotationError(f"{build.path}: suspect {missing[0]} of the health report is not {where} "
                              f"({len(missing)} such); the report of another build?")
    return replace(build, items=[reviewed[iid] for iid in sorted(suspects)])


def models_label(item: Item, evidence: Mapping[str, Any]) -> str:
    """``"C. cow (4 of 5 models)"``: the models' answer as reviewers read it."""
    count, models = evidence.get("count"), evidence.get("models")
    tail = f" ({count} of {models} models)" if isinstance(count, int) and isinstance(models, int) else ""
    return answer_label(item, str(evidence["answer"])) + tail


def read_rechecks(build_dir: Path) -> dict[str, Any]:
    """``recheck.json`` of a build (empty when there is none)."""
    path = Path(build_dir) / RECHECK_FILE
    if not path.exists():
        return {}
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("rounds", {}), dict):
        raise AnnotationError(f"{path}: expected {{\"rounds\": {{project: ...}}}}")
    return data


def recheck_round(project: str, decided: Mapping[str, Any], build: Build, suspects: Mapping[str, Mapping[str, Any]],
                  health: tuple[str, str], pulled_at: str) -> dict[str, Any]:
    """One round of ``recheck.json`` from the resolved re-review (``decided``: :func:`annotation.resolve.resolve`)."""
    by_id = {it.id: it for it in build.items}
    items = {}
    for iid, entry in decided["items"].items():
        it = by_id[iid]
        items[iid] = {**entry, "before": it.answer, "before_label": answer_label(it),
                      "models": {**suspects[iid], "label": models_label(it, suspects[iid])}}
    name, digest = health
    return {"project": project, "pulled_at": pulled_at, "health": {"file": name, "sha256": digest},
            "overlap": decided["overlap"], "counts": decided["counts"], "problems": decided["problems"],
            "items": items}


def merged_review(build_dir: Path, review: Mapping[str, Any], built: Mapping[str, str]) -> dict[str, Any]:
    """``review`` with its items re-decided by every re-review round of the build (for ``reviewed.jsonl``);
    ``built``: each item's answer as the builder gave it (a re-review back to it restores the item)."""
    return {**review, "items": apply_rechecks(review.get("items") or {}, read_rechecks(build_dir), built)}
