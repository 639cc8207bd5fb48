"""MIOH question specs: how each of the 4 tasks x 3 question types is sampled and how its answer is derived.

A :class:`Spec` is a question before wording: the images (in display order), the probe asked about, the option
probes or numbers, and the pair of images a comparative question names. :func:`evaluate` is the one place that
decides a spec's answer, from the pools alone; it returns ``None`` for any spec whose answer would be ambiguous
(an undecidable image, two options true, a tie for most or fewest). Samplers only propose; nothing is emitted
that :func:`evaluate` did not answer.

Variants (template ids) per task and question type (paper Sec. 3.1, Fig. 1, Appendix C):

============  ==================================================  =======================================
type          existence / attribute / position                     counting
============  ==================================================  =======================================
comprehensive ``all``: which option appears in all images (MCQ)    ``total``: how many in total (MCQ)
              ``any``: at least one in any image? (all/some/none)
comparative   ``differs``: in Image i but not Image j (MCQ);       ``most`` / ``fewest``: which image
              position uses ``pair``: Both/Neither/Image i/j
selective     ``which``: in which image (Image 1..N)               ``exact``: which image has exactly k
============  ==================================================  =======================================

Pressures: ``easy`` (every image easy), ``hard_positive`` / ``hard_negative`` (1..N challenging images in the
slots that decide the answer: present-but-hard positives, absent-but-likely negatives), and the easy recipe reused
by ``n_images``, ``sycophantic`` and ``instructional_override``. "None of the above" is a real answer in a share
of items set by the build (``nota_share``, by default its fair share: one over the options) where the structure
allows it: never for ``which`` in ``hard_positive`` cells (a hard positive needs an image showing the object), and
``most``/``fewest`` do not offer it (one image always has the most).
"""

from __future__ import annotations

from bisect import bisect_left

from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

import numpy as np

from builders.mioh.labels import NEG_HARD, POS, POS_HARD, Label
from builders.mioh.pools import Pools, Probe

TASKS = ("existence", "counting", "attribute", "position")
QUESTION_TYPES = ("comprehensive", "comparative", "selective")
VISUAL_PRESSURES = ("easy", "hard_positive", "hard_negative")
LINGUISTIC_PRESSURES = ("sycophantic", "instructional_override")
PRESSURES = VISUAL_PRESSURES + ("n_images",) + LINGUISTIC_PRESSURES
IMAGE_LADDER = (2, 4, 8, 10)

PRESENCE_STATES = ("all", "some", "none")
PAIR_STATES = ("both", "neither", "first", "second")
NOTA_VARIANTS = ("all", "differs", "which", "total", "exact")
IMAGE_SLOT_VARIANTS = ("which", "most", "fewest", "exact")
OPTION_SLOT_VARIANTS = ("all", "differs", "total")
EXTREME_VARIANTS = ("most", "fewest")
"""Which image has the most / fewest: one image always does (ties are not asked), so these offer the images
only; a "None of the above" that is never right would be a free elimination for a blind guesser."""


def variants(task: str, qtype: str) -> tuple[str, ...]:
    """The template variants a (task, question type) cell draws from."""
    if task == "counting":
        return {"comprehensive": ("total",), "comparative": ("most", "fewest"), "selective": ("exact",)}[qtype]
    if qtype == "comprehensive":
        return ("all", "any")
    if qtype == "comparative":
        return ("pair",) if task == "position" else ("differs",)
    return ("which",)


@dataclass(frozen=True)
class Spec:
    """A question before wording. Image and pair entries are indices into the record set's images."""

    task: str
    qtype: str
    variant: str
    images: tuple[int, ...]
    probe: Probe | None = None
    """The probe asked about (``any``, ``pair``, ``which``, counting); the tempting option for NOTA ``all``."""
    options: tuple[Any, ...] = ()
    """Option probes (``all``, ``differs``) or numbers (``total``), in display order, "None of the above" excluded."""
    pair: tuple[int, int] | None = None
    """Positions (0-based, into ``images``) of Image i and Image j of a comparative question."""
    count: int | None = None
    """The exact count a counting-selective question asks for."""


@dataclass(frozen=True)
class Key:
    """The answer of a spec: the index of the right option among all rendered options, and its state name."""

    index: int
    state: str
    """``option``/``nota`` (option lists), ``all``/``some``/``none``, ``both``/``neither``/``first``/``second``,
    ``image`` (image slots)."""


def option_count(spec: Spec) -> int:
    """How many options the rendered question has."""
    if spec.variant in ("any",):
        return 4  # Yes all / Yes some / No none / I don't know
    if spec.variant == "pair":
        return 4  # Both / Neither / Image i / Image j
    if spec.variant in EXTREME_VARIANTS:
        return len(spec.images)  # always an answer image: no "None of the above" to offer
    if spec.variant in IMAGE_SLOT_VARIANTS:
        return len(spec.images) + 1
    return len(spec.options) + 1


