"""Charades' three automated steps (Giraffe-Bench App. D.2, Fig. 7): which action of a video is held out.

1. **Last clause.** Punctuation (``. ! ? ; ,``) splits the description; the last non-empty piece is the clause.
   A leading coordinating conjunction ("and", "and then", "then", "but", "so", "before", "after") is removed.
   A clause without a subject (no ``nsubj``/``nsubjpass`` in spaCy's parse) inherits the subject of the closest
   earlier piece that has one ("A person opens a door, and walks in" -> "A person walks in").
2. **Verb-noun pair.** The clause's last noun, and the verb governing it (its first ``VERB`` ancestor); the pair
   of lemmas (``put book``) is matched to the action dictionary by cosine similarity, and the best class must be
   among the video's own action labels.
3. **Cut.** The video is cut at that action's start (of its latest instance, the one the last clause tells);
   frames before it are the context. The reference is what happens from the cut on: the clause from the verb of
   the pair (with its auxiliaries, and its subject - its own, else the one of the verb it is coordinated with,
   else the closest earlier one), so "A person sits on a chair eating a sandwich and then drinks from a cup" gives
   "A person drinks from a cup" and not the sitting and eating before the cut. The description before that
   (trailing conjunctions dropped) is the context text.

Choices where the paper is silent: the similarity is the cosine of lemma bags (stop words, "something" and
"somewhere" left out; the small English model has no word vectors) with the verb weighted like the noun; the best
class wins over the whole dictionary and must reach ``min_similarity`` (default 0.5: both words, or one word of a
two-word class); the latest instance of the class gives the cut. Ties (common: "pick book" is 0.50 from "Closing
a book", "Opening a book" and "Taking a book from somewhere" alike) are broken by the video's own labels: of the
tied classes, the one the video is labelled with wins; none is "not among the video's actions"; two or more are
ambiguous and skip the video (never the dictionary's file order, which says nothing about the video).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

LEADING_CONJUNCTIONS = ("and then", "and", "then", "but", "so", "before", "after", "finally")
SUBJECTS = frozenset({"nsubj", "nsubjpass"})
IGNORED_LEMMAS = frozenset({"something", "somewhere", "someone", "some", "a", "an", "the", "of", "on", "in", "at",
                            "to", "from", "with", "into", "onto", "off", "up", "down", "out"})


@dataclass(frozen=True)
class Prediction:
    """What the steps found: the held-out action and the texts around it."""

    clause: str
    """The last clause with its subject: the reference."""
    context_text: str
    """The description before the predicted part."""
    verb: str
    noun: str
    code: str
    similarity: float
    start: float
    """Cut point (seconds): the start of the matched action."""


@dataclass(frozen=True)
class Failure:
    step: int
    reason: str

    def __str__(self) -> str:
        return f"step {self.step}: {self.reason}"


def _pieces(description: str) -> list[str]:
    return [p.strip() for p in re.split(r"[.!?;,]+", description) if p.strip()]


def _strip_conjunction(text: str) -> str:
    lowered = text.lower()
    for word in LEADING_CONJUNCTIONS:
        if lowered == word or lowered.startswith(word + " "):
            return text[len(word):].strip()
    return text


def _subject(doc: Any) -> str | None:
    for token in doc:
        if token.dep_ in SUBJECTS:
            return doc[token.left_edge.i:token.right_edge.i + 1].text
    return None


KEPT_BEFORE_VERB = frozenset({"aux", "auxpass", "neg"})


def _from_verb(verb: Any) -> tuple[int, str | None]:
    """Where the held-out part of the clause begins and the subject to put before it: the verb with its
    auxiliaries before it, or from its own subject (then no subject is put before it: ``""``); a verb without one
    takes the subject of the verb it is coordinated with, else ``None`` (the caller looks in earlier clauses)."""
    own = next((c for c in verb.lefts if c.dep_ in SUBJECTS), None)
    if own is not None:
        return own.left_edge.i, ""
    begin = verb.i
    for child in reversed(list(verb.lefts)):
        if child.dep_ in KEPT_BEFORE_VERB and child.i == begin - 1:
            begin = child.i
    head = verb
    while head.dep_ == "conj" and head.head is not head:
        head = head.head
        subject = next((c for c in head.lefts if c.dep_ in SUBJECTS), None)
        if subject is not None:
            return begin, verb.doc[subject.left_edge.i:subject.right_edge.i + 1].text
    return begin, None


def lemma_bag(text: str, nlp: Any) -> Counter:
    return Counter(t.lemma_.lower() for t in nlp(text) if not t.is_punct and t.lemma_.lower() not in IGNORED_LEMMAS
                   and not t.is_stop)


def cosine(a: Counter, b: Counter) -> float:
    dot = sum(a[k] * b[k] for k in a)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm else 0.0


def predict(description: str, actions: list[dict[str, Any]], classes: dict[str, str], nlp: Any,
            class_bags: dict[str, Counter], min_similarity: float) -> Prediction | Failure:
    """Run the three steps on one video; the held-out action, or the step that failed and why."""
    pieces = _pieces(description)
    if not pieces:
        return Failure(1, "empty description")
    clause = _strip_conjunction(pieces[-1])
    if not clause:
        return Failure(1, "the last clause is only a conjunction")
    doc = nlp(clause)
    nouns = [t for t in doc if t.pos_ == "NOUN"]
    if not nouns:
        return Failure(2, f"no noun in the last clause {clause!r}")
    noun = nouns[-1]
    verb = next((a for a in noun.ancestors if a.pos_ == "VERB"), None)
    if verb is None:
        return Failure(2, f"no verb governs {noun.text!r} in {clause!r}")
    begin, subject = _from_verb(verb)
    if subject is None:
        subject = next((s for s in (_subject(nlp(_strip_conjunction(p))) for p in reversed(pieces[:-1])) if s),
                       None)
        if subject is None:
            return Failure(1, "the last clause has no subject and no earlier clause gives one")
    prefix = subject + " " if subject else ""
    clause = doc[begin:].text
    pair = Counter({verb.lemma_.lower(): 1, noun.lemma_.lower(): 1})
    scored = [(cosine(pair, bag), code) for code, bag in class_bags.items()]
    best = max(s for s, _ in scored)
    tied = sorted(c for s, c in scored if abs(s - best) <= 1e-9)
    if best + 1e-9 < min_similarity:
        return Failure(2, f"'{verb.lemma_} {noun.lemma_}' matches no action (best {tied[0]} at {best:.2f})")
    labelled = sorted({a["code"] for a in actions} & set(tied))
    if not labelled:
        names = ", ".join(f"{c} ({classes[c]})" for c in tied[:3]) + (" ..." if len(tied) > 3 else "")
        return Failure(2, f"'{verb.lemma_} {noun.lemma_}' -> {names} is not among the video's actions")
    if len(labelled) > 1:
        names = " and ".join(f"{c} ({classes[c]})" for c in labelled)
        return Failure(2, f"'{verb.lemma_} {noun.lemma_}' ties {names} at {best:.2f}, both the video's actions: "
                          "ambiguous")
    code = labelled[0]
    instances = [a for a in actions if a["code"] == code]
    start = max(a["start"] for a in instances)
    reference = prefix + clause
    reference = reference[0].upper() + reference[1:] + ("" if reference.endswith(".") else ".")
    clause_at = description.rfind(pieces[-1]) + pieces[-1].rfind(clause)
    context = re.sub(r"(?:[\s,;]|\band then\b|\band\b|\bthen\b)+$", "", description[:clause_at]).strip()
    return Prediction(clause=reference, context_text=context, verb=verb.lemma_.lower(), noun=noun.lemma_.lower(),
                      code=code, similarity=round(best, 4), start=start)
