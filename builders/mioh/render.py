"""Word MIOH specs with the YAML templates: question, options, answer letter, and misleading contexts.

Nothing here decides correctness: the answer index comes from :func:`builders.mioh.questions.evaluate`; this
module only turns probes into text (``templates/mioh/*.yaml``) and places "None of the above" last.

Misleading contexts (paper Sec. 4.3, "Lingual Challenging Factors") are built from a :class:`Claim`: a clause
that is *false* for the images (checked against the pools before use), or, in the control items that keep
"distrust the context" from being a strategy, *true* (:func:`choose_claim`; ``provenance.context_truth``). The
sycophantic templates wrap it in an uncertain personal belief, the instructional-override templates in an
authoritative statement; a true clause denied ("there is no dog in Image 2" when there is one) is as false as a
false clause asserted.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from builders.mcq import letter
from builders.mioh.pools import Pools, Probe
from builders.mioh.questions import EXTREME_VARIANTS, PAIR_STATES, PRESENCE_STATES, Key, Spec
from templates.english import be, counted, one, plural
from templates.loader import load_templates, render, with_article


def display(name: str) -> str:
    """Category and attribute names as people write them (LVIS ``mouse_(computer_equipment)`` -> spaces)."""
    return name.replace("_", " ")


class Wording:
    """The templates of one task, with helpers to phrase its probes."""

    def __init__(self, task: str) -> None:
        self.task = task
        self.t: Mapping[str, Any] = load_templates("mioh", task)
        self.linguistic: Mapping[str, Any] = load_templates("mioh", "linguistic")
        self._fields: dict[Probe, Mapping[str, str]] = {}

    def probe_fields(self, probe: Probe) -> Mapping[str, str]:
        """Template fields of a probe: ``probe`` (with article), ``bare_probe``, ``option`` and the parts; phrased
        once per probe (a probe is named by many questions and options)."""
        fields = self._fields.get(probe)
        if fields is None:
            fields = self._fields[probe] = MappingProxyType(self._phrased(probe))
        return fields

    def _phrased(self, probe: Probe) -> dict[str, str]:
        if self.task in ("existence", "counting"):
            parts = {"object": display(probe)}  # type: ignore[arg-type]
        elif self.task == "attribute":
            attribute, obj = probe  # type: ignore[misc]
            parts = {"attribute": display(attribute), "object": display(obj)}
        else:
            subject, relation, obj = probe  # type: ignore[misc]
            parts = {
                "subject": display(subject),
                "relation": relation,
                "object": display(obj),
                "a_subject": with_article(display(subject)),
                "a_object": with_article(display(obj)),
            }
        if self.task == "counting":
            return {**parts, "objects": plural(parts["object"])}
        bare = render(self.t["probe"]["bare"], **parts)
        return {
            **parts,
            "bare_probe": one(bare),
            "probe": with_article(bare),
            "option": render(self.t["probe"]["option"], **parts),
        }

    def image_label(self, position: int) -> str:
        return render(self.t["image_label"], index=position + 1)

    def question(self, spec: Spec) -> str:
        q = self.t["questions"][spec.qtype]
        fields: dict[str, Any] = dict(self.probe_fields(spec.probe)) if spec.probe is not None else {}
        if spec.pair is not None:
            fields.update(i=spec.pair[0] + 1, j=spec.pair[1] + 1)
        if spec.count is not None:
            fields.update(count_fields(fields["object"], spec.count))
        key = spec.variant
        if spec.variant == "pair":
            key = "pair" if len(spec.images) == 2 else "pair_of_many"
        return render(q[key], **fields)

    def never_gold(self, spec: Spec) -> list[str]:
        """The options of ``spec`` that are never its answer: "I don't know" (offered so that a model may abstain;
        an undecidable pair is never asked, so it is never right). The chance figures leave them out."""
        return [self.t["presence_scale"]["unknown"]] if spec.variant == "any" else []

    def options(self, spec: Spec) -> list[str]:
        nota = self.t["none_of_the_above"]
        if spec.variant == "any":
            scale = self.t["presence_scale"]
            return [scale[s] for s in PRESENCE_STATES] + [scale["unknown"]]
        if spec.variant == "pair":
            scale = self.t["pair_scale"]
            i, j = spec.pair  # type: ignore[misc]
            return [scale["both"], scale["neither"], render(scale["first"], i=i + 1), render(scale["second"], j=j + 1)]
        if spec.variant in EXTREME_VARIANTS:
            return [self.image_label(p) for p in range(len(spec.images))]
        if spec.variant in ("which", "exact"):
            return [self.image_label(p) for p in range(len(spec.images))] + [nota]
        if spec.variant == "total":
            return [str(n) for n in spec.options] + [nota]
        return [self.probe_fields(p)["option"] for p in spec.options] + [nota]


def count_fields(obj: str, n: int) -> dict[str, Any]:
    """Template fields of a number of objects: ``count``, ``n_objects`` ("1 zebra", "3 zebras") and ``be``
    ("is" / "are")."""
    return {"count": n, "n_objects": counted(n, obj), "be": be(n)}


def answer_slots(spec: Spec) -> int:
    """How many positions the answer can take (for the answer-position balance test)."""
    if spec.variant == "any":
        return len(PRESENCE_STATES)
    if spec.variant == "pair":
        return len(PAIR_STATES)
    if spec.variant in ("which", "most", "fewest", "exact"):
        return len(spec.images)
    return len(spec.options)


# ------------------------------------------------------------------------------------------ misleading context


@dataclass(frozen=True)
class Claim:
    """A clause the context states: false for the images, or true in a control item.

    ``kind``: ``absent`` (probe absent from ``image``, or from all images when ``image`` is None), ``present``
    (probe present in ``image``, or in every image when None), ``count`` (exactly ``value`` in ``image``),
    ``total`` (``value`` in total), ``extreme`` (``image`` has the most / fewest).
    """

    kind: str
    probe: Probe
    image: int | None = None
    value: int | None = None
    extreme: str | None = None

    def as_dict(self) -> dict[str, Any]:
        probe = list(self.probe) if isinstance(self.probe, tuple) else self.probe
        return {"kind": self.kind, "probe": probe, "image": self.image, "value": self.value, "extreme": self.extreme}


Named = tuple[Claim, "Claim | None", bool]
"""One option a context can name: the claim asserting it, the claim denying it (``None`` where the question form
has no such sentence), and whether the option holds (is the gold, or true of the images)."""


def nameable(rng: np.random.Generator, pools: Pools, spec: Spec, key: Key) -> list[Named]:
    """The options of ``spec`` a context may name, each with its asserting and denying clause (see
    :func:`choose_claim`). Fixed options ("None of the above", "Yes, in some of them") are never named."""
    n, task = len(spec.images), spec.task
    if task == "counting":
        counts = [pools.count(img, spec.probe) for img in spec.images]
        if spec.variant == "total":
            return [(Claim("total", spec.probe, value=int(o)), None, o == sum(counts)) for o in spec.options]  # type: ignore[arg-type]
        if spec.variant in ("most", "fewest"):
            return [(Claim("extreme", spec.probe, image=p, extreme=spec.variant), None, p == key.index) for p in range(n)]
        return [(Claim("count", spec.probe, image=p, value=spec.count), None, counts[p] == spec.count) for p in range(n)]

    def status(img: int, probe: Probe) -> str | None:
        lab = pools.label(task, img, probe)
        return None if lab is None else lab.status

    if spec.variant == "all":
        out: list[Named] = []
        for k, o in enumerate(spec.options):
            gold = key.state == "option" and key.index == k
            missing = [p for p in range(n) if status(spec.images[p], o) == "neg"]
            where = int(rng.integers(n)) if gold else (missing[int(rng.integers(len(missing)))] if missing else None)
            out.append((Claim("present", o), None if where is None else Claim("absent", o, image=where), gold))
        return out
    if spec.variant == "any":
        p = int(rng.integers(n))
        return [(Claim("present", spec.probe), Claim("absent", spec.probe, image=p), key.state == "all"),
                (Claim("absent", spec.probe), Claim("present", spec.probe, image=p), key.state == "none")]
    if spec.variant == "which":
        return [(Claim("present", spec.probe, image=p), Claim("absent", spec.probe, image=p),
                 key.state == "image" and key.index == p) for p in range(n)]
    i, j = spec.pair  # type: ignore[misc]
    if spec.variant == "pair":
        return [(Claim("present", spec.probe, image=x), Claim("absent", spec.probe, image=x),
                 status(spec.images[x], spec.probe) == "pos") for x in (i, j)]
    return [(Claim("present", o, image=i), Claim("absent", o, image=i), key.state == "option" and key.index == k)
            for k, o in enumerate(spec.options)]


def choose_claim(rng: np.random.Generator, pools: Pools, spec: Spec, key: Key, control: bool) -> Claim | None:
    """The clause of a context: false (the paper's misleading context) or, for a ``control`` item, true - of the
    same kinds, so that the context's wording never tells which it is. ``None`` where the item has no fitting one.

    A clause names one option and asserts it ("there is a dog in Image 2") or denies it ("there is no dog in
    Image 2"). A false assertion names an option that does not hold, a false denial one that does; a true one the
    reverse. The polarity is drawn so that the named option is the gold at its fair share (one over the options
    that can be named) whenever controls are half the items: an assertion is a control one time in ``k``, a
    denial ``k - 1`` times in ``k``. Question forms with assertions only (counting) name each option equally
    often, so their share of controls is one in ``k`` (:func:`control_share`). Trusting the context and
    distrusting it then both score chance; the paper's measure is read on the false ones (issue 40).
    """
    named = nameable(rng, pools, spec, key)
    if not named:
        return None
    k = len(named)
    has_denial = any(deny is not None for _, deny, _ in named)
    assert_it = not has_denial or rng.random() < ((1 / k) if control else (k - 1) / k)
    holds_wanted = control if assert_it else not control
    fitting = [(a if assert_it else d) for a, d, holds in named if holds == holds_wanted and (assert_it or d is not None)]
    return fitting[int(rng.integers(len(fitting)))] if fitting else None


def control_share(spec: Spec, share: float | None) -> float:
    """The chance that an item's context is a true control: ``share`` (``--context-control-share``), else half
    for question forms whose options can be both asserted and denied, and one over the options for counting's
    assertions (see :func:`choose_claim`)."""
    if share is not None:
        return share
    if spec.task != "counting":
        return 0.5
    return 1.0 / (len(spec.options) if spec.variant == "total" else len(spec.images))


def claim_truth(pools: Pools, spec: Spec, claim: Claim) -> bool | None:
    """Whether a claim holds for the images, from the pools; ``None`` where a label it rests on is undecidable."""
    imgs = spec.images
    if claim.kind in ("present", "absent"):
        where = range(len(imgs)) if claim.image is None else [claim.image]
        labels = [pools.label(spec.task, imgs[p], claim.probe) for p in where]
        if any(l is None for l in labels):
            return None
        present = [l.status == "pos" for l in labels]  # type: ignore[union-attr]
        return not any(present) if claim.kind == "absent" else all(present)
    counts = [pools.count(img, claim.probe) for img in imgs]
    if any(c is None for c in counts):
        return None
    if claim.kind == "total":
        return claim.value == sum(counts)  # type: ignore[arg-type]
    if claim.kind == "count":
        return counts[claim.image] == claim.value  # type: ignore[index]
    best = max(counts) if claim.extreme == "most" else min(counts)  # type: ignore[type-var]
    return counts[claim.image] == best and counts.count(best) == 1  # type: ignore[index]


def claim_text(wording: Wording, claim: Claim) -> tuple[str, str]:
    """``(template kind, clause)``: ``deny`` with the negated clause for ``absent`` claims, else ``assert``."""
    claims, where_t = wording.t["claims"], wording.t["where"]
    fields: dict[str, Any] = dict(wording.probe_fields(claim.probe))
    if claim.image is not None:
        fields["index"] = claim.image + 1
    if claim.kind == "absent":
        where = render(where_t["image"], index=claim.image + 1) if claim.image is not None else render(where_t["any"])
        return "deny", render(claims["absent"], **fields, where=where)
    if claim.kind == "present":
        where = render(where_t["image"], index=claim.image + 1) if claim.image is not None else render(where_t["every"])
        return "assert", render(claims["present"], **fields, where=where)
    if claim.kind == "count":
        where = render(where_t["image"], index=claim.image + 1)  # type: ignore[operator]
        return "assert", render(claims["count"], **fields, **count_fields(fields["object"], claim.value), where=where)  # type: ignore[arg-type]
    if claim.kind == "total":
        return "assert", render(claims["total"], **fields, **count_fields(fields["object"], claim.value))  # type: ignore[arg-type]
    return "assert", render(claims["extreme"], **fields, extreme=claim.extreme)


def context_text(rng: np.random.Generator, wording: Wording, pressure: str, claim: Claim) -> tuple[str, str]:
    """The misleading sentence for ``pressure`` and the id of the template variant used."""
    kind, clause = claim_text(wording, claim)
    variants = wording.linguistic[pressure][kind]
    pick = int(rng.integers(len(variants)))
    field = "negated" if kind == "deny" else "clause"
    return render(variants[pick], **{field: clause}), f"{pressure}/{kind}/{pick}"


def prioritize(wording: Wording, question: str) -> str:
    """The question with the instruction to rely on the images ("Based on the images, ...")."""
    return render(wording.t["prioritize_images"], question=question[:1].lower() + question[1:])


def answer_letter(key: Key) -> str:
    return letter(key.index)
