"""MIOH metrics (paper Sec. 5, Table 1, Figs. 3-5): accuracy under every pressure, robustness, and the decomposed
ablation (Sec. 5.5).

``python -m scoring mioh --release RELEASE --predictions preds.jsonl [--out DIR]``

Every output is read by :mod:`builders.semantics.extract` (an option letter; yes/no for the decomposed questions); an
output that names no option, or several, is *unparsed*: counted, reported, and scored wrong (as a model that
answered nothing is wrong), never replaced by a guess. A refusal in words is wrong too unless the item's answer is
the refusal option ("I don't know"), which the extractor maps it to.

Reported:

* **Table 1**: accuracy per task x pressure (Easy, HN, HP, NI, LC-S, LC-I) and the task's average, plus an
  overall row. *Average* is over the task's items (micro), as the paper's averages are not the mean of their
  six columns; NI counts every member of every number-of-images family.
  The LC columns are the paper's figure: accuracy under a *false* context; the control items, whose context is
  true (``provenance.context_truth == "true"``, issue 40), are kept out of Table 1, Fig. 3 and the families.
* **Misleading vs control contexts**: per task and linguistic pressure, accuracy on the misleading items, on the
  controls, and the gap (control - misleading): a model that follows whatever the context says scores high on
  the controls and low on the misleading items; one that ignores the text scores alike on both.
* **Fig. 3**: accuracy per task x question type, per question type, per pressure.
* **Accuracy vs number of images**: over the ``n_images`` families (``provenance.family``), accuracy per family
  size (2, 4, 8, 10), per task.
* **Robustness** (Fig. 4; the paper gives no formula): ``drop`` = easy accuracy - accuracy under a pressure, per
  pressure and task; ``robustness`` = mean accuracy over the five pressures / easy accuracy (1.0 = no loss; 0
  when easy accuracy is 0). The plot puts easy accuracy against robustness, one point per task and one overall;
  several runs go into one plot with ``python -m scoring.mioh compare``.
* **Wrong "None of the above" / "I don't know"**: of the items whose answer is *not* that option but which offer
  it, the share where the model chose it (a model that hides behind abstention shows here).
* **Position bias**: the model's chosen letters against the letters of the true answers (counts and shares),
  with a chi-square statistic of the model's letters against the truth's distribution.
* **Decomposed ablation** (Fig. 5): items of question type ``decomposed`` (``--decomposed`` builds,
  :mod:`builders.mioh.decomposed`) are single-image yes/no questions grouped by ``provenance.groups`` (the ids of
  the comprehensive items they decompose); a group counts
  correct when every one of its questions is answered correctly, and is compared with the accuracy on the
  comprehensive items themselves (the same groups only). Decomposed items are kept out of every other table.
* **Coverage**: items without a prediction (``missing``: not scored, so a partial run is visible rather than
  scored as wrong), unparsed and refusals, per task.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from builders.cli import ArgumentParser, exit_on_error, stdout, table
from builders.items import OPTION_LETTERS, Item
from builders.llm import add_llm_arguments, make_client
from builders.pairs import paired_metric, paired_summary
from builders.quality import chi_square
from builders.registry import scored_apart
from builders.semantics.extract import Answer, extract, is_correct
from builders.semantics.options import is_dont_know, is_none_of_the_above
from commandline.options import add_command, add_options, option, run_command
from commandline.parsing import prog
from scoring.llm import llm_config
from scoring.plotting import pyplot, save_png
from scoring.predictions import outputs_of
from sources.errors import ConfigError

BENCHMARK = "mioh"
PRESSURE_COLUMNS = (("easy", "Easy"), ("hard_negative", "HN"), ("hard_positive", "HP"), ("n_images", "NI"),
                    ("sycophantic", "LC-S"), ("instructional_override", "LC-I"))
TASK_ORDER = ("existence", "counting", "attribute", "position")
QTYPE_ORDER = ("comprehensive", "comparative", "selective")
ABSTAIN_OPTIONS = {"None of the above": is_none_of_the_above, "I don't know": is_dont_know}
"""The abstention options MIOH offers, as the report names them, and the predicate that recognises each."""


@dataclass(frozen=True)
class Scored:
    """One item with the model's extracted answer."""

    item: Item
    answer: Answer
    correct: bool
    letter: str = ""
    """The chosen option's letter ("" when the answer is not an option)."""


