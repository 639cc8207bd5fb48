"""Could it be answered without the images? The blind audit: text-only strategies, cell by cell.

An item is worth only what a model cannot get right without looking. Hand rules catch the shortcuts someone
thought of (always "A", the longest option); a build ships the ones nobody thought of: a misleading context that is
always false, a gold that is always the second smallest number, a relation that follows from the subject noun. So
besides the rules, a **learner** that reads only the text is trained to pick the answer and judged on items it did
not see:

* every closed item (MCQ, or yes/no read as the two choices "yes" and "no") becomes one row per choice, described by
  generic text features: the choice's words and position, its length rank, its rank among numeric choices,
  whether its distinguishing words occur in the context or the question, and the crossings of question words and
  context words with those (``choice_features``). No feature names a benchmark's wording, so a shortcut of a kind
  nobody planned for is learned like any other;
* a logistic regression (scikit-learn) scores the rows; the item's answer is its best-scoring choice. It is fitted
  by averaged stochastic gradient descent (``SGDClassifier``, ``EPOCHS`` passes) with the L2 penalty of
  ``LogisticRegression(C=1)`` (``alpha = 1 / rows``): an exact solver (liblinear) picks the same choices within a
  point on a paper-scale MIOH build but costs ten times as much, and the audit runs inside every build's lint;
* the answers are cross-validated (``FOLDS`` folds) with **groups = image sets**: items over the same images
  (MM-SAP's shuffled variants, MIOH's decomposed questions) are never on both sides of a split, so the learner
  cannot look the answer up from a sibling. One model per (benchmark, task).

The rules beside it (``RULES``) are chosen on the training folds where they have a parameter (the most frequent
answer letter, the gold's rank among numeric options) and fixed otherwise (longest option, always "yes", always
refuse); the language prior of :mod:`builders.lint.independence` (the option text most often right elsewhere,
leave-one-out) is the "most frequent text" rule. A text-only LLM, when one is configured, joins as a column.

**Cells.** Each task is reported whole, per pressure and per question type. A cell's accuracy counts an item right
(1), wrong (0), or, where a rule has nothing to say (no numeric options, no refusal option), at chance
(``1/choices``). Shuffled variants of one question count as one question: the interval is the Wilson 95 % interval
of the cell's accuracy over its number of questions (``scipy.stats.binomtest``). A cell is **flagged** when the
learner's interval (or the text-only LLM's) has its lower bound above chance + ``MARGIN``: the evidence says a
blind strategy beats a guess by more than five points. Rules whose bound is above it are listed with the cell. A
task whose answer is fixed by design (``fixed_answers`` of :mod:`builders.lint.independence`: MM-SAP's BeyondVisQA
is answered by refusing) is reported apart, never flagged.

**One verdict per set.** The audit reads the items in the order of their ids, so a file and its import (the same
items in another order) get the same folds, the same fits and the same verdict. Items a learner cannot tell apart
(**twins**: the same question, context and options about the same source image, ``provenance.image_id`` where
the items have one, with different answers: POPEv2 asks each question of a COCO image and of its edited copy) are
one group in the folds, so the learner never trains on a twin's opposite answer, and a cell in which every item
has its twin outside the cell (POPEv2's ``normal`` and ``counterfactual``) is reported but never flagged: a
text-only strategy gives both twins the same answer, so it is exactly at chance over each pair, and the cell's
figure only tells which side its picks fall on.

Open items (no choices) are audited beside them by a text-only baseline that writes the reference
(:mod:`builders.lint.blind_open`), their cells flagged by the same rule.

scikit-learn is the ``lint`` extra; without it the audit reports itself off and says what to install.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Mapping, Sequence

from builders.items import OPTION_LETTERS, Item, canonical_json
from builders.lint.base import normalise
from builders.lint.blind_open import STRATEGY, open_scores
from builders.lint.blind_pairs import learner_pairs
from builders.lint.priors import mcq_prior, yes_no_prior
from builders.quality import guess_chance
from builders.semantics.format import YES_NO, choices, gold_index, is_closed, is_multiple_choice, is_yes_no
from builders.semantics.options import longest_option_index, refusal_option

MARGIN = 0.05
"""How far above chance a blind learner's lower 95 % bound must be for its cell to be flagged."""
FLAGGING = ("learned", "text_only_llm", STRATEGY)
"""The strategies whose verdict flags a cell: the learners. The hand rules are reported beside them (the learner
has features for each: position, length rank, the choice's text, numeric rank), but not tested one by one: six
rules in each of a task's ten cells are sixty tests, and one of them beats its bound by luck in a build with no
shortcut at all (seen: "longest" at 40 % against 20 % over 35 random golds). Open items' cells are flagged by
their text-only baseline (:mod:`builders.lint.blind_open`)."""
LEVEL = 0.95
FOLDS = 5
HASH_FEATURES = 1 << 20
"""Hashed feature space of the learner: room for every (question word x choice word) crossing of a large build
without collisions that matter."""
EPOCHS = 20
"""Passes of the learner's stochastic gradient descent over its training rows (averaged, so the weights settle)."""
INSTALL = "pip install -e '.[lint]' (scikit-learn)"

