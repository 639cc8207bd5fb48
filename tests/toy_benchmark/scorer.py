"""The toy benchmark's scorer: accuracy, with Mirage's one answer extractor."""

from __future__ import annotations

import argparse
from typing import Any, Mapping, Sequence

from builders.cli import stdout, table
from builders.semantics.extract import extract, is_correct


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The toy scorer has no options of its own."""


def run(items: Sequence[Any], predictions: Mapping[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    answered = [(it, extract(predictions[it.id].output, it)) for it in items if it.id in predictions]
    right = sum(is_correct(answer, it) for it, answer in answered)
    return {"accuracy": right / len(answered) if answered else 0.0, "answered": len(answered),
            "unparsed": sum(answer.kind == "unparsed" for _, answer in answered)}


def print_report(results: Mapping[str, Any]) -> None:
    stdout.print(table("toy", ["accuracy", "answered", "unparsed"],
                       [[f"{results['accuracy']:.3f}", results["answered"], results["unparsed"]]]))
