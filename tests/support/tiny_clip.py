"""A tiny open_clip architecture for tests: the real code path (config registry, preprocessing, tokenizer,
towers) in a few milliseconds, with random weights, so no test needs a download."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

TINY_CLIP = "mirage-tiny-clip"

TINY_CONFIG = {
    "embed_dim": 16,
    "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "head_width": 16, "patch_size": 8},
    "text_cfg": {"context_length": 16, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1},
}


def register_tiny_clip(config_dir: str | Path) -> str:
    """Write the tiny config as ``<config_dir>/mirage-tiny-clip.json``, register it with open_clip, return its name."""
    import open_clip

    path = Path(config_dir) / f"{TINY_CLIP}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(TINY_CONFIG))
    open_clip.add_model_config(path)
    return TINY_CLIP


def write_images(folder: str | Path, n: int, size: tuple[int, int] = (48, 40), seed: int = 0) -> list[str]:
    """``n`` distinct random RGB PNGs (deterministic from ``seed``); their paths."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(n):
        arr = rng.integers(0, 256, size=(size[1], size[0], 3), dtype=np.uint8)
        p = folder / f"img{i:03d}.png"
        Image.fromarray(arr).save(p)
        paths.append(str(p))
    return paths