OPEN_SUFFIX = ":open"
"""Open cells are named after their task with this suffix ("reefknot/cognition:open"): a task may hold closed
and open items (Reefknot's Y/N, MCQ and VQA), and a cell's name says which items it holds."""
_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"^\s*-?\d+(?:\.\d+)?\s*$")


@lru_cache(maxsize=1 << 16)
def words(text: str) -> tuple[str, ...]:
    """Lower-case word tokens (templated texts repeat: cached)."""
    return tuple(_WORD.findall(text.lower()))


def numeric_ranks(options: Sequence[str]) -> list[int | None]:
    """Each option's rank among the item's numeric options (0 = smallest), ``None`` for the others; all ``None``
    when fewer than two options are numbers."""
    values = [float(o) if _NUMBER.match(o) else None for o in options]
    numbers = sorted({v for v in values if v is not None})
    if len(numbers) < 2:
        return [None] * len(options)
    return [None if v is None else numbers.index(v) for v in values]


def choice_features(item: Item) -> list[list[str]]:
    """One list of string features per choice of ``item`` (see the module docstring). Distinguishing words are a
    choice's words that not every choice shares ("3" of "Image 3" among "Image 1".."Image 4")."""
    texts = choices(item)
    n = len(texts)
    choice_words = [set(words(t)) for t in texts]
    common = set.intersection(*choice_words) if choice_words else set()
    question = set(words(item.question))
    context = set(words(item.context))
    lengths = sorted(range(n), key=lambda k: (-len(texts[k]), k))
    length_rank = {k: r for r, k in enumerate(lengths)}
    ranks = numeric_ranks(texts)
    count = sum(r is not None for r in ranks)
    rows = []
    for k, text in enumerate(texts):
        own = choice_words[k] - common
        in_context = bool(own & context)
        in_question = bool(own & question)
        f = [f"pos={k}", f"pos_end={n - 1 - k}", f"len_rank={length_rank[k]}", f"choice={normalise(text)}",
             f"in_context={in_context}", f"in_question={in_question}"]
        if ranks[k] is not None:
            f += [f"num_rank={ranks[k]}", f"num_rank_top={count - 1 - ranks[k]}"]
        elif count:
            f.append("num_other")
        f += [f"w={w}" for w in choice_words[k]]
        f += [f"q={q}|w={w}" for q in question for w in choice_words[k]]
        f += [f"q={q}|in_question={in_question}" for q in question]
        f += [f"c={c}|in_context={in_context}" for c in context]
        rows.append(f)
    return rows


def image_set(item: Item) -> str:
    """The group of an item in cross-validation: its set of images (names, order ignored)."""
    return canonical_json(sorted(p.rsplit("/", 1)[-1] for p in item.images))


def video(item: Item) -> str:
    """An open item's group in the folds (:mod:`builders.lint.blind_open`): its video, else its image set."""
    source = item.provenance.get("video_id")
    return image_set(item) if source is None else "video:" + canonical_json(source)


