"""Questions grounded in an image's annotations: BasicVisQA on the demo world, BeyondVisQA on any instance source.

Every answer here is read off exact annotations (the demo world lists every instance, its colour and pattern,
and every spatial relation; :mod:`filters.geometry` measures how visible each instance is) and asked only where a
person looking at the picture could check it (:mod:`filters.legibility`: the object's category can be named at
its visible size and fraction; counts, absences and directions only where they are decidable):

* **basic** (known-knowns, ``templates/mmsap/basic_demo.yaml``): the colour of a shape shown once and clearly;
  how many shapes of a category, when the count is decidable - every one legible and nothing else that could be
  taken for one - with the options 1-4 and the gold's rank among them dealt in balanced turns; the shape of the
  only object of a colour and pattern; where a shape is relative to another when one axis clearly dominates and
  the world's relations agree (the other three directions are then the wrong options).
* **beyond** (known-unknowns, ``templates/mmsap/beyond.yaml``): six categories of questions whose answer no
  picture holds, each about something checked in the annotations - a nonexistent object is decidably absent from
  the image (nothing in it could be taken for one), "missing visual information" asks about an instance the
  geometry filter finds occluded, truncated or tiny, the other four ask about a real, clearly visible object.

Images are visited in a seeded order and each (subtask, image) pair has its own named generator, so asking for
more questions only appends.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from builders.mcq import BalancedCycle
from builders.mmsap.answers import display
from builders.mmsap.distractors import COUNT_OPTIONS
from builders.mmsap.questions import Question, paired
from builders.seeding import rng
from filters.geometry import Difficulty, GeometryThresholds, classify_image
from filters.legibility import ImageReading, LegibilityRules, clear_direction
from sources.records import ImageRecord, Instance, RecordSet
from templates.loader import load_templates, render, with_article

POSITION_PREDICATES_KEY = "predicates"


@dataclass
class Scene:
    """One image and what the builders read from it."""

    image: ImageRecord
    levels: Mapping[str, Difficulty]
    attribute_types: Mapping[str, str]
    reading: ImageReading
    by_category: dict[str, list[Instance]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        groups: dict[str, list[Instance]] = defaultdict(list)
        for inst in self.image.instances:
            groups[inst.category].append(inst)
        self.by_category = dict(groups)

    def level(self, inst: Instance) -> str:
        return self.levels[inst.id].level

    def single(self, level: str) -> list[Instance]:
        """Instances that are the only one of their category (never a crowd region) and have this level."""
        return [insts[0] for insts in self.by_category.values()
                if len(insts) == 1 and not insts[0].iscrowd and self.level(insts[0]) == level]

    def clear(self) -> list[Instance]:
        """Instances shown once, easy (geometry) and legible: what a question may name and ask about."""
        return [i for i in self.single("easy") if self.reading.legible(i)]

    def attribute(self, inst: Instance, kind: str) -> str | None:
        found = [a for a in inst.attributes if self.attribute_types.get(a) == kind]
        return found[0] if len(found) == 1 else None

    def hidden_reason(self, inst: Instance, thresholds: GeometryThresholds) -> str | None:
        """Why a hard instance is hard: occluded, truncated or tiny (first that applies, in that order)."""
        g = self.levels[inst.id].geometry
        if g.occlusion >= thresholds.hard_occlusion:
            return "occluded"
        if g.truncation >= thresholds.hard_truncation:
            return "truncated"
        if g.relative_area < thresholds.hard_area:
            return "tiny"
        return None


def scenes_of(records: RecordSet, thresholds: GeometryThresholds) -> list[Scene]:
    rules = legibility_rules(records)
    out = []
    for im in records.images:
        levels = classify_image(im, thresholds)
        reading = ImageReading(im, {k: d.geometry for k, d in levels.items()}, rules)
        out.append(Scene(im, levels, records.attribute_types, reading))
    return out


def legibility_rules(records: RecordSet) -> LegibilityRules:
    """The demo world's measured look-alike table, else the general rules."""
    return LegibilityRules.demo() if records.source == "demo" and records.generated else LegibilityRules()


LARGEST_RATIO = 2.0
""""The largest object" points at a shape whose visible area is at least this many times every other one's."""