# ------------------------------------------------------------------------------------------------ metrics


def accuracy(scored: Iterable[Scored]) -> dict[str, Any]:
    """``{"n", "correct", "accuracy"}`` (accuracy ``None`` for an empty group, so tables show "-")."""
    n = hits = 0
    for s in scored:
        n += 1
        hits += s.correct
    return _cell(n, hits)


def _cell(n: int, hits: int) -> dict[str, Any]:
    return {"n": n, "correct": hits, "accuracy": round(hits / n, 6) if n else None}


def _tally(scored: Iterable[Scored], key: Callable[[Scored], Any]) -> dict[Any, list[int]]:
    """``{key: [n, correct]}`` in one pass (the tables group 100,000 answers many ways)."""
    out: dict[Any, list[int]] = defaultdict(lambda: [0, 0])
    for s in scored:
        cell = out[key(s)]
        cell[0] += 1
        cell[1] += s.correct
    return out


def _ordered(values: Iterable[str], order: Sequence[str]) -> list[str]:
    present = set(values)
    return [v for v in order if v in present] + sorted(present - set(order))


def table1(scored: Sequence[Scored]) -> dict[str, dict[str, Any]]:
    """Accuracy per task x pressure, plus ``average`` (micro) per task and an ``overall`` row."""
    cells = _tally(scored, lambda s: (s.item.task, s.item.pressure))
    out: dict[str, dict[str, Any]] = {}
    tasks = _ordered({t for t, _ in cells}, TASK_ORDER)
    for task in [*tasks, "overall"]:
        mine = [(p, v) for (t, p), v in cells.items() if task in ("overall", t)]
        out[task] = {p: _cell(sum(v[0] for q, v in mine if q == p), sum(v[1] for q, v in mine if q == p))
                     for p, _ in PRESSURE_COLUMNS}
        out[task]["average"] = _cell(sum(v[0] for _, v in mine), sum(v[1] for _, v in mine))
    return out


def by_question_type(scored: Sequence[Scored]) -> dict[str, Any]:
    """Fig. 3: per task x question type, per question type, per pressure."""
    cells = _tally(scored, lambda s: (s.item.task, s.item.question_type))
    tasks = _ordered({t for t, _ in cells}, TASK_ORDER)
    qtypes = _ordered({q for _, q in cells}, QTYPE_ORDER)

    def merged(pred: Callable[[str, str], bool]) -> dict[str, Any]:
        sel = [v for (t, q), v in cells.items() if pred(t, q)]
        return _cell(sum(v[0] for v in sel), sum(v[1] for v in sel))

    pressures = _tally(scored, lambda s: s.item.pressure)
    return {
        "task_x_type": {t: {q: merged(lambda a, b, t=t, q=q: (a, b) == (t, q)) for q in qtypes} for t in tasks},
        "type": {q: merged(lambda a, b, q=q: b == q) for q in qtypes},
        "pressure": {p: _cell(*pressures.get(p, (0, 0))) for p, _ in PRESSURE_COLUMNS},
    }