def twins(items: Sequence[Item], members: Sequence[int]) -> dict[int, str]:
    """Item index -> its twin set's key, for the members that have a twin (the module docstring): the same text
    the learner reads, the same source image (``provenance.image_id``, else the image set), another answer."""
    sets: dict[tuple, list[int]] = defaultdict(list)
    for i in members:
        it = items[i]
        source = it.provenance.get("image_id")
        sets[(image_set(it) if source is None else str(source), it.question, it.context, choices(it))].append(i)
    return {i: canonical_json(list(key)) for key, group in sets.items()
            if len({gold_index(items[j]) for j in group}) > 1
            for i in group}


# ------------------------------------------------------------------------------------------------ strategies

Predictions = dict[int, "int | None"]
"""Item index -> the choice a strategy picks (``None``: it has nothing to say; counted at chance)."""


def learner(rows: int) -> Any:
    """The unfitted learner for ``rows`` training rows (see the module docstring)."""
    from sklearn.linear_model import SGDClassifier

    return SGDClassifier(loss="log_loss", alpha=1 / max(rows, 1), max_iter=EPOCHS, tol=None, average=True,
                         random_state=0)


def learned(items: Sequence[Item], members: Sequence[int], folds: Sequence[Sequence[int]]) -> Predictions:
    """Out-of-fold picks of a logistic regression over :func:`choice_features` (one model per fold)."""
    import numpy as np
    from sklearn.feature_extraction import FeatureHasher

    rows: list[list[str]] = []
    owner: list[int] = []
    target: list[int] = []
    start: dict[int, int] = {}
    for i in members:
        start[i] = len(rows)
        feats = choice_features(items[i])
        rows += feats
        owner += [i] * len(feats)
        right = gold_index(items[i])
        target += [int(k == right) for k in range(len(feats))]
    hashed = FeatureHasher(HASH_FEATURES, input_type="string", alternate_sign=False).transform(rows).tocsr()
    X = hashed[:, np.unique(hashed.indices)]  # only the columns in use
    y = np.asarray(target)
    owners = np.asarray(owner)
    out: Predictions = {}
    for test in folds:
        in_test = np.isin(owners, test)
        if len(set(y[~in_test])) < 2:  # nothing to learn from: no pick
            out.update({i: None for i in test})
            continue
        model = learner(int((~in_test).sum()))
        model.fit(X[~in_test], y[~in_test])
        test_rows = [r for i in test for r in range(start[i], start[i] + len(choices(items[i])))]
        scores = model.decision_function(X[test_rows])
        at = 0
        for i in test:
            k = len(choices(items[i]))
            out[i] = int(np.argmax(scores[at:at + k]))
            at += k
    return out


def _trained(pick: Callable[[Item, Counter], "int | None"], learn: Callable[[Item], Any]) -> Callable:
    """A rule with one parameter, chosen on the training folds: ``learn`` says what each training item
    contributes to a Counter, ``pick`` answers a test item from it."""
    def rule(items: Sequence[Item], members: Sequence[int], folds: Sequence[Sequence[int]]) -> Predictions:
        out: Predictions = {}
        for test in folds:
            test_set = set(test)
            seen = Counter(v for i in members if i not in test_set for v in [learn(items[i])] if v is not None)
            out.update({i: pick(items[i], seen) for i in test})
        return out
    return rule


def _most_common_letter(item: Item, seen: Counter) -> int | None:
    best = [v for v, _ in seen.most_common() if v < len(choices(item))]
    return best[0] if best else None


def _rank_of_gold(item: Item) -> int | None:
    return numeric_ranks(choices(item))[gold_index(item)]


def _pick_rank(item: Item, seen: Counter) -> int | None:
    ranks = numeric_ranks(choices(item))
    for rank, _ in seen.most_common():
        if rank in ranks:
            return ranks.index(rank)
    return None


