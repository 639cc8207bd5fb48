"""POPE's metrics for an imported POPE build (``python -m builders.imports pope ...``; Li et al., "Evaluating
Object Hallucination in Large Vision-Language Models", 2023, Sec. 4 and its ``evaluate.py``).

Per setting (the item's ``pressure``: random / popular / adversarial, POPEv2's normal / counterfactual) and overall:
accuracy, precision, recall and F1 with "yes" as the positive class, and the share of "yes" answers; a ratio of
0/0 (no "yes" answer, so no precision) is ``None``, printed "none", never 0.

Two readings of an output, both reported:

* ``settings``, POPE's own rule, so that numbers compare with the paper's: the first sentence, commas dropped, is
  "no" when it holds the word "no", "No" or "not", and "yes" otherwise. Every output counts, and some are read
  against their words: "NO", "Nope" and "I don't know." count as "yes", "Yes, there is a cup, not a dog." as "no";
* ``strict``, Mirage's one extractor (:func:`builders.semantics.extract.extract_yes_no`, the reading of every other
  benchmark): a refusal or an output it cannot read is neither answer, counted in ``unparsed`` and wrong.

Items without a prediction are left out and counted.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any, Mapping, Sequence

from builders.cli import stdout, table
from builders.items import Item
from builders.semantics.extract import extract_yes_no
from scoring.predictions import output_of

READINGS = {"settings": "POPE's evaluate.py (no/No/not in the first sentence -> no, else yes)",
            "strict": "Mirage's one extractor (refusals and unreadable outputs wrong)"}


def pope_answer(output: str) -> str:
    """POPE's reading of a free-form answer (``evaluate.py``): "no" if its first sentence says no/not."""
    text = output.split(".")[0] if "." in output else output
    words = text.replace(",", "").split()
    return "no" if {"No", "no", "not"} & set(words) else "yes"


def strict_answer(output: str) -> str | None:
    """"yes" or "no" as the one extractor reads ``output``; ``None`` for a refusal or an unreadable output."""
    found = extract_yes_no(output)
    return found.value if found.kind == "yes_no" else None


def _ratio(num: int, den: int) -> float | None:
    return round(num / den, 4) if den else None


def metrics(pairs: Sequence[tuple[str, str | None]]) -> dict[str, Any]:
    """``pairs`` of (truth, answer; ``None``: neither yes nor no): accuracy, precision, recall, F1 ("yes"
    positive), the yes ratio and the unparsed count; a ratio of 0/0 is ``None``."""
    tp = sum(t == "yes" and a == "yes" for t, a in pairs)
    fp = sum(t == "no" and a == "yes" for t, a in pairs)
    tn = sum(t == "no" and a == "no" for t, a in pairs)
    positives = sum(t == "yes" for t, _ in pairs)
    n = len(pairs)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, positives)
    f1 = _ratio(2 * tp, 2 * tp + fp + (positives - tp)) if tp + fp and positives else None
    return {"n": n, "accuracy": _ratio(tp + tn, n), "precision": precision, "recall": recall, "f1": f1,
            "yes_ratio": _ratio(tp + fp, n), "unparsed": sum(a is None for _, a in pairs)}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """POPE's scorer has no options of its own."""


def run(items: Sequence[Item], predictions: Mapping[str, Any], args: argparse.Namespace | None = None) -> dict[str, Any]:
    """``results.json``: metrics per setting and overall under both readings, and coverage."""
    per: dict[str, dict[str, list[tuple[str, str | None]]]] = {r: defaultdict(list) for r in READINGS}
    missing = 0
    for it in items:
        pred = predictions.get(it.id)
        if pred is None:
            missing += 1
            continue
        output, truth = output_of(pred), it.answer.lower()
        for reading, answer in (("settings", pope_answer(output)), ("strict", strict_answer(output))):
            per[reading][it.pressure].append((truth, answer))
            per[reading]["all"].append((truth, answer))
    results: dict[str, Any] = {"benchmark": "pope"}
    for reading in READINGS:
        results[reading] = {s: metrics(p) for s, p in sorted(per[reading].items())}
    results["readings"] = dict(READINGS)
    results["coverage"] = {"items": len(items), "scored": len(per["settings"]["all"]), "missing": missing}
    return results


def _cell(value: float | None) -> str:
    return "none" if value is None else f"{100 * value:.2f}"


def print_report(results: Mapping[str, Any]) -> None:
    for reading, title in (("settings", "POPE (%), POPE's reading"), ("strict", "POPE (%), strict reading")):
        if reading not in results:
            continue
        rows = [[s, m["n"], *(_cell(m[k]) for k in ("accuracy", "precision", "recall", "f1", "yes_ratio")),
                 m.get("unparsed", 0)] for s, m in results[reading].items()]
        stdout.print(table(title, ["setting", "n", "acc", "prec", "recall", "F1", "yes", "unread"], rows,
                           legend=f"{results.get('readings', READINGS)[reading]}; none: 0/0"))
    c = results["coverage"]
    stdout.print(f"scored {c['scored']} of {c['items']} items (missing {c['missing']})")
