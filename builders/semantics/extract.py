"""Answer extraction: a model's free-form output -> an option letter, "yes"/"no", a refusal, or *unparsed*.

One module for every benchmark, so that every scorer and every harness export (lmms-eval ``process_results``)
reads answers the same way. The harnesses' common failures are what the rules are written against:

* "The correct answer is (B)" read as "T" (the first capital letter): letters count only as whole tokens, and
  only letters that name an option (``A``..``E`` for five options);
* "yes." / "The answer is yes" scored wrong (exact-match on "yes"): yes/no are *words*, found with word boundaries,
  so "no" is never found inside "notice", "nobody" or "innovation", nor "yes" inside "yesterday";
* an unparseable answer replaced by a random letter (VLMEvalKit's fallback): here it is ``unparsed``, counted and
  reported by every scorer, never guessed.

Order of evidence for an option (first tier that decides wins; disagreeing letters *within* a tier are ambiguous ->
unparsed, except that a later "final answer" overrides earlier declarations):

1. a declaration: "answer is B", "Answer: (B)", "final answer: B", "I choose B", "option B", ``\\boxed{B}``,
   "Therefore, B";
2. the output opens with a dressed letter: ``B``, ``(B)``, ``B.``, ``B)``, ``B:``, ``**B**``, ``[B]``;
3. dressed letters elsewhere (``(B)``, ``**B**``) and bare capitals other than the article-like "A" and "I";
4. the option's *text* instead of its letter: the whole output equals one option's text (normalised: case,
   punctuation, articles), else exactly one option text occurs as a phrase (a longer option's match hides the
   shorter ones inside it, so "red cross" is not also "cross"); mentions after "not"/"no" are ignored; "the
   second image" reads as "Image 2", and a bare "None." as "None of the above";
5. a refusal in words ("I cannot tell", "Sorry, I can't help with it"): the refusal option when the item has
   exactly one (MM-SAP's "Sorry, I can't help with it", MIOH's "I don't know"), else kind ``refusal``.

Yes/no: a declaration ("the answer is no", "Answer: yes", "Therefore, no"), else the opening word ("Yes, there
is ..."; "yeah", "yep", "nope" too), else yes/no words anywhere (both present: ambiguous -> unparsed), else a
refusal in words, else negation cues ("there is no dog", "I don't see any", "not present" -> no) or affirmative
cues without negation ("there is a dog in the image" -> yes); else unparsed.

Thinking blocks (``<think>...</think>``, ``<thinking>``, ``<reasoning>``) are removed first; an unclosed opening
tag drops the rest of the output (a reasoning model cut off mid-thought gave no answer), and a closing tag
without its opening (chat templates that put ``<think>`` in the prompt) drops everything before it.

Optional: an LLM fallback for what the rules leave unparsed (:func:`llm_fallback`, through a
:class:`builders.llm.LLMClient`, so answers are cached on disk); off by default, and its reply is parsed by these
same rules in their strict form (a single letter or yes/no), so the fallback cannot invent an answer either.

The lint's text-only model (:mod:`builders.lint.independence`) has its replies read here too: one reading of an
answer, whoever gave it.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol, Sequence

from builders.semantics.format import OPTION_LETTERS, ItemLike, answer_format
from builders.semantics.options import is_none_of_the_above, is_refusal, refusal_letters
from builders.semantics.prompt import lettered


class _Reply(Protocol):
    text: str


class Completer(Protocol):
    """What the LLM fallback asks of a client (:class:`builders.llm.LLMClient` is one; the semantics stand below
    it, so they name only what they call)."""

    def complete(self, messages: Sequence[dict[str, Any]], *, fallback: str | None = None) -> _Reply: ...

KINDS = ("option", "yes_no", "refusal", "unparsed", "open")
"""``open``: an item with a free-text reference answer; not extracted (its benchmark scores the text)."""


@dataclass(frozen=True)
class Answer:
    """What a model answered: ``kind`` in :data:`KINDS`; ``value`` the letter, "yes"/"no", or "" otherwise
    (for ``open`` items the output with thinking blocks removed)."""

    kind: str
    value: str = ""

    @property
    def parsed(self) -> bool:
        return self.kind in ("option", "yes_no", "refusal")


UNPARSED = Answer("unparsed", "")
REFUSAL = Answer("refusal", "")

# ------------------------------------------------------------------------------------------------ cleaning

_THINK_TAGS = ("think", "thinking", "reasoning", "thought")
_THINK_BLOCK = re.compile(r"<(%s)>.*?</\1>" % "|".join(_THINK_TAGS), re.S | re.I)
_THINK_OPEN = re.compile(r"<(?:%s)>" % "|".join(_THINK_TAGS), re.I)
_THINK_CLOSE = re.compile(r"</(?:%s)>" % "|".join(_THINK_TAGS), re.I)
_MARKDOWN = re.compile(r"\*\*|__|`+|#+\s|\\text\{|\\textbf\{|\$")


def strip_thinking(output: str) -> str:
    """The output without thinking blocks (see the module docstring for unclosed and orphaned tags)."""
    text = _THINK_BLOCK.sub(" ", output)
    close = None
    for close in _THINK_CLOSE.finditer(text):
        pass
    if close is not None:  # an orphaned closing tag: the thought began in the prompt
        text = text[close.end():]
    m = _THINK_OPEN.search(text)
    if m:  # an unclosed opening tag: the model never finished thinking
        text = text[: m.start()]
    return text.strip()


def _normalise(text: str) -> str:
    """Lower case, punctuation to spaces, articles dropped, whitespace collapsed: for option-text matching."""
    text = text.lower().translate(_PUNCT_TO_SPACE)
    words = [w for w in text.split() if w not in ("a", "an", "the")]
    return " ".join(words)


_PUNCT_TO_SPACE = str.maketrans({c: " " for c in string.punctuation if c not in "'"} | {"'": ""})

# ------------------------------------------------------------------------------------------------ options

_DRESSED = r"(?:\(\s*({L})\s*\)|\[\s*({L})\s*\]|\*\*\s*({L})\s*\*\*|<\s*({L})\s*>|\b({L})\b)"
_DECLARE_HEAD = (
    r"(?:(?:final|correct|right|best|my|the)\s+)*(?:answer|choice|option|response)s?"
    r"(?:\s+(?:would|should|must|will)\s+be|\s+is|\s+was|\s*[:：=]|\s+here\s+is|\s+is\s+option)?"
    r"|(?:i\s+(?:would\s+)?(?:choose|chose|pick|select|go\s+with)|i'd\s+(?:choose|pick|go\s+with))"
    r"|(?:therefore|thus|hence|so)\s*,?(?:\s+the\s+answer\s+is)?"
    r"|\\boxed\{"
)


@lru_cache(maxsize=64)
def _option_patterns(n_options: int) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(declaration, opening, dressed-anywhere, bare capitals) regexes for letters ``A``..``n``."""
    letters = OPTION_LETTERS[:n_options]
    cls = f"[{letters}]"
    dressed = _DRESSED.replace("{L}", cls)
    declaration = re.compile(
        rf"(?i:(?P<final>final\s+)?(?:{_DECLARE_HEAD}))\s*(?:(?i:option|letter|choice)\s*)?"
        rf"(?P<neg>(?i:not\s+))?[\"'*]*{dressed.replace(cls, f'(?i:{cls})')}(?![\w'’-])"
    )
    opening = re.compile(rf"^\s*[\"'*]*(?:(?i:option|answer|choice)\s*[:.]?\s*)?{dressed}\s*(?:[.):：,\-]|$|\s)")
    anywhere = re.compile(rf"\(\s*({cls})\s*\)|\*\*\s*({cls})\s*\*\*|\[\s*({cls})\s*\]")
    bare_letters = "".join(c for c in letters if c not in "AI")
    bare = re.compile(rf"(?<![\w'’-])([{bare_letters}])(?![\w'’-])") if bare_letters else re.compile(r"(?!x)x")
    return declaration, opening, anywhere, bare