def _fixed(pick: Callable[[Item], "int | None"]) -> Callable:
    def rule(items: Sequence[Item], members: Sequence[int], folds: Sequence[Sequence[int]]) -> Predictions:
        return {i: pick(items[i]) for i in members}
    return rule


def _longest(item: Item) -> int | None:
    return longest_option_index(item.options) if item.options else None


def _refusal(item: Item) -> int | None:
    return refusal_option(item.options)


def _most_frequent_text(items: Sequence[Item], members: Sequence[int], folds: Sequence[Sequence[int]]) -> Predictions:
    out: Predictions = {}
    mcq = [i for i in members if is_multiple_choice(items[i])]
    for i, (letter, _) in mcq_prior(items, mcq).items():
        out[i] = OPTION_LETTERS.index(letter)
    yes_no = [i for i in members if is_yes_no(items[i])]
    for i, (answer, _) in yes_no_prior(items, yes_no).items():
        out[i] = YES_NO.index(answer)
    return out


RULES: dict[str, Callable[[Sequence[Item], Sequence[int], Sequence[Sequence[int]]], Predictions]] = {
    "letter": _trained(_most_common_letter, gold_index),
    "longest": _fixed(_longest),
    "frequent_text": _most_frequent_text,
    "numeric_rank": _trained(_pick_rank, _rank_of_gold),
    "always_yes": _fixed(lambda it: YES_NO.index("yes") if is_yes_no(it) else None),
    "always_refuse": _fixed(_refusal),
}
"""The hand rules, each a strategy over one task's items: the most frequent answer letter (or yes/no), the
longest option, the option text most often right elsewhere, the gold's rank among numeric options, always "yes",
always the refusal option."""


# ------------------------------------------------------------------------------------------------ cells


@dataclass
class Cell:
    """One row of the audit: a task whole, or one of its pressures or question types."""

    name: str
    members: list[int]
    questions: int
    chance: float
    accuracy: dict[str, float] = field(default_factory=dict)
    interval: dict[str, tuple[float, float]] = field(default_factory=dict)
    by_design: str | None = None
    twinned: bool = False
    """Every item has its twin outside the cell (:func:`twins`): reported, never flagged."""
    open: bool = False
    """An open-answer cell: scored by :mod:`builders.lint.blind_open`'s baseline, its chance the shuffled floor."""

    @property
    def above(self) -> list[str]:
        """The strategies whose lower bound is above chance + MARGIN (none in a by-design or twinned cell)."""
        if self.by_design is not None or self.twinned:
            return []
        return [s for s, (low, _) in self.interval.items() if low > self.chance + MARGIN]

    @property
    def flagged(self) -> bool:
        return any(s in FLAGGING for s in self.above)

    def to_json(self) -> dict[str, Any]:
        learner = next((s for s in ("learned", STRATEGY) if s in self.accuracy), None)
        low, high = self.interval.get(learner, (None, None)) if learner else (None, None)
        out: dict[str, Any] = {
            "cell": self.name, "n": self.questions, "items": len(self.members), "chance": round(self.chance, 4),
            "accuracy": _round(self.accuracy.get(learner)) if learner else None, "low95": _round(low), "high95": _round(high),
            "flagged": self.flagged, "above_chance": self.above,
            "strategies": {s: {"accuracy": _round(a), "low95": _round(self.interval[s][0])}
                           for s, a in self.accuracy.items()},
        }
        if self.by_design is not None:
            out["by_design"] = self.by_design
        if self.twinned:
            out["twinned"] = True
        if self.open:
            out["open"] = True
        return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def wilson(successes: float, n: int) -> tuple[float, float]:
    """The Wilson 95 % interval of a proportion (successes rounded to whole questions)."""
    from scipy.stats import binomtest

    k = min(n, max(0, int(round(successes))))
    ci = binomtest(k, n).proportion_ci(confidence_level=LEVEL, method="wilson")
    return float(ci.low), float(ci.high)


def question_key(item: Item, index: int) -> Any:
    """Shuffled variants of one question (``provenance.group``) are one question."""
    group = item.provenance.get("group")
    return index if group is None else canonical_json(group)


