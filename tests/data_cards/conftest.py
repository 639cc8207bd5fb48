"""Fixtures: small build dirs and review files in the real formats, made on the fly (no data is committed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from builders.items import Item, make_item, write_items
from tests.conftest import require_release_extra


@pytest.fixture(autouse=True, scope="session")
def _release_extra_installed() -> None:
    """Every test here writes or publishes a release: without the release extra they skip (fail in CI)."""
    require_release_extra()

REVIEWERS = ["alice@example.org", "bob@example.org", "carol@example.org"]


def pixel(i: int) -> tuple[int, int, int]:
    """A colour unique to image ``i``: the round-trip test checks decoded pixels against it."""
    return ((37 * i) % 256, (91 * i + 17) % 256, (53 * i + 101) % 256)


def draw_png(path: Path, i: int, size: int = 8) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    im = Image.new("RGB", (size, size), pixel(i))
    im.putpixel((0, 0), (255 - pixel(i)[0], 0, 0))  # not uniform: a wrong decode would show
    im.save(path, format="PNG")


def make_build(
    root: Path,
    *,
    benchmark: str = "mioh",
    name: str = "demo",
    n_items: int = 12,
    reviewed: bool = True,
    sources: Any = None,
    fix_answer: str = "no",
    tasks: tuple[str, ...] = ("existence", "counting"),
) -> Path:
    """A build dir with ``n_items`` items over two tasks, 1-3 images each, and (optionally) a review.

    Review outcome by index: 0 -> fix (answer corrected to ``fix_answer``), 1 -> drop, 2 -> pending, others keep.
    Item 3's first image is a "source" image given by absolute path outside the build dir.
    """
    build = root / "builds" / benchmark / name
    (build / "images").mkdir(parents=True, exist_ok=True)
    outside = root / "source_images"
    items: list[Item] = []
    img = 0
    for i in range(n_items):
        task = tasks[i % len(tasks)]
        pressure = ["easy", "hard_negative", "sycophantic"][i % 3]
        paths = []
        for _ in range(1 + i % 3):
            img += 1
            if i == 3 and not paths:
                p = outside / f"src-{img:06d}.png"
                draw_png(p, img)
                paths.append(str(p.resolve()))
            else:
                rel = f"images/{benchmark}-{img:06d}.png"
                draw_png(build / rel, img)
                paths.append(rel)
        if i % 4 == 1:
            options, answer, qtype = ("2", "3", "None of the above"), "A", "selective"
        elif i % 4 == 3:
            options, answer, qtype = (), f"there are {i} circles", "vqa"
        else:
            options, answer, qtype = (), "yes", "yes_no"
        items.append(
            make_item(
                benchmark=benchmark,
                task=task,
                question_type=qtype,
                pressure=pressure,
                images=paths,
                question=f"Question {i}: is there a red circle?",
                options=options,
                answer=answer,
                context="I am sure there is a circle." if pressure == "sycophantic" else "",
                provenance={
                    "source_ids": [i],
                    "template": f"{task}/{qtype}",
                    "scores": {"size": 0.5 + i / 100},
                    "files": [str((build / p).resolve()) if not p.startswith("/") else p for p in paths],
                },
            )
        )
    write_items(build / "items.jsonl", items)
    items.sort(key=lambda it: it.id)
    config: dict[str, Any] = {
        "sources": sources if sources is not None else ["demo"],
        "pressures": ["easy", "hard_negative", "sycophantic"],
        "thresholds": {"min_area": 0.02, "max_occlusion": 0.5},
        "cache_dir": str(root / "cache"),  # a local path: must not reach a release
    }
    (build / "build.json").write_text(
        json.dumps(
            {
                "benchmark": benchmark,
                "name": name,
                "seed": 1234,
                "config": config,
                "code_version": "abc1234",
                "input_hashes": {"demo": "sha256:" + "0" * 64, str(root / "data" / "x.json"): "sha256:" + "1" * 64},
                "stats": {"generated": {"kept": n_items, "dropped": 3}, "quality": {"duplicates": 0}},
                "skipped": [{"reason": "too small", "id": "x"}],
            }
        )
    )
    if reviewed:
        write_review(build, items, fix_answer=fix_answer)
    return build


def write_review(build: Path, items: list[Item], *, fix_answer: str = "no") -> None:
    from dataclasses import replace

    statuses = {}
    reviewed = []
    for i, it in enumerate(items):
        st = "fix" if i == 0 else "drop" if i == 1 else "pending" if i == 2 else "keep"
        statuses[it.id] = {
            "status": st,
            "votes": {"accept": 3 if st == "keep" else 0, "fix": 2 if st == "fix" else 0, "reject": 3 if st == "drop" else 0},
            "answer": fix_answer if st == "fix" else it.answer,
            "issues": [],
            "comments": [f"checked by {REVIEWERS[0]}"] if i == 0 else [],
        }
        if st in ("keep", "fix"):
            prov = dict(it.provenance)
            prov["review"] = {"status": st, "annotators": REVIEWERS, "note": f"fixed by {REVIEWERS[1]}"}
            reviewed.append(replace(it, answer=fix_answer if st == "fix" else it.answer, provenance=prov))
    counts = {"total": len(items), "keep": len(items) - 3, "fix": 1, "drop": 1, "adjudicate": 0, "pending": 1}
    review = {
        "project": "mirage-mioh-demo",
        "label_studio_url": "http://ls.internal.example:8080",
        "pulled_at": "2025-01-02T03:04:05Z",
        "raw_export": "review_raw/export.json",
        "counts": counts,
        "fleiss_kappa": 0.8125,
        "reviewers": {
            REVIEWERS[0]: {"annotations": len(items), "agreement_with_majority": 0.95},
            REVIEWERS[1]: {"annotations": len(items) - 1, "agreement_with_majority": 0.9},
            REVIEWERS[2]: {"annotations": len(items) - 2, "agreement_with_majority": 0.85},
        },
        "problems": [f"{REVIEWERS[2]} skipped 2 items"],
        "items": statuses,
    }
    (build / "review.json").write_text(json.dumps(review))
    write_items(build / "reviewed.jsonl", reviewed)


@pytest.fixture
def build_dir(tmp_path: Path) -> Path:
    return make_build(tmp_path)


@pytest.fixture
def hf_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HF caches in a temp dir, offline, no token from the environment."""
    home = tmp_path / "hf_home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(home / "datasets"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.delenv("HF_TOKEN", raising=False)
    return home