# ------------------------------------------------------------------------------------------------ evaluation


def _labels(pools: Pools, task: str, images: Sequence[int], probe: Probe) -> list[Label] | None:
    out = []
    for img in images:
        lab = pools.label(task, img, probe)
        if lab is None:
            return None
        out.append(lab)
    return out


def _option_truths(
    pools: Pools, task: str, images: Sequence[int], options: Sequence[Probe], holds: Callable[[list[Label]], bool]
) -> list[bool] | None:
    """Whether each option probe ``holds`` on ``images``; ``None`` when any option is undecidable there."""
    truths = []
    for opt in options:
        labs = _labels(pools, task, images, opt)
        if labs is None:
            return None
        truths.append(holds(labs))
    return truths


def _single(truths: Sequence[bool], nota_index: int) -> int | None:
    """Index of the only true entry, ``nota_index`` when none is true, ``None`` when several are."""
    hits = [i for i, t in enumerate(truths) if t]
    if len(hits) > 1:
        return None
    return hits[0] if hits else nota_index


def _counts(pools: Pools, spec: Spec) -> list[int] | None:
    counts = [pools.count(img, spec.probe) for img in spec.images]  # type: ignore[arg-type]
    return None if any(c is None for c in counts) else counts  # type: ignore[return-value]


def evaluate(pools: Pools, spec: Spec) -> Key | None:
    """The answer of ``spec`` derived from the pools, or ``None`` when it is ambiguous or undecidable."""
    n_opts = option_count(spec)
    if spec.task == "counting":
        counts = _counts(pools, spec)
        if counts is None:
            return None
        if spec.variant == "total":
            idx = _single([o == sum(counts) for o in spec.options], n_opts - 1)
        elif spec.variant == "exact":
            idx = _single([c == spec.count for c in counts], n_opts - 1)
        else:
            best = max(counts) if spec.variant == "most" else min(counts)
            hits = [i for i, c in enumerate(counts) if c == best]
            idx = hits[0] if len(hits) == 1 else None
        if idx is None:
            return None
        if spec.variant in EXTREME_VARIANTS:
            return Key(idx, "image")
        return Key(idx, "nota" if idx == n_opts - 1 else ("option" if spec.variant == "total" else "image"))

    task = spec.task
    if spec.variant == "all":
        truths = _option_truths(pools, task, spec.images, spec.options, lambda labs: all(l.status == "pos" for l in labs))
        idx = None if truths is None else _single(truths, n_opts - 1)
        return None if idx is None else Key(idx, "nota" if idx == n_opts - 1 else "option")
    if spec.variant == "any":
        labs = _labels(pools, task, spec.images, spec.probe)
        if labs is None:
            return None
        n_pos = sum(l.status == "pos" for l in labs)
        state = "all" if n_pos == len(labs) else ("none" if n_pos == 0 else "some")
        return Key(PRESENCE_STATES.index(state), state)
    if spec.variant in ("differs", "pair"):
        i, j = spec.pair  # type: ignore[misc]
        img_i, img_j = spec.images[i], spec.images[j]
        if spec.variant == "pair":
            labs = _labels(pools, task, (img_i, img_j), spec.probe)
            if labs is None:
                return None
            in_i, in_j = (l.status == "pos" for l in labs)
            state = {(True, True): "both", (False, False): "neither", (True, False): "first", (False, True): "second"}[
                (in_i, in_j)
            ]
            return Key(PAIR_STATES.index(state), state)
        truths = _option_truths(
            pools, task, (img_i, img_j), spec.options, lambda labs: labs[0].status == "pos" and labs[1].status == "neg"
        )
        idx = None if truths is None else _single(truths, n_opts - 1)
        return None if idx is None else Key(idx, "nota" if idx == n_opts - 1 else "option")
    if spec.variant == "which":
        labs = _labels(pools, task, spec.images, spec.probe)
        if labs is None:
            return None
        idx = _single([l.status == "pos" for l in labs], n_opts - 1)
        return None if idx is None else Key(idx, "nota" if idx == n_opts - 1 else "image")
    raise ValueError(f"unknown variant {spec.variant!r}")


# -------------------------------------------------------------------------------------------------- sampling


RowTest = Callable[[np.ndarray, np.ndarray], np.ndarray]
"""A test of probes from their labels on a question's images: ``(pos, hard)`` (images x probes) -> per probe."""