def folds_of(items: Sequence[Item], members: Sequence[int], twin: Mapping[int, str] | None = None,
             group: Callable[[Item], str] | None = None) -> list[list[int]]:
    """``FOLDS`` test folds over ``members``, grouped by image set (scikit-learn's GroupKFold), variants of one
    question (``provenance.group``: MM-SAP's shuffles, MIOH's question asked over 2, 4, 8 of its images) and
    twins (``twin``: :func:`twins`) kept together even where their image sets differ; fewer folds when there are
    fewer groups, none when only one. ``group``: an item's group in place of its image set (the open audit's
    video)."""
    from sklearn.model_selection import GroupKFold

    twin = twin or {}
    group = group or image_set
    groups = ["twin:" + twin[i] if i in twin else group(items[i]) if items[i].provenance.get("group") is None
              else "group:" + canonical_json(items[i].provenance["group"]) for i in members]
    n = min(FOLDS, len(set(groups)))
    if n < 2:
        return []
    return [[members[j] for j in test] for _, test in GroupKFold(n_splits=n).split(members, groups=groups)]


def cells_of(items: Sequence[Item], members: Sequence[int], task: str) -> list[tuple[str, list[int]]]:
    """The task whole, then per pressure and per question type (where the task has more than one)."""
    out = [(task, list(members))]
    for attr, label in (("pressure", "pressure"), ("question_type", "type")):
        values: dict[str, list[int]] = defaultdict(list)
        for i in members:
            values[getattr(items[i], attr)].append(i)
        if len(values) > 1:
            out += [(f"{task} {label}={v}", m) for v, m in sorted(values.items())]
    return out


def cell_members(items: Sequence[Item]) -> dict[str, list[int]]:
    """Cell name -> the closed items in it (the names :func:`audit` reports)."""
    tasks: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        if is_closed(it):
            tasks[(it.benchmark, it.task)].append(i)
    return {name: m for (b, t), members in tasks.items() for name, m in cells_of(items, members, f"{b}/{t}")}


def audit(items: Sequence[Item], fixed: Mapping[tuple[str, str], str] | None = None,
          extra: Mapping[str, Mapping[int, bool]] | None = None) -> dict[str, Any]:
    """The audit of every item, closed and open (:mod:`builders.lint.blind_open`): ``{"cells": [...], "flagged":
    [...], ...}`` (build.json ``lint.blind``).

    ``fixed``: (benchmark, task) -> the answer fixed by design (its cells are reported apart, never flagged);
    ``extra``: more strategies already run, name -> {item index: right?} (the text-only LLM)."""
    try:
        import sklearn  # noqa: F401
    except ImportError:
        return {"off": f"scikit-learn is not installed: {INSTALL}", "cells": [], "flagged": []}
    fixed = fixed or {}
    tasks: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        if is_closed(it):
            tasks[(it.benchmark, it.task)].append(i)
    cells: list[Cell] = []
    right_by: dict[str, dict[int, float]] = {}
    spoke: dict[str, set[int]] = {}  # strategy -> the items it picked a choice for (not left at chance)
    for (benchmark, task), members in sorted(tasks.items()):
        members.sort(key=lambda i: (items[i].id, i))  # the order of the ids, not of the file (the docstring)
        twin = twins(items, members)
        sizes = Counter(twin.values())
        folds = folds_of(items, members, twin)
        if not folds:
            continue
        picks = {"learned": learned(items, members, folds)}
        picks.update({name: rule(items, members, folds) for name, rule in RULES.items()})
        for name, chosen in picks.items():
            scores = right_by.setdefault(name, {})
            for i in members:
                pick = chosen.get(i)
                at_chance = guess_chance(items[i], len(choices(items[i])))
                scores[i] = at_chance if pick is None else float(pick == gold_index(items[i]))
                if pick is not None:
                    spoke.setdefault(name, set()).add(i)
        for name, right in (extra or {}).items():
            right_by.setdefault(name, {}).update({i: float(r) for i, r in right.items()})
            spoke.setdefault(name, set()).update(right)
        for cell_name, cell_members in cells_of(items, members, f"{benchmark}/{task}"):
            cell = make_cell(items, cell_name, cell_members, right_by, spoke, fixed.get((benchmark, task)))
            cell.twinned = _twinned_outside(cell_members, twin, sizes)
            cells.append(cell)
    open_items = _open_cells(items, cells)
    flagged = [c.name for c in cells if c.flagged]
    learned_right = right_by.get("learned", {})
    return {
        "cells": [c.to_json() for c in cells],
        "flagged": flagged,
        "by_design": sorted({c.name.split(" ")[0] for c in cells if c.by_design is not None}),
        "overall": _overall(items, learned_right),
        "open_items": open_items,
        "margin": MARGIN,
        "learned_right": sorted(i for i, r in learned_right.items() if r == 1.0),
        "paired": learner_pairs(items, learned_right),
    }


