"""Mementos build options and the names of its domains, sources and default frame policies."""


from __future__ import annotations

from dataclasses import dataclass, field

from builders.options import BuildOptions
from sources.errors import ConfigError
from sources.executors import ExecutorOptions
from sources.records import VideoRecord

BENCHMARK = "mementos"
QUESTION_TYPE = "description"
PRESSURE = "easy"
DOMAINS: tuple[str, ...] = ("daily_life", "robotics", "comics")
SOURCE_DOMAIN = {"nextqa": "daily_life", "robot": "robotics", "comics": "comics", "demo": "daily_life"}
DEFAULT_POLICY = {"nextqa": "daily_life", "robot": "robotics", "demo": "uniform:8"}
PANELS = "panels"
"""The "policy" of comics: every panel, in reading order."""


@dataclass
class MementosConfig(ExecutorOptions, BuildOptions):
    """Every option of a Mementos build (command line, ``--config FILE.yaml`` and tests use the same fields);
    ``executor`` and ``ray_*`` (where frame sampling runs) come from :class:`ExecutorOptions`."""

    out: str = "builds/mementos"
    demo_videos: int = 12
    nextqa: str | None = None
    videos: str | None = None
    nextqa_map: str | None = None
    robot: str | None = None
    comics: str | None = None
    policy: str | None = None
    backend: str = "auto"
    on_error: str = "skip"
    max_videos: int | None = None

    def __post_init__(self) -> None:
        from sources.video import BACKENDS, policy_by_name

        if bool(self.nextqa) != bool(self.videos):
            raise ConfigError("--nextqa and --videos go together")
        if self.nextqa_map and not self.nextqa:
            raise ConfigError("--nextqa-map needs --nextqa")
        if self.on_error not in ("skip", "fail"):
            raise ConfigError(f"on_error must be 'skip' or 'fail', not {self.on_error!r}")
        if self.backend not in BACKENDS:
            raise ConfigError(f"backend must be one of {', '.join(BACKENDS)}, not {self.backend!r}")
        if self.policy is not None:
            policy_by_name(self.policy)
        if self.demo_videos < 1:
            raise ConfigError(f"demo_videos must be >= 1, not {self.demo_videos}")
        if self.max_videos is not None and self.max_videos < 1:
            raise ConfigError(f"max_videos must be >= 1, not {self.max_videos}")
        self.check_executor()

    @property
    def uses_demo(self) -> bool:
        return not (self.nextqa or self.robot or self.comics)

    def build_name(self) -> str:
        return self.name or f"{'demo' if self.uses_demo else 'data'}-seed{self.seed}"

    def policy_for(self, source: str) -> str:
        return PANELS if source == "comics" else (self.policy or DEFAULT_POLICY[source])


@dataclass
class Draft:
    """One video on its way to an item: filled in stage by stage (frames, description, keywords)."""

    source: str
    record: VideoRecord
    frames: tuple[str, ...]
    indices: tuple[int, ...]
    policy: str
    backend: str
    sha256: str
    frame_count: int
    fps: float | None
    description: str = ""
    description_from: str = ""
    qa_ids: tuple[str, ...] = ()
    keywords: dict[str, list[str]] = field(default_factory=dict)
    keywords_from: str = ""

    @property
    def domain(self) -> str:
        return SOURCE_DOMAIN[self.source]

