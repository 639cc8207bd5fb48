"""The toy benchmark's options, declared once."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from builders.options import BuildOptions
from sources.errors import ConfigError
from commandline.options import option

BENCHMARK = "toy"


@dataclass
class ToyConfig(BuildOptions):
    """A toy build: how many images, each with 1 to 4 red squares."""

    OPTION_HELP: ClassVar[dict[str, str]] = {"seed_of": "the world and the counts", "build_name": "n<N>-seed<S>",
                                             "cache_of": "the generated images"}

    out: str = "builds/toy"
    n_images: int = option(8, metavar="N", help="images, one question each (default {default})")

    def __post_init__(self) -> None:
        if self.n_images < 1:
            raise ConfigError(f"n_images must be at least 1, not {self.n_images}")

    def build_name(self) -> str:
        return self.name or f"n{self.n_images}-seed{self.seed}"
