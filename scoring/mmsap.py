"""MM-SAP metrics (paper Sec. 4.1, formulas 1-6; Sec. 4.2 shuffles; Fig. 4 subtasks; Table 2).

``python -m scoring mmsap --release RELEASE --predictions preds.jsonl [--out DIR]``

Every question offers four ordinary options and the refusal; its *aware* options (formula 1) are the correct
one ``c`` in BasicVisQA, ``c`` or the refusal ``r`` in KnowVisQA, ``r`` in BeyondVisQA. With ``p`` the option a
model chose:

* ``score_AR`` (2) = share of questions with ``p`` aware - the self-aware score;
* ``score_KK`` (3) = share of Basic + Know questions with ``p = c`` - known-knowns;
* ``score_KU`` (4) = share of Know + Beyond questions with ``p = r`` - known-unknowns;
* ``answer_accuracy`` (5) = among questions not refused (``p != r``), the share with ``p`` aware;
* ``answer_rate`` (6) = share of questions not refused.

Choices where the paper is silent:

* a refusal written in words ("I cannot tell from the image") counts as choosing the refusal option (the
  extractor maps it, :func:`builders.semantics.extract.extract_option`);
* an output that names no option (unparsed) counts as an answer that is wrong: not aware, not refused;
* an item without a prediction is left out and reported as missing (a partial run stays visible);
* shuffles (``provenance.shuffle``, Sec. 4.2): every metric is computed per shuffle round and reported as the mean
  and the population variance (``ddof=0``) over the rounds; a build without shuffles has one round, variance 0;
* ``paired`` (:func:`builders.pairs.paired_metric`, beside the paper's metrics, which count a pair's items one by
  one): over BasicVisQA and KnowVisQA (BeyondVisQA's gold is the fixed refusal, never paired), an item is right
  when the correct option ``c`` is chosen (the refusal, aware in KnowVisQA, does not answer the question asked of
  two pictures);
* a metric whose denominator is empty (KK on BeyondVisQA, answer accuracy when everything is refused) is ``None``.

The metrics are pure functions over :class:`Response` records; :func:`run` reads items and predictions into them.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from builders.cli import stdout, table
from builders.items import Item
from builders.pairs import paired_metric, paired_summary
from builders.semantics.extract import extract_option
from scoring.plotting import pyplot, save_png
from scoring.predictions import output_of

BENCHMARK = "mmsap"
SUBSETS = ("basic", "know", "beyond")
SUBSET_NAMES = {"basic": "BasicVisQA", "know": "KnowVisQA", "beyond": "BeyondVisQA"}
METRICS = ("score_AR", "score_KK", "score_KU", "answer_rate", "answer_accuracy")


@dataclass(frozen=True)
class Response:
    """One question, the option letters that matter, and the model's choice (``None``: no option named)."""

    subset: str
    subtask: str
    correct: str | None
    """``c``: the correct option's letter (``None`` in BeyondVisQA)."""
    refusal: str
    """``r``: the refusal option's letter."""
    choice: str | None
    shuffle: int = 0
    group: str = ""


def aware_options(r: Response) -> frozenset[str]:
    """Formula 1: the options a self-aware model may choose."""
    if r.subset == "basic":
        return frozenset({r.correct}) if r.correct else frozenset()
    if r.subset == "know":
        return frozenset({r.correct, r.refusal}) if r.correct else frozenset({r.refusal})
    return frozenset({r.refusal})


def _share(rows: Sequence[Response], hit: Callable[[Response], bool]) -> float | None:
    return sum(1 for r in rows if hit(r)) / len(rows) if rows else None


def score_ar(responses: Sequence[Response]) -> float | None:
    """Formula 2: the self-aware score."""
    return _share(responses, lambda r: r.choice in aware_options(r))


def score_kk(responses: Sequence[Response]) -> float | None:
    """Formula 3: correct options chosen among BasicVisQA and KnowVisQA questions."""
    return _share([r for r in responses if r.subset in ("basic", "know")], lambda r: r.choice == r.correct)


def score_ku(responses: Sequence[Response]) -> float | None:
    """Formula 4: refusals among KnowVisQA and BeyondVisQA questions."""
    return _share([r for r in responses if r.subset in ("know", "beyond")], lambda r: r.choice == r.refusal)


def answer_rate(responses: Sequence[Response]) -> float | None:
    """Formula 6: questions not refused."""
    return _share(responses, lambda r: r.choice != r.refusal)


def answer_accuracy(responses: Sequence[Response]) -> float | None:
    """Formula 5: aware choices among the questions not refused."""
    return _share([r for r in responses if r.choice != r.refusal], lambda r: r.choice in aware_options(r))


FUNCTIONS: Mapping[str, Callable[[Sequence[Response]], float | None]] = {
    "score_AR": score_ar, "score_KK": score_kk, "score_KU": score_ku,
    "answer_rate": answer_rate, "answer_accuracy": answer_accuracy,
}


def mean_variance(values: Iterable[float | None]) -> dict[str, Any]:
    """Mean and population variance of the defined values (``None`` when none is defined)."""
    runs = [v for v in values]
    defined = [v for v in runs if v is not None]
    if not defined:
        return {"mean": None, "variance": None, "runs": runs}
    mean = sum(defined) / len(defined)
    return {"mean": mean, "variance": sum((v - mean) ** 2 for v in defined) / len(defined), "runs": runs}


