"""MIOH build options: one dataclass the command line, ``--config FILE.yaml`` and tests share."""

from __future__ import annotations

from dataclasses import dataclass, field

from builders.mioh.pools import PoolConfig
from builders.mioh.questions import (
    IMAGE_LADDER,
    PRESSURES,
    TASKS,
)
from builders.options import BuildOptions
from filters.clip import ClipOptions
from filters.cooccurrence import HardNegativeThresholds
from filters.geometry import GeometryThresholds
from sources.errors import ConfigError
from sources.executors import ExecutorOptions

BENCHMARK = "mioh"
TASK_SOURCE = {"existence": "coco_rem", "counting": "coco_rem", "attribute": "paco", "position": "svg"}


@dataclass
class MiohConfig(ExecutorOptions, ClipOptions, BuildOptions):
    """Every option of a MIOH build (command line, ``--config FILE.yaml`` and tests use the same fields).

    Seed, name, cache, progress and ``llm_*`` fields come from :class:`BuildOptions`, ``clip_*`` from
    :class:`ClipOptions`, ``executor`` and ``ray_*`` (where CLIP image embeddings run) from
    :class:`ExecutorOptions`."""

    n_images: int = 4
    n_questions: int = 5
    tasks: list[str] = field(default_factory=lambda: list(TASKS))
    pressures: list[str] = field(default_factory=lambda: list(PRESSURES))
    n_options: int = 4
    nota_share: float = 0.2
    out: str = "builds/mioh"
    demo_images: int = 600
    coco_rem: str | None = None
    coco_images: str | None = None
    paco: str | None = None
    paco_images: str | None = None
    svg: str | None = None
    svg_images: str | None = None
    verify_absence_with: str | None = None
    min_visible: float = GeometryThresholds.min_visible
    max_occlusion: float = GeometryThresholds.max_occlusion
    hard_area: float = GeometryThresholds.hard_area
    hard_occlusion: float = GeometryThresholds.hard_occlusion
    hard_truncation: float = GeometryThresholds.hard_truncation
    hn_min_p: float = HardNegativeThresholds.min_p
    hn_min_lift: float = HardNegativeThresholds.min_lift
    hn_min_support: int = HardNegativeThresholds.min_support
    count_max_objects: int = 5
    count_scope: str = "image"
    max_attempts: int = 200
    decomposed: bool = False
    """Also emit the decomposed ablation's single-image questions (Sec. 5.5, :mod:`builders.mioh.decomposed`)."""

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
        if not 0 <= self.nota_share < 1:
            raise ConfigError(f"nota_share must be within [0, 1), not {self.nota_share}")
        if self.count_scope not in ("image", "category"):
            raise ConfigError(f"count_scope must be 'image' or 'category', not {self.count_scope!r}")
        for flag, images in (("coco_rem", "coco_images"), ("paco", "paco_images"), ("svg", "svg_images")):
            if bool(getattr(self, flag)) != bool(getattr(self, images)):
                raise ConfigError(f"--{flag.replace('_', '-')} and --{images.replace('_', '-')} go together")
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