def _letter(match: re.Match[str]) -> str:
    """The letter a dressed-letter match found: the last group that matched (each dress has one)."""
    return match.group(match.lastindex).upper()


_ALTERNATIVE = re.compile(r"\s*(?:,|/|&|\bor\b|\band\b)\s*(?:option\s*)?[(\[*]*\s*[A-Z]\b")
"""After a letter: "or B", "and (C)", "/ D": the output names two answers."""
_WORD_AFTER = re.compile(r"\s+[a-z]")


def _alternative_follows(text: str, end: int) -> bool:
    return bool(_ALTERNATIVE.match(text, end))


def _lowercase_word_follows(match: re.Match[str], text: str) -> bool:
    """"answer is a dog": a lower-case letter followed by a word is the article, not option A."""
    return _letter(match) != match.group(0).rstrip()[-1] and bool(_WORD_AFTER.match(text, match.end()))


_NEGATED_BEFORE = re.compile(r"(?:\bnot|\bno|n't|n’t|\bnever|\bexcept|\bexclude|\brule\s+out)\s*(?:option\s*)?[\"'(*\[]*$", re.I)


def _negated(text: str, start: int) -> bool:
    """A mention right after "not", "no", "isn't", "except" ... does not assert it."""
    return bool(_NEGATED_BEFORE.search(text[max(0, start - 20): start]))


