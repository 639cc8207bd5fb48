"""Word MIOH specs with the YAML templates: question, options, answer letter, and misleading contexts.

Nothing here decides correctness: the answer index comes from :func:`builders.mioh.questions.evaluate`; this
module only turns probes into text (``templates/mioh/*.yaml``) and places "None of the above" last.

Misleading contexts (paper Sec. 4.3, "Lingual Challenging Factors") are built from a :class:`Claim`: a clause
that is *false* for the images (checked against the pools before use). The sycophantic templates wrap it in an
uncertain personal belief, the instructional-override templates in an authoritative statement; a true clause
denied ("there is no dog in Image 2" when there is one) is as false as a false clause asserted.
"""

from __future__ import annotations

from dataclasses import dataclass
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

    def probe_fields(self, probe: Probe) -> dict[str, str]:
        """Template fields of a probe: ``probe`` (with article), ``bare_probe``, ``option`` and the parts."""
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
    """A clause the context states, always false for the images.

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


def choose_claim(rng: np.random.Generator, pools: Pools, spec: Spec, key: Key) -> Claim:
    """A false clause that pulls away from the right answer of ``spec`` (see the table in the module docs)."""
    n = len(spec.images)
    task = spec.task
    if task == "counting":
        counts = [pools.count(img, spec.probe) for img in spec.images]
        if spec.variant == "total":
            wrong = [o for o in spec.options if o != sum(counts)]  # type: ignore[operator]
            return Claim("total", spec.probe, value=int(wrong[int(rng.integers(len(wrong)))]))
        if spec.variant in ("most", "fewest"):
            others = [p for p in range(n) if p != key.index]
            return Claim("extreme", spec.probe, image=others[int(rng.integers(len(others)))], extreme=spec.variant)
        others = [p for p in range(n) if counts[p] != spec.count]
        return Claim("count", spec.probe, image=others[int(rng.integers(len(others)))], value=spec.count)
    if spec.variant == "all":
        if key.state == "option":
            return Claim("absent", spec.options[key.index])
        return Claim("present", spec.probe)  # the tempting option, missing from one image
    if spec.variant == "any":
        if key.state == "none":
            return Claim("present", spec.probe, image=int(rng.integers(n)))
        return Claim("absent", spec.probe)
    # Denials name no image ("there is no dog in any of these images", as in the paper's examples): naming the
    # answer image would hand a model the answer position.
    if spec.variant == "which":
        if key.state == "image":
            return Claim("absent", spec.probe)
        return Claim("present", spec.probe, image=int(rng.integers(n)))
    i, j = spec.pair  # type: ignore[misc]
    if spec.variant == "pair":
        if key.state == "neither":
            return Claim("present", spec.probe, image=(i, j)[int(rng.integers(2))])
        return Claim("absent", spec.probe)
    # differs: deny the answer, or under NOTA deny an option that is present in one of the two named images
    if key.state == "option":
        return Claim("absent", spec.options[key.index])
    present = [o for o in spec.options if any(
        pools.label(task, spec.images[p], o).status == "pos" for p in (i, j)  # type: ignore[union-attr]
    )]
    if present:
        return Claim("absent", present[int(rng.integers(len(present)))])
    return Claim("present", spec.options[int(rng.integers(len(spec.options)))], image=i)


def claim_is_false(pools: Pools, spec: Spec, claim: Claim) -> bool:
    """Check, from the pools, that a claim conflicts with the ground truth."""
    imgs = spec.images
    if claim.kind in ("present", "absent"):
        where = range(len(imgs)) if claim.image is None else [claim.image]
        labels = [pools.label(spec.task, imgs[p], claim.probe) for p in where]
        if any(l is None for l in labels):
            return False
        present = [l.status == "pos" for l in labels]  # type: ignore[union-attr]
        return any(present) if claim.kind == "absent" else not all(present)
    counts = [pools.count(img, claim.probe) for img in imgs]
    if any(c is None for c in counts):
        return False
    if claim.kind == "total":
        return claim.value != sum(counts)  # type: ignore[arg-type]
    if claim.kind == "count":
        return counts[claim.image] != claim.value  # type: ignore[index]
    best = max(counts) if claim.extreme == "most" else min(counts)  # type: ignore[type-var]
    return counts[claim.image] != best or counts.count(best) > 1  # type: ignore[index]


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
