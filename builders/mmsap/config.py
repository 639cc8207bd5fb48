"""MM-SAP build options: one dataclass the command line, ``--config FILE.yaml`` and tests share."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from builders.options import BuildOptions
from commandline.options import option
from sources.errors import ConfigError

BENCHMARK = "mmsap"
MAX_SHUFFLES = 10
MISSING_IMAGE = ("skip", "fail")


@dataclass
class MmsapConfig(BuildOptions):
    """Every option of an MM-SAP build, declared once (:mod:`commandline.options`; seed, name, cache, progress and
    ``llm_*`` come from BuildOptions).

    Defaults where the paper is silent: 10 questions per BasicVisQA type and per BeyondVisQA category, agreement
    of 8 in 10 human answers, one option order per question (``shuffles=5`` reproduces Sec. 4.2)."""

    OPTION_HELP: ClassVar[dict[str, str]] = {
        "seed_of": "every random choice", "build_name": "demo-seed<S> or real-seed<S>, -shuffles<K> added with "
        "--shuffles K", "cache_of": "demo scenes"}

    out: str = "builds/mmsap"
    demo_images: int = option(600, metavar="N", help="size of the demo world (default {default})")
    n_basic: int = option(10, metavar="N", help="BasicVisQA questions per type (default {default})")
    n_beyond: int = option(10, metavar="N", help="BeyondVisQA questions per category (default {default})")
    shuffles: int = option(
        1, metavar="K", help=f"option orders per question, linked by provenance.group (1..{MAX_SHUFFLES}; the paper "
                             "uses 5) (default {default})")
    min_agreement: float = option(
        0.8, metavar="SHARE",
        help="share of the ten VQAv2 answers that must agree with the majority answer (default {default})")
    vqav2_questions: str | None = option(None, metavar="FILE",
                                         help="VQAv2 questions JSON (v2_OpenEnded_mscoco_*_questions.json)")
    vqav2_annotations: str | None = option(None, metavar="FILE",
                                           help="VQAv2 annotations JSON (v2_mscoco_*_annotations.json)")
    coco_images: str | None = option(None, metavar="DIR",
                                     help="folder of the COCO images the VQAv2 / COCO files refer to")
    on_missing_image: str = option(
        "skip", choices=MISSING_IMAGE,
        help="a chosen VQAv2 question whose image is not in --coco-images: skip it for the next one (listed in "
             "build.json) or fail with one line naming the file (default {default})")
    """A chosen VQAv2 question whose COCO image is not in ``coco_images``: ``skip`` it for the next one (listed
    in build.json's ``stats.basic.missing_images``) or ``fail`` (one line naming the file looked for)."""
    coco_instances: str | None = option(None, metavar="FILE",
                                        help="COCO instances JSON: grounds BeyondVisQA in real images")
    authored: str | None = option(
        None, metavar="FILE",
        help="authored questions, YAML or JSON lines (KnowVisQA and hand-made BasicVisQA) (default the shipped demo "
             "knowledge file on the demo world, none otherwise)")

    def __post_init__(self) -> None:
        if not 1 <= self.shuffles <= MAX_SHUFFLES:
            raise ConfigError(f"shuffles must be within 1..{MAX_SHUFFLES}, not {self.shuffles}")
        if not 0 < self.min_agreement <= 1:
            raise ConfigError(f"min_agreement must be within (0, 1], not {self.min_agreement}")
        for name in ("n_basic", "n_beyond"):
            if getattr(self, name) < 0:
                raise ConfigError(f"{name} must be >= 0, not {getattr(self, name)}")
        if self.demo_images < 1:
            raise ConfigError(f"demo_images must be >= 1, not {self.demo_images}")
        if bool(self.vqav2_questions) != bool(self.vqav2_annotations):
            raise ConfigError("--vqav2-questions and --vqav2-annotations go together")
        if self.on_missing_image not in MISSING_IMAGE:
            raise ConfigError(f"on_missing_image must be one of {', '.join(MISSING_IMAGE)}, not "
                              f"{self.on_missing_image!r}")
        if (self.vqav2_questions or self.coco_instances) and not self.coco_images:
            raise ConfigError("--vqav2-questions / --coco-instances need --coco-images (the COCO images folder)")

    @property
    def uses_demo(self) -> bool:
        """No real source given: the demo world feeds all three subsets (and the shipped authored file)."""
        return not (self.vqav2_questions or self.coco_instances)

    def build_name(self) -> str:
        """``--name``, else ``demo-seed<S>`` or ``real-seed<S>``, ``-shuffles<K>`` added for K option orders per
        question: a build of another shape never replaces the default build under its name."""
        shape = f"-shuffles{self.shuffles}" if self.shuffles != 1 else ""
        return self.name or f"{'demo' if self.uses_demo else 'real'}-seed{self.seed}{shape}"
