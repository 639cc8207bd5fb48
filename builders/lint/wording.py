"""Wording: the faults a proof-reader would mark, found by rules over every text a model reads.

Rules (each flag names the rule, the field and the words):

* ``agreement``: a singular verb with a plural subject or the reverse: "Is there two dogs", "there are a dog"
  ("there are a star and a ring" is a plural compound subject and right), an auxiliary before a finite verb of
  :data:`FINITE_VERBS` ("snow is covers ground", Reefknot's VQA labels);
  "Is the dogs", "the dogs is" (a word ending in "s" whose stem is a dictionary word; "glass", "bus" are not read
  as plurals), a noun left open with "(s)" ("How many 'pentagon'(s)"). Agreement needing a parser is the
  ``grammar`` rule's;
* ``article``: "a" or "an" against the sound of the next word ("a octagon", "an dog", "a hour", "an unicorn",
  "a MRI"; :func:`templates.english.accepts`, the rule the builders write with), and "a" before a noun used only
  in the plural ("a scissors", "a pants"; a plural noun after "a" in general is the grammar rule's); a capital
  "A" counts only at a sentence start (elsewhere it is an option letter);
* ``doubled``: a word written twice ("the the"), "that that" and "had had" excepted;
* ``slot``: a template slot left unfilled (``{object}``, ``%s``, ``${x}``, ``[OBJ]``, ``<OBJECT>``) or filled with
  the wrong kind: a Python value (``None``, ``nan``, a list) in the question or context, a number where a noun
  belongs ("How many 3", "a 3");
* ``spelling``: a word outside the dictionary and the allow-list (:mod:`builders.lint.dictionary`), or two
  dictionary words run together ("playingfield", allow-listed or not); proper nouns
  (capitalised inside a sentence), words with digits and words of one or two letters are not checked;
* ``grammar``: what a dependency parser sees (:mod:`builders.lint.grammar`: a preposition without its object or
  its "to", "besides" for "beside", an adjective as the subject, subject and verb disagreeing, "a" before a
  plural noun) in questions, contexts, open answers and references; off without spaCy (the ``nlp`` extra);
* ``punctuation``: doubled spaces, spaces at either end, a space before ``?,.;:!``, no space after ``,;`` or
  ``?!`` before a word, doubled marks ("??", ",,", "?."), unbalanced brackets or double quotes, a replacement
  character U+FFFD (a byte the reader could not decode), a line break in a question or option, a question
  starting "Is/What/How..." without a question mark.

Score: ``1 / (1 + number of faults)``; any fault flags the item.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Callable, Container, Iterator, Sequence

from builders.items import Item
from builders.lint import grammar
from builders.lint.base import CheckResult, LintContext, texts
from builders.lint.dictionary import WORD_RE, dictionary_status
from templates import english

PLURAL_QUANT = r"(?:two|three|four|five|six|seven|eight|nine|ten|many|several|multiple|(?!1\b)\d+)"
COLLECTIVE = r"(?!\s+(?:lot|few|number|couple|pair|group|variety|bunch|set|dozen|total|series|range|herd|flock)\b)"
AGREEMENT = [
    re.compile(rf"\b(?:is|was)\s+there\s+{PLURAL_QUANT}\b", re.I),
    re.compile(rf"\bthere\s+(?:is|was)\s+{PLURAL_QUANT}\b", re.I),
    re.compile(rf"\b(?:are|were)\s+there\s+(?:a|an|one)\b{COLLECTIVE}", re.I),
    re.compile(rf"\bthere\s+(?:are|were)\s+(?:a|an|one)\b{COLLECTIVE}", re.I),
    re.compile(r"\b(?:is|was)\s+(?:these|those)\b", re.I),
]
FINITE_VERBS = frozenset("""covers holds wears sits stands lies hangs rides carries eats drinks contains touches faces
    supports grows leans parks flies swims shows throws catches pulls pushes reads sleeps has does goes makes takes
    uses looks watches plays walks runs jumps kicks hits cuts fills surrounds overlooks attaches belongs
    """.split())
"""Third-person verbs that never follow "is"/"are" ("snow is covers ground", Reefknot's VQA labels): an
auxiliary then a finite verb. The list is the relation verbs of scene-graph data; other verbs need a parser."""
AUX_THEN_FINITE = re.compile(r"\b(?:is|are|was|were)\s+(?:not\s+)?([a-z]+)\b", re.I)
ASKED_THEN_FINITE = re.compile(
    r"^\W*(?:is|was)\s+(?:the|a|an|this|that)\s+(?!(?:who|which|that)\b)[a-z]+(?:\s+(?!(?:who|which|that)\b)"
    rf"[a-z]+)?\s+(?:{'|'.join(sorted(FINITE_VERBS))})\b", re.I)
"""The same in a yes/no question, past its subject ("Is the snow covers mountains"): the parser may read the verb
as a plural noun ("bench pulls"); "is" only, since "Are the horse shows" may be a noun."""
OPEN_NUMBER = re.compile(r"\b[A-Za-z]+['\u2019]?\(s\)")
"""A noun left open between singular and plural ("How many 'pentagon'(s)", the MIOH paper's figures): English
writes the plural after "how many" and the number's form after a count."""
PLURAL_AFTER_IS = re.compile(r"\b(?:is|was)\s+the\s+([a-z]+s)\b", re.I)
PLURAL_BEFORE_IS = re.compile(r"\b(?:the|these|those)\s+([a-z]+s)\s+(?:is|was)\b", re.I)
NOT_PLURAL_ENDINGS = ("ss", "us", "is", "ous", "ics", "ws")

INDEFINITE = re.compile(r"(?<![\w'-])(a|an|An|(?:^|(?<=[.!?]\s))A)\s+['\"\u2018\u201c]?([A-Za-z0-9][\w'-]*)")
"""An indefinite article and the word after it (past an opening quote); a capital "A" only at a sentence start
(elsewhere it is an option letter)."""
HEAD_ENDS = frozenset("""that which who whose and or of in on at by to from with without near next above below under
    over behind beside between left right inside outside is are was were has have had does do did can could will would
    should for as than here there""".split())
"""Words that end a noun phrase: a plural-only noun before one of them (or before punctuation) is the head of its
phrase ("a scissors in the image"), before anything else it may be a modifier ("a glasses case")."""

DOUBLED = re.compile(r"\b([A-Za-z]+)\s+\1\b", re.I)
DOUBLED_OK = frozenset({"that", "had"})

SLOTS = [
    re.compile(r"\{[^{}]{0,40}\}|\{\{|\}\}"),
    re.compile(r"%\(\w+\)[sd]|%[sd]\b"),
    re.compile(r"\$\{?[A-Za-z_]\w*\}?"),
    re.compile(r"\[[A-Z_]{2,}\]|<[A-Z_]{2,}>"),
]
VALUE_LEAKS = [
    re.compile(r"\bNone\b(?!\s+of\b)|\b(?:nan|NaN|null|undefined)\b"),
    re.compile(r"\[\s*['\"]|['\"]\s*\]|\{\s*['\"]\w+['\"]\s*:"),
]
WRONG_KIND = [
    re.compile(r"\bhow\s+many\s+\d+\b(?!\s*[-'])", re.I),
    re.compile(r"\b(?:a|an)\s+\d+\b(?![-%'\w]|\s*(?:by|x|\u00d7)\s*\d)", re.I),  # "an 8 by 8 board" is a size
]

PUNCTUATION = [
    (re.compile(r"\S  +\S"), "doubled space"),
    (re.compile(r"\s+[?,.;:!](?!\w|\.)"), "space before punctuation"),
    (re.compile(r"[,;](?=[A-Za-z])"), "no space after a comma"),
    (re.compile(r"[?!](?=[A-Za-z])"), "no space after a question mark"),
    (re.compile(r"([?,;:!])\1|(?<!\.)\.\.(?!\.)|[?!][.,]|,[?.!]"), "doubled punctuation"),
]
QUESTION_START = re.compile(r"^(?:is|are|was|were|do|does|did|can|could|what|which|who|whom|whose|where|when|why|"
                            r"how|will|would|should|has|have)\b", re.I)


def _agreement(text: str, dictionary: Container[str] | None) -> Iterator[str]:
    for rule in AGREEMENT:
        for m in rule.finditer(text):
            clause = re.split(r"[.;:?!]", text[m.end():], maxsplit=1)[0]
            if m.group(0).lower().startswith(("are", "were", "there are", "there were")) and " and " in clause:
                continue  # "there are a star and a ring": a compound subject is plural
            yield m.group(0)
    for m in OPEN_NUMBER.finditer(text):
        yield m.group(0)
    for m in AUX_THEN_FINITE.finditer(text):
        if m.group(1).lower() in FINITE_VERBS:
            yield m.group(0)
    for m in ASKED_THEN_FINITE.finditer(text):
        yield m.group(0)
    if dictionary is None:
        return
    for rule in (PLURAL_AFTER_IS, PLURAL_BEFORE_IS):
        for m in rule.finditer(text):
            word = m.group(1).lower()
            if not word.endswith(NOT_PLURAL_ENDINGS) and word[:-1] in dictionary and len(word) > 3:
                yield m.group(0)


def _article(text: str) -> Iterator[str]:
    """"a" / "an" against the sound of the next word (:func:`templates.english.accepts`), and "a" before a noun
    used only in the plural ("a scissors", "a pants": :data:`templates.english.PLURAL_ONLY`)."""
    for m in INDEFINITE.finditer(text):
        art, word = m.group(1), m.group(2)
        if not english.accepts(art, word.split("'", 1)[0] or word):
            yield m.group(0)
        elif word.lower() in english.PLURAL_ONLY:
            after = re.match(r"['\"\u2019\u201d]?\s*([A-Za-z]*)", text[m.end():])
            if after is None or not after.group(1) or after.group(1).lower() in HEAD_ENDS:
                yield m.group(0)


def _doubled(text: str) -> Iterator[str]:
    for m in DOUBLED.finditer(text):
        if m.group(1).lower() not in DOUBLED_OK:
            yield m.group(0)


def _slot(text: str, field: str) -> Iterator[str]:
    for rule in SLOTS + WRONG_KIND + (VALUE_LEAKS if field in ("question", "context") else []):
        for m in rule.finditer(text):
            yield m.group(0)


SPELLING_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?|[.!?:]")
"""A word (with an apostrophe suffix: "dog's") or a mark that ends a sentence."""


def _spelling(text: str, known: Container[str], allowed: Container[str],
              verdicts: dict[tuple[str, bool], bool] | None = None) -> Iterator[str]:
    """The words of ``text`` outside ``known`` and ``allowed``; ``verdicts`` remembers each word's verdict
    (where it starts a sentence or not) across the texts of one check: a build's texts share most of their
    words, and asking each again was half of the wording check on a paper-scale build."""
    verdicts = {} if verdicts is None else verdicts
    sentence_start = True
    for token in SPELLING_TOKEN.findall(text):
        if token in ".!?:":
            sentence_start = True
            continue
        key = (token, sentence_start)
        sentence_start = False
        unknown = verdicts.get(key)
        if unknown is None:
            unknown = verdicts[key] = _unknown(token, key[1], known, allowed)
        if unknown:
            yield token


def _unknown(token: str, first: bool, known: Container[str], allowed: Container[str]) -> bool:
    """Whether one word is a spelling fault (``first``: it starts a sentence)."""
    if len(token) <= 2 or not token.isalpha() and "'" not in token or any(c.isdigit() for c in token):
        return False
    if token[0].isupper() and not first or token.isupper():
        return False  # a proper noun or an acronym
    word = token.lower()
    joined = getattr(known, "joined", None)
    if joined is not None and joined(word) is not None:
        return True  # "playingfield": two words run together, a fault even in an allow-listed category name
    if word in known or word in allowed:
        return False
    stem = word.split("'", 1)[0]
    return not ("'" in word and (stem in known or len(stem) <= 3 or stem + "n" in known))


def _punctuation(text: str, field: str) -> Iterator[str]:
    if text != text.strip():
        yield "whitespace at either end"
    for rule, name in PUNCTUATION:
        if rule.search(text):
            yield name
    for opening, closing in ("()", "[]"):
        if text.count(opening) != text.count(closing):
            yield f"unbalanced {opening}{closing}"
    if text.count('"') % 2:
        yield 'unbalanced "'
    if "\ufffd" in text:
        yield "undecodable byte (U+FFFD)"
    if field == "question" or field.startswith("option"):
        if "\n" in text.strip() or "\t" in text:
            yield "line break or tab"
    if field == "question" and QUESTION_START.match(text.strip()) and "?" not in text:
        yield "question without a question mark"


def faults(text: str, field: str, context: LintContext, allowed: Container[str],
           verdicts: dict[tuple[str, bool], bool] | None = None) -> list[tuple[str, str]]:
    """``(rule, what)`` for every fault of one text (``verdicts``: as :func:`_spelling`'s)."""
    found: list[tuple[str, str]] = []
    rules: list[tuple[str, Callable[[], Iterator[str]]]] = [
        ("agreement", lambda: _agreement(text, context.dictionary)),
        ("article", lambda: _article(text)),
        ("doubled", lambda: _doubled(text)),
        ("slot", lambda: _slot(text, field)),
        ("punctuation", lambda: _punctuation(text, field)),
    ]
    if context.dictionary is not None:
        rules.append(("spelling", lambda: _spelling(text, context.dictionary, allowed, verdicts)))  # type: ignore[arg-type]
    for rule, run in rules:
        found.extend((rule, what) for what in run())
    return found


def check(items: Sequence[Item], context: LintContext) -> CheckResult:
    result = CheckResult("wording", [1.0] * len(items))
    per_rule: Counter[str] = Counter()
    unknown: Counter[str] = Counter()
    per_grammar: Counter[str] = Counter()
    cache: dict[tuple[str, str], list[tuple[str, str]]] = {}
    verdicts: dict[tuple[str, bool], bool] = {}
    parsed, parser = grammar.parse_all(text for it in items for field, text in texts(it)
                                       if field in grammar.PARSED_FIELDS)
    for i, it in enumerate(items):
        n = 0
        for field, text in texts(it):
            key = (field.split(" ", 1)[0], text)
            found = cache.get(key)
            if found is None:
                found = cache[key] = faults(text, key[0], context, context.allow_words, verdicts)
                if key[0] in grammar.PARSED_FIELDS:  # words a rule above named already are not named twice
                    named = {what for _, what in found}
                    found += [("grammar", f"{words!r} ({kind})") for kind, words in parsed.get(text, ())
                              if words not in named]
            for rule, what in found:
                n += 1
                per_rule[rule] += 1
                if rule == "spelling":
                    unknown[what.lower()] += 1
                if rule == "grammar":
                    per_grammar[what.rsplit(" (", 1)[-1].rstrip(")")] += 1
                result.flag(i, f"{rule}: {what if rule == 'grammar' else repr(what)} in the {field}", 1.0)
        if n:
            result.scores[i] = round(1.0 / (1 + n), 4)
    result.summary = {
        "faults_per_rule": dict(sorted(per_rule.items())),
        "grammar_faults": dict(per_grammar.most_common()),
        "unknown_words": dict(unknown.most_common(20)),
        "dictionary": dictionary_status(context.dictionary),
        "parser": parser,
    }
    return result


__all__ = ["check", "faults", "WORD_RE"]
