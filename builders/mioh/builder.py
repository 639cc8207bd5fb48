"""The MIOH build: sources -> pools -> question specs per cell -> items, with the stage statistics and quality report."""

from __future__ import annotations

import hashlib
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from builders import quality
from builders.cli import EmptyBuildError, progress_bar, stderr
from builders.items import Item, make_item
from builders.pairs import pair_provenance, paired_share
from builders.llm import make_client
from builders.mcq import OPTION_LETTERS, BalancedCycle, ShareSchedule, letter
from builders.mioh.clip import compute_signals
from builders.mioh.config import BENCHMARK, TASK_SOURCE, MiohConfig
from builders.mioh.labels import Label
from builders.mioh.llm_context import rewrite_contexts
from builders.mioh.pools import Pools
from builders.mioh.prepared import Prepared, PreparedPools
from builders.mioh.questions import (
    IMAGE_LADDER,
    IMAGE_SLOT_VARIANTS,
    NOTA_VARIANTS,
    OPTION_SLOT_VARIANTS,
    PAIR_STATES,
    PRESENCE_STATES,
    QUESTION_TYPES,
    Key,
    Sampler,
    Spec,
    Want,
    evaluate,
    shrink,
    variants,
)
from builders.mioh.reading import Measured, read_sources, source_tasks
from builders.mioh.refusals import refusal_counts
from builders.mioh.render import (
    Claim,
    Wording,
    answer_letter,
    answer_slots,
    choose_claim,
    claim_truth,
    control_share,
    context_text,
    prioritize,
)
from builders.run import file_sha256, write_items_build
from builders.seeding import rng
from builders.semantics.options import is_none_of_the_above
from filters.base import FilterStats
from filters.clip import ClipUnavailable, load_scorer
from filters.geometry import measure
from sources.demo import load_demo
from sources.executors import ProcessExecutor, usable_cores
from sources.tables import tables_of

# ------------------------------------------------------------------------------------------------- sources


def input_hashes(pools_by_task: dict[str, Pools], extra: Sequence[str] = ()) -> dict[str, str]:
    """sha256 of every annotation file read (generated sources are determined by their path and seed)."""
    hashes = {path: "sha256:" + file_sha256(path) for path in extra}
    for pools in {id(p): p for p in pools_by_task.values()}.values():
        path = pools.info["path"]
        hashes[path] = "generated" if pools.info["generated"] else "sha256:" + file_sha256(path)
    return dict(sorted(hashes.items()))


# ----------------------------------------------------------------------------------------------- one build


@dataclass
class CellResult:
    items: list[Item]
    wanted: int
    failures: Counter