def by_n_images(scored: Sequence[Scored]) -> dict[str, Any]:
    """Accuracy per family size over the number-of-images families, per task and overall."""
    family = [s for s in scored if s.item.provenance.get("family")]
    cells = _tally(family, lambda s: (s.item.task, int(s.item.provenance.get("n_images", len(s.item.images)))))
    sizes = sorted({n for _, n in cells})
    tasks = _ordered({t for t, _ in cells}, TASK_ORDER)
    by_task = {t: {str(n): _cell(*cells.get((t, n), (0, 0))) for n in sizes} for t in tasks}
    by_task["overall"] = {str(n): _cell(sum(v[0] for (_, m), v in cells.items() if m == n),
                                        sum(v[1] for (_, m), v in cells.items() if m == n)) for n in sizes}
    return {"sizes": sizes, "families": len({s.item.provenance["family"] for s in family}), "by_task": by_task}


LINGUISTIC = ("sycophantic", "instructional_override")


def is_control(item: Item) -> bool:
    """A linguistic item whose context is true (a control), not the paper's misleading context."""
    return item.provenance.get("context_truth") == "true"


def context_controls(scored: Sequence[Scored]) -> dict[str, Any]:
    """Per task (and overall) x linguistic pressure: ``misleading``, ``control`` and ``gap`` (control accuracy -
    misleading accuracy, ``None`` where either is empty)."""
    cells = _tally([s for s in scored if s.item.pressure in LINGUISTIC],
                   lambda s: (s.item.task, s.item.pressure, is_control(s.item)))
    tasks = _ordered({t for t, _, _ in cells}, TASK_ORDER)
    out: dict[str, Any] = {}
    for task in [*tasks, "overall"]:
        out[task] = {}
        for pressure in LINGUISTIC:
            pick = [v for (t, p, _), v in cells.items() if task in ("overall", t) and p == pressure]
            if not pick:
                continue
            row = {}
            for name, flag in (("misleading", False), ("control", True)):
                mine = [v for (t, p, c), v in cells.items() if task in ("overall", t) and p == pressure and c == flag]
                row[name] = _cell(sum(v[0] for v in mine), sum(v[1] for v in mine))
            a, b = row["control"]["accuracy"], row["misleading"]["accuracy"]
            row["gap"] = None if a is None or b is None else round(a - b, 6)
            out[task][pressure] = row
    return out