def referring_expression(scene: Scene, inst: Instance) -> str | None:
    """How a question points at ``inst`` without naming its category (``refer`` in ``common.yaml``), or ``None``
    when neither its pattern nor its size singles it out."""
    words = load_templates("mmsap", "common")["refer"]
    pattern = scene.attribute(inst, "pattern")
    patterns = [scene.attribute(i, "pattern") for i in scene.image.instances]
    if pattern in words["pattern"] and patterns.count(pattern) == 1:
        return str(words["pattern"][pattern])
    if all(inst.area >= LARGEST_RATIO * other.area for other in scene.image.instances if other.id != inst.id):
        return str(words["largest"])
    return None


def plural(category: str) -> str:
    return load_templates("mmsap", "common").get("plurals", {}).get(category, category + "s")


# ------------------------------------------------------------------------------------------------ basic


Maker = Callable[..., "Question | None"]
"""``(scene, generator) -> question or None``; a BasicVisQA maker also takes ``like=`` (:func:`sample`)."""


def basic_makers(records: RecordSet, thresholds: GeometryThresholds, seed: int = 0) -> dict[str, Maker]:
    """One question maker per demo BasicVisQA type; a maker returns ``None`` when the image offers nothing.

    Position answers are dealt from a balanced cycle of the four directions (an image is skipped when it offers
    no pair with the direction due): left/right pairs are far more common in 4:3 scenes, and a benchmark whose
    answers are never "above"/"below" could be answered by ruling those out, or by the longest option. Counts
    are dealt the same way over :data:`~builders.mmsap.distractors.COUNT_OPTIONS`, so the right count's rank
    among the four options is uniform: the nearest counts on both sides made it the second or third smallest
    almost always, and "pick the second smallest" a blind strategy."""
    t = load_templates("mmsap", "basic_demo")["basic"]
    colours = sorted(a for a, kind in records.attribute_types.items() if kind == "colour")
    categories = sorted(records.categories)

    def base(scene: Scene, subtask: str, question: str, answer: str, wrong: Sequence[str], **why: Any) -> Question:
        return Question("basic", subtask, scene.image.file, question, answer, tuple(wrong),
                        {"source": scene.image.source, "image_id": scene.image.id, "grounding": why})

    def partner(like: Question, scene: Scene, answer: str, **why: Any) -> Question:
        """``like``'s question on ``scene``, whose answer is one of ``like``'s wrong options: the two share their
        options, so whichever option a model picks without looking is wrong for one of them."""
        wrong = [o for o in (like.answer, *like.distractors) if o != answer]
        return base(scene, like.subtask, like.question, answer, wrong, **why)

    def color(scene: Scene, g: np.random.Generator, like: Question | None = None) -> Question | None:
        shown = [i for i in scene.clear() if scene.attribute(i, "colour")]
        if like is not None:
            shown = [i for i in shown if i.category == like.provenance["grounding"]["category"]
                     and display(scene.attribute(i, "colour")) in like.distractors]
        if not shown or len(colours) < 4:
            return None
        inst = shown[g.integers(len(shown))]
        right = scene.attribute(inst, "colour")
        if like is not None:
            return partner(like, scene, display(right), instance=inst.id, category=inst.category, colour=right)
        nearby = sorted({scene.attribute(i, "colour") for i in scene.image.instances} - {right, None})
        others = [c for c in colours if c != right and c not in nearby]
        wrong = _prefer(nearby, others, 3, g)
        return base(scene, "color", render(t["color"]["question"], category=inst.category), display(right),
                    [display(c) for c in wrong], instance=inst.id, category=inst.category, colour=right)

    ranks = BalancedCycle(list(range(len(COUNT_OPTIONS))), rng(seed, "mmsap/basic/counting/ranks"))
    rank_due: list[int] = []

    def counting(scene: Scene, g: np.random.Generator, like: Question | None = None) -> Question | None:
        if like is not None:
            category, n = like.provenance["grounding"]["category"], like.provenance["grounding"]["count"]
            found = scene.reading.count(category) if category in scene.by_category else None
            if found in COUNT_OPTIONS and found != n:
                return partner(like, scene, str(found), category=category, count=found)
            return None
        if not rank_due:
            rank_due.append(ranks.next())
        n = COUNT_OPTIONS[rank_due[0]]
        countable = sorted(c for c in scene.by_category if scene.reading.count(c) == n)
        if not countable:
            return None
        rank_due.clear()
        category = countable[g.integers(len(countable))]
        return base(scene, "counting", render(t["counting"]["question"], plural=plural(category)), str(n),
                    [str(w) for w in COUNT_OPTIONS if w != n], category=category, count=n)

    answer = t["shape"]["answer"]

    def shape(scene: Scene, g: np.random.Generator, like: Question | None = None) -> Question | None:
        looks = defaultdict(list)
        for inst in scene.image.instances:
            looks[(scene.attribute(inst, "colour"), scene.attribute(inst, "pattern"))].append(inst)
        unique = [insts[0] for key, insts in looks.items() if None not in key and len(insts) == 1
                  and scene.level(insts[0]) == "easy" and scene.reading.legible(insts[0])]
        if like is not None:
            g_ = like.provenance["grounding"]
            unique = [i for i in unique if (scene.attribute(i, "colour"), scene.attribute(i, "pattern")) ==
                      (g_["colour"], g_["pattern"]) and shape_answer(i.category) in like.distractors]
        if not unique:
            return None
        inst = unique[g.integers(len(unique))]
        colour, pattern = scene.attribute(inst, "colour"), scene.attribute(inst, "pattern")
        if like is not None:
            return partner(like, scene, shape_answer(inst.category), instance=inst.id, category=inst.category,
                           colour=colour, pattern=pattern)
        nearby = sorted(set(scene.by_category) - {inst.category})
        others = [c for c in categories if c != inst.category and c not in nearby]
        wrong = _prefer(nearby, others, 3, g)
        return base(scene, "shape", render(t["shape"]["question"], colour=colour, pattern=pattern),
                    shape_answer(inst.category), [shape_answer(c) for c in wrong],
                    instance=inst.id, category=inst.category, colour=colour, pattern=pattern)

    def shape_answer(category: str) -> str:
        return render(answer, a_category=display(with_article(category)))

    predicates = list(t["position"][POSITION_PREDICATES_KEY])
    due = BalancedCycle(predicates, rng(seed, "mmsap/basic/position/directions"))
    pending: list[str] = []

    def position(scene: Scene, g: np.random.Generator, like: Question | None = None) -> Question | None:
        if not pending and like is None:
            pending.append(due.next())
        clear = {i.id: i for i in scene.clear()}
        holds: dict[tuple[str, str], list[str]] = defaultdict(list)
        for r in scene.image.relations:
            if r.subject in clear and r.object in clear and r.predicate in predicates:
                holds[(r.subject, r.object)].append(r.predicate)
        if like is not None:
            g_ = like.provenance["grounding"]
            pairs = sorted(pair for pair, preds in holds.items() if len(preds) == 1 and preds[0] != g_["predicate"]
                           and [clear[pair[0]].category, clear[pair[1]].category] == g_["categories"]
                           and clear_direction(clear[pair[0]].bbox, clear[pair[1]].bbox) == preds[0])
        else:
            pairs = sorted(pair for pair, preds in holds.items() if preds == pending
                           and clear_direction(clear[pair[0]].bbox, clear[pair[1]].bbox) == pending[0])
        if not pairs:
            return None
        subject, obj = pairs[g.integers(len(pairs))]
        a, b = clear[subject].category, clear[obj].category
        right = holds[(subject, obj)][0]
        answer, phrases = t["position"]["answer"], t["position"]["phrases"]
        if like is not None:
            return partner(like, scene, render(answer, phrase=phrases[right], object=b), subject=subject, object=obj,
                           predicate=right, categories=[a, b])
        pending.clear()
        return base(scene, "position", render(t["position"]["question"], subject=a, object=b),
                    render(answer, phrase=phrases[right], object=b),
                    [render(answer, phrase=phrases[p], object=b) for p in predicates if p != right],
                    subject=subject, object=obj, predicate=right, categories=[a, b])

    return {"color": color, "counting": counting, "shape": shape, "position": position}


