"""What Mirage's lmms-eval tasks call (``!function utils.<name>``): prompt, images, scoring, aggregation.

The task folder written next to a release (:mod:`data_cards.harness.lmms_eval`) carries a ``utils.py`` that
only re-exports this module, so lmms-eval scores with Mirage's own answer extraction (:mod:`builders.semantics.extract`)
and its numbers are the numbers of ``python -m scoring``: the harness environment needs Mirage installed
(``pip install mirage-bench``, or ``pip install -e`` of a checkout). Vendoring a copy of the extractor instead
would let the two drift apart silently.

Metric values are ``{"id", "value", ...}`` (the item id rides along, so a ``--log_samples`` file maps back to
items even though lmms-eval 0.7 saves samples without their ``doc``), ``value`` None where the metric does not
apply (``acc_<pressure>`` of another pressure, ``yes_ratio`` of a multiple-choice item), and
:func:`mean_of_values` averages the values that apply. ``accuracy`` is the exception: it is returned only for the
items it scores, and last. lmms-eval takes a task's sample count from the last metric it aggregates, and its group
weighs each task's accuracy by that count (``weight_by_size``), so the group's accuracy is over the scored items
exactly, as ``python -m scoring`` counts them (open answers and decomposed questions left out, and MIOH's
context controls, which Table 1 leaves to their own ``acc_<pressure>_control``).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from builders.pairs import group_metric, pair_of, pairs_by_key
from builders.registry import scored_apart
from builders.semantics.extract import extract, is_correct
from builders.semantics.prompt import prompt_text
from data_cards.harness.lmms_eval import GROUP_METRIC, control_metric_name, metric_name
from data_cards.harness.rows import row_item


def doc_to_visual(doc: dict[str, Any]) -> list[Any]:
    """The item's images, in order, as RGB PIL images (``datasets`` decodes the embedded bytes)."""
    return [image.convert("RGB") for image in doc["images"]]


def doc_to_text(doc: dict[str, Any], lmms_eval_specific_kwargs: dict[str, Any] | None = None) -> str:
    """:func:`prompt_text`, with the task's (or a model's) ``pre_prompt``/``post_prompt`` around it."""
    kwargs = lmms_eval_specific_kwargs or {}
    return f"{kwargs.get('pre_prompt', '')}{prompt_text(row_item(doc))}{kwargs.get('post_prompt', '')}"


def doc_to_target(doc: dict[str, Any]) -> str:
    """The expected answer: the option letter, "yes"/"no", or the reference text."""
    return doc["answer"]


def make_process_results(pressures: Sequence[str], controls: Sequence[str] = ()
                         ) -> Callable[[dict[str, Any], list[str]], dict[str, Any]]:
    """``process_results`` for a release whose items have these pressures (one ``acc_<pressure>`` metric each)
    and these pressures with control items (``acc_<pressure>_control``: a control, whose context is true, counts
    there and not in ``acc_<pressure>``, which stays the paper's accuracy under a misleading context).

    Open-answer items (a reference text) are not scored here, as in ``python -m scoring``, where their
    benchmark's scorer reads them (a judge, keyword graphs): feed the ``--log_samples`` file to it.
    """
    names = {p: metric_name(p) for p in pressures}

    def process_results(doc: dict[str, Any], results: list[str]) -> dict[str, dict[str, Any]]:
        item = row_item(doc)
        output = results[0] if results else ""
        answer = extract(output, item)
        # as python -m scoring: open answers are their benchmark's to judge, and single-image questions that
        # decompose a multi-image item (MIOH's ablation) are kept out of the accuracy tables
        closed = answer.kind != "open" and not scored_apart(item)
        correct = float(is_correct(answer, item)) if closed else None
        values: dict[str, Any] = {
            "unparsed_rate": float(answer.kind == "unparsed") if closed else None,
            "yes_ratio": (1.0 if answer.value == "yes" else 0.0) if answer.kind == "yes_no" else None,
        }
        control = item.provenance.get("context_truth") == "true"
        for pressure, name in names.items():
            values[name] = correct if item.pressure == pressure and not control else None
        for pressure in controls:
            values[control_metric_name(pressure)] = correct if item.pressure == pressure and control else None
        pair = pair_of(item)
        values[GROUP_METRIC] = correct if pair is not None else None
        if closed and not control:  # last, and only for the items Table 1 scores: see the module docstring
            values["accuracy"] = correct
        shown = answer.value if closed else ""
        paired = {"pair": pair[0], "role": pair[1]} if pair else {}
        return {name: {"id": item.id, "value": value, "answer": shown, "kind": answer.kind, **paired}
                for name, value in values.items()}

    return process_results


def mean_of_values(values: list[dict[str, Any]]) -> float:
    """The mean of the values that apply (not None); NaN when none does."""
    applicable = [v["value"] for v in values if v["value"] is not None]
    return sum(applicable) / len(applicable) if applicable else float("nan")


def group_accuracy_of_values(values: list[dict[str, Any]]) -> float:
    """``group_accuracy`` (:func:`builders.pairs.paired_metric`): the share of complete pairs with both items right,
    a pair with one item missing (dropped in review, not run) left out; NaN when no pair is complete."""
    keyed = (((v["pair"], v["role"]), v["value"] == 1.0) for v in values if v["value"] is not None and v.get("pair"))
    group = group_metric(*pairs_by_key(keyed))["group_accuracy"]
    return float("nan") if group is None else group