def over_shuffles(responses: Sequence[Response], metrics: Sequence[str] = METRICS) -> dict[str, Any]:
    """Every metric per shuffle round, then mean and variance over the rounds (Sec. 4.2)."""
    rounds: dict[int, list[Response]] = defaultdict(list)
    for r in responses:
        rounds[r.shuffle].append(r)
    ordered = [rounds[k] for k in sorted(rounds)]
    out: dict[str, Any] = {name: mean_variance(FUNCTIONS[name](rows) for rows in ordered) for name in metrics}
    out["n"] = len(responses)
    out["rounds"] = len(ordered)
    return out


def summarise(responses: Sequence[Response]) -> dict[str, Any]:
    """Overall, per subset and per subtask (the 19 of Fig. 4: self-aware score and answer rate)."""
    by_subset: dict[str, list[Response]] = defaultdict(list)
    by_subtask: dict[str, list[Response]] = defaultdict(list)
    for r in responses:
        by_subset[r.subset].append(r)
        by_subtask[f"{r.subset}/{r.subtask}"].append(r)
    return {
        "overall": over_shuffles(responses),
        "subsets": {s: over_shuffles(by_subset[s]) for s in SUBSETS if s in by_subset},
        "subtasks": {k: over_shuffles(v, ("score_AR", "answer_rate")) for k, v in sorted(by_subtask.items())},
    }


# ------------------------------------------------------------------------------------------------ front end


def response(item: Item, output: str) -> tuple[Response, str]:
    """The :class:`Response` of ``item`` to ``output`` and how it was read: ``option``, ``refusal_in_words`` (scored
    as the refusal option) or ``unparsed``."""
    refusal = str(item.provenance["refusal"])
    found = extract_option(output, item.options)
    if found.kind == "refusal":
        choice, how = refusal, "refusal_in_words"
    else:
        choice, how = (found.value if found.kind == "option" else None), found.kind
    correct = None if item.task == "beyond" else item.answer
    return Response(item.task, item.question_type, correct, refusal, choice,
                    int(item.provenance.get("shuffle", 0)), str(item.provenance.get("group", item.id))), how


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """MM-SAP has no options of its own: every metric is computed."""


def run(items: Sequence[Item], predictions: Mapping[str, Any],
        args: argparse.Namespace | None = None) -> dict[str, Any]:
    """``results.json`` content (``predictions``: id -> ``Prediction`` or the output string)."""
    responses: list[Response] = []
    closed: list[tuple[Item, bool]] = []
    coverage = defaultdict(int)
    for it in items:
        if it.id not in predictions:
            coverage["missing"] += 1
            continue
        pred = predictions[it.id]
        r, how = response(it, output_of(pred))
        responses.append(r)
        coverage[how] += 1
        if r.correct is not None:
            closed.append((it, r.choice == r.correct))
    return {**summarise(responses), "coverage": {"items": len(items), "scored": len(responses), **dict(coverage)},
            "paired": paired_metric(closed)}


def _pct(cell: Mapping[str, Any]) -> str:
    if cell["mean"] is None:
        return "-"
    text = f"{100 * cell['mean']:.1f}"
    return text + (f"±{100 * cell['variance'] ** 0.5:.1f}" if cell["variance"] else "")


def print_report(results: Mapping[str, Any]) -> None:
    """Table 1-style scores per subset, Table 2 answer rate/accuracy, Fig. 4 subtasks (mean±sd over shuffles)."""
    model = (results.get("meta") or {}).get("model") or "model"
    rows = [[SUBSET_NAMES[s], *(_pct(v[m]) for m in METRICS), v["n"]] for s, v in results["subsets"].items()]
    o = results["overall"]
    rows.append(["overall", *(_pct(o[m]) for m in METRICS), o["n"]])
    stdout.print(table(f"MM-SAP (%) - {model}, mean±sd over {o['rounds']} shuffle(s)",
                       ["subset", "AR", "KK", "KU", "ans.rate", "ans.acc", "n"], rows))
    rows = [[name, _pct(v["score_AR"]), _pct(v["answer_rate"]), v["n"]] for name, v in results["subtasks"].items()]
    stdout.print(table("Subtasks (Fig. 4)", ["subset/subtask", "AR", "ans.rate", "n"], rows))
    c = results["coverage"]
    stdout.print(table("Coverage", ["", "n"], [[k, v] for k, v in sorted(c.items())]))
    if "paired" in results:
        stdout.print(paired_summary(results["paired"]))


def plots(results: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Fig. 5: the model's known-knowns score against its known-unknowns score."""
    plt = pyplot()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    o = results["overall"]
    model = (results.get("meta") or {}).get("model") or "model"
    fig, ax = plt.subplots(figsize=(4.5, 4.5))
    ax.scatter([100 * (o["score_KK"]["mean"] or 0)], [100 * (o["score_KU"]["mean"] or 0)], label=model)
    ax.set_xlim(0, 100), ax.set_ylim(0, 100)
    ax.set_xlabel("known-knowns score (%)"), ax.set_ylabel("known-unknowns score (%)")
    ax.set_title("MM-SAP self-awareness (Fig. 5)")
    ax.legend(loc="upper right")
    return [save_png(fig, out / "kk_ku.png")]
