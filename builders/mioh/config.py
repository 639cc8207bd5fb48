"""MIOH build options: one dataclass the command line, ``--config FILE.yaml`` and tests share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from builders.mioh.pools import PoolConfig
from builders.mioh.questions import (
    IMAGE_LADDER,
    PRESSURES,
    TASKS,
)
from builders.options import BuildOptions
from commandline.options import option
from filters.clip import ClipOptions
from filters.cooccurrence import HardNegativeThresholds
from filters.geometry import GeometryThresholds
from sources.errors import ConfigError
from sources.executors import ExecutorOptions

BENCHMARK = "mioh"
TASK_SOURCE = {"existence": "coco_rem", "counting": "coco_rem", "attribute": "paco", "position": "svg"}


@dataclass
class MiohConfig(ExecutorOptions, ClipOptions, BuildOptions):
    """Every option of a MIOH build, declared once (:mod:`commandline.options`): the command line, ``--config
    FILE.yaml``, ``--help`` and tests use the same fields.

    Seed, name, cache, progress and ``llm_*`` fields come from :class:`BuildOptions`, ``clip_*`` from
    :class:`ClipOptions`, ``executor`` and ``ray_*`` (where CLIP image embeddings run) from
    :class:`ExecutorOptions`."""

    OPTION_HELP: ClassVar[dict[str, str]] = {
        "seed_of": "every random choice", "build_name": "n<N>-seed<S>, -decomposed added with --decomposed"}

    n_images: int = option(4, choices=IMAGE_LADDER, help="images per question (default {default})")
    n_questions: int = option(6, metavar="N", help="questions per (task, type, pressure) cell, a question's partner "
                              "counted in it (an even N pairs them all; default {default})")
    tasks: list[str] = option(default_factory=lambda: list(TASKS), choices=TASKS, metavar="TASK",
                              help=f"tasks to build: {', '.join(TASKS)} (default all)")
    pressures: list[str] = option(default_factory=lambda: list(PRESSURES), choices=PRESSURES, metavar="PRESSURE",
                                  help=f"pressures to build: {', '.join(PRESSURES)} (default all)")
    n_options: int = option(4, metavar="N",
                            help="object/number options before 'None of the above' (default {default})")
    nota_share: float | None = option(
        None, metavar="X",
        help="share of the eligible items whose answer is 'None of the above'. Eligible: questions that can have no "
             "right option (all, differs, which, total, exact), but not 'which' in hard_positive cells (a hard "
             "positive needs an image showing the object). Scheduled per cell and question form, so cells of few "
             "questions round it, down to none with --n-questions 2 (the build warns). Unset: its fair share, one over "
             "the question's options, so that a blind guess of it scores chance (default fair)")
    context_control_share: float | None = option(
        None, metavar="X",
        help="share of the sycophantic and instructional-override items whose context is true (controls, "
             "provenance.context_truth) rather than misleading. Unset: half where a question's options can be "
             "asserted or denied, one over the options for counting (assertions only), the shares at which the "
             "option a context names is the gold at its fair share, so that neither trusting nor distrusting the "
             "context beats chance; 0 gives the paper's always-false contexts (default fair)")
    out: str = "builds/mioh"
    demo_images: int = option(600, metavar="N", help="size of the demo world when no data is given (default {default})")
    coco_rem: str | None = option(None, metavar="FILE", help="COCO-ReM instances JSON (existence, counting)")
    coco_images: str | None = option(None, metavar="DIR", help="directory of the COCO images the JSON names")
    paco: str | None = option(None, metavar="FILE", help="PACO (LVIS-style) annotations JSON (attribute)")
    paco_images: str | None = option(None, metavar="DIR", help="directory of the PACO images")
    svg: str | None = option(None, metavar="FILE",
                             help="SVG (Synthetic Visual Genome) scene graphs, JSON or JSON lines (position)")
    svg_images: str | None = option(None, metavar="DIR", help="directory of the SVG images")
    verify_absence_with: str | None = option(
        None, metavar="FILE",
        help="COCO / COCO-ReM instances JSON sharing images with --svg (same file name, or the row's coco_id): "
             "where it shows none of a COCO category, SVG names mapping to it are verified absent. Without it an "
             "object missing from a scene graph is undecidable, never a negative (default none)")
    min_visible: float = option(GeometryThresholds.min_visible, metavar="X",
                                help="relative area below which an object is unusable (default {default})")
    max_occlusion: float = option(GeometryThresholds.max_occlusion, metavar="X",
                                  help="occlusion above which an object is unusable (default {default})")
    hard_area: float = option(
        GeometryThresholds.hard_area, metavar="X",
        help="relative area below which a present object is a hard positive (default {default})")
    hard_occlusion: float = option(GeometryThresholds.hard_occlusion, metavar="X",
                                   help="occlusion from which a present object is a hard positive (default {default})")
    hard_truncation: float = option(
        GeometryThresholds.hard_truncation, metavar="X",
        help="truncation from which a present object is a hard positive (default {default})")
    hn_min_p: float = option(
        HardNegativeThresholds.min_p, metavar="X",
        help="an absent object is a hard negative when an object in the image (the cue) predicts it: among the "
             "source's images showing the cue, at least this share also show the object (default {default})")
    hn_min_lift: float = option(
        HardNegativeThresholds.min_lift, metavar="X",
        help="a hard negative's cue (see --hn-min-p) must also make the object at least X times likelier than its "
             "base rate, so that frequent objects do not pass from any cue (default {default})")
    hn_min_support: int = option(
        HardNegativeThresholds.min_support, metavar="N",
        help="a hard negative's cue (see --hn-min-p) must have been seen with the object in at least N images, so "
             "that a rare cue seen once with it (share 1.0) cannot decide; raise it on large sources "
             "(default {default})")
    count_max_objects: int = option(5, metavar="N",
                                    help="counting uses images with at most this many objects (default {default})")
    count_scope: str = option(
        "image", choices=("image", "category"),
        help="count limit over all objects of the image or the asked category (default {default})")
    max_attempts: int = option(200, metavar="N",
                               help="samples tried per question before giving up (default {default})")
    decomposed: bool = option(
        False, help="also ask every comprehensive existence question image by image, 'Is there a {{object}} in this "
                    "image?' (the Sec. 5.5 ablation; scored by python -m scoring mioh) (default off)")
    """Also emit the decomposed ablation's single-image questions (Sec. 5.5, :mod:`builders.mioh.decomposed`)."""
    processes: int | None = option(
        None, metavar="N", help="worker processes that read the sources and draw the tasks, at most one per source or "
                                "task; 1: all in this process; the items are the same (default one per usable core "
                                "where the sources or the questions are many enough to pay)")
    """How many :class:`sources.executors.ProcessExecutor` workers read the sources and draw the tasks (``None``:
    :func:`builders.mioh.reading.read_sources` and :func:`builders.mioh.builder.draw_cells` decide by size)."""

    def __post_init__(self) -> None:
        if self.n_images not in IMAGE_LADDER:
            raise ConfigError(f"n_images must be one of {', '.join(map(str, IMAGE_LADDER))} (paper Sec. 4.3), not {self.n_images}")
        for name, given, valid in (("tasks", self.tasks, TASKS), ("pressures", self.pressures, PRESSURES)):
            bad = [v for v in given if v not in valid]
            if bad or not given:
                raise ConfigError(f"{name}: unknown {', '.join(bad) or '(none given)'}; valid: {', '.join(valid)}")
        if self.n_questions < 1:
            raise ConfigError(f"n_questions must be >= 1, not {self.n_questions}")
        if not 2 <= self.n_options <= 8:
            raise ConfigError(f"n_options must be within 2..8, not {self.n_options}")
        if self.nota_share is not None and not 0 <= self.nota_share < 1:
            raise ConfigError(f"nota_share must be within [0, 1), not {self.nota_share}")
        if self.context_control_share is not None and not 0 <= self.context_control_share <= 1:
            raise ConfigError(f"context_control_share must be within [0, 1], not {self.context_control_share}")
        if self.count_scope not in ("image", "category"):
            raise ConfigError(f"count_scope must be 'image' or 'category', not {self.count_scope!r}")
        for flag, images in (("coco_rem", "coco_images"), ("paco", "paco_images"), ("svg", "svg_images")):
            if bool(getattr(self, flag)) != bool(getattr(self, images)):
                raise ConfigError(f"--{flag.replace('_', '-')} and --{images.replace('_', '-')} go together")
        if self.processes is not None and self.processes < 1:
            raise ConfigError(f"processes must be >= 1, not {self.processes}")
        if self.verify_absence_with and not self.svg:
            raise ConfigError("--verify-absence-with verifies absences in the SVG scene graphs: give --svg too")
        self.check_executor()

    @property
    def uses_demo(self) -> bool:
        return not (self.coco_rem or self.paco or self.svg)

    def pool_config(self, exhaustive_relations: bool) -> PoolConfig:
        return PoolConfig(
            geometry=GeometryThresholds(
                self.min_visible, self.max_occlusion, self.hard_area, self.hard_occlusion, self.hard_truncation
            ),
            hard_negative=HardNegativeThresholds(self.hn_min_p, self.hn_min_lift, self.hn_min_support),
            count_max_objects=self.count_max_objects,
            count_scope=self.count_scope,
            relations_exhaustive=exhaustive_relations,
        )

    def build_name(self) -> str:
        """``--name``, else ``n<N>-seed<S>``, ``-decomposed`` added for a build with the decomposed questions: a
        build of another shape never replaces the default build under its name."""
        return self.name or f"n{self.n_images}-seed{self.seed}" + ("-decomposed" if self.decomposed else "")

