"""The toy benchmark's independent checker: counts the red squares in each image's pixels (connected components),
importing no builder code, and names every item whose answer disagrees."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image
from scipy import ndimage


def red_squares(path: Path) -> int:
    pixels = np.asarray(Image.open(path).convert("RGB")).astype(int)
    red = (pixels[..., 0] > 150) & (pixels[..., 1] < 100) & (pixels[..., 2] < 100)
    return int(ndimage.label(red)[1])


def wrong_answers(build_dir: Path) -> list[str]:
    """Ids of the items whose answer is not the option naming the number of red squares in their image."""
    wrong = []
    for line in (build_dir / "items.jsonl").read_text(encoding="utf-8").splitlines():
        item = json.loads(line)
        count = red_squares(build_dir / item["images"][0])
        if item["options"][ord(item["answer"]) - ord("A")] != str(count):
            wrong.append(item["id"])
    return wrong