def _one(letters: list[str]) -> Answer | None:
    """The letter if all evidence agrees; UNPARSED if it disagrees; None if there is none."""
    distinct = set(letters)
    if not distinct:
        return None
    return Answer("option", letters[0]) if len(distinct) == 1 and "?" not in distinct else UNPARSED


def extract_option(output: str, options: Sequence[str], refusal_options: Sequence[str] = ()) -> Answer:
    """The option a free-form ``output`` chooses among ``options`` (see the module docstring).

    ``refusal_options``: the letters of options that *are* refusals ("I don't know"); a refusal written in words
    becomes that option when there is exactly one, else kind ``refusal``.
    """
    text = strip_thinking(output)
    if not text or not options:
        return UNPARSED
    n = min(len(options), len(OPTION_LETTERS))
    declaration, opening, anywhere, bare = _option_patterns(n)
    clean = text.replace("**", " ** ") if "**" in text else text

    short = text.strip("()[]*. ")
    if len(short) == 1 and short.upper() in OPTION_LETTERS[:n]:  # the whole output is one letter: "b", "(B)."
        return Answer("option", short.upper())

    # 1. declarations ("the correct answer is (B)"): a later "final answer" overrides; otherwise all must agree
    finals, declared = [], []
    for m in declaration.finditer(clean):
        if m.group("neg") or _lowercase_word_follows(m, clean):
            continue
        letter = _letter(m)
        if _alternative_follows(clean, m.end()):
            letter = "?"  # "the answer is B or C": two answers named
        (finals if m.group("final") else declared).append(letter)
    if finals:
        return Answer("option", finals[-1]) if finals[-1] != "?" else UNPARSED
    found = _one(declared)
    if found is not None:
        return found

    # 2. the output opens with a dressed letter ("B", "(B) cat", "B. cat", "**B**")
    m = opening.match(clean)
    if m and (_alternative_follows(clean, m.end() - 1) or _alternative_follows(clean, m.end())):
        return UNPARSED  # "A or B", "(B) and (C)"
    if m and not (_letter(m) == "A" and _article_use(clean, m)):
        return Answer("option", _letter(m))

    # 3. dressed letters anywhere, then bare capitals (not "A"/"I", which are words)
    found = _one([_letter(m) for m in anywhere.finditer(clean) if not _negated(clean, m.start())])
    if found is not None:
        return found
    found = _one([m.group(1) for m in bare.finditer(text) if not _negated(text, m.start())])
    if found is not None:
        return found

    # 4. the option's text instead of its letter
    found = _option_by_text(text, options[:n])
    if found is not None:
        return found

    # 5. a refusal in words
    if is_refusal(text):
        if len(refusal_options) == 1:
            return Answer("option", refusal_options[0])
        return REFUSAL
    return UNPARSED