def robustness(t1: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """Per task (and overall): easy accuracy, the drop under each pressure, and the robustness ratio."""
    out = {}
    for task, row in t1.items():
        easy = row["easy"]["accuracy"]
        pressured = [row[p]["accuracy"] for p, _ in PRESSURE_COLUMNS[1:] if row[p]["accuracy"] is not None]
        mean_pressured = sum(pressured) / len(pressured) if pressured else None
        out[task] = {
            "easy": easy,
            "pressured": None if mean_pressured is None else round(mean_pressured, 6),
            "drop": {p: None if easy is None or row[p]["accuracy"] is None else round(easy - row[p]["accuracy"], 6)
                     for p, _ in PRESSURE_COLUMNS[1:]},
            "robustness": (None if easy is None or mean_pressured is None
                           else round(mean_pressured / easy, 6) if easy > 0 else 0.0),
        }
    return out


@lru_cache(maxsize=4096)
def _abstain_letters(options: tuple[str, ...]) -> dict[str, str]:
    """``{abstention option name: its letter}`` for the abstention options an option list offers (the first of
    each kind)."""
    found: dict[str, str] = {}
    for i, o in enumerate(options[: len(OPTION_LETTERS)]):
        for name, matches in ABSTAIN_OPTIONS.items():
            if matches(o):
                found.setdefault(name, OPTION_LETTERS[i])
    return found


def abstentions(scored: Sequence[Scored]) -> dict[str, Any]:
    """How often "None of the above" / "I don't know" is chosen when it is not the answer."""
    counts = {text: Counter() for text in ABSTAIN_OPTIONS}
    for s in scored:
        for text, letter in _abstain_letters(s.item.options).items():
            c = counts[text]
            c["offered"] += 1
            chose = s.letter == letter
            c["chosen"] += chose
            if s.item.answer == letter:
                c["is_the_answer"] += 1
                c["recalled"] += s.correct
            else:
                c["not_the_answer"] += 1
                c["chosen_wrongly"] += chose
    return {
        text: {
            "offered": c["offered"], "chosen": c["chosen"],
            "not_the_answer": c["not_the_answer"], "chosen_wrongly": c["chosen_wrongly"],
            "wrong_rate": round(c["chosen_wrongly"] / c["not_the_answer"], 6) if c["not_the_answer"] else None,
            "is_the_answer": c["is_the_answer"],
            "recall": round(c["recalled"] / c["is_the_answer"], 6) if c["is_the_answer"] else None,
        }
        for text, c in counts.items()
    }


def letter_distribution(scored: Sequence[Scored]) -> dict[str, Any]:
    """The model's chosen letters against the truth's: counts, shares, and chi-square of model vs truth."""
    model: Counter = Counter()
    truth: Counter = Counter()
    width = 0
    for s in scored:
        if s.item.options:
            width = max(width, len(s.item.options))
            truth[s.item.answer] += 1
            if s.letter:
                model[s.letter] += 1
    letters = OPTION_LETTERS[:width]
    n_model = sum(model.values())
    n_truth = sum(truth.values())
    expected = [n_model * truth[c] / n_truth if n_truth else 0.0 for c in letters]
    chi2 = chi_square([model[c] for c in letters], expected).chi2
    return {
        "letters": list(letters),
        "model": {c: model[c] for c in letters},
        "truth": {c: truth[c] for c in letters},
        "model_share": {c: round(model[c] / n_model, 6) if n_model else None for c in letters},
        "truth_share": {c: round(truth[c] / n_truth, 6) if n_truth else None for c in letters},
        "chi2": None if not n_model else (round(chi2, 4) if math.isfinite(chi2) else "inf"),
        "dof": max(0, sum(1 for c in letters if truth[c]) - 1),
        "most_chosen": model.most_common(1)[0][0] if model else None,
    }


def decomposed(scored: Sequence[Scored], decomposed_scored: Sequence[Scored]) -> dict[str, Any] | None:
    """Fig. 5: all-correct over each group of single-image questions vs the comprehensive item's accuracy.

    A single-image question belongs to every group in ``provenance.groups`` (the same image asked about the same
    object is one question, shared by the comprehensive items that show it); a group is complete when it has
    ``provenance.group_sizes[group]`` members and its comprehensive item was answered."""
    if not decomposed_scored:
        return None
    groups: dict[str, list[Scored]] = defaultdict(list)
    expected: dict[str, int] = {}
    for s in decomposed_scored:
        sizes = s.item.provenance.get("group_sizes") or {}
        for g in s.item.provenance.get("groups") or ():
            groups[str(g)].append(s)
            expected[str(g)] = int(sizes.get(g, 0))
    parents = {s.item.id: s for s in scored}
    yes_no = [s for s in decomposed_scored if s.answer.kind == "yes_no"]
    complete = {g: m for g, m in groups.items() if len(m) == expected[g] and g in parents}
    rows = []
    for g, members in complete.items():
        rows.append({"group": g, "pressure": parents[g].item.pressure, "n_images": len(members),
                     "decomposed": all(s.correct for s in members), "comprehensive": parents[g].correct})
    pressures = _ordered((r["pressure"] for r in rows), [p for p, _ in PRESSURE_COLUMNS])

    def acc(sel: list[dict[str, Any]], key: str) -> float | None:
        return round(sum(r[key] for r in sel) / len(sel), 6) if sel else None

    return {
        "groups": len(rows),
        "incomplete_groups": len(groups) - len(complete),
        "single_image_accuracy": accuracy(decomposed_scored)["accuracy"],
        # POPE-style yes ratio of the *model's* answers (the harnesses' bug: computing it from the truth)
        "yes_ratio": round(sum(s.answer.value == "yes" for s in yes_no) / len(yes_no), 6) if yes_no else None,
        "truth_yes_ratio": round(sum(s.item.answer == "yes" for s in decomposed_scored) / len(decomposed_scored), 6),
        "decomposed_accuracy": acc(rows, "decomposed"),
        "comprehensive_accuracy": acc(rows, "comprehensive"),
        "by_pressure": {p: {"groups": len(sel), "decomposed_accuracy": acc(sel, "decomposed"),
                            "comprehensive_accuracy": acc(sel, "comprehensive")}
                        for p in pressures for sel in [[r for r in rows if r["pressure"] == p]]},
    }


def coverage(items: Sequence[Item], scored: Sequence[Scored]) -> dict[str, Any]:
    """Missing predictions, unparsed answers and refusals, per task and in all."""
    tasks = _ordered({it.task for it in items}, TASK_ORDER)
    counts = {t: {"items": 0, "predicted": 0, "missing": 0, "unparsed": 0, "refusal": 0} for t in [*tasks, None]}
    for it in items:
        for t in (it.task, None):
            counts[t]["items"] += 1
    for s in scored:
        for t in (s.item.task, None):
            counts[t]["predicted"] += 1
            if s.answer.kind in ("unparsed", "refusal"):
                counts[t][s.answer.kind] += 1
    for c in counts.values():
        c["missing"] = c["items"] - c["predicted"]
    return {"by_task": {t: counts[t] for t in tasks}, "all": counts[None]}


def score_items(items: Sequence[Item], outputs: Mapping[str, str], llm: Any = None) -> list[Scored]:
    """Extract and judge every item that has an output (items without one are left out: see ``coverage``)."""
    out = []
    for it in items:
        if it.id in outputs:
            answer = extract(outputs[it.id], it, llm)
            out.append(Scored(it, answer, is_correct(answer, it), answer.value if answer.kind == "option" else ""))
    return out


def score(items: Sequence[Item], outputs: Mapping[str, str], llm: Any = None) -> dict[str, Any]:
    """The whole MIOH report (see the module docstring) as a JSON-ready dict."""
    items = [it for it in items if it.benchmark == BENCHMARK]
    all_scored = score_items(items, outputs, llm)
    main_items = [it for it in items if not scored_apart(it)]  # the decomposed ablation's questions (Fig. 5)
    scored = [s for s in all_scored if not scored_apart(s.item)]
    decomposed_scored = [s for s in all_scored if scored_apart(s.item)]
    paper = [s for s in scored if not is_control(s.item)]  # the paper's figures: contexts always false
    t1 = table1(paper)
    return {
        "table1": t1,
        "figure3": by_question_type(paper),
        "n_images": by_n_images(paper),
        "context_controls": context_controls(scored),
        "robustness": robustness(t1),
        "abstentions": abstentions(scored),
        "letters": letter_distribution(scored),
        "decomposed": decomposed(scored, decomposed_scored),
        "coverage": coverage(main_items, scored),
        "paired": paired_metric((s.item, s.correct) for s in scored),
        "extraction": dict(sorted(Counter(s.answer.kind for s in all_scored).items())),
        "llm_fallback": llm is not None,
        "items": [{"id": s.item.id, "task": s.item.task, "question_type": s.item.question_type,
                   "pressure": s.item.pressure, "context_truth": s.item.provenance.get("context_truth"),
                   "answer": s.item.answer, "kind": s.answer.kind,
                   "value": s.answer.value, "correct": s.correct} for s in all_scored],
    }


# ------------------------------------------------------------------------------------------------ front end


@dataclass(kw_only=True)
class MiohScoreOptions:
    """MIOH's own options: the optional LLM fallback for answers the rules cannot parse (off by default)."""

    llm_fallback: bool = option(False, help="ask the --llm-model which option an unparsed answer chose (cached) "
                                            "(default off)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """:class:`MiohScoreOptions` and the ``--llm-*`` options of the fallback reader."""
    add_options(parser, MiohScoreOptions)
    add_llm_arguments(parser, title="LLM fallback for unparsed answers (optional; default off)",
                      model_help="model that reads unparsed answers (with --llm-fallback)")


def run(items: Sequence[Item], predictions: Mapping[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """``results.json`` content for the front end (``predictions``: id -> ``Prediction``)."""
    llm = None
    if getattr(args, "llm_fallback", False):
        config = llm_config(args)
        if not config.enabled:
            raise ConfigError("--llm-fallback needs --llm-model (and --llm-base-url or OPENAI_BASE_URL)")
        llm = make_client(config)
    return score(items, outputs_of(predictions), llm)


def _pct(cell: Mapping[str, Any] | float | None) -> str:
    value = cell.get("accuracy") if isinstance(cell, Mapping) else cell
    return "-" if value is None else f"{100 * value:.1f}"


def print_report(results: Mapping[str, Any]) -> None:
    """Table 1, Fig. 3, number of images, robustness, abstentions, letters, decomposed, coverage (80 columns)."""
    model = (results.get("meta") or {}).get("model") or "model"
    t1 = results["table1"]
    cols = ["task", *(label for _, label in PRESSURE_COLUMNS), "Avg", "n"]
    rows = [[t, *(_pct(row[p]) for p, _ in PRESSURE_COLUMNS), _pct(row["average"]), row["average"]["n"]]
            for t, row in t1.items()]
    stdout.print(table(f"MIOH accuracy (%) - {model} (Table 1)", cols, rows))
    f3 = results["figure3"]
    qtypes = list(f3["type"])
    rows = [[t, *(_pct(v[q]) for q in qtypes)] for t, v in f3["task_x_type"].items()]
    rows.append(["all", *(_pct(f3["type"][q]) for q in qtypes)])
    stdout.print(table("Accuracy (%) by question type (Fig. 3)", ["task", *qtypes], rows))
    ni = results["n_images"]
    if ni["sizes"]:
        rows = [[t, *(_pct(v[str(n)]) for n in ni["sizes"])] for t, v in ni["by_task"].items()]
        stdout.print(table(f"Accuracy (%) by number of images ({ni['families']} families)",
                           ["task", *(f"{n} images" for n in ni["sizes"])], rows))
    ctl = results.get("context_controls") or {}
    rows = [[t, p, _pct(v["misleading"]), v["misleading"]["n"], _pct(v["control"]), v["control"]["n"],
             "-" if v["gap"] is None else f"{100 * v['gap']:+.1f}"]
            for t, by in ctl.items() for p, v in by.items()]
    if any(v["control"]["n"] for by in ctl.values() for v in by.values()):
        stdout.print(table("Misleading context vs true control (%; LC columns: misleading)",
                           ["task", "pressure", "misleading", "n", "control", "n", "gap"], rows))
    rob = results["robustness"]
    rows = [[t, _pct(v["easy"]), _pct(v["pressured"]), "-" if v["robustness"] is None else f"{v['robustness']:.2f}",
             *("-" if v["drop"][p] is None else f"{100 * v['drop'][p]:+.1f}" for p, _ in PRESSURE_COLUMNS[1:])]
            for t, v in rob.items()]
    stdout.print(table("Robustness: drop from easy in points (Fig. 4)",
                       ["task", "easy", "pressured", "ratio", *(label for _, label in PRESSURE_COLUMNS[1:])], rows))
    rows = [[k, v["offered"], v["not_the_answer"], v["chosen_wrongly"], _pct(v["wrong_rate"]), _pct(v["recall"])]
            for k, v in results["abstentions"].items()]
    stdout.print(table("Abstention options chosen wrongly", ["option", "offered", "not answer", "chosen",
                                                             "wrong %", "recall %"], rows))
    let = results["letters"]
    if let["letters"]:
        rows = [["model", *(let["model"][c] for c in let["letters"])],
                ["truth", *(let["truth"][c] for c in let["letters"])]]
        stdout.print(table(f"Answer letters (position bias; chi2 {let['chi2']}, dof {let['dof']})",
                           ["", *let["letters"]], rows))
    dec = results.get("decomposed")
    if dec:
        rows = [[p, v["groups"], _pct(v["comprehensive_accuracy"]), _pct(v["decomposed_accuracy"])]
                for p, v in dec["by_pressure"].items()]
        rows.append(["all", dec["groups"], _pct(dec["comprehensive_accuracy"]), _pct(dec["decomposed_accuracy"])])
        stdout.print(table("Existence: multi-image vs decomposed single-image (Fig. 5)",
                           ["pressure", "groups", "multi-image %", "decomposed %"], rows))
        stdout.print(f"decomposed yes/no answers: {_pct(dec['yes_ratio'])}% yes (truth {_pct(dec['truth_yes_ratio'])}%)")
    cov = results["coverage"]
    rows = [[t, v["items"], v["predicted"], v["missing"], v["unparsed"], v["refusal"]]
            for t, v in [*cov["by_task"].items(), ("all", cov["all"])]]
    stdout.print(table("Coverage (unparsed answers are scored wrong, never guessed)",
                       ["task", "items", "predicted", "missing", "unparsed", "refusal"], rows))
    if "paired" in results:
        stdout.print(paired_summary(results["paired"]))


# ------------------------------------------------------------------------------------------------ plots


def plot_accuracy_robustness(runs: Sequence[tuple[str, Mapping[str, Any]]], path: str | Path) -> Path:
    """Fig. 4: easy accuracy (x) against robustness (y); one marker per run (overall) and small ones per task."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.5))
    markers = "os^Dv<>p*h"
    for k, (name, results) in enumerate(runs):
        rob = results["robustness"]
        overall = rob.get("overall", {})
        if overall.get("easy") is not None and overall.get("robustness") is not None:
            ax.scatter([100 * overall["easy"]], [overall["robustness"]], s=120, marker=markers[k % len(markers)],
                       label=name, zorder=3)
        for task, v in rob.items():
            if task != "overall" and v["easy"] is not None and v["robustness"] is not None:
                ax.scatter([100 * v["easy"]], [v["robustness"]], s=25, marker=markers[k % len(markers)], alpha=0.5)
                ax.annotate(task, (100 * v["easy"], v["robustness"]), fontsize=7, alpha=0.7,
                            xytext=(3, 3), textcoords="offset points")
    ax.axhline(1.0, color="grey", lw=0.8, ls="--")
    ax.set_xlabel("accuracy on easy questions (%)")
    ax.set_ylabel("robustness (mean pressured / easy accuracy)")
    ax.set_xlim(0, 100)
    ax.set_title("MIOH: accuracy-robustness (Fig. 4)")
    ax.legend(fontsize=8)
    return save_png(fig, path)


def plot_pressures(results: Mapping[str, Any], path: str | Path) -> Path:
    """Fig. 3-style bars: accuracy per task under each pressure."""
    plt = pyplot()
    t1 = {t: v for t, v in results["table1"].items() if t != "overall"}
    fig, ax = plt.subplots(figsize=(7, 3.8))
    width = 0.8 / len(PRESSURE_COLUMNS)
    for k, (p, label) in enumerate(PRESSURE_COLUMNS):
        xs = [i + k * width for i in range(len(t1))]
        ax.bar(xs, [100 * (v[p]["accuracy"] or 0) for v in t1.values()], width, label=label)
    ax.set_xticks([i + 0.4 - width / 2 for i in range(len(t1))], list(t1))
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"MIOH by task and pressure - {(results.get('meta') or {}).get('model') or 'model'}")
    ax.legend(fontsize=7, ncol=3)
    return save_png(fig, path)


def plot_n_images(results: Mapping[str, Any], path: str | Path) -> Path | None:
    """Accuracy against the number of images (the ``n_images`` families), one line per task and overall."""
    ni = results["n_images"]
    if len(ni["sizes"]) < 2:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for task, cells in ni["by_task"].items():
        ys = [None if cells[str(n)]["accuracy"] is None else 100 * cells[str(n)]["accuracy"] for n in ni["sizes"]]
        ax.plot(ni["sizes"], ys, "-o" if task != "overall" else "-k", lw=1 if task != "overall" else 2.5,
                label=task)
    ax.set_xticks(ni["sizes"])
    ax.set_xlabel("images per question")
    ax.set_ylabel("accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"Accuracy vs number of images ({ni['families']} families)")
    ax.legend(fontsize=7)
    return save_png(fig, path)


def plot_decomposed(results: Mapping[str, Any], path: str | Path) -> Path | None:
    """Fig. 5: multi-image comprehensive vs decomposed single-image accuracy (existence)."""
    dec = results.get("decomposed")
    if not dec:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(4, 3.5))
    values = [100 * (dec["comprehensive_accuracy"] or 0), 100 * (dec["decomposed_accuracy"] or 0)]
    ax.bar(["multi-image", "decomposed"], values, color=["tab:red", "tab:blue"])
    ax.set_ylim(0, 100)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"Existence ({dec['groups']} groups)")
    return save_png(fig, path)


