"""Small build dirs in the real format, made with ``make_item`` + ``write_items`` and PNGs drawn with PIL."""

from __future__ import annotations

import json
from pathlib import Path

from builders.items import Item, make_item, write_items

COLOURS = ["red", "green", "blue", "orange", "purple", "teal", "olive", "maroon", "navy", "gray"]


def draw_png(path: Path, n: int, size: tuple[int, int] = (96, 72)) -> None:
    from PIL import Image, ImageDraw

    img = Image.new("RGB", size, "white")
    d = ImageDraw.Draw(img)
    colour = COLOURS[n % len(COLOURS)]
    d.rectangle([8, 8, size[0] - 8, size[1] - 8], outline="black", width=2)
    d.ellipse([16 + n % 20, 16, 56 + n % 20, 56], fill=colour)
    d.text((60, 20), str(n), fill="black")
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)


def mixed_items(n: int, image_dir: Path, *, start: int = 0, external: Path | None = None) -> list[Item]:
    """``n`` items cycling MCQ (4 and 11 options), yes/no (empty and explicit options) and VQA kinds.

    Item ``i`` has ``1 + i % 10`` images, except that the first item has 8 (the browser test opens it).
    Images are drawn under ``image_dir/images``; with ``external``, every 7th item uses an image from there
    (an absolute path, as source images are).
    """
    items = []
    for i in range(start, start + n):
        n_img = 8 if i == start else 1 + i % 10
        images = []
        for k in range(n_img):
            rel = f"images/demo-{i:06d}-{k}.png"
            draw_png(image_dir / rel, i * 10 + k)
            images.append(rel)
        if external is not None and i % 7 == 3:
            ext = external / f"source-{i:06d}.png"
            draw_png(ext, 1000 + i)
            images[-1] = str(ext)
        kind = i % 5
        common = dict(benchmark="demo", task="counting", pressure="easy", images=images,
                      provenance={"source": "test", "index": i})
        if kind == 0:
            items.append(make_item(question_type="selective", question=f"In which image are there {i % 4 + 1} circles?",
                                   options=[f"Image {k + 1}" for k in range(min(n_img, 3))] + ["None of the above"],
                                   answer="A", **common))
        elif kind == 1:
            opts = [str(k) for k in range(10)] + ["None of the above"]
            items.append(make_item(question_type="comprehensive", question=f"How many circles in total? ({i})",
                                   options=opts, answer="C", context="I counted them twice and I think there are 5.",
                                   **common))
        elif kind == 2:
            items.append(make_item(question_type="yes_no", question=f"Is there a red circle? ({i})", options=[],
                                   answer="yes", **common))
        elif kind == 3:
            items.append(make_item(question_type="yes_no", question=f"Is there a blue circle? ({i})",
                                   options=["yes", "no"], answer="no", **common))
        else:
            items.append(make_item(question_type="vqa", question=f"What is the circle on? ({i})", options=[],
                                   answer="The circle is on the table", **common))
    return items


def make_build(root: Path, n: int = 30, *, name: str = "test", external: Path | None = None) -> Path:
    """``root/builds/demo/<name>`` with ``n`` mixed items."""
    build = root / "builds" / "demo" / name
    build.mkdir(parents=True, exist_ok=True)
    items = mixed_items(n, build, external=external)
    write_items(build / "items.jsonl", items)
    (build / "build.json").write_text(
        json.dumps({"benchmark": "demo", "name": name, "seed": 0, "config": {"n": n}}, indent=2), encoding="utf-8"
    )
    return build


def add_items(build: Path, n: int, start: int) -> list[Item]:
    """Append ``n`` new items to an existing build (for re-push tests)."""
    from builders.items import read_items

    items = read_items(build / "items.jsonl")
    new = mixed_items(n, build, start=start)
    write_items(build / "items.jsonl", items + new)
    return new


def make_screen_build(root: Path, size: tuple[int, int] = (640, 480)) -> Path:
    """``root/builds/demo/screen``: what fills a reviewer's screen most, at photo size: a 4-image MIOH-style item
    with a misleading context, 5 options and the builder's per-image and per-option records; an 11-option counting
    item; a 4-frame video item (frames titled by time)."""
    build = root / "builds" / "demo" / "screen"
    build.mkdir(parents=True, exist_ok=True)
    images = []
    for k in range(4):
        rel = f"images/screen-{k}.png"
        draw_png(build / rel, 200 + k, size=size)
        images.append(rel)
    labels = [{"id": f"img{k}", "label": ("pos", "neg", "pos", "neg")[k],
               "difficulty": ("easy", "hard_negative", "hard_positive", "easy")[k]} for k in range(4)]
    options = ["Image 1", "Image 2", "Image 3", "Image 4", "None of the above"]
    option_labels = [{"option": o, "images": [{"label": ("present" if (i + j) % 2 else "absent"),
                                               "difficulty": "hard_negative" if i == j else "easy"}
                                              for j in range(4)]} for i, o in enumerate(options[:4])]
    common = dict(benchmark="mioh", task="existence", pressure="linguistic", images=images)
    items = [
        make_item(question_type="selective", question="In which image is there a dog lying on a sofa?",
                  options=options, answer="C",
                  context="Analysis confirms that the dog in image 2 is clearly lying on the sofa, so the answer is B.",
                  provenance={"probe": ["dog", "lying on", "sofa"], "images": labels, "option_labels": option_labels},
                  **common),
        make_item(question_type="comprehensive", question="How many dogs are there in the four images in total?",
                  options=[str(k) for k in range(10)] + ["None of the above"], answer="C",
                  context="I looked carefully and I only see one dog.", provenance={"images": labels}, **common),
        make_item(question_type="selective", question="What happens to the ball between the first and last frame?",
                  options=["It rolls left", "It rolls right", "It stays", "None of the above"], answer="B",
                  provenance={"frame_indices": [0, 30, 60, 90], "fps": 30.0}, **common),
    ]
    write_items(build / "items.jsonl", items)
    (build / "build.json").write_text(json.dumps({"benchmark": "mioh", "name": "screen", "seed": 0}), encoding="utf-8")
    return build
