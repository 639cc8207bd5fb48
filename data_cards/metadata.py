"""The card's YAML header: the Hub's dataset metadata, with one ``configs`` and one ``dataset_info`` entry per
config (all tasks, then one per task) so that ``load_dataset`` finds every subset without a loading script."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from .export import SPLIT, TaskShards
from .features import release_features

TASK_CATEGORIES = ["visual-question-answering", "image-text-to-text"]


def size_category(n: int) -> str:
    for bound, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ):
        if n < bound:
            return label
    return "10M<n<100M"


def _features_yaml() -> list[dict[str, Any]]:
    return release_features()._to_yaml_list()


def config_entries(shards: Sequence[TaskShards]) -> list[dict[str, Any]]:
    """``[{name, files_glob, num_examples, num_bytes, download_size, default}]``: ``all`` first, then per task."""
    total = {
        "name": "all",
        "glob": "data/*/test-*.parquet" if len(shards) > 1 else "data/test-*.parquet",
        "num_examples": sum(s.num_examples for s in shards),
        "num_bytes": sum(s.num_bytes for s in shards),
        "download_size": sum(s.download_size for s in shards),
        "default": True,
        "task": None,
    }
    if len(shards) == 1:
        return [total]
    return [total] + [
        {
            "name": s.slug,
            "glob": f"data/{s.slug}/{SPLIT}-*.parquet",
            "num_examples": s.num_examples,
            "num_bytes": s.num_bytes,
            "download_size": s.download_size,
            "default": False,
            "task": s.task,
        }
        for s in shards
    ]


def card_metadata(
    *, pretty_name: str, benchmark: str, license_value: Any, num_items: int, configs: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The card's YAML header as a mapping: the Hub's dataset metadata, one ``configs`` and one ``dataset_info``
    entry per config (each with its own copy of the features, so the YAML repeats them instead of writing
    ``&id001`` anchors)."""
    meta: dict[str, Any] = {
        "pretty_name": pretty_name,
        "license": license_value,
        "language": ["en"],
        "task_categories": list(TASK_CATEGORIES),
        "size_categories": [size_category(num_items)],
        "tags": ["hallucination", "multimodal", "benchmark", "mirage", benchmark],
        "configs": [],
        "dataset_info": [],
    }
    for c in configs:
        entry: dict[str, Any] = {"config_name": c["name"], "data_files": [{"split": SPLIT, "path": c["glob"]}]}
        if c["default"]:
            entry["default"] = True
        meta["configs"].append(entry)
        meta["dataset_info"].append(
            {
                "config_name": c["name"],
                "features": _features_yaml(),
                "splits": [{"name": SPLIT, "num_bytes": c["num_bytes"], "num_examples": c["num_examples"]}],
                "download_size": c["download_size"],
                "dataset_size": c["num_bytes"],
            }
        )
    return meta
