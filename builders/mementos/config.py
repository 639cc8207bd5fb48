"""Mementos build options and the names of its domains, sources and default frame policies."""


from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from builders.options import BuildOptions
from commandline.options import option
from sources.errors import ConfigError
from sources.executors import CLIP_ACTOR_OPTIONS, ExecutorOptions
from sources.records import VideoRecord
from sources.video import BACKENDS, policy_by_name, policy_names

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
    """Every option of a Mementos build, declared once (:mod:`commandline.options`): the command line, ``--config
    FILE.yaml``, ``--help`` and tests use the same fields; ``executor`` and ``ray_*`` (where frame sampling runs)
    come from :class:`ExecutorOptions`."""

    NO_OPTIONS: ClassVar[tuple[str, ...]] = CLIP_ACTOR_OPTIONS  # no CLIP stage: Ray samples frames only
    OPTION_HELP: ClassVar[dict[str, str]] = {
        "seed_of": "the demo world and of --max-videos sampling", "build_name": "demo-seed<S> or data-seed<S>",
        "cache_of": "frames, demo videos and LLM answers", "executor_stages": "frame sampling tasks",
        "ray_task": "frame-sampling task", "ray_retries_note": ""}

    out: str = "builds/mementos"
    demo_videos: int = option(12, metavar="N",
                              help="number of demo videos when no data is given (default {default})")
    nextqa: str | None = option(
        None, metavar="FILE", help="NExT-QA question CSV (val.csv / test.csv / train.csv): daily-life domain")
    videos: str | None = option(None, metavar="DIR", help="directory of the NExT-QA videos")
    nextqa_map: str | None = option(
        None, metavar="FILE", help="map_vid_vidorID.json (default looked up beside the CSV and the videos)")
    robot: str | None = option(
        None, metavar="DIR",
        help="robot episodes: video files, frame folders or a LeRobot v2 dataset (robotics domain)")
    comics: str | None = option(None, metavar="DIR",
                                help="comics: one folder of panel images per comic (comics domain)")
    policy: str | None = option(
        None, metavar="NAME",
        help=f"frame sampling for every video source, one of {', '.join(policy_names())} (default daily_life for "
             "NExT-QA, robotics for robots, uniform:8 for the demo)")
    backend: str = option("auto", choices=BACKENDS,
                          help="video decoder (default {default}: torchcodec where it loads, else decord, else OpenCV)")
    on_error: str = option("skip", choices=("skip", "fail"),
                           help="an unreadable video is skipped with its reason, or stops the build (default {default})")
    max_videos: int | None = option(None, metavar="N",
                                    help="a seeded sample of at most N videos per source (default all)")

    def __post_init__(self) -> None:
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