DISTRACTOR_SPAN = 1024
"""Probes labelled in the first span of a distractor search (:meth:`Sampler._distractors`): every probe of the
category vocabularies (COCO's 80, PACO's ~500 attribute probes) in one span; scene-graph triples over a few."""


@dataclass(frozen=True)
class Want:
    """What the schedulers ask of the next question: the answer slot or state, and whether NOTA is the answer."""

    slot: int = 0
    state: str = ""
    nota: bool = False


def probe_words(probe: Probe) -> tuple[str, ...]:
    """The words a probe's option text is made of, one per part: a category; an attribute and its category; a
    relation's subject, predicate and object."""
    return (str(probe),) if isinstance(probe, str) else tuple(str(part) for part in probe)  # type: ignore[union-attr]


GOLD_CANDIDATES = 2
"""Probes drawn for the gold of an option question, of which the least often right for its words is asked."""


class Sampler:
    """Proposes specs for one build; every random draw comes from the generator it is given."""

    def __init__(self, pools: Pools, n_images: int, n_options: int = 4) -> None:
        self.pools = pools
        self.n = n_images
        self.n_options = n_options
        self._words: dict[str, tuple[np.ndarray, list[str]]] = {}
        self.offered: dict[str, np.ndarray] = {}
        """Task -> per option word (:meth:`words`): how often an emitted option question offered it (:meth:`remember`)."""
        self.golds: dict[str, np.ndarray] = {}
        """Task -> per option word: how often it was in the right option."""
        self._kind_masks: dict[tuple[str, str, int], np.ndarray] = {}

    def words(self, task: str) -> tuple[np.ndarray, list[str]]:
        """The words of each probe of ``task`` as numbers (probes x words, a probe's category, attribute,
        relation ...: :func:`probe_words`), and the vocabulary they index."""
        if task not in self._words:
            texts = [probe_words(p) for p in self.pools.probes(task)]
            vocabulary = sorted({w for t in texts for w in t})
            index = {w: k for k, w in enumerate(vocabulary)}
            width = max((len(t) for t in texts), default=1)
            self._words[task] = (np.array([[index[w] for w in t] + [len(vocabulary)] * (width - len(t))
                                           for t in texts], dtype=np.int64).reshape(len(texts), width),
                                 vocabulary)
            self.offered[task] = np.zeros(len(vocabulary) + 1)  # the last slot pads short probes
            self.golds[task] = np.zeros(len(vocabulary) + 1)
        return self._words[task]

    def remember(self, spec: Spec, key: Key) -> None:
        """Tally the words of an emitted option question's options, and which were right, so that later
        questions offer the words that were right too often as distractors first (:meth:`_gold_surplus`).

        A text-only learner reads option words one by one: in the demo world a polygon can be denied only where
        no unread polygon could be taken for it, so polygons were right more often than offered ("hexagon" the
        gold of 40 % of the options naming it) and curved shapes less ("crescent" 8 %), and the learner beat
        chance on those words alone (issue 40). Counting per word rather than per option text also covers texts
        that are rarely repeated (a relation's subject, predicate and object)."""
        if spec.variant not in ("all", "differs"):
            return
        ids, _ = self.words(spec.task)
        for index, probe in enumerate(spec.options):
            row = ids[self.pools.probe_number(spec.task, probe)]
            np.add.at(self.offered[spec.task], row, 1)
            if key.state == "option" and index == key.index:
                np.add.at(self.golds[spec.task], row, 1)

    def _gold_surplus(self, task: str, numbers: Sequence[int]) -> np.ndarray:
        """Per candidate probe: how much more often its words were right than their fair share so far (the
        share of all offered option words that were right), summed over its words."""
        ids, _ = self.words(task)
        offered, golds = self.offered[task], self.golds[task]
        rate = golds[:-1].sum() / offered[:-1].sum() if offered[:-1].sum() else 0.0
        surplus = golds - rate * offered
        surplus[-1] = 0.0
        return surplus[ids[np.asarray(numbers, dtype=np.int64)]].sum(axis=1) if len(numbers) else np.zeros(0)

    # --------------------------------------------------------------------------------------------- helpers

    @staticmethod
    def _take(rng: np.random.Generator, pool: Sequence[int] | np.ndarray, k: int, used: set[int]) -> list[int] | None:
        """``k`` distinct images from the sorted ``pool`` not in ``used`` (which is updated), or ``None``.

        The draw is ``rng.choice`` over the pool with the used images taken out; the free list is never built
        (a pool holds up to every image of a COCO-sized source, ``used`` a handful): the used images' positions
        are found by bisection and each drawn index is shifted past them.
        """
        if k == 0:
            return []
        taken = sorted(j for j in (bisect_left(pool, u) for u in used) if j < len(pool) and pool[j] in used)
        n_free = len(pool) - len(taken)
        if n_free < k:
            return None
        chosen = []
        for i in rng.choice(n_free, size=k, replace=False).tolist():
            for j in taken:  # the i-th free position: skip every used position at or before it
                if j > i:
                    break
                i += 1
            chosen.append(int(pool[i]))
        used.update(chosen)
        return chosen

    def _probe(self, rng: np.random.Generator, task: str, min_positives: int = 0, balanced: bool = False
               ) -> Probe | None:
        """A probe drawn uniformly; with ``min_positives``, among those shown easily in that many images (the
        probes every answer state of the question can use: drawn from all probes, "Yes, in all of them" was
        answered by frequent probes and "No" by rare ones, and a blind learner read the state off the probe's
        words - "left of" is common, "in front of" rare). ``balanced`` (the gold of an option question): of
        :data:`GOLD_CANDIDATES` uniform draws, the one whose words were right least often for how often they were
        offered (:meth:`_gold_surplus`), so that words the images rarely let be right ("crescent") still are."""
        probes = self.pools.probes(task)
        numbers = (np.flatnonzero(self.pools.easy_positives(task) >= min_positives) if min_positives
                   else np.arange(len(probes)))
        if not len(numbers):
            return None
        if not balanced:
            return probes[int(numbers[int(rng.integers(len(numbers)))])]
        drawn = numbers[rng.integers(len(numbers), size=GOLD_CANDIDATES)]
        return probes[int(drawn[int(np.argmin(self._gold_surplus(task, drawn)))])]

    def _mixed(
        self, rng: np.random.Generator, task: str, probe: Probe, status: str, n: int, n_hard: int, used: set[int]
    ) -> list[int] | None:
        """``n`` images with ``status`` for ``probe``, ``n_hard`` of them hard and the rest easy."""
        hard = self._take(rng, self.pools.images(task, probe, status, True), n_hard, used)
        easy = self._take(rng, self.pools.images(task, probe, status, False), n - n_hard, used) if hard is not None else None
        return None if hard is None or easy is None else hard + easy

    @staticmethod
    def _k(rng: np.random.Generator, slots: int) -> int:
        """How many of ``slots`` deciding images are made challenging: 1..slots (paper: "0 to N")."""
        return int(rng.integers(1, slots + 1)) if slots > 0 else 0

    def _arrange(self, rng: np.random.Generator, first: int, others: list[int], slot: int) -> tuple[int, ...]:
        """``others`` shuffled with ``first`` inserted at position ``slot``."""
        rest = [others[i] for i in rng.permutation(len(others))]
        rest.insert(min(slot, len(rest)), first)
        return tuple(rest)

    def _of_kind(self, task: str, kind: str, min_positives: int) -> np.ndarray:
        """Per probe: of ``kind`` and shown easily in ``min_positives`` images (:meth:`_distractors`; made once
        per kind, every attempt asks again)."""
        key = (task, kind, min_positives)
        found = self._kind_masks.get(key)
        if found is None:
            found = self._kind_masks[key] = ((self.pools.probe_kinds(task) == kind)
                                             & (self.pools.easy_positives(task) >= min_positives))
        return found

    def _distractors(
        self,
        rng: np.random.Generator,
        task: str,
        images: Sequence[int],
        exclude: Probe,
        ok: RowTest,
        k: int,
        prefer: RowTest | None = None,
        min_positives: int = 0,
    ) -> list | None:
        """``k`` probes of ``exclude``'s kind (:meth:`Pools.probe_kinds`: a colour with colours), each of its own
        group and none of ``exclude``'s (:meth:`Pools.probe_groups`: one attribute per object), in a random order,
        decided on every one of ``images`` and passing ``ok``; probes that also pass ``prefer`` (plausible ones:
        present in some of the images) come first. ``min_positives``: only probes that show easily in at least
        that many images of the source (those that could have been the gold of the question: "which is in all
        N images" is answered by probes seen often, and distractors drawn from all probes left the frequent ones,
        and their words, to the gold).

        The labels come from :meth:`Pools.rows`, many probes at once; the tests see ``(pos, hard)``, two boolean
        images x probes matrices, and return one verdict per probe (a probe's verdict reads its own column
        only). The random order is read in growing spans (:data:`DISTRACTOR_SPAN`, doubled each time) until
        ``k`` preferred probes are found: a scene-graph source has tens of thousands of triples and they are
        usually found among the first few thousand. The probes chosen are those one pass over the whole order
        chooses: the first ``k`` preferred ones of distinct groups, else those and then the first others that pass.
        """
        probes = self.pools.probes(task)
        order = rng.permutation(len(probes))
        excluded = self.pools.probe_number(task, exclude)
        groups = self.pools.probe_groups(task)
        order = order[self._of_kind(task, self.pools.probe_kinds(task)[excluded], min_positives)[order]]
        order = order[groups[order] != groups[excluded]]
        decidable = self.pools.decidable(task, images)
        if decidable is not None and len(set(groups[order[decidable[order]]].tolist())) < k:
            return None  # fewer than k groups can be decided on these images: no pass over the order finds k
        liked: list[int] = []
        others: list[int] = []
        start, span = 0, DISTRACTOR_SPAN
        while start < len(order) and len(set(groups[liked].tolist())) < k:
            part = order[start:start + span]
            start, span = start + span, 2 * span
            codes = self.pools.rows(task, images, part)
            decided = (codes >= 0).all(axis=0)
            part, codes = part[decided], codes[:, decided]
            pos, hard = codes >= POS, (codes == NEG_HARD) | (codes == POS_HARD)
            good = ok(pos, hard)
            like = good & prefer(pos, hard) if prefer is not None else good
            liked += part[like].tolist()
            others += part[good & ~like].tolist()
        chosen: list[int] = []
        taken: set[int] = set()
        # Words right too often first; a stable sort keeps the random order among equals.
        liked = [liked[i] for i in np.argsort(-self._gold_surplus(task, liked), kind="stable")]
        for number in liked + (others if prefer is not None else []):
            if len(chosen) == k:
                break
            if int(groups[number]) not in taken:
                taken.add(int(groups[number]))
                chosen.append(number)
        return [probes[i] for i in chosen] if len(chosen) == k else None

    # ------------------------------------------------------------------------------------- set-fact tasks

    def sample(self, rng: np.random.Generator, task: str, variant: str, pressure: str, want: Want,
               like: Spec | None = None) -> Spec | None:
        """A spec of ``variant`` whose answer is what ``want`` asks, its images drawn for ``pressure``.

        ``like``: a partner's draw (:mod:`builders.pairs`): the question of ``like`` is kept - its probe, option
        probes or numbers, named pair of images and count - and only the images are drawn, by the same rules as
        any question's, for the answer ``want`` asks (the caller asks for another answer than ``like``'s)."""
        qtype = next(q for q in QUESTION_TYPES if variant in variants(task, q))
        method = getattr(self, f"_sample_{variant}")
        spec = method(rng, task, pressure, want, like)
        return None if spec is None else replace(spec, qtype=qtype)

    def _sample_all(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        n, hp, hn = self.n, pressure == "hard_positive", pressure == "hard_negative"
        used: set[int] = set()
        # Drawn among probes shown easily in N - 1 images (the distractors' population, and what NOTA needs).
        target = (self._probe(rng, task, min_positives=n - 1, balanced=not want.nota) if like is None
                  else _option_wanted(rng, like, want))
        if target is None:
            return None
        if want.nota:
            # The target appears in all images but one, where it is absent: the tempting wrong option.
            images = self._mixed(rng, task, target, "pos", n - 1, self._k(rng, n - 1) if hp else 0, used)
            miss = self._mixed(rng, task, target, "neg", 1, int(hn), used) if images is not None else None
            if images is None or miss is None:
                return None
            images = images + miss
        else:
            images = self._mixed(rng, task, target, "pos", n, self._k(rng, n) if hp else 0, used)
            if images is None:
                return None
        order = tuple(images[i] for i in rng.permutation(len(images)))
        if like is not None:
            return replace(like, images=order, probe=target)

        def not_in_all(pos: np.ndarray, hard: np.ndarray) -> np.ndarray:
            """Absent from some image; unless hard negatives are asked for, absent only where that is easy."""
            missing = ~pos.all(axis=0)
            return missing if hn else missing & ~(hard & ~pos).any(axis=0)

        def prefer(pos: np.ndarray, hard: np.ndarray) -> np.ndarray:
            return (hard & ~pos).any(axis=0) if hn else pos.any(axis=0)

        # The target is always an option: the answer, or under NOTA the tempting wrong one.
        distr = self._distractors(rng, task, order, target, not_in_all, self.n_options - 1, prefer, min_positives=n)
        if distr is None:
            return None
        options = list(distr)
        if want.nota:
            options.insert(int(rng.integers(len(options) + 1)), target)
        else:
            options.insert(want.slot, target)
        return Spec(task, "", "all", order, probe=target, options=tuple(options))

    def _sample_any(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        n, hp, hn = self.n, pressure == "hard_positive", pressure == "hard_negative"
        target = self._probe(rng, task, min_positives=n) if like is None else like.probe
        if target is None:
            return None
        n_pos = {"all": n, "none": 0, "some": int(rng.integers(1, n))}[want.state]
        n_neg = n - n_pos
        if (hp and n_pos == 0) or (hn and n_neg == 0):
            return None
        used: set[int] = set()
        pos = self._mixed(rng, task, target, "pos", n_pos, self._k(rng, n_pos) if hp else 0, used)
        neg = self._mixed(rng, task, target, "neg", n_neg, self._k(rng, n_neg) if hn else 0, used) if pos is not None else None
        if pos is None or neg is None:
            return None
        images = pos + neg
        return Spec(task, "", "any", tuple(images[i] for i in rng.permutation(n)), probe=target)

    def _pick_pair(self, rng: np.random.Generator) -> tuple[int, int]:
        i, j = (int(x) for x in rng.choice(self.n, size=2, replace=False))
        return i, j

    def _fill(self, rng, used: set[int], k: int) -> list[int] | None:
        """``k`` context images that do not decide the answer (comparative questions name two of N)."""
        return self._take(rng, range(self.pools.n_images), k, used)

    def _place_pair(self, rng, img_i: int, img_j: int, used: set[int], at: tuple[int, int] | None = None
                    ) -> tuple[tuple[int, ...], tuple[int, int]] | None:
        """The named pair at positions ``at`` (drawn when ``None``) among context images."""
        rest = self._fill(rng, used, self.n - 2)
        if rest is None:
            return None
        i, j = at if at is not None else self._pick_pair(rng)
        images: list[int | None] = [None] * self.n
        images[i], images[j] = img_i, img_j
        it = iter(rest)
        return tuple(x if x is not None else next(it) for x in images), (i, j)  # type: ignore[misc]

    def _sample_differs(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        hp, hn = pressure == "hard_positive", pressure == "hard_negative"
        target = self._probe(rng, task, balanced=not want.nota) if like is None else _option_wanted(rng, like, want)
        if target is None:
            return None
        used: set[int] = set()
        if want.nota:  # the target is in both named images: tempting, but not "in i but not in j"
            pair = self._mixed(rng, task, target, "pos", 2, int(hp), used)
        else:
            img_i = self._mixed(rng, task, target, "pos", 1, int(hp), used)
            img_j = self._mixed(rng, task, target, "neg", 1, int(hn), used) if img_i is not None else None
            pair = None if img_i is None or img_j is None else img_i + img_j
        if pair is None:
            return None
        placed = self._place_pair(rng, pair[0], pair[1], used, None if like is None else like.pair)
        if placed is None:
            return None
        images, (i, j) = placed
        if like is not None:
            return replace(like, images=images, probe=target)

        def wrong(pos: np.ndarray, hard: np.ndarray) -> np.ndarray:
            """Not "in Image i but not in Image j"; unless hard negatives are asked for, easy in both."""
            false = ~(pos[0] & ~pos[1])
            return false if hn else false & ~hard.any(axis=0)

        distr = self._distractors(
            rng, task, pair, target, wrong, self.n_options - 1, prefer=lambda pos, hard: pos[1]
        )
        if distr is None:
            return None
        options = list(distr)
        options.insert(int(rng.integers(len(options) + 1)) if want.nota else want.slot, target)
        return Spec(task, "", "differs", images, probe=target, options=tuple(options), pair=(i, j))

    def _sample_pair(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        hp, hn = pressure == "hard_positive", pressure == "hard_negative"
        in_i = want.state in ("both", "first")
        in_j = want.state in ("both", "second")
        if (hp and not (in_i or in_j)) or (hn and in_i and in_j):
            return None
        target = self._probe(rng, task, min_positives=2) if like is None else like.probe
        if target is None:
            return None
        # Which of the two named images carry the pressure: one deciding slot of the pressured kind, or both.
        statuses = ["pos" if in_i else "neg", "pos" if in_j else "neg"]
        kind = "pos" if hp else "neg"
        hard = [False, False]
        if hp or hn:
            slots = [s for s in (0, 1) if statuses[s] == kind]
            for s in (slots if len(slots) == 1 or rng.random() < 0.5 else [slots[int(rng.integers(2))]]):
                hard[s] = True
        used: set[int] = set()
        chosen = []
        for status, h in zip(statuses, hard):
            got = self._mixed(rng, task, target, status, 1, int(h), used)
            if got is None:
                return None
            chosen += got
        placed = self._place_pair(rng, chosen[0], chosen[1], used, None if like is None else like.pair)
        if placed is None:
            return None
        images, pair = placed
        return Spec(task, "", "pair", images, probe=target, pair=pair)

    def _sample_which(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        n, hp, hn = self.n, pressure == "hard_positive", pressure == "hard_negative"
        target = self._probe(rng, task) if like is None else like.probe
        if target is None:
            return None
        used: set[int] = set()
        if want.nota:
            neg = self._mixed(rng, task, target, "neg", n, self._k(rng, n) if hn else 0, used)
            return None if neg is None else Spec(task, "", "which", tuple(neg[i] for i in rng.permutation(n)), probe=target)
        pos = self._mixed(rng, task, target, "pos", 1, int(hp), used)
        neg = self._mixed(rng, task, target, "neg", n - 1, self._k(rng, n - 1) if hn else 0, used) if pos else None
        if pos is None or neg is None:
            return None
        return Spec(task, "", "which", self._arrange(rng, pos[0], neg, want.slot), probe=target)

    # ------------------------------------------------------------------------------------------- counting

    def _count_groups(self, rng, pressure: str, like: Spec | None = None) -> tuple[str, dict[int, list[int]]] | None:
        category = self._probe(rng, "counting") if like is None else like.probe
        return None if category is None else (category, self.pools.count_images(category))

    def _counted(self, rng, category: str, count_ok, n: int, n_hard: int, used: set[int], hard_kind: str = "pos"):
        """``n`` countable images whose count satisfies ``count_ok``; ``n_hard`` of them hard (``hard_kind``)."""
        easy: list[int] = []
        hard: list[int] = []
        for c, (easy_c, hard_c) in self.pools.count_split(category).items():
            if count_ok(c):
                easy += easy_c
                if (c > 0) == (hard_kind == "pos"):  # hard positives are counted, hard negatives are absent
                    hard += hard_c
        got_h = self._take(rng, sorted(hard), n_hard, used)
        got_e = self._take(rng, sorted(easy), n - n_hard, used) if got_h is not None else None
        return None if got_h is None or got_e is None else got_h + got_e

    def _sample_total(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        n, hp, hn = self.n, pressure == "hard_positive", pressure == "hard_negative"
        picked = self._count_groups(rng, pressure, like)
        if picked is None:
            return None
        category, _ = picked
        used: set[int] = set()
        n_zero = self._k(rng, n - 1) if hn else 0
        zeros = self._counted(rng, category, lambda c: c == 0, n_zero, n_zero, used, "neg") if hn else []
        if zeros is None:
            return None
        n_hard = self._k(rng, n - n_zero) if hp else 0
        present = self._counted(rng, category, lambda c: c >= 1, n - n_zero - int(like is not None),
                                min(n_hard, n - n_zero - int(like is not None)), used)
        if present is None:
            return None
        if like is not None:  # the last present image makes the total the wanted option's (or none of them)
            so_far = sum(self.pools.count(img, category) for img in present)  # type: ignore[misc]
            wanted = None if want.nota else like.options[want.slot]
            last = self._counted(rng, category, lambda c: c >= 1 and (
                so_far + c == wanted if wanted is not None else so_far + c not in like.options),
                1, n_hard - min(n_hard, n - n_zero - 1), used)
            if last is None:
                return None
            present = present + last
        images = present + zeros
        images = [images[i] for i in rng.permutation(n)]
        if like is not None:
            return replace(like, images=tuple(images))
        total = sum(self.pools.count(img, category) for img in images)  # type: ignore[misc]
        options = number_options(rng, total, self.n_options, want)
        if options is None:
            return None
        return Spec("counting", "", "total", tuple(images), probe=category, options=options)

    def _sample_most(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        return self._sample_extreme(rng, pressure, want, "most", like)

    def _sample_fewest(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        return self._sample_extreme(rng, pressure, want, "fewest", like)

    def _sample_extreme(self, rng, pressure: str, want: Want, extreme: str, like: Spec | None = None) -> Spec | None:
        n, hp, hn = self.n, pressure == "hard_positive", pressure == "hard_negative"
        if hn and extreme == "fewest":
            return None  # absent-object images would themselves be the fewest: use "most" for hard negatives
        picked = self._count_groups(rng, pressure, like)
        if picked is None:
            return None
        category, groups = picked
        counts = sorted(c for c in groups if c >= 1)
        if len(counts) < 2:
            return None
        best = counts[-1 - int(rng.integers(len(counts) - 1))] if extreme == "most" else counts[int(rng.integers(len(counts) - 1))]
        used: set[int] = set()
        answer = self._counted(rng, category, lambda c: c == best, 1, int(hp), used)
        if answer is None:
            return None
        n_zero = self._k(rng, n - 1) if hn else 0
        zeros = self._counted(rng, category, lambda c: c == 0, n_zero, n_zero, used, "neg") if hn else []
        beaten = (lambda c: 1 <= c < best) if extreme == "most" else (lambda c: c > best)
        others = self._counted(rng, category, beaten, n - 1 - n_zero, 0, used) if zeros is not None else None
        if zeros is None or others is None:
            return None
        return Spec("counting", "", extreme, self._arrange(rng, answer[0], zeros + others, want.slot), probe=category)

    def _sample_exact(self, rng, task, pressure, want, like: Spec | None = None) -> Spec | None:
        n, hp, hn = self.n, pressure == "hard_positive", pressure == "hard_negative"
        picked = self._count_groups(rng, pressure, like)
        if picked is None:
            return None
        category, groups = picked
        counts = sorted(c for c in groups if c >= 1)
        if not counts:
            return None
        k = counts[int(rng.integers(len(counts)))] if like is None else like.count
        used: set[int] = set()
        n_others = n if want.nota else n - 1
        n_zero = self._k(rng, n_others) if hn else 0
        zeros = self._counted(rng, category, lambda c: c == 0, n_zero, n_zero, used, "neg") if hn else []
        others = self._counted(rng, category, lambda c: c != k and c != 0, n_others - n_zero, int(hp and want.nota), used
                               ) if zeros is not None else None
        if zeros is None or others is None:
            return None
        rest = zeros + others
        if want.nota:
            return Spec("counting", "", "exact", tuple(rest[i] for i in rng.permutation(n)), probe=category, count=k)
        answer = self._counted(rng, category, lambda c: c == k, 1, int(hp), used)
        if answer is None:
            return None
        return Spec("counting", "", "exact", self._arrange(rng, answer[0], rest, want.slot), probe=category, count=k)


def _option_wanted(rng: np.random.Generator, like: Spec, want: Want) -> Probe:
    """A partner's target among ``like``'s option probes: the option ``want`` asks to be right, or under NOTA a
    tempting one (any option, shown in all images but one / in both named images)."""
    return like.options[int(rng.integers(len(like.options))) if want.nota else want.slot]


def number_options(rng: np.random.Generator, total: int, n_options: int, want: Want) -> tuple[int, ...] | None:
    """``n_options`` consecutive numbers in ascending order, ``total`` the one of rank ``want.slot``; under NOTA
    the run just below or just above ``total`` (a coin decides where both fit). ``None`` where ``total`` is too
    small for its rank (the sampler draws other images).

    Consecutive numbers give the set no shape to read: every rank is the gold's equally often (the schedulers
    deal ``want.slot`` in balanced blocks), extremes included. Nearby wrong totals are what a model that misses
    or double-counts an object lands on. Gaps drawn at random (the earlier window) left the gold in the middle:
    2nd or 3rd smallest in 57 of 62 items (issue 40).
    """
    if want.nota:
        below = total >= n_options and rng.random() < 0.5
        start = total - n_options if below else total + 1
    else:
        start = total - want.slot
        if start < 0:
            return None
    return tuple(range(start, start + n_options))


def shrink(rng: np.random.Generator, pools: Pools, spec: Spec, size: int, n_options: int, attempts: int = 20,
           slot: int | None = None) -> Spec | None:
    """The same question over ``size`` of its images (visual-context-scale pressure), or ``None`` if impossible.

    Images that decide the answer stay (the named pair of a comparative question, the answer image of an image-
    slot question); the rest is a random subset in their order, checked again by :func:`evaluate`. ``slot``: the
    position the answer image of an image-slot question takes (the caller keeps it uniform per size; kept in its
    order among the others, the answer image would follow where it sat among the larger member's images).
    """
    original = evaluate(pools, spec)
    if original is None:
        return None
    keep: list[int] = []
    if spec.pair is not None:
        keep = list(spec.pair)
    elif spec.variant in IMAGE_SLOT_VARIANTS and original.state == "image":
        keep = [original.index]
    others = [p for p in range(len(spec.images)) if p not in keep]
    for _ in range(attempts):
        extra = sorted(int(p) for p in rng.choice(others, size=size - len(keep), replace=False))
        positions = sorted(keep + extra)
        if slot is not None and len(keep) == 1 and spec.pair is None:
            positions = extra[:slot] + keep + extra[slot:]
        images = tuple(spec.images[p] for p in positions)
        pair = None if spec.pair is None else tuple(positions.index(p) for p in spec.pair)
        candidate = replace(spec, images=images, pair=pair)  # type: ignore[arg-type]
        if spec.variant == "total":
            total = sum(pools.count(img, spec.probe) for img in images)  # type: ignore[misc]
            slot = spec.options.index(sum(pools.count(i, spec.probe) for i in spec.images)) if original.state == "option" else 0  # type: ignore[misc]
            options = number_options(rng, total, n_options, Want(slot=slot, nota=original.state == "nota"))
            if options is None:
                continue
            candidate = replace(candidate, options=options)
        key = evaluate(pools, candidate)
        if key is not None and key.state == original.state:
            return candidate
    return None
