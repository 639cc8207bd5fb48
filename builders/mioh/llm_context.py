"""Misleading contexts written by an LLM, checked, and replaced by the template when they fail the check.

The offline template backend is the default (:func:`builders.mioh.render.context_text`). With an endpoint
configured (``--llm-model``), each linguistic item's false clause is sent to the LLM with its pressure's style
(``templates/mioh/llm.yaml``). A reply is used only if it still states that clause in the intended direction and
style (:func:`problems_with`); otherwise it is asked once more with the reason, and then the template sentence
stays. Provenance records which writer produced each context and how many attempts it took.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from builders.items import Item, make_item
from builders.llm import LLMClient, LLMRequest
from builders.pairs import pair_of
from builders.mioh.render import Claim, Wording, claim_text
from templates.loader import load_templates, render

NEGATION = re.compile(r"\b(no|not|none|never|nothing|nowhere|without|cannot)\b|n't\b", re.IGNORECASE)
HEDGES = re.compile(
    r"\b(i think|i believe|i'm not sure|i am not sure|not sure|not certain|not 100%|might|maybe|perhaps|"
    r"seems?|i guess|i suspect|could be wrong|may be wrong|probably)\b",
    re.IGNORECASE,
)


def claim_from(provenance: Mapping[str, Any]) -> Claim:
    c = provenance["context"]["claim"]
    probe = tuple(c["probe"]) if isinstance(c["probe"], list) else c["probe"]
    return Claim(c["kind"], probe, c.get("image"), c.get("value"), c.get("extreme"))


def required_words(wording: Wording, claim: Claim) -> list[str]:
    """Words a faithful restatement must keep: names, attribute, relation, numbers, the image named."""
    fields = wording.probe_fields(claim.probe)
    words = [fields[k] for k in ("attribute", "subject", "relation", "object") if k in fields]
    if claim.image is not None:
        words.append(f"image {claim.image + 1}")
    if claim.value is not None:
        words.append(str(claim.value))
    if claim.extreme:
        words.append(claim.extreme)
    return words


def problems_with(text: str, wording: Wording, claim: Claim, pressure: str) -> str | None:
    """Why a generated context does not do its job, or ``None`` when it does."""
    if not text or not text.strip():
        return "it is empty"
    if len(text) > 400:
        return "it is longer than one or two sentences"
    lower = " ".join(text.lower().split())
    missing = [w for w in required_words(wording, claim) if w.lower() not in lower]
    if missing:
        return f"it drops {', '.join(repr(m) for m in missing)}"
    unhedged = HEDGES.sub(" ", lower)
    negated = bool(NEGATION.search(unhedged))
    if claim.kind == "absent" and not negated:
        return "it no longer denies that the object is there"
    if claim.kind != "absent" and negated:
        return "it negates a statement it should assert"
    hedged = bool(HEDGES.search(lower))
    if pressure == "sycophantic" and not hedged:
        return "a sycophantic context must sound uncertain and personal"
    if pressure == "instructional_override" and hedged:
        return "an instructional override must be authoritative, without hedging"
    return None


def _messages(prompts: Mapping[str, Any], pressure: str, statement: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": prompts["system"]},
        {"role": "user", "content": render(prompts["user"], style=prompts["styles"][pressure], statement=statement)},
    ]


def rewrite_contexts(items: Sequence[Item], client: LLMClient) -> tuple[list[Item], dict[str, int]]:
    """Items with LLM-written contexts where they pass the check; counts of what happened. The partner of a pair
    (:mod:`builders.pairs`, role ``b``) takes its first item's outcome: one context, word for word, for both."""
    prompts = load_templates("mioh", "llm")
    targets = [i for i, it in enumerate(items) if it.context and "context" in it.provenance]
    firsts = {pair[0]: i for i in targets if (pair := pair_of(items[i])) is not None and pair[1] == "a"}
    source = {i: firsts.get(pair[0], i) if (pair := pair_of(items[i])) is not None else i for i in targets}
    wordings: dict[str, Wording] = {}
    plans = []
    for i in targets:
        if source[i] != i:
            continue
        it = items[i]
        wording = wordings.setdefault(it.task, Wording(it.task))
        claim = claim_from(it.provenance)
        _, statement = claim_text(wording, claim)  # for denials this is already the negated, false clause
        plans.append((i, wording, claim, _messages(prompts, it.pressure, statement)))
    counts = {"llm": 0, "llm_retry": 0, "template_fallback": 0}
    out = list(items)
    pending = plans
    accepted: dict[int, tuple[str, int]] = {}
    for attempt in (1, 2):
        if not pending:
            break
        results = client.complete_many([
            LLMRequest(messages, json_schema=prompts["schema"], fallback=None) for _, _, _, messages in pending
        ])
        retry = []
        for (i, wording, claim, messages), result in zip(pending, results):
            text = (result.parsed_json or {}).get("context") if isinstance(result.parsed_json, dict) else None
            reason = problems_with(text or "", wording, claim, items[i].pressure)
            if reason is None:
                accepted[i] = (" ".join(str(text).split()), attempt)
            elif attempt == 1:
                retry.append((i, wording, claim, messages + [
                    {"role": "assistant", "content": result.text or ""},
                    {"role": "user", "content": render(prompts["retry"], reason=reason)},
                ]))
        pending = retry
    for i in targets:
        it = items[i]
        ctx = dict(it.provenance["context"])
        if source[i] in accepted:
            text, attempts = accepted[source[i]]
            counts["llm" if attempts == 1 else "llm_retry"] += 1
            ctx.update(writer="llm", attempts=attempts, template_text=it.context)
        else:
            counts["template_fallback"] += 1
            ctx.update(writer="template", attempts=2, llm_rejected=True)
            text = it.context
        out[i] = make_item(
            benchmark=it.benchmark, task=it.task, question_type=it.question_type, pressure=it.pressure,
            images=it.images, question=it.question, options=it.options, answer=it.answer, context=text,
            provenance={**it.provenance, "context": ctx},
        )
    return out, counts