class MiohBuilder:
    """Turns pools into items, one (task, question type, pressure) cell at a time."""

    def __init__(self, config: MiohConfig, task: str, pools: Pools) -> None:
        self.config = config
        self.task = task
        self.pools = pools
        self.wording = Wording(task)
        self.sampler = Sampler(pools, config.n_images, config.n_options)
        self.seen: set[str] = set()
        """Ids of the items made so far; an item made again is rejected (a cell draws on)."""
        self.family_slots: dict[int, Counter] = defaultdict(Counter)
        """Family size -> answer position -> members of that size answered there (:meth:`_family_slot`)."""
        self.last_slots: dict[int, int] = {}
        """Family size -> answer position of the last family emitted (:meth:`_count` takes them back)."""
        self.contexts: dict[str, tuple[Claim, str, str]] = {}
        """Item id -> (claim, context, template) of a linguistic item, which its partner repeats word for word."""

    # --------------------------------------------------------------------------------------- pressure check

    def _deciding(self, spec: Spec) -> tuple[int, ...]:
        return tuple(spec.images[p] for p in spec.pair) if spec.pair is not None else spec.images

    def _labels(self, spec: Spec, img: int) -> list[Label]:
        probes = spec.options if spec.variant in ("all", "differs") else (spec.probe,)
        return [lab for probe in probes if (lab := self.pools.label(self.task, img, probe)) is not None]

    def challenging(self, spec: Spec) -> tuple[int, int]:
        """(hard-positive images, hard-negative images) among the images that decide the answer."""
        hp = hn = 0
        for img in self._deciding(spec):
            target = self.pools.label(self.task, img, spec.probe)
            if target is not None and target.status == "pos" and target.hard:
                hp += 1
            if any(l.status == "neg" and l.hard for l in self._labels(spec, img)):
                hn += 1
        return hp, hn

    def pressure_met(self, spec: Spec, pressure: str) -> bool:
        hp, hn = self.challenging(spec)
        return {"hard_positive": hp >= 1, "hard_negative": hn >= 1}.get(pressure, hp == 0 and hn == 0)

    # --------------------------------------------------------------------------------------------- render

    def image_provenance(self, spec: Spec) -> list[dict[str, Any]]:
        out = []
        for img in spec.images:
            lab = self.pools.label(self.task, img, spec.probe)
            entry: dict[str, Any] = {"id": self.pools.image_id(img)}
            if lab is not None:
                entry.update(label=lab.status, difficulty=label_difficulty(lab), signal=lab.signal,
                             score=None if lab.score is None else round(float(lab.score), 6))
                if lab.clip_z is not None:
                    entry["clip_z"] = round(float(lab.clip_z), 4)
            if self.task == "counting":
                entry["count"] = self.pools.count(img, spec.probe)
            out.append(entry)
        return out

    def option_provenance(self, spec: Spec) -> list[dict[str, Any]]:
        """Per option probe (``all``/``differs``): its label and difficulty in every image, in image order, so a
        reviewer sees which image makes which distractor hard (``images`` describes the question's own probe);
        labels as a reviewer reads them (``present``/``absent``/``undecidable``); empty for other variants."""
        if spec.variant not in ("all", "differs"):
            return []
        out = []
        for k, probe in enumerate(spec.options):
            cells = [{"label": "undecidable", "difficulty": None} if (lab := self.pools.label(self.task, img, probe)) is None
                     else {"label": "present" if lab.status == "pos" else "absent", "difficulty": label_difficulty(lab)}
                     for img in spec.images]
            out.append({"option": letter(k), "probe": _jsonable_probe(probe), "images": cells})
        return out

    def to_item(self, spec: Spec, key: Key, pressure: str, cell_rng: np.random.Generator, extra: dict[str, Any],
                like: Item | None = None) -> Item | None:
        """The item of ``spec``; ``None`` where a linguistic pressure's claim would be true. The claim is chosen
        first (most rejected attempts end there), and nothing before it draws from ``cell_rng``.

        ``like``: the item a partner is made for; its context is repeated word for word, and on the partner's
        images it may be true (``context_truth`` says which; ``None`` where a label it rests on is undecidable)."""
        claim = None
        if like is not None and like.id in self.contexts:
            claim, context, variant = self.contexts[like.id]
            truth = claim_truth(self.pools, spec, claim)
            if truth is None:
                return None
            control = truth
        elif pressure in ("sycophantic", "instructional_override"):
            control = bool(cell_rng.random() < control_share(spec, self.config.context_control_share))
            claim = choose_claim(cell_rng, self.pools, spec, key, control)
            if claim is None or claim_truth(self.pools, spec, claim) is not control:
                return None
            context, variant = context_text(cell_rng, self.wording, pressure, claim)
        question = self.wording.question(spec)
        options = self.wording.options(spec)
        provenance: dict[str, Any] = {
            "source": self.pools.source,
            "template": f"mioh/{self.task}/{spec.qtype}/{spec.variant}",
            "probe": _jsonable_probe(spec.probe),
            "option_probes": [_jsonable_probe(p) for p in spec.options] if spec.variant in ("all", "differs") else [],
            "compared": list(spec.pair) if spec.pair is not None else None,
            "count": spec.count,
            "images": self.image_provenance(spec),
            "option_labels": self.option_provenance(spec),
            "answer_state": key.state,
            "answer_slots": answer_slots(spec),
            **({"never_gold": never} if (never := self.wording.never_gold(spec)) else {}),
            "n_images": len(spec.images),
            "challenging_images": dict(zip(("hard_positive", "hard_negative"), self.challenging(spec))),
            **extra,
        }
        if claim is not None:
            question = prioritize(self.wording, question)
            provenance["context"] = {"claim": claim.as_dict(), "template": variant, "writer": "template"}
            provenance["context_truth"] = "true" if control else "false"
        images = [self.pools.image_file(img) for img in spec.images]
        item = make_item(
            benchmark=BENCHMARK, task=self.task, question_type=spec.qtype, pressure=pressure, images=images,
            question=question, options=options, answer=answer_letter(key), context=context if claim else "",
            provenance=provenance,
        )
        if like is not None and (item.question, item.options, item.context) != (like.question, like.options, like.context):
            return None  # not the same question: no partner
        if claim is not None:
            self.contexts[item.id] = (claim, context, variant)
        return item

    # ---------------------------------------------------------------------------------------------- cells

    def _want_makers(self, qtype: str, pressure: str, cell_rng: np.random.Generator):
        """Per variant: a function giving the next :class:`Want` from balanced schedulers."""
        makers = {}
        self.nota_schedules: dict[str, ShareSchedule] = {}
        """Per variant of the cell: its 'None of the above' schedule, which deals partners' answers too."""
        n, opts = self.config.n_images, self.config.n_options
        for variant in variants(self.task, qtype):
            if pressure == "hard_negative" and variant == "fewest":
                continue
            nota = ShareSchedule(nota_share(self.config, variant) if nota_eligible(variant, pressure) else 0.0)
            self.nota_schedules[variant] = nota
            if variant in IMAGE_SLOT_VARIANTS:
                slots = BalancedCycle(range(n), cell_rng)
            elif variant in OPTION_SLOT_VARIANTS:
                slots = BalancedCycle(range(opts), cell_rng)
            else:
                slots = None
            states: Sequence[str] = ()
            if variant == "any":
                states = PRESSED_STATES["any"].get(pressure, PRESENCE_STATES)
            elif variant == "pair":
                states = PRESSED_STATES["pair"].get(pressure, PAIR_STATES)
            state_cycle = BalancedCycle(states, cell_rng) if states else None

            def make(nota=nota, slots=slots, state_cycle=state_cycle) -> Want:
                return Want(
                    slot=slots.next() if slots else 0,
                    state=state_cycle.next() if state_cycle else "",
                    nota=nota.next(),
                )

            makers[variant] = make
        return makers

    def build_cell(self, qtype: str, pressure: str) -> CellResult:
        cfg = self.config
        cell_rng = rng(cfg.seed, f"mioh/{self.task}/{qtype}/{pressure}")
        makers = self._want_makers(qtype, pressure, cell_rng)
        variant_cycle = BalancedCycle(sorted(makers), cell_rng)
        visual = "easy" if pressure in ("n_images", "sycophantic", "instructional_override") else pressure
        items: list[Item] = []
        failures: Counter = Counter()
        gave_up: Counter = Counter()
        unpartnered: Counter = Counter()
        asked = 0
        while asked < cfg.n_questions:
            asked += 1
            variant = variant_cycle.next()
            if gave_up[variant] >= GIVE_UP_LIMIT:
                failures[f"not tried: its question form gave up {GIVE_UP_LIMIT} times in this cell"] += 1
                continue
            want = makers[variant]()
            paired = asked < cfg.n_questions  # the partner is one of the cell's questions
            if paired and unpartnered[variant] >= GIVE_UP_LIMIT:
                failures[f"no partner sought: its question form found none {GIVE_UP_LIMIT} times in this cell"] += 1
                paired = False
            partner_nota = None  # dealt by the schedule once a question is made (a question never made takes none)
            made = partner = fallback = None
            pair_tries = 0
            for _ in range(cfg.max_attempts):
                spec = self.sampler.sample(cell_rng, self.task, variant, visual, want)
                if spec is None:
                    failures["no images for the sampled probe"] += 1
                    continue
                key = evaluate(self.pools, spec)
                if key is None:
                    failures["ambiguous answer"] += 1
                    continue
                if not self.pressure_met(spec, visual):
                    failures["pressure not met"] += 1
                    continue
                made = self._emit(spec, key, pressure, cell_rng)
                if made is None:
                    failures["context not false / duplicate / no smaller family member"] += 1
                    continue
                if paired:
                    if partner_nota is None:
                        partner_nota = self.nota_schedules[variant].next()
                    partner = self._partner(spec, key, pressure, visual, cell_rng, made, partner_nota)
                    if partner is None and pair_tries < PAIR_TRIES - 1:
                        failures["no partner found: the question drawn again"] += 1
                        pair_tries += 1
                        fallback = fallback or (made, spec, key, self.last_slots)
                        self._count(made, self.last_slots, -1)
                        made = None
                        continue
                self.sampler.remember(spec, key)
                break
            if made is None and fallback is not None:  # no other question drawn: the first, unpaired
                made, spec, key, slots = fallback
                self._count(made, slots, +1)
                self.sampler.remember(spec, key)
            if made is None:
                failures[f"gave up after {cfg.max_attempts} attempts"] += 1
                gave_up[variant] += 1
                continue
            items.extend(made)
            if paired and partner is None:
                failures["no partner found: the question stays unpaired"] += 1
                unpartnered[variant] += 1
            elif paired:
                asked += 1
                items.extend(partner)
        return CellResult(items, cfg.n_questions, failures)

    def _count(self, made: list[Item], slots: dict[int, int], sign: int) -> None:
        """Take back (``sign`` -1) what :meth:`_emit` counted of a question drawn again for want of a partner -
        its ids and family answer positions - or count it again (+1) when it is kept after all."""
        if sign < 0:
            self.seen.difference_update(it.id for it in made)
        else:
            self.seen.update(it.id for it in made)
        for size, slot in slots.items():
            self.family_slots[size][slot] += sign

    def _answers(self, spec: Spec, pressure: str) -> list[Want]:
        """Every answer the cell may deal to ``spec``'s question form (:meth:`_want_makers`' schedules)."""
        variant = spec.variant
        if variant in ("any", "pair"):
            default = PRESENCE_STATES if variant == "any" else PAIR_STATES
            return [Want(state=s) for s in sorted(set(PRESSED_STATES[variant].get(pressure, default)))]
        slots = len(spec.images) if variant in IMAGE_SLOT_VARIANTS else len(spec.options)
        nota = nota_eligible(variant, pressure) and nota_share(self.config, variant) > 0
        return [Want(slot=s) for s in range(slots)] + ([Want(nota=True)] if nota else [])

    def _partner(self, spec: Spec, key: Key, pressure: str, visual: str, cell_rng: np.random.Generator,
                 first: list[Item], nota: bool) -> list[Item] | None:
        """The partner of the question just made (``first``: its item, or its family's members): the same
        question and context over images drawn from the same pools by the same rules (:meth:`Sampler.sample`
        with ``like``), for another answer: 'None of the above' where the cell's schedule dealt it (``nota``)
        and the first is not, else one of the cell's other answers at random; ``None`` where
        ``max_attempts / PAIR_TRIES`` draws find none. Both are marked with :func:`builders.pairs.pair_provenance`."""
        def same(want: Want) -> bool:
            if want.nota or key.state == "nota":
                return want.nota and key.state == "nota"
            return want.state == key.state if want.state else want.slot == key.index

        nota = nota and key.state != "nota"
        others = [w for w in self._answers(spec, pressure) if not same(w) and w.nota == nota]
        if not others:
            return None
        # The answers in a random order, each given its share of the attempts: an answer drawn anew at every
        # attempt would go to the easiest to draw ('None of the above': 27 % of the eligible items, not 20 %).
        share = max(1, self.config.max_attempts // PAIR_TRIES // len(others))
        for attempt in range(share * len(others)):
            if attempt % share == 0:
                want = others.pop(int(cell_rng.integers(len(others))))
            partner = self.sampler.sample(cell_rng, self.task, spec.variant, visual, want, like=spec)
            partner_key = evaluate(self.pools, partner) if partner is not None else None
            if partner_key is None or partner_key.index == key.index or not self.pressure_met(partner, visual):
                continue
            made = self._emit(partner, partner_key, pressure, cell_rng, like=first)
            if made is None:
                continue
            self.sampler.remember(partner, partner_key)
            for a, b in zip(first, made):
                pair_id = hashlib.sha256(f"{a.id}/{b.id}".encode()).hexdigest()[:16]
                a.provenance.update(pair_provenance(pair_id, "a"))
                b.provenance.update(pair_provenance(pair_id, "b"))
            return made
        return None

    def _emit(self, spec: Spec, key: Key, pressure: str, cell_rng: np.random.Generator,
              like: list[Item] | None = None) -> list[Item] | None:
        """The items of a question (its family's members under ``n_images``); ``like``: those of the question
        a partner is made for, member by member (each partner member has another answer than its own)."""
        if pressure != "n_images":
            item = self.to_item(spec, key, pressure, cell_rng, {}, like[0] if like else None)
            if item is None or item.id in self.seen:
                return None
            self.seen.add(item.id)
            self.last_slots = {}
            return [item]
        sizes = [s for s in IMAGE_LADDER if s <= self.config.n_images]
        family = hashlib.sha256(repr((self.task, spec)).encode()).hexdigest()[:12]
        members = []
        slots = {}
        for number, size in enumerate(sizes):
            other = like[number] if like else None
            if spec.variant in IMAGE_SLOT_VARIANTS and key.state == "image":
                slots[size] = self._family_slot(size, cell_rng, OPTION_LETTERS.index(other.answer) if other else None)
            member = spec if size == len(spec.images) and size not in slots else shrink(
                cell_rng, self.pools, spec, size, self.config.n_options, slot=slots.get(size))
            member_key = evaluate(self.pools, member) if member is not None else None
            if member is None or member_key is None or not self.pressure_met(member, "easy"):
                return None
            extra = {"family": family, "family_sizes": sizes, "group": family}  # group: one question to the lint
            item = self.to_item(member, member_key, pressure, cell_rng, extra, other)
            if item is None or item.id in self.seen or (other is not None and item.answer == other.answer):
                return None
            members.append(item)
        self.seen.update(it.id for it in members)
        self.last_slots = slots
        for size, slot in slots.items():
            self.family_slots[size][slot] += 1
        return members

    def _family_slot(self, size: int, cell_rng: np.random.Generator, avoid: int | None = None) -> int:
        """Where the answer image goes in the ``size``-image member of a family: a position that has been the
        answer least often so far among this task's ``size``-image members (ties at random), so that the answer
        position is uniform within each family size, the largest included (its cell deals positions over all its
        questions, and a family's question takes the one of its first draw). ``avoid``: the answer position of
        the partner's member of that size, which this member must not share."""
        taken = self.family_slots[size]
        least = min(taken[p] for p in range(size) if p != avoid)
        free = [p for p in range(size) if taken[p] == least and p != avoid]
        return free[int(cell_rng.integers(len(free)))]


GIVE_UP_LIMIT = 3
PAIR_TRIES = 3
"""Questions drawn for one question slot until one has a partner (each partner search gets ``max_attempts /
PAIR_TRIES`` draws); the last is kept unpaired when none had one. Kept at once, 10 % of an eight-image demo
build's items were unpaired (families of the ``n_images`` cells, whose every member needs a partner, most).
A question form left unpaired :data:`GIVE_UP_LIMIT` times in a cell is not paired there again:
on sources that do not list every absence, four fixed options are seldom all decided on two other images (a
"which is in Image i but not in Image j" partner), and the failed searches were most of a paper-scale build's
drawing time."""
"""A question form that gave up this many times in a cell (``max_attempts`` draws each) is not drawn again there.
Where no draw can succeed - at paper scale no three attributes of the gold's kind are decided on all four images
of a "which is in all" question - every later question of the form would only fail ``max_attempts`` more times
(146,000 draws of a paper-scale build, most of its drawing time); the skipped questions are reported with why."""
MIN_QUESTIONS = 5_000
"""Below this many questions in a build, starting worker processes costs more than they save."""
DRAW_ORDER = ("position", "attribute", "counting", "existence")
"""The tasks from the longest draw to the shortest at paper scale (``benchmarks/bench_mioh_scale.py``): every
distractor search of position shuffles and reads a scene graph's tens of thousands of triples, and counting's cells
also deal counts. Started longest first, the workers end together."""


def draw_cells(builders: dict[str, Any], cells: Sequence[tuple[str, str, str]], stats: dict[str, Any],
               on_done: Callable[[int, int], None] = lambda done, total: None) -> list[Any]:
    """Each cell's :class:`CellResult`, in order, by the task's builder (:class:`MiohBuilder`). A task's cells are
    drawn one after another, as each depends on the task's pools and on its earlier cells (an item an earlier
    cell made is not made again); the tasks are drawn side by side by worker processes
    (:class:`sources.executors.ProcessExecutor`, which hands them the pools without a copy), ``--processes`` of
    them, by default where a build has :data:`MIN_QUESTIONS` questions and there are two cores: the items are
    those one process draws. The tasks start longest first (:data:`DRAW_ORDER`), so that the workers end
    together. ``stats`` gets ``workers``."""
    tasks = sorted(dict.fromkeys(task for task, _, _ in cells), key=DRAW_ORDER.index)
    questions = sum(builders[task].config.n_questions for task, _, _ in cells)

    def draw(task: str) -> list[Any]:
        drawn = [builders[task].build_cell(qtype, pressure) for t, qtype, pressure in cells if t == task]
        for item in (item for result in drawn for item in result.items):
            item.to_json()  # made here, beside the other worker, and handed over with the item
        return drawn

    processes = next(iter(builders.values())).config.processes if builders else None
    if processes is None:  # by size: worker processes cost more than they save on a small build
        processes = usable_cores() if questions >= MIN_QUESTIONS else 1
    executor = ProcessExecutor(min(processes, len(tasks)))
    executor = executor if executor.inherits else ProcessExecutor(1)
    stats["workers"] = executor.workers
    drawn = executor.map(draw, tasks, lambda done, total: on_done(len(cells) * done // total, len(cells)))
    by_task = {task: iter(results) for task, results in zip(tasks, drawn)}
    return [next(by_task[task]) for task, _, _ in cells]


def label_difficulty(lab: Label) -> str:
    """``easy``, ``hard_positive`` or ``hard_negative``: how hard a decided label is to see."""
    return "easy" if not lab.hard else ("hard_positive" if lab.status == "pos" else "hard_negative")


def _jsonable_probe(probe: Any) -> Any:
    return list(probe) if isinstance(probe, tuple) else probe


class ClipStage:
    """The optional CLIP stage: scorer loading, the skip notice, and what build.json says about it."""

    def __init__(self, config: MiohConfig, stats: dict[str, Any], executor: Any = None) -> None:
        self.config = config
        self.scorer: Any = None
        self.skipped: str | None = None
        self.executor = executor
        if config.no_clip:
            self.skipped = "--no-clip given"
            return
        try:
            self.scorer = load_scorer(config.clip_config(config.resolved_cache_dir()), executor)
        except ClipUnavailable as exc:
            self._skip(str(exc))

    def _skip(self, reason: str) -> None:
        self.skipped = reason
        self.scorer = None
        stderr.print(f"CLIP stage skipped: {reason} (geometry and co-occurrence signals still run)",
                     markup=False, style="yellow")

    def pools(self, measured: Measured, config: MiohConfig, tasks: Sequence[str], task_bar) -> Pools:
        """The pools of a source read and measured, with CLIP signals when a scorer is available (it may still
        fail on first use)."""
        source = measured.tables
        pool_config = config.pool_config(exhaustive_relations=source.source == "demo")
        if self.scorer is not None:
            try:
                if getattr(self.executor, "name", "local") != "local":  # the cluster's progress, batch by batch
                    self.scorer.image_embeddings(source.images.column("file").to_pylist(),
                                                 on_progress=task_bar(f"CLIP images: {source.source}", source.n_images))
                return Pools.build(source, measured.measures, pool_config, tasks, lambda incidence: compute_signals(
                    self.scorer, source, incidence, config.clip_low_z, config.clip_high_z, "attribute" in tasks))
            except ClipUnavailable as exc:  # raised before any image is measured: nothing counted twice
                self._skip(str(exc))
        return Pools.build(source, measured.measures, pool_config, tasks)

    def record(self) -> dict[str, Any]:
        if self.scorer is None:
            return {"ran": False, "skipped": self.skipped}
        config = self.config.clip_config(self.config.resolved_cache_dir())
        where = {"executor": self.executor.describe()} if self.executor is not None else {}
        return {"ran": True, "config": config.to_dict(), **self.scorer.describe(), **where}


# ------------------------------------------------------------------------------------------ quality report


def mioh_quality(items: Sequence[Item], pools_by_task: dict[str, Pools], seed: int) -> dict[str, Any]:
    """The generic report plus MIOH's own checks of what its pressures chose (issue #2, quality report)."""
    out = quality.report(items)
    hn_scores = [
        img["score"] for it in items if it.pressure == "hard_negative"
        for img in it.provenance["images"] if img.get("signal") == "cooccurrence" and img.get("score") is not None
    ]
    sample_rng = rng(seed, "mioh/quality/random-absent")
    random_scores = []
    for pools in {id(p): p for p in pools_by_task.values()}.values():
        n_img = pools.n_images
        for _ in range(1000):
            img = int(sample_rng.integers(n_img))
            cat = pools.categories[int(sample_rng.integers(len(pools.categories)))]
            if pools.verified_absent[img, pools.category_index(cat)]:  # absent, and known to be
                random_scores.append(pools.absent_label(img, cat).score or 0.0)
    out["hard_negative_cooccurrence"] = {
        "chosen_mean_p": _mean(hn_scores),
        "random_absent_mean_p": _mean(random_scores),
        "lift": round(_mean(hn_scores) / _mean(random_scores), 3) if _mean(random_scores) else None,
        "n_chosen": len(hn_scores),
    }
    hp_area, easy_area = [], []
    for it in items:
        if it.task in ("existence", "counting"):
            pools = pools_by_task[it.task]
            for img in it.provenance["images"]:
                if img.get("label") != "pos":
                    continue
                idx = pools.index_of(img["id"])
                area = pools.max_relative_area(idx, it.provenance["probe"])
                (hp_area if img["difficulty"] == "hard_positive" else easy_area).append(area)
    clip_images = [(it.pressure, img) for it in items for img in it.provenance["images"] if "clip_z" in img]
    if clip_images:
        pools = next(iter(pools_by_task.values()))
        absent = pools.clip.absent_z[~np.isnan(pools.clip.absent_z)] if pools.clip is not None else np.array([])
        random_absent = sample_rng.choice(absent, size=min(1000, absent.size), replace=False) if absent.size else absent
        out["clip_z"] = {
            "hard_negative_chosen_mean": _mean([img["clip_z"] for p, img in clip_images
                                                if p == "hard_negative" and img.get("difficulty") == "hard_negative"]),
            "random_absent_mean": _mean(list(random_absent)),
            "hard_positive_mean": _mean([img["clip_z"] for p, img in clip_images if img.get("difficulty") == "hard_positive"]),
            "easy_positive_mean": _mean([img["clip_z"] for p, img in clip_images
                                         if img.get("label") == "pos" and img.get("difficulty") == "easy"]),
        }
    out["hard_positive_relative_area"] = {
        "hard_positive_median": _median(hp_area),
        "easy_positive_median": _median(easy_area),
        "n_hard": len(hp_area),
        "n_easy": len(easy_area),
    }
    return out


def _mean(values: Sequence[float]) -> float:
    return round(float(np.mean(values)), 4) if len(values) else 0.0


def _median(values: Sequence[float]) -> float:
    return round(float(np.median(values)), 5) if len(values) else 0.0


PRESSED_STATES: dict[str, dict[str, tuple[str, ...]]] = {
    "any": {"hard_positive": ("all", "all", "some"), "hard_negative": ("none", "none", "some")},
    "pair": {"hard_positive": ("both", "both", "first", "second"),
             "hard_negative": ("neither", "neither", "first", "second")},
}
"""The answer states dealt in the pressured cells, where one state cannot be asked (no hard positive when the
object is in no image): the others are weighted so that over the build's six pressures every state is the gold
equally often (the other four cells deal each state once per block). Dealt evenly, "Yes, in some of them" was the
gold of 41 % of the ``any`` items and a blind guesser's best pick (issue 40)."""


def nota_eligible(variant: str, pressure: str) -> bool:
    """Whether 'None of the above' may be the answer: the question form allows no right option
    (:data:`NOTA_VARIANTS`), except ``which`` in ``hard_positive`` cells (no image shows the object, so none
    shows it hard to see)."""
    return variant in NOTA_VARIANTS and not (variant == "which" and pressure == "hard_positive")


def nota_share(config: MiohConfig, variant: str) -> float:
    """``--nota-share``, else the fair share of the variant's question form: one over its options (the image
    questions offer ``n_images`` images and NOTA, the others ``n_options`` and NOTA)."""
    if config.nota_share is not None:
        return config.nota_share
    return 1.0 / ((config.n_images if variant in IMAGE_SLOT_VARIANTS else config.n_options) + 1)


def nota_report(items: Sequence[Item], config: MiohConfig) -> dict[str, Any]:
    """How many eligible items 'None of the above' answers, against what was asked (``--nota-share``, else each
    question form's fair share: ``requested`` is ``"fair"``, ``expected`` the share over the eligible items); a
    warning when the per-cell schedule rounded it far below that (small cells: ``round(0.2 x 2) = 0``).

    The share is scheduled per cell and question form, not over the whole build, so that a cell's items do not
    depend on which other cells are built; the default builds' answers are fixed by that schedule."""
    variants_of = [it.provenance.get("template", "").rsplit("/", 1)[-1] for it in items]
    eligible = [(it, v) for it, v in zip(items, variants_of) if nota_eligible(v, it.pressure)]
    answers = sum(1 for it, _ in eligible if is_none_of_the_above(it.answer_text))
    realised = answers / len(eligible) if eligible else 0.0
    expected = float(np.mean([nota_share(config, v) for _, v in eligible])) if eligible else 0.0
    asked = (f"--nota-share {config.nota_share} asked for" if config.nota_share is not None
             else "its fair share (one over the options) is")
    warning = None
    if expected > 0 and eligible and realised < expected / 2:
        warning = (f"'None of the above': {asked} {expected:.0%} of the eligible items, but "
                   f"{answers} of {len(eligible)} got it: the share is rounded in each cell and question form, "
                   "so cells of few questions get none; raise --n-questions")
    return {"requested": config.nota_share if config.nota_share is not None else "fair",
            "expected": round(expected, 4), "eligible": len(eligible), "answers": answers,
            "share": round(realised, 4), "warning": warning}


# -------------------------------------------------------------------------------------------- the build


def build(config: MiohConfig, stats: dict[str, Any] | None = None) -> Iterator[Item]:
    """Yield the items of a MIOH build (no files written); ``stats`` is filled with stage statistics."""
    stats = stats if stats is not None else {}
    with progress_bar(config.progress) as task_bar, config.make_executor() as executor:
        yield from _build(config, stats, task_bar, executor)


def _prepare(config: MiohConfig, clip: ClipStage | None, stats: dict[str, Any], executor: Any, task_bar
             ) -> tuple[Prepared, ClipStage]:
    """Read and measure the sources, then load the CLIP stage (unless given; a bad source is reported before any
    CLIP notice), and build the pools (one per source, shared by the tasks it serves) the source tasks have not
    made (:func:`builders.mioh.reading.read_source`: they do where no CLIP stage is asked for): what
    :class:`builders.mioh.prepared.PreparedPools` caches."""
    if config.uses_demo:
        tables = tables_of(load_demo(seed=config.seed, n_images=config.demo_images, cache_dir=config.cache_dir,
                                     progress=task_bar("demo world", config.demo_images)))
        filter_stats = FilterStats()
        measured = [Measured(tables, measure(tables, config.pool_config(True).geometry, filter_stats), filter_stats)]
        served = [list(config.tasks)]
    else:
        tasks = source_tasks(config)
        measured = read_sources(config, tasks, task_bar("sources: read + measure", len(tasks)))
        served = [list(task.tasks) for task in tasks]
    clip = clip or ClipStage(config, stats, executor)
    pools_by_task: dict[str, Pools] = {}
    filter_stats, verification = FilterStats(), {}
    for source, tasks_served in zip(measured, served):
        filter_stats = filter_stats.merge(source.stats)
        verification.update(source.verification or {})
        if tasks_served:
            pools = source.pools if source.pools is not None else clip.pools(source, config, tasks_served, task_bar)
            pools_by_task.update((task, pools) for task in tasks_served)
    return (pools_by_task, filter_stats, verification), clip


def _build(config: MiohConfig, stats: dict[str, Any], task_bar, executor: Any = None) -> Iterator[Item]:
    started = time.perf_counter()
    prepared = PreparedPools.of(config)
    clip = cached = None
    if prepared is not None and prepared.exists():  # the CLIP stage decides whether an entry may serve
        clip = ClipStage(config, stats, executor)
        cached = prepared.load() if clip.scorer is None else None
    if cached is not None:
        pools_by_task, filter_stats, verification = cached
        stats["prepared_pools"] = "reused"
    else:
        (pools_by_task, filter_stats, verification), clip = _prepare(config, clip, stats, executor, task_bar)
        stats["prepared_pools"] = "not cached"
        if prepared is not None and clip.scorer is None and prepared.store(pools_by_task, filter_stats, verification):
            stats["prepared_pools"] = "stored"
            reopened = prepared.load()  # drawn from the entry's mapped tables, as a rerun draws
            pools_by_task = reopened[0] if reopened is not None else pools_by_task
    skipped: list[dict[str, Any]] = [
        {"task": task, "reason": f"no {TASK_SOURCE[task]} data given (--{TASK_SOURCE[task].replace('_', '-')})"}
        for task in config.tasks if task not in pools_by_task
    ]
    cells = [(task, qtype, pressure) for task in config.tasks if task in pools_by_task
             for qtype in QUESTION_TYPES for pressure in config.pressures]
    drawing: dict[str, Any] = {}
    builders = {task: MiohBuilder(config, task, pools) for task, pools in pools_by_task.items()}
    prepared_at = time.perf_counter()
    results = draw_cells(builders, cells, drawing, task_bar("questions", len(cells)))
    drawing["seconds"] = round(time.perf_counter() - prepared_at, 2)
    all_items: list[Item] = []
    shortfalls = []
    for (task, qtype, pressure), result in zip(cells, results):
        all_items.extend(result.items)
        n_questions = len({it.provenance.get("family", it.id) for it in result.items})
        if n_questions < result.wanted:
            shortfalls.append({
                "task": task, "question_type": qtype, "pressure": pressure, "wanted": result.wanted,
                "made": n_questions, "reasons": dict(sorted(result.failures.items())),
            })
    llm = config.llm()
    if llm.enabled:
        all_items, contexts = rewrite_contexts(all_items, make_client(llm))
        stats["llm"] = {"writer": "llm", "config": llm.to_dict(), "contexts": contexts}
    else:
        stats["llm"] = {"writer": "template", "reason": "no --llm-model configured: contexts from templates"}
    sources = {id(p): p for p in pools_by_task.values()}.values()
    stats.update(
        drawing=drawing,
        clip=clip.record() if clip is not None else {"ran": False, "skipped": None},
        sources={p.source: {"path": p.info["path"], "images": p.n_images, "categories": len(p.categories),
                            "license": p.info["license"]} for p in sources},
        filters=filter_stats.as_dict(),
        pools={task: {"probes": len(p.probes(task))} for task, p in pools_by_task.items()},
        federated_refusals={task: {"source": p.source, "exhaustive": p.info["exhaustive"],
                                   **refusal_counts(p, task)} for task, p in pools_by_task.items()},
        **({"verify_absence": verification} if verification else {}),
        items=len(all_items),
        pairs=paired_share(all_items),
        skipped=skipped + [{"cell": s} for s in shortfalls],
        quality=mioh_quality(all_items, pools_by_task, config.seed) if all_items else {},
        nota=nota_report(all_items, config),
        seconds=round(time.perf_counter() - started, 2),
        prepared_seconds=round(prepared_at - started, 2),  # reading and measuring the sources, or loading the cache
        input_hashes=input_hashes(pools_by_task, [config.verify_absence_with] if config.verify_absence_with else []),
        generated_sources=[p.source for p in pools_by_task.values() if p.info["generated"]],
    )
    if config.decomposed:  # Sec. 5.5: after the quality stats, which are about the benchmark's own items
        from builders.mioh.decomposed import decompose

        single, stats["decomposed"] = decompose(all_items)
        all_items = all_items + single
    yield from all_items


def write_build(config: MiohConfig) -> tuple[Path, list[Item], dict[str, Any]]:
    """Run a build and write its directory atomically; returns (path, items, stats)."""
    stats: dict[str, Any] = {}
    items = list(build(config, stats))
    if not items:
        raise EmptyBuildError("the build produced no items: see the skipped tasks and cells above (is the source "
                              "too small?)", stats)
    if stats["nota"]["warning"]:
        stderr.print(f"warning: {stats['nota']['warning']}", markup=False, style="yellow")
    sources = [{"name": name, "path": info["path"], "license_note": info["license"]}
               for name, info in stats["sources"].items()]
    path, items = write_items_build(config, BENCHMARK, items, stats, sources, localise=stats["generated_sources"])
    return path, items, stats

