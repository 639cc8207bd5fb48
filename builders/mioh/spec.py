"""MIOH as the registry knows it (:mod:`builders.registry`)."""

from builders.mioh.decomposed import QUESTION_TYPE as DECOMPOSED
from builders.registry import BenchmarkSpec, Paper, licences

SPEC = BenchmarkSpec(
    name="mioh",
    pretty="MIOH",
    paper=Paper(
        title="Fine-Grained Multi Image Object Hallucination Benchmark",
        authors=("Joonki Min", "Chaeyun Kim", "Hyungwook Choi", "Yejin Kim", "Kihyun Kim", "Yohan Jo",
                 "Joonseok Lee"),
        venue="CVPR 2026",
        identifiers=("https://openaccess.thecvf.com/content/CVPR2026/html/Min_Fine-Grained_Multi_Image_Object_"
                     "Hallucination_Benchmark_CVPR_2026_paper.html",),
        specified_from="the ICLR 2026 submission \"Towards Robust Benchmark of Object Hallucination on Multiple "
                       "Images\" (OpenReview 66207RUZBX, withdrawn), whose misleading textual context the CVPR "
                       "version drops",
    ),
    description="Multi-image object hallucination: existence, counting, attribute and position questions "
    "(comprehensive, comparative and selective multiple-choice questions with a \"None of the above\" option) "
    "under adversarial pressures: hard positives, hard negatives, the number of images and misleading text.",
    config="builders.mioh.config:MiohConfig",
    build="builders.mioh.builder:write_build",
    cli="builders.mioh.cli:main",
    scorer="scoring.mioh",
    review_kinds=("mcq", "yes_no"),
    licences=licences("demo", "coco"),
    source_options={"coco_rem": "coco_rem", "paco": "paco", "svg": "svg"},
    scored_apart=(DECOMPOSED,),
    uses_clip=True,
)