def _prefer(first: Sequence[str], then: Sequence[str], k: int, g: np.random.Generator) -> list[str]:
    """``k`` values, as many as possible from ``first`` (in random order), the rest from ``then``."""
    a = [first[i] for i in g.permutation(len(first))]
    b = [then[i] for i in g.permutation(len(then))]
    return (a + b)[:k]


# ------------------------------------------------------------------------------------------------ beyond


def beyond_makers(records: RecordSet, thresholds: GeometryThresholds) -> dict[str, Maker]:
    """One question maker per BeyondVisQA category, from the templates of ``beyond.yaml``."""
    data = load_templates("mmsap", "beyond")
    lists = data["option_lists"]
    vocabulary = sorted(records.categories)
    makers = {}
    for category, spec in data["beyond"].items():
        makers[category] = _beyond_maker(category, spec, lists, vocabulary, thresholds)
    return makers


def _beyond_maker(subtask: str, spec: Mapping[str, Any], lists: Mapping[str, Sequence[str]],
                  vocabulary: Sequence[str], thresholds: GeometryThresholds) -> Maker:
    grounding = spec["grounding"]

    def targets(scene: Scene) -> list[tuple[str, dict[str, Any]]]:
        """(category asked about, grounding facts) pairs this image supports."""
        if grounding == "absent":
            present = scene.clear()
            if not present:
                return []
            anchor = present[0]
            return [(c, {"absent": c, "present": anchor.category, "present_instance": anchor.id})
                    for c in vocabulary if scene.reading.absent(c)]
        if grounding == "present":
            return [(i.category, {"instance": i.id, "colour": scene.attribute(i, "colour")})
                    for i in scene.clear()]
        out = []
        for inst in scene.single("hard"):
            reason = scene.hidden_reason(inst, thresholds)
            if reason:
                out.append((inst.category, {"instance": inst.id, "reason": reason,
                                            "colour": scene.attribute(inst, "colour")}))
        return out

    def make(scene: Scene, g: np.random.Generator) -> Question | None:
        choices = []
        for category, facts in targets(scene):
            for k, template in enumerate(spec["templates"]):
                if template.get("reason") not in (None, facts.get("reason")):
                    continue
                if any(facts.get(need) is None for need in template.get("needs", [])):
                    continue
                choices.append((category, facts, k, template))
        if not choices:
            return None
        category, facts, k, template = choices[g.integers(len(choices))]
        fields = {"category": category, "category_plural": plural(category), "present": facts.get("present", ""),
                  "colour": facts.get("colour") or ""}
        pool = template["options"]
        pool = list(lists[pool]) if isinstance(pool, str) else list(pool)
        wrong = [display(pool[i]) for i in sorted(g.choice(len(pool), size=4, replace=False))]
        return Question("beyond", subtask, scene.image.file, render(template["question"], **fields), None,
                        tuple(wrong), {"source": scene.image.source, "image_id": scene.image.id, "template": k,
                                       "asked": category,
                                       "grounding": {"kind": grounding, **{a: b for a, b in facts.items() if b}}})

    return make