def _article_use(text: str, m: re.Match[str]) -> bool:
    """"A dog is ..." opens with the article, not option A: a bare "A" followed by a lower-case word."""
    if m.group(0).rstrip().endswith("A") and m.end() < len(text):
        rest = text[m.end():]
        return bool(re.match(r"[a-z]", rest)) and not text.lstrip().startswith(("(A", "[A", "**A"))
    return bool(re.match(r"\s*A\s+[a-z]", text)) and not re.match(r"\s*A\s*[.):]", text)


@lru_cache(maxsize=4096)
def _option_phrases(options: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[tuple[int, re.Pattern[str]], ...]]:
    """Normalised option texts, and per option (longest first) a regex finding it as a phrase; cached because a
    benchmark repeats the same option lists thousands of times."""
    normalised = tuple(_normalise(o) for o in options)
    order = sorted((i for i in range(len(options)) if normalised[i]), key=lambda k: -len(normalised[k]))
    return normalised, tuple((i, re.compile(rf"(?<= ){re.escape(normalised[i])}(?= )")) for i in order)


_ORDINALS = {w: str(k) for k, w in enumerate(
    ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth"), 1)}
_ORDINAL_IMAGE = re.compile(r"\b(%s) image\b" % "|".join(_ORDINALS))
_NONE_ALONE = ("none", "none of them", "none of these", "none of options", "none of choices")


def _option_by_text(text: str, options: Sequence[str]) -> Answer | None:
    normalised, phrases = _option_phrases(tuple(options))
    whole = _normalise(text)
    if "image" in whole:  # "the second image" names option "Image 2"
        whole = _ORDINAL_IMAGE.sub(lambda m: f"image {_ORDINALS[m.group(1)]}", whole)
    if whole in _NONE_ALONE:  # "None." for "None of the above"
        nota = [i for i, o in enumerate(options) if is_none_of_the_above(o)]
        if nota:
            return Answer("option", OPTION_LETTERS[nota[0]])
    exact = [i for i, o in enumerate(normalised) if o and o == whole]
    if len(exact) == 1:
        return Answer("option", OPTION_LETTERS[exact[0]])
    # phrases inside the output: longest options first, a match hides shorter options inside its span
    padded = f" {whole} "
    taken: list[tuple[int, int]] = []
    hits: set[int] = set()
    for i, pattern in phrases:
        for m in pattern.finditer(padded):
            span = (m.start(), m.end())
            if any(a <= span[0] and span[1] <= b for a, b in taken):
                continue
            taken.append(span)
            if not _NEGATED_TEXT.search(padded[max(0, span[0] - 12): span[0]]):
                hits.add(i)
    if len(hits) == 1:
        return Answer("option", OPTION_LETTERS[hits.pop()])
    if len(hits) > 1:
        return UNPARSED
    return None


_NEGATED_TEXT = re.compile(r"\b(?:not|no|nt|never|except)\s+$")

# ------------------------------------------------------------------------------------------------ yes / no

_YES_WORDS = {"yes": "yes", "yeah": "yes", "yep": "yes", "yup": "yes", "no": "no", "nope": "no", "nah": "no"}
_YES_NO = re.compile(r"(?<![\w'’-])(yes|yeah|yep|yup|no|nope|nah)(?![\w'’-])", re.I)
_YN_DECLARATION = re.compile(
    r"(?i:(?:(?:final|correct|short)\s+)?answer(?:\s+(?:would|should|will)\s+be|\s+is|\s*[:：=])"
    r"|(?:therefore|thus|hence|so|overall|in\s+conclusion|in\s+summary)\s*,?(?:\s+the\s+answer\s+is)?"
    r"|\\boxed\{)\s*[\"'*(\[]*\s*(yes|no)(?![\w'’-])",
    re.I,
)
_OPENING = re.compile(r"^\W*(yes|yeah|yep|yup|no|nope|nah)(?![\w'’-])", re.I)
_BOTH = re.compile(r"^\W*(?:yes|no)\W*(?:and|or|/)\W*(?:yes|no)\b", re.I)
_NEGATION_CUES = re.compile(
    r"\b(?:not|none|nothing|neither|nor|never|without|absent|no\s+(?:sign|trace|evidence)|no)\b|n't\b|n’t\b",
    re.I,
)
_AFFIRMATIVE_CUES = re.compile(
    r"\b(?:there\s+(?:is|are)|i\s+(?:can\s+)?(?:see|spot|notice)|(?:is|are)\s+(?:\w+ly\s+)?(?:present|visible|shown|depicted)"
    r"|contains?|shows?|depicts?|appears?|includes?|(?:it|this|that)\s+is\s+(?:true|correct)|correct|true|indeed)\b",
    re.I,
)


def extract_yes_no(output: str) -> Answer:
    """"yes", "no", a refusal or unparsed (see the module docstring)."""
    text = strip_thinking(output)
    if not text:
        return UNPARSED
    declared = {m.group(1).lower() for m in _YN_DECLARATION.finditer(text)}
    if len(declared) == 1:
        return Answer("yes_no", declared.pop())
    if len(declared) > 1:
        return UNPARSED
    m = _OPENING.match(text.replace("**", ""))
    if m and _BOTH.match(text):
        return UNPARSED
    if m:
        return Answer("yes_no", _YES_WORDS[m.group(1).lower()])
    words = {_YES_WORDS[w.lower()] for w in _YES_NO.findall(text)}
    if len(words) == 1:
        return Answer("yes_no", words.pop())
    if len(words) > 1:
        return UNPARSED
    if is_refusal(text):
        return REFUSAL
    if _NEGATION_CUES.search(text):
        return Answer("yes_no", "no")
    if _AFFIRMATIVE_CUES.search(text):
        return Answer("yes_no", "yes")
    return UNPARSED


# ------------------------------------------------------------------------------------------------ dispatch


def extract(output: str, item: ItemLike, llm: Completer | None = None) -> Answer:
    """The answer ``output`` gives to ``item``; ``llm`` (optional) is asked about what the rules leave unparsed."""
    fmt = answer_format(item)
    if fmt == "open":
        return Answer("open", strip_thinking(output))
    if fmt == "yes_no":
        found = extract_yes_no(output)
    else:
        found = extract_option(output, item.options, refusal_letters(item.options))
    if found.kind == "unparsed" and llm is not None and strip_thinking(output):
        found = llm_fallback(output, item, llm)
    return found


def is_correct(answer: Answer, item: ItemLike) -> bool:
    """Whether the extracted answer is the item's answer (a refusal or unparsed answer never is)."""
    if answer.kind == "option":
        return answer.value == item.answer
    if answer.kind == "yes_no":
        return answer.value == item.answer.strip().lower()
    return False


# ------------------------------------------------------------------------------------------------ LLM fallback

FALLBACK_SYSTEM = (
    "You read a model's answer to a multiple-choice or yes/no question and report which choice it made. "
    "Reply with one token only: the option letter, or yes, or no, or REFUSED if the model declined to answer, "
    "or NONE if the answer chooses nothing or several choices."
)


def fallback_prompt(output: str, item: ItemLike) -> list[dict[str, Any]]:
    """The messages that ask an LLM which choice ``output`` made (answers are cached by :mod:`builders.llm`)."""
    if answer_format(item) == "yes_no":
        choices = "yes / no"
    else:
        choices = "\n".join(lettered(item.options))
    user = f"Question: {item.question}\nChoices:\n{choices}\n\nModel's answer:\n{strip_thinking(output)}\n\nChoice:"
    return [{"role": "system", "content": FALLBACK_SYSTEM}, {"role": "user", "content": user}]


def llm_fallback(output: str, item: ItemLike, llm: Completer) -> Answer:
    """Ask ``llm`` which choice ``output`` made; only a strict reply (one letter of the item's options, yes/no,
    REFUSED) is accepted, anything else stays unparsed."""
    reply = llm.complete(fallback_prompt(output, item), fallback="NONE").text.strip().strip(".*()[]\"' ").strip()
    word = reply.split()[0] if reply.split() else ""
    if word.upper() == "REFUSED":
        return REFUSAL
    if answer_format(item) == "yes_no":
        return Answer("yes_no", word.lower()) if word.lower() in ("yes", "no") else UNPARSED
    letters = OPTION_LETTERS[: len(item.options)]
    return Answer("option", word.upper()) if len(word) == 1 and word.upper() in letters else UNPARSED