def _open_cells(items: Sequence[Item], cells: list[Cell]) -> int:
    """Append the open items' cells (:mod:`builders.lint.blind_open`) to ``cells``; the number of open items."""
    tasks: dict[tuple[str, str], list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        if not is_closed(it):
            tasks[(it.benchmark, it.task)].append(i)
    for (benchmark, task), members in sorted(tasks.items()):
        members.sort(key=lambda i: (items[i].id, i))
        folds = folds_of(items, members, group=video)
        if not folds:
            continue
        right, floor = open_scores(items, members, folds)
        for cell_name, cell_members in cells_of(items, members, f"{benchmark}/{task}{OPEN_SUFFIX}"):
            cell = make_cell(items, cell_name, cell_members, {STRATEGY: right}, {STRATEGY: set(right)}, None, floor)
            cell.open = True
            cells.append(cell)
    return sum(len(m) for m in tasks.values())


def _twinned_outside(members: Sequence[int], twin: Mapping[int, str], sizes: Mapping[str, int]) -> bool:
    """Whether every item of a cell has a twin outside it (the cell splits twins a learner cannot tell apart);
    ``sizes``: each twin set's size in the task."""
    if not members or any(i not in twin for i in members):
        return False
    inside = Counter(twin[i] for i in members)
    return all(n < sizes[key] for key, n in inside.items())


def make_cell(items: Sequence[Item], name: str, members: list[int], right_by: Mapping[str, Mapping[int, float]],
              spoke: Mapping[str, set[int]], by_design: str | None, chance: Mapping[int, float] | None = None
              ) -> Cell:
    """A cell's figures for every strategy that picked a choice for at least one of its items (a rule with
    nothing to say anywhere in the cell, "always refuse" where no option refuses, is left out). ``chance``: each
    item's chance score where it is not a guess among its choices (open items' shuffled floor)."""
    questions: dict[Any, list[int]] = defaultdict(list)
    for i in members:
        questions[question_key(items[i], i)].append(i)
    n = len(questions)
    chance = sum(chance[i] if chance is not None else guess_chance(items[i], len(choices(items[i])))
                 for i in members) / len(members)
    cell = Cell(name, members, n, chance, by_design=by_design)
    for strategy, right in right_by.items():
        if not all(i in right for i in members) or spoke.get(strategy, set()).isdisjoint(members):
            continue
        # each question weighs one: the mean over its variants
        per_question = [sum(right[i] for i in group) / len(group) for group in questions.values()]
        accuracy = sum(per_question) / n
        cell.accuracy[strategy] = accuracy
        cell.interval[strategy] = wilson(accuracy * n, n)
    return cell


def _overall(items: Sequence[Item], right: Mapping[int, float]) -> dict[str, Any] | None:
    """The learner's accuracy over every audited item, against chance (the card's headline figure)."""
    if not right:
        return None
    n = len(right)
    chance = sum(guess_chance(items[i], len(choices(items[i]))) for i in right) / n
    accuracy = sum(right.values()) / n
    return {"n": n, "chance": round(chance, 4), "accuracy": round(accuracy, 4)}


def pct(value: float | None) -> str:
    return "-" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.0%}"
