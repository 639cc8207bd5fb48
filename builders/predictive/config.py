"""Predictive build options and the names of its tasks."""

from __future__ import annotations

from dataclasses import dataclass, field

from builders.options import BuildOptions
from filters.clip import ClipOptions
from sources.errors import ConfigError

BENCHMARK = "predictive"
TASKS: tuple[str, ...] = ("abstract_pattern", "human_activity", "physical_interaction")
QUESTION_TYPE = "prediction"
PRESSURE = "easy"
"""Giraffe-Bench applies no adversarial manipulation (as Mementos); difficulty is in the provenance (scenario,
number of images)."""


PAPER_SIZES = {"activitynet": 309, "charades": 260, "clevrer": 300, "roboset": 301}
"""Items per source in the paper (Sec. 3.1.2-3.1.3): the defaults of the ``*_items`` options."""


@dataclass
class PredictiveConfig(ClipOptions, BuildOptions):
    """Every option of a predictive build (command line, ``--config FILE.yaml`` and tests use the same fields).
    The real sources (``activitynet``, ``charades``, ``clevrer_annotations``, ``roboset``) replace the demo
    videos when given; the ``clip_*`` options choose the CLIP model that picks ActivityNet's frames."""

    out: str = "builds/predictive"
    tasks: list[str] = field(default_factory=lambda: list(TASKS))
    patterns: int = 1000
    icons: str | None = None
    authored: str | None = None
    demo_videos: int = 24
    context_frames: int = 5
    backend: str = "auto"
    activitynet: str | None = None
    charades: str | None = None
    charades_classes: str | None = None
    clevrer_annotations: str | None = None
    roboset: str | None = None
    roboset_combinations: str | None = None
    videos: str | None = None
    max_videos: int | None = None
    activitynet_items: int = PAPER_SIZES["activitynet"]
    charades_items: int = PAPER_SIZES["charades"]
    clevrer_items: int = PAPER_SIZES["clevrer"]
    roboset_items: int = PAPER_SIZES["roboset"]
    segments_per_item: int = 6
    min_segments: int = 3
    clip_candidates: int = 8
    min_similarity: float = 0.5
    clevrer_no_collision_share: float = 0.2
    clip_model: str = "ViT-L-14"

    @property
    def real_sources(self) -> bool:
        return bool(self.activitynet or self.charades or self.clevrer_annotations or self.roboset)

    def __post_init__(self) -> None:
        from sources.video import BACKENDS

        self._check_sources()

        bad = [t for t in self.tasks if t not in TASKS]
        if bad or not self.tasks:
            raise ConfigError(f"unknown task(s) {', '.join(bad) or '(none given)'}; valid: {', '.join(TASKS)}")
        if self.patterns < 0:
            raise ConfigError(f"patterns must be >= 0, not {self.patterns}")
        if self.demo_videos < 1:
            raise ConfigError(f"demo_videos must be >= 1, not {self.demo_videos}")
        if not 2 <= self.context_frames <= 10:
            raise ConfigError(f"context_frames must be between 2 and 10, not {self.context_frames}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, not {self.backend!r}")

    def _check_sources(self) -> None:
        if (self.activitynet or self.charades or self.clevrer_annotations) and not self.videos:
            raise ConfigError("--activitynet, --charades and --clevrer-annotations need --videos DIR")
        if self.charades and not self.charades_classes:
            raise ConfigError("--charades needs --charades-classes FILE (Charades_v1_classes.txt)")
        for key in ("max_videos", "activitynet_items", "charades_items", "clevrer_items", "roboset_items",
                    "clip_candidates"):
            value = getattr(self, key)
            if value is not None and value < 1:
                raise ConfigError(f"{key} must be >= 1, not {value}")
        if not 3 <= self.min_segments <= self.segments_per_item:
            raise ConfigError(f"need 3 <= min_segments <= segments_per_item, not {self.min_segments} and "
                              f"{self.segments_per_item}")
        if not 0 <= self.clevrer_no_collision_share <= 1:
            raise ConfigError(f"clevrer_no_collision_share must be between 0 and 1, not "
                              f"{self.clevrer_no_collision_share}")
        if not 0 < self.min_similarity <= 1:
            raise ConfigError(f"min_similarity must be in (0, 1], not {self.min_similarity}")

    def build_name(self) -> str:
        return self.name or f"{'data' if self.real_sources else 'demo'}-seed{self.seed}"