# ------------------------------------------------------------------------------------------------ sampling


def sample(makers: Mapping[str, Maker], scenes: Sequence[Scene], per_subtask: int, seed: int,
           subset: str, pair: bool = False) -> tuple[list[Question], dict[str, int]]:
    """Up to ``per_subtask`` questions per maker, at most one per image, images in a seeded order.

    With ``pair`` each question is followed by its partner where the images give one (the maker called with
    ``like=question`` on the next unused image in the same order that asks the same question with another answer);
    partners count in their subtask. A question without a partner is set aside for the next one, and taken, unpaired,
    only when the images offer too few pairs (or one place is left of an odd count). Returns the
    questions and, per subtask, how many were made (a shortfall means the source is too small)."""
    order = rng(seed, f"mmsap/{subset}/image-order").permutation(len(scenes))
    out: list[Question] = []
    made: dict[str, int] = {}
    for subtask, maker in makers.items():
        count, used, alone = 0, set[int](), list[tuple[int, Question]]()
        for index in order:
            if count >= per_subtask:
                break
            if index in used:
                continue
            scene = scenes[index]
            q = maker(scene, rng(seed, f"mmsap/{subset}/{subtask}/{scene.image.id}"))
            if q is None:
                continue
            found = _partner(maker, q, scenes, order, used | {index}, seed, f"{subset}/{subtask}") \
                if pair and count + 2 <= per_subtask else None
            if found is None and pair and count + 2 <= per_subtask:
                alone.append((int(index), q))  # used only if the images run out of questions with partners
                continue
            used.add(index)
            if found is None:
                out.append(q)
                count += 1
            else:
                used.add(found[0])
                out += paired(q, found[1])
                count += 2
        extra = [q for index, q in alone if index not in used][:per_subtask - count]
        out += extra
        made[subtask] = count + len(extra)
    return out, made


def _partner(maker: Maker, like: Question, scenes: Sequence[Scene], order: Sequence[int], used: set[int], seed: int,
             where: str) -> tuple[int, Question] | None:
    """The first unused image (in ``order``) on which ``maker`` asks ``like``'s question with another answer."""
    for index in order:
        if index in used:
            continue
        scene = scenes[index]
        q = maker(scene, rng(seed, f"mmsap/{where}/partner/{scene.image.id}"), like=like)
        if q is not None:
            return int(index), q
    return None
