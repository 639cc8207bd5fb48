"""Predictive build options and the names of its tasks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from builders.llm import LLM_OPTIONS
from builders.options import BuildOptions
from commandline.options import option
from filters.clip import ClipOptions
from sources.errors import ConfigError
from sources.video import BACKENDS

BENCHMARK = "predictive"
TASKS: tuple[str, ...] = ("abstract_pattern", "human_activity", "physical_interaction")
QUESTION_TYPE = "prediction"
PRESSURE = "easy"
"""Giraffe-Bench applies no adversarial manipulation (as Mementos); difficulty is in the provenance (scenario,
number of images)."""


PAPER_SIZES = {"activitynet": 309, "charades": 260, "clevrer": 300, "roboset": 301}
"""Items per source in the paper (Sec. 3.1.2-3.1.3): the defaults of the ``*_items`` options."""


DATASETS = "the paper's datasets (replace the demo videos when given)"
"""The ``--help`` group of the real sources' options."""


def _dataset(default: Any = None, **declared: Any) -> Any:
    return option(default, group=DATASETS, **declared)


def _items(source: str) -> Any:
    return _dataset(PAPER_SIZES[source], metavar="N",
                    help=f"{source} items at most (default {{default}}, the paper's size)")


@dataclass
class PredictiveConfig(ClipOptions, BuildOptions):
    """Every option of a predictive build, declared once (:mod:`commandline.options`): the command line, ``--config
    FILE.yaml``, ``--help`` and tests use the same fields.
    The real sources (``activitynet``, ``charades``, ``clevrer_annotations``, ``roboset``) replace the demo
    videos when given; the ``clip_*`` options choose the CLIP model that picks ActivityNet's frames."""

    NO_OPTIONS: ClassVar[tuple[str, ...]] = LLM_OPTIONS  # no text is written by an LLM
    OPTION_HELP: ClassVar[dict[str, str]] = {
        "seed_of": "the generator and the demo videos", "build_name": "demo-seed<N>",
        "cache_of": "demo videos and frames"}

    out: str = "builds/predictive"
    demo_videos: int = option(24, metavar="N",
                              help="demo videos for activity and physics items (default {default})")
    tasks: list[str] = option(default_factory=lambda: list(TASKS), metavar="TASK",
                              help=f"tasks to build, of {', '.join(TASKS)} (default all)")
    patterns: int = option(1000, metavar="N", help="generated pattern sequences (default {default})")
    icons: str | None = option(
        None, metavar="DIR", help="icon folder in Icon645's layout: one folder per category of transparent PNG "
                                  "icons (default the built-in procedural icons)")
    authored: str | None = option(
        None, metavar="FILE",
        help="hand-made pattern entries: JSONL of {{id, images, pattern, pred}} (default none)")
    context_frames: int = option(5, metavar="N",
                                 help="frames shown before the held-out event (default {default})")
    backend: str = option("auto", choices=BACKENDS,
                          help="video decoder (default {default}: torchcodec where it loads, else decord, else OpenCV)")
    activitynet: str | None = _dataset(
        metavar="FILE.json", help="ActivityNet Captions file (train.json, val_1.json, ...) (default none)")
    charades: str | None = _dataset(metavar="FILE.csv", help="Charades CSV (Charades_v1_test.csv) (default none)")
    charades_classes: str | None = _dataset(
        metavar="FILE", help="Charades action dictionary, Charades_v1_classes.txt (default none)")
    clevrer_annotations: str | None = _dataset(
        metavar="DIR", help="CLEVRER annotation folder (annotation_*.json) (default none)")
    roboset: str | None = _dataset(
        metavar="DIR", help="RoboSet clips: <activity>/<subtask>/<variant>.mp4 or frame folders (default none)")
    roboset_combinations: str | None = _dataset(
        metavar="FILE", help="JSON list of consistent subtask combinations (default DIR/combinations.json, else "
                             "every activity whole)")
    videos: str | None = _dataset(
        metavar="DIR", help="folder holding the ActivityNet, Charades or CLEVRER videos (default none)")
    max_videos: int | None = _dataset(metavar="N", help="read only the first N videos of each source (default all)")
    activitynet_items: int = _items("activitynet")
    charades_items: int = _items("charades")
    clevrer_items: int = _items("clevrer")
    roboset_items: int = _items("roboset")
    segments_per_item: int = _dataset(
        6, metavar="N", help="ActivityNet: first N segments of a video, the last held out (default {default})")
    min_segments: int = _dataset(3, metavar="N",
                                 help="ActivityNet: videos with fewer segments are skipped (default {default})")
    clip_candidates: int = _dataset(8, metavar="N",
                                    help="ActivityNet: frames per segment CLIP chooses from (default {default})")
    min_similarity: float = _dataset(
        0.5, metavar="X",
        help="Charades: least cosine similarity of the verb-noun pair to an action (default {default})")
    clevrer_no_collision_share: float = _dataset(
        0.2, metavar="X", help="CLEVRER: share of items whose video has no later collision (default {default})")
    clip_model: str = "ViT-L-14"

    @property
    def real_sources(self) -> bool:
        return bool(self.activitynet or self.charades or self.clevrer_annotations or self.roboset)

    def __post_init__(self) -> None:
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