def plots(results: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    model = (results.get("meta") or {}).get("model") or "model"
    written = [plot_accuracy_robustness([(model, results)], out / "accuracy_robustness.png"),
               plot_pressures(results, out / "pressures.png")]
    optional = [plot_n_images(results, out / "n_images.png"), plot_decomposed(results, out / "decomposed.png")]
    return written + [p for p in optional if p is not None]


# ------------------------------------------------------------------------------------------------ compare


@dataclass(kw_only=True)
class CompareOptions:
    results: list[str] = option(metavar="FILE", positional=True,
                                help="results.json files of mirage score mioh")
    out: str = option(metavar="FILE", help="the PNG to write")


def compare_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m scoring.mioh`` (``mirage compare``)."""
    p = ArgumentParser(prog=prog("python -m scoring.mioh"),
                       description="Fig. 4 (accuracy-robustness) over several runs' results.json")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_command(sub, "compare", CompareOptions, compare,
                help="one accuracy-robustness plot for several results.json files",
                description="One accuracy-robustness plot (Fig. 4) for several MIOH results.json files of "
                            "mirage score mioh; other benchmarks' files are skipped.")
    return p


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """``python -m scoring.mioh compare RESULTS.json... --out FILE`` (``mirage compare``)."""
    return run_command(compare_parser(), argv)


def compare(ns: CompareOptions) -> int:
    """Fig. 4 over several models' results. The files of other benchmarks are skipped with a word on stderr, so
    ``results/*/results.json`` works in a folder that holds other benchmarks' results too."""
    runs = [run for run in map(_compare_input, ns.results) if run is not None]
    if not runs:
        raise ConfigError(f"no MIOH results among the {len(ns.results)} file(s) given")
    try:
        print(plot_accuracy_robustness(runs, ns.out))
    except ImportError:
        raise ConfigError("the plot needs matplotlib: pip install 'mirage-bench[release]' "
                          "(or bash .ci/install-release.sh)") from None
    return 0


def _compare_input(path: str) -> tuple[str, dict[str, Any]] | None:
    """``(run name, results)`` of a MIOH results.json; ``None`` (said on stderr) for another benchmark's."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except ValueError:
        data = None
    meta = (data.get("meta") or {}) if isinstance(data, dict) else {}
    benchmark = meta.get("benchmark") if isinstance(meta, dict) else None
    if benchmark is not None and benchmark != BENCHMARK:
        print(f"skipped {path}: a {benchmark} results.json, not MIOH", file=sys.stderr)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("robustness"), dict):
        raise ConfigError(f"{path}: not a results.json of python -m scoring mioh")
    return meta.get("model") or Path(path).parent.name, data


if __name__ == "__main__":
    raise SystemExit(main())
