"""Reference descriptions of Mementos sequences: NExT-QA question/answer pairs merged into one paragraph.

The paper (Sec. 2.1.2, App. D) had GPT-4V merge each daily-life video's QA pairs into a single paragraph, told
that "some objects or actions ... may not be included in the images", then people reviewed and corrected it.
:func:`describe_videos` does the same through :mod:`builders.llm`: with an endpoint, the prompt of
``templates/mementos/merge_qa.yaml`` plus the sampled frames as images; offline (the template backend) the
answer is :func:`template_merge` - every QA pair turned into a declarative sentence by the rules of
:func:`declarative` - a deterministic draft that the review loop then corrects (it cannot know which events the
sampled frames miss, so every description is marked ``needs_review``).
"""

from __future__ import annotations

import base64
import io
import re
from typing import Any, Sequence

from builders.llm import LLMClient, LLMRequest
from templates.loader import load_templates, render

IMAGE_MAX_SIDE = 512
"""Frames are shrunk to at most this many pixels a side before they are sent (the model sees a sequence, not detail)."""
_DO_AUX = {"did", "does", "do"}
_BE_AUX = {"is", "are", "was", "were"}
_ES_ENDINGS = ("s", "sh", "ch", "x", "z", "o")
_IRREGULAR = {"have": "has", "be": "is", "do": "does", "go": "goes"}


def third_person(phrase: str) -> str:
    """The phrase with its first word in the third person singular ("pick the baby up" -> "picks the baby up");
    a first word already ending in a single "s" ("cries") is left alone."""
    w, _, tail = phrase.partition(" ")
    low = w.lower()
    if low in _IRREGULAR:
        w = _IRREGULAR[low]
    elif low.endswith("s") and not low.endswith("ss"):
        pass
    elif low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        w = w[:-1] + "ies"
    elif low.endswith(_ES_ENDINGS):
        w = w + "es"
    else:
        w = w + "s"
    return f"{w} {tail}".strip()


def gerund(phrase: str) -> str:
    """The phrase with its first word as an -ing form ("sit down" -> "sitting down", "use it" -> "using it")."""
    w, _, tail = phrase.partition(" ")
    low = w.lower()
    if low.endswith("ing"):
        pass
    elif low.endswith("ie"):
        w = w[:-2] + "ying"
    elif low.endswith("e") and not low.endswith(("ee", "ye", "oe")) and len(low) > 2:
        w = w[:-1] + "ing"
    elif (len(low) == 3 and low[0] not in "aeiou" and low[1] in "aeiou" and low[2] not in "aeiouwxy"):
        w = w + w[-1] + "ing"
    else:
        w = w + "ing"
    return f"{w} {tail}".strip()


