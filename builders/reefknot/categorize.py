"""Phases (c) and (d): perceptive or cognitive, decided once per relation phrase.

With an LLM configured (``--llm-model``) every phrase is put to it with the paper's prompt (App. A.5, Fig. 14;
the prompt and its in-context examples are data in ``templates/reefknot/categorize.yaml``), answers cached by the
LLM client. Offline, the override table of the same file decides the phrases it lists, and spaCy decides the rest
by part of speech: a phrase whose first word is a verb (gerund, participle, finite verb) names an action or
behaviour - cognitive - and one headed by a preposition, adverb or adjective is locational or state-based -
perceptive (the paper's definitions). Without spaCy, a suffix rule stands in (``-ing``/``-ed`` first word:
cognitive). Each triplet records the method that decided its relation (``provenance.category_method``).
An LLM answer that is neither label falls back to the offline decision (counted).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping

from builders.llm import LLMClient, LLMRequest
from templates.loader import load_templates, render

_VERB_TAGS = frozenset({"VB", "VBD", "VBG", "VBN", "VBP", "VBZ"})


def prompt_text(phrase: str, templates: Mapping[str, Any] | None = None) -> str:
    """The paper's A.5 prompt for one relation phrase, in-context examples filled in."""
    t = templates or load_templates("reefknot", "categorize")
    examples = "\n" + "\n".join(render(t["example_format"], **ex) for ex in t["examples"]) + "\n"
    return render(t["prompt"], examples=examples, input=phrase)


def offline_category(phrase: str, nlp: Any | None, overrides: Mapping[str, str]) -> tuple[str, str]:
    """(category, method) without an LLM."""
    if phrase in overrides:
        return overrides[phrase], "override"
    first = phrase.split(" ", 1)[0]
    if nlp is not None:
        doc = nlp(phrase)
        tag = doc[0].tag_ if len(doc) else ""
        return ("cognition" if tag in _VERB_TAGS else "perception"), "spacy-pos"
    return ("cognition" if first.endswith(("ing", "ed")) else "perception"), "suffix-rule"


def categorize(phrases: Iterable[str], client: LLMClient, stats: Counter) -> dict[str, tuple[str, str]]:
    """``{phrase: (category, method)}`` for every phrase; ``stats`` counts the methods used."""
    t = load_templates("reefknot", "categorize")
    overrides = {str(k): str(v) for k, v in t["overrides"].items()}
    labels = {k.lower(): v for k, v in t["labels"].items()}
    phrases = sorted(set(phrases))
    offline = {p: (overrides[p], "override") for p in phrases if p in overrides}
    rest = [p for p in phrases if p not in overrides]
    nlp = _nlp() if rest else None
    if nlp is not None:  # one batch through the tagger only (the parser and NER are not needed for a POS tag)
        disabled = [name for name in nlp.pipe_names if name not in ("tok2vec", "tagger", "attribute_ruler")]
        for phrase, doc in zip(rest, nlp.pipe(rest, batch_size=256, disable=disabled)):
            offline[phrase] = (("cognition" if len(doc) and doc[0].tag_ in _VERB_TAGS else "perception"), "spacy-pos")
    else:
        offline.update({p: offline_category(p, None, overrides) for p in rest})
    if client.backend == "template":
        out = offline
    else:
        requests = [
            LLMRequest(messages=[{"role": "user", "content": prompt_text(p, t)}], fallback=None) for p in phrases
        ]
        out = {}
        for phrase, result in zip(phrases, client.complete_many(requests)):
            word = result.text.strip().strip(".*<>\"' ").lower()
            if word in labels:
                out[phrase] = (labels[word], f"llm:{client.config.model}")
            else:
                out[phrase] = (offline[phrase][0], offline[phrase][1] + " (llm answer unusable)")
    stats.update(method for _, method in out.values())
    return out


def _nlp() -> Any | None:
    try:
        from filters.text import NlpUnavailable, load_nlp
    except ImportError:  # pragma: no cover
        return None
    try:
        return load_nlp()
    except NlpUnavailable:
        return None
