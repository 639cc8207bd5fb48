"""The blind audit of open answers: could a reference be written from the question and context alone?

An open item (a Mementos description, a predictive continuation, Reefknot's VQA relation) has no choices to pick
from, so the closed items' learner does not apply. Its text-only baseline **writes** the reference instead: the
reference of the training item whose question and context are nearest by TF-IDF (cosine, scikit-learn's
``TfidfVectorizer`` and ``NearestNeighbors``), cross-validated with the closed audit's folds, grouped by video
(:func:`builders.lint.blind.video`) so that clips of one video are never on both sides of a split.

It is scored with the metric the benchmark's spec names (``score``, ``open_metric``): Mementos' keyword F1 (the
mean of the object and the behaviour F1 over the stored reference keywords, :func:`filters.text.score_lists`);
Reefknot's exact judge (the normalised sentence equals one of the accepted answers, :func:`filters.text.plain_sentence`), the written
reference's relation put into the answer format the question gives (``in_format``: a writer who reads the
question names its two objects; a shuffled reference naming other objects would put chance at zero); token F1 (SQuAD's, articles dropped) where only an LLM judge exists (predictive's three judges). Its **chance floor** is the same metric with the references shuffled
within the task: each item scored against the reference of another item, ``SHUFFLES`` seeded permutations
averaged. A cell is flagged by the closed cells' rule (:class:`builders.lint.blind.Cell`): a score in [0, 1]
varies no more than a right/wrong answer with the same mean, so the closed cells' Wilson interval is a safe
(wide) interval of the mean score.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Sequence

from builders.items import Item
from builders.registry import find
from filters.text import normalise_keyword, plain_sentence, score_lists

STRATEGY = "nearest_reference"
"""The open baseline's name in a cell's strategies (one of :data:`builders.lint.blind.FLAGGING`)."""
SHUFFLES = 5
"""Seeded permutations of a task's references averaged into each item's chance floor."""


def _words(text: str) -> Counter:
    return Counter(plain_sentence(text).split())


def token_f1(reference: str, written: str) -> float:
    """SQuAD's token F1 of two texts (bags of lower-case words, articles dropped; 0 when either is empty)."""
    ref, out = _words(reference), _words(written)
    common = sum((ref & out).values())
    if not common:
        return 0.0
    precision, recall = common / sum(out.values()), common / sum(ref.values())
    return 2 * precision * recall / (precision + recall)


def _keywords(item: Item) -> dict[str, list[str]]:
    kw = item.provenance.get("keywords") or {}
    return {kind: [normalise_keyword(k) for k in kw.get(kind, ())] for kind in ("objects", "behaviours")}


def keyword_f1(item: Item, other: Item) -> float:
    """Mementos' metric of ``other``'s reference written for ``item``: the mean of the object and behaviour F1."""
    ref, out = _keywords(item), _keywords(other)
    return sum(score_lists(ref[k], out[k]).f1 for k in ref) / len(ref)


def _accepted(item: Item) -> list[str]:
    return [item.answer] + [str(a) for a in item.provenance.get("accepted_answers") or () if a != item.answer]


_FORMAT = re.compile(r"following format:\s*(.*<relation>.*?)\s*$")


def in_format(item: Item, other: Item) -> str:
    """``other``'s answer written in the answer format ``item``'s question gives ("The star is <relation> the
    hexagon."): ``other``'s relation between ``item``'s objects, as a writer who reads the question would put it
    (``other``'s answer as it is where either question gives no format or the answer does not fit it)."""
    mine, theirs = _FORMAT.search(item.question), _FORMAT.search(other.question)
    if not (mine and theirs):
        return other.answer
    before, _, after = theirs.group(1).partition("<relation>")
    found = re.fullmatch(re.escape(before.strip()) + r"\s*(.+?)\s*" + re.escape(after.strip()), other.answer.strip())
    return mine.group(1).replace("<relation>", found.group(1)) if found else other.answer


def relation_sentence(item: Item, other: Item) -> float:
    """Reefknot's exact judge of ``other``'s reference, put in ``item``'s answer format, written for ``item``."""
    written = plain_sentence(in_format(item, other))
    return float(any(plain_sentence(ref) == written for ref in _accepted(item)))


def best_token_f1(item: Item, other: Item) -> float:
    """Token F1 of ``other``'s reference against the best of ``item``'s accepted answers."""
    return max(token_f1(ref, other.answer) for ref in _accepted(item))


METRICS: dict[str, Callable[[Item, Item], float]] = {
    "keyword_f1": keyword_f1, "relation_sentence": relation_sentence, "token_f1": best_token_f1}
"""The open metrics a benchmark's spec may name (``open_metric``); token F1 for a benchmark Mirage does not know."""


def score(item: Item, other: Item) -> float:
    """The benchmark's metric of ``other``'s reference given as the answer to ``item`` (see the docstring)."""
    spec = find(item.benchmark)
    return METRICS[spec.open_metric if spec else "token_f1"](item, other)


def text(item: Item) -> str:
    return f"{item.context}\n{item.question}"


def nearest_reference(items: Sequence[Item], members: Sequence[int], folds: Sequence[Sequence[int]]
                      ) -> dict[int, int]:
    """Item index -> the training item whose text is nearest (out of fold; the first on a tie). Texts repeat
    (templated questions), so each distinct text is vectorised and searched once."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.neighbors import NearestNeighbors

    out: dict[int, int] = {}
    for test in folds:
        test_set = set(test)
        first: dict[str, int] = {}  # training text -> its first item
        for i in members:
            if i not in test_set:
                first.setdefault(text(items[i]), i)
        asked = list(dict.fromkeys(text(items[i]) for i in test))
        vectoriser = TfidfVectorizer()
        try:
            X = vectoriser.fit_transform(list(first))
        except ValueError:  # no word at all in the training texts: every neighbour is as near
            out.update({i: next(iter(first.values())) for i in test})
            continue
        finder = NearestNeighbors(n_neighbors=1, metric="cosine", algorithm="brute").fit(X)
        nearest = finder.kneighbors(vectoriser.transform(asked), return_distance=False)
        train = list(first.values())
        found = {t: train[int(k[0])] for t, k in zip(asked, nearest)}
        out.update({i: found[text(items[i])] for i in test})
    return out


def shuffled_floor(items: Sequence[Item], members: Sequence[int]) -> dict[int, float]:
    """Item index -> its mean score against the references of ``SHUFFLES`` seeded permutations of the task (an
    item drawn onto itself takes its neighbour in the permutation's order)."""
    import numpy as np

    rng = np.random.default_rng(0)
    n = len(members)
    floor = {i: 0.0 for i in members}
    for _ in range(SHUFFLES):
        order = rng.permutation(n)
        for at, k in enumerate(order):
            k = int(order[(at + 1) % n]) if k == at else int(k)
            floor[members[at]] += score(items[members[at]], items[members[k]]) / SHUFFLES
    return floor


def open_scores(items: Sequence[Item], members: Sequence[int], folds: Sequence[Sequence[int]]
                ) -> tuple[dict[int, float], dict[int, float]]:
    """The baseline's score and the chance floor of every member of one task (``folds``: grouped by video)."""
    picked = nearest_reference(items, members, folds)
    return {i: score(items[i], items[j]) for i, j in picked.items()}, shuffled_floor(items, members)