def _sentence(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip().rstrip(".?!")
    text = re.sub(r"\s+([,.;:])", r"\1", text)
    return text[:1].upper() + text[1:] + "." if text else ""


def _fallback(question: str, answer: str) -> str:
    q = re.sub(r"\s+", " ", question).strip().rstrip("?")
    return f"{q[:1].upper() + q[1:]}? {_sentence(answer)}"


def declarative(question: str, answer: str, nlp: Any = None) -> str:
    """One QA pair as a declarative sentence, by rules on the question's parse (spaCy) and its wh-word.

    ``what did S do R`` + A -> "S A(3sg) R"; ``what is S doing R`` -> "S is A R"; ``why did S V R`` -> "S V(3sg) R
    to/because A"; ``how did S V R`` -> "S V(3sg) R by A-ing"; ``how many N are there R`` -> "There are A N R";
    ``where is S R`` -> "S is R in A"; ``who V R`` -> "A V R". Anything else (or no spaCy) stays a question
    followed by its answer, which a reviewer rewrites.
    """
    q = re.sub(r"\s+", " ", question).strip().rstrip("?").strip()
    a = re.sub(r"\s+", " ", answer).strip().rstrip(".")
    low = q.lower()
    m = re.match(r"how many (.+?) (are|is|were|was)(?: there\b)?\s*(.*)$", low)
    if m:
        return _sentence(f"there {m.group(2)} {a} {m.group(1)} {m.group(3)}")
    m = re.match(r"who (.+)$", low)
    if m:
        return _sentence(f"{a} {m.group(1)}")
    if nlp is None:
        return _fallback(q, a)
    doc = nlp(low)
    if len(doc) < 3:
        return _fallback(q, a)
    wh = doc[0].lower_
    subj = next((t for t in doc if t.dep_ in ("nsubj", "nsubjpass") and t.i > 1), None)
    aux = doc[1].lower_
    if subj is None or aux not in _DO_AUX | _BE_AUX:
        return _fallback(q, a)
    s = doc[subj.left_edge.i : subj.right_edge.i + 1].text
    verb = subj.head
    if verb.i <= subj.right_edge.i:
        return _fallback(q, a)
    rest = doc[verb.i + 1 :].text
    verb_form = third_person(verb.text) if aux in _DO_AUX else f"{aux} {verb.text}"
    if wh == "what" and aux in _DO_AUX and verb.lemma_ == "do":
        return _sentence(f"{s} {third_person(a)} {rest}")
    if wh == "what" and aux in _BE_AUX and verb.lower_ == "doing":
        return _sentence(f"{s} {aux} {a} {rest}")
    if wh == "why":
        first = a.split(" ", 1)[0].lower()
        if first in ("to", "because", "so", "since", "as"):
            connector = ""
        elif first.endswith("ing"):
            connector = ", "
        else:
            connector = "to " if nlp(a)[0].pos_ == "VERB" else "because "
        return _sentence(f"{s} {verb_form} {rest} {connector}{a}")
    if wh == "how":
        how = f"by {gerund(a)}" if nlp(a)[0].pos_ == "VERB" else f"with {a}"
        return _sentence(f"{s} {verb_form} {rest} {how}")
    if wh == "where":
        prep = "" if a.split(" ", 1)[0].lower() in ("in", "on", "at", "inside", "outside", "near", "by") else "in "
        return _sentence(f"{s} {verb_form} {rest} {prep}{a}")
    return _fallback(q, a)


def template_merge(qa: Sequence[tuple[str, str]], nlp: Any = None) -> str:
    """The offline description: one declarative sentence per QA pair, in file order, repeats left out."""
    seen: dict[str, None] = {}
    for question, answer in qa:
        seen.setdefault(declarative(question, answer, nlp), None)
    return " ".join(s for s in seen if s)


def merge_prompt(qa: Sequence[tuple[str, str]]) -> str:
    """The paper's merge prompt with the video's QA pairs filled in."""
    t = load_templates("mementos", "merge_qa")
    pairs = t["qa_separator"].join(render(t["qa_pair"], question=q, answer=a) for q, a in qa)
    return render(t["prompt"], qa=pairs)


def image_part(path: str, max_side: int = IMAGE_MAX_SIDE) -> dict[str, Any]:
    """An OpenAI ``image_url`` content part holding the frame as a JPEG data URL (deterministic bytes)."""
    from PIL import Image

    with Image.open(path) as im:
        im = im.convert("RGB")
        im.thumbnail((max_side, max_side))
        buf = io.BytesIO()
        im.save(buf, format="JPEG", quality=85)
    return {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode()}}


def describe_videos(
    client: LLMClient, videos: Sequence[tuple[Sequence[tuple[str, str]], Sequence[str]]], nlp: Any = None
) -> list[str]:
    """One description per ``(qa pairs, frame paths)``: the LLM's merge of the pairs looking at the frames, or -
    offline - :func:`template_merge` (passed as the template backend's ``fallback``)."""
    requests = []
    for qa, frames in videos:
        fallback = template_merge(qa, nlp)
        if client.backend == "template":
            requests.append(LLMRequest([{"role": "user", "content": merge_prompt(qa)}], fallback=fallback))
            continue
        content = [{"type": "text", "text": merge_prompt(qa)}, *(image_part(f) for f in frames)]
        requests.append(LLMRequest([{"role": "user", "content": content}], fallback=fallback))
    return [re.sub(r"\s+", " ", r.text).strip() for r in client.complete_many(requests)]
