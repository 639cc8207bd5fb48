"""Predictive build options and the names of its tasks."""

from __future__ import annotations

from dataclasses import dataclass, field

from builders.options import BuildOptions
from sources.errors import ConfigError

BENCHMARK = "predictive"
TASKS: tuple[str, ...] = ("abstract_pattern", "human_activity", "physical_interaction")
QUESTION_TYPE = "prediction"
PRESSURE = "easy"
"""Giraffe-Bench applies no adversarial manipulation (as Mementos); difficulty is in the provenance (scenario,
number of images)."""


@dataclass
class PredictiveConfig(BuildOptions):
    """Every option of a predictive build (command line, ``--config FILE.yaml`` and tests use the same fields)."""

    out: str = "builds/predictive"
    tasks: list[str] = field(default_factory=lambda: list(TASKS))
    patterns: int = 1000
    icons: str | None = None
    authored: str | None = None
    demo_videos: int = 24
    context_frames: int = 5
    backend: str = "auto"

    def __post_init__(self) -> None:
        from sources.video import BACKENDS

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

    def build_name(self) -> str:
        return self.name or f"demo-seed{self.seed}"
