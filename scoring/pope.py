"""POPE's metrics for an imported POPE build (``python -m builders.imports pope ...``; Li et al., "Evaluating
Object Hallucination in Large Vision-Language Models", 2023, Sec. 4 and its ``evaluate.py``).

Per setting (the item's ``pressure``: random / popular / adversarial) and overall: accuracy, precision, recall
and F1 with "yes" as the positive class, and the share of "yes" answers. An output is read the way POPE's own
evaluation reads it: its first sentence, commas dropped, is "no" when it holds the word "no", "No" or "not", and
"yes" otherwise; so every output counts (a refusal is a "yes" there too, as in the paper). Items without a
prediction are left out and counted.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from typing import Any, Mapping, Sequence

from builders.cli import stdout, table
from builders.items import Item
from scoring.predictions import output_of


def pope_answer(output: str) -> str:
    """POPE's reading of a free-form answer (``evaluate.py``): "no" if its first sentence says no/not."""
    text = output.split(".")[0] if "." in output else output
    words = text.replace(",", "").split()
    return "no" if {"No", "no", "not"} & set(words) else "yes"


def metrics(pairs: Sequence[tuple[str, str]]) -> dict[str, Any]:
    """``pairs`` of (truth, answer): accuracy, precision, recall, F1 ("yes" positive) and the yes ratio."""
    tp = sum(t == "yes" and a == "yes" for t, a in pairs)
    fp = sum(t == "no" and a == "yes" for t, a in pairs)
    tn = sum(t == "no" and a == "no" for t, a in pairs)
    fn = sum(t == "yes" and a == "no" for t, a in pairs)
    n = len(pairs)
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"n": n, "accuracy": round((tp + tn) / n, 4) if n else None, "precision": round(precision, 4),
            "recall": round(recall, 4), "f1": round(f1, 4), "yes_ratio": round((tp + fp) / n, 4) if n else None}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """POPE's scorer has no options of its own."""


def run(items: Sequence[Item], predictions: Mapping[str, Any], args: argparse.Namespace | None = None) -> dict[str, Any]:
    """``results.json``: metrics per setting and overall, and coverage."""
    per: dict[str, list[tuple[str, str]]] = defaultdict(list)
    missing = 0
    for it in items:
        pred = predictions.get(it.id)
        if pred is None:
            missing += 1
            continue
        pair = (it.answer.lower(), pope_answer(output_of(pred)))
        per[it.pressure].append(pair)
        per["all"].append(pair)
    return {"benchmark": "pope", "settings": {s: metrics(p) for s, p in sorted(per.items())},
            "coverage": {"items": len(items), "scored": len(per["all"]), "missing": missing}}


def print_report(results: Mapping[str, Any]) -> None:
    rows = [[s, m["n"], *(f"{100 * m[k]:.2f}" if m[k] is not None else "-"
                          for k in ("accuracy", "precision", "recall", "f1", "yes_ratio"))]
            for s, m in results["settings"].items()]
    stdout.print(table("POPE (%)", ["setting", "n", "acc", "prec", "recall", "F1", "yes"], rows,
                       legend="acc: accuracy, prec: precision, yes: share of yes answers"))
    c = results["coverage"]
    stdout.print(f"scored {c['scored']} of {c['items']} items (missing {c['missing']})")
