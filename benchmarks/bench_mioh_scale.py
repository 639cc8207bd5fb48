"""MIOH at paper scale, end to end: ``python -m builders.mioh`` from files on disk to ~20,500 questions.

``bench_mioh.py`` times question generation from prepared pools; this script times what a user waits for
(issue #17): reading and validating the source files, geometry and co-occurrence over every image, pools,
questions, the build folder. It writes synthetic sources in the real formats at paper scale into a folder
(kept, so the next run reuses them; ``--regenerate`` rewrites them):

* a COCO-train-sized instances file: 118,000 images, 860,000 polygon annotations (0.5 % crowd regions as
  uncompressed RLE, as COCO stores them), 80 categories that co-occur in groups, areas and boxes given;
* a PACO-LVIS-train-sized file: 45,000 images, 180,000 objects with attributes and 180,000 parts, the
  federated lists (eight verified-absent categories per image);
* SVG-sized scene graphs (JSON lines): 33,000 images, 15 regions each with a compressed-RLE mask, 10 spatial
  relations each, and a ``coco_id``: the build verifies SVG absences with the COCO file
  (``--verify-absence-with``), without which a scene graph has no position negatives and most position cells
  cannot be filled;
* image files: a valid PNG of the declared size for every image (one solid-grey PNG per size, written to
  every name: the readers check declared sizes against image headers, never pixels).

Then it runs ``python -m builders.mioh`` three times in a fresh process each (CLIP off, no LLM): a cold run with
an empty cache directory, a warm rerun on the same cache (the prepared-pools cache,
:mod:`builders.mioh.prepared`, and the lint's, :mod:`builders.lint.cache`: the same items are not linted
again) and a warm rerun with the lint's cache emptied (what a rerun costs whose items changed, or whose lint
or libraries did), reporting wall seconds and peak memory (max RSS of the child and its workers) beside the
targets (cold < 60 s on the 2-core machine, warm < 10 s), and the build's own seconds (build.json: the time
before the build is written and linted). ``--before DIR`` also builds with another checkout (a git worktree
of an older commit) on the same files, each of its runs right after the same run of this checkout (paired:
the machine's load moves both alike; a checkout without the lint's cache lints every run, so its warm rerun
is compared with both of this checkout's), and prints the ratios and whether both wrote the same items.jsonl.

    python benchmarks/bench_mioh_scale.py [--dir DIR] [--scale 1.0] [--n-questions 244] [--before DIR]

``--scale 0.1`` writes a tenth of everything (a quick look); ``--n-questions 244`` gives 84 cells x 244 =
20,496 questions, the nearest whole-cell count to the paper's 20,518.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

TARGET_COLD_S = 60.0
TARGET_WARM_S = 10.0
KINDS = ("cold", "warm", "warm, lint afresh")
"""The runs, in order: an empty cache; the same cache; the same cache without the lint's entries."""
SIZES = ((640, 480), (480, 640), (640, 427))
"""Image sizes (width, height) drawn for synthetic images; COCO's commonest."""

CATEGORIES = (
    "person bicycle car motorcycle airplane bus train truck boat bench bird cat dog horse sheep cow elephant bear "
    "zebra giraffe backpack umbrella handbag tie suitcase frisbee skis snowboard kite skateboard surfboard bottle "
    "cup fork knife spoon bowl banana apple sandwich orange broccoli carrot pizza donut cake chair couch bed "
    "toilet tv laptop mouse remote keyboard microwave oven toaster sink refrigerator book clock vase scissors "
    "toothbrush lamp shelf door window curtain pillow plate glass table rug mirror basket"
).split()
"""80 one-word object names (a COCO-like vocabulary; one word each keeps templates' plurals simple)."""

ATTRIBUTES = [("red", "colour"), ("blue", "colour"), ("green", "colour"), ("white", "colour"), ("black", "colour"),
              ("striped", "pattern"), ("plain", "pattern"), ("wood", "material"), ("metal", "material"),
              ("plastic", "material"), ("opaque", "transparency"), ("transparent", "transparency")]
PREDICATES = ("left of", "right of", "above", "below", "next to", "on", "behind", "in front of")
SOURCES_VERSION = 2
"""Bumped when the synthetic sources change (2: eight PACO negatives per image, SVG rows with COCO ids and
``--verify-absence-with`` the COCO file, so position negatives exist as with real SVG + COCO)."""
PACO_NEGATIVES = 8
"""Categories listed in each PACO image's ``neg_category_ids`` (LVIS verifies several absences per image)."""


# ------------------------------------------------------------------------------------------------- sources


def _png(width: int, height: int) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("L", (width, height), 128).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def _write_images(directory: Path, names: Sequence[str], sizes: Sequence[int]) -> None:
    data = [_png(w, h) for w, h in SIZES]
    for name, s in zip(names, sizes):
        target = directory / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data[s])


def _boxes(rng: np.random.Generator, sizes: np.ndarray) -> np.ndarray:
    """One box (x, y, w, h) per row inside an image of the given (width, height)."""
    wh = sizes.astype(np.float64)
    frac = np.clip(rng.lognormal(-2.0, 0.8, size=(len(sizes), 2)), 0.02, 0.9)
    w, h = frac[:, 0] * wh[:, 0], frac[:, 1] * wh[:, 1]
    x = rng.random(len(sizes)) * (wh[:, 0] - w)
    y = rng.random(len(sizes)) * (wh[:, 1] - h)
    return np.round(np.stack([x, y, w, h], axis=1), 2)


def _octagon(box: np.ndarray) -> list[list[float]]:
    """An octagon inscribed in the box, as one COCO polygon (rounded to 2 decimals, as COCO writes them)."""
    x, y, w, h = (float(v) for v in box)
    xs = (x + 0.3 * w, x + 0.7 * w, x + w, x + w, x + 0.7 * w, x + 0.3 * w, x, x)
    ys = (y, y, y + 0.3 * h, y + 0.7 * h, y + h, y + h, y + 0.7 * h, y + 0.3 * h)
    return [[round(v, 2) for pair in zip(xs, ys) for v in pair]]


def _box_rle_counts(box: np.ndarray, width: int, height: int) -> list[int]:
    """Uncompressed (column-major) RLE counts of the box's pixels, as COCO stores crowd regions."""
    x0, y0 = int(box[0]), int(box[1])
    x1, y1 = min(width, int(np.ceil(box[0] + box[2]))), min(height, int(np.ceil(box[1] + box[3])))
    counts = [x0 * height + y0]
    for _ in range(x0, x1 - 1):
        counts += [y1 - y0, height - (y1 - y0)]
    counts += [y1 - y0, height * width - sum(counts) - (y1 - y0)]
    return counts


def _category_draws(rng: np.random.Generator, n_images: int, per_image: np.ndarray, n_cats: int) -> np.ndarray:
    """Categories per annotation: each image draws from one of 8 themes (co-occurring groups) plus 'person'."""
    themes = rng.integers(0, 8, size=n_images)
    theme_of_ann = np.repeat(themes, per_image)
    within = rng.integers(0, n_cats // 8, size=len(theme_of_ann))
    cats = theme_of_ann * (n_cats // 8) + within
    person = rng.random(len(cats)) < 0.25
    return np.where(person, 0, cats)


def _layout(rng: np.random.Generator, n_images: int, n_annotations: int, n_cats: int) -> tuple[np.ndarray, ...]:
    """Image sizes (index into SIZES), the image of every annotation, its image's (width, height), its box and its
    category, drawn in that order (COCO and PACO files share the layout)."""
    size_idx = rng.choice(len(SIZES), size=n_images, p=(0.6, 0.25, 0.15))
    per_image = rng.multinomial(n_annotations - n_images, np.full(n_images, 1 / n_images)) + 1
    img_of_ann = np.repeat(np.arange(n_images), per_image)
    sizes = np.array(SIZES)[size_idx[img_of_ann]]
    boxes = _boxes(rng, sizes)
    return size_idx, img_of_ann, sizes, boxes, _category_draws(rng, n_images, per_image, n_cats)


def write_coco(directory: Path, n_images: int, n_annotations: int, seed: int = 0) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    size_idx, img_of_ann, sizes, boxes, cats = _layout(rng, n_images, n_annotations, len(CATEGORIES))
    crowd = rng.random(len(boxes)) < 0.005
    names = [f"{i + 1:012d}.png" for i in range(n_images)]
    images = [{"id": i + 1, "file_name": names[i], "width": SIZES[s][0], "height": SIZES[s][1], "license": 1}
              for i, s in enumerate(size_idx)]
    anns = []
    for k in range(len(boxes)):
        w, h = (int(v) for v in sizes[k])
        box = boxes[k]
        if crowd[k]:
            seg: Any = {"size": [h, w], "counts": _box_rle_counts(box, w, h)}
            area = float(sum(seg["counts"][1::2]))
        else:
            seg = _octagon(box)
            area = round(float(box[2] * box[3]) * 0.82, 2)
        anns.append({"id": k + 1, "image_id": int(img_of_ann[k]) + 1, "category_id": int(cats[k]) + 1,
                     "bbox": [float(v) for v in box], "segmentation": seg, "area": area, "iscrowd": int(crowd[k])})
    data = {"info": {"description": "synthetic COCO-train-sized file (bench_mioh_scale)"},
            "licenses": [{"id": 1, "name": "CC BY 4.0"}],
            "images": images, "categories": [{"id": k + 1, "name": c, "supercategory": "thing"}
                                             for k, c in enumerate(CATEGORIES)],
            "annotations": anns}
    path = directory / "instances_train2017.json"
    path.write_text(json.dumps(data, separators=(",", ":")))
    _write_images(directory / "train2017", names, size_idx)
    return path, directory / "train2017"


def write_paco(directory: Path, n_images: int, n_objects: int, seed: int = 1) -> tuple[Path, Path]:
    rng = np.random.default_rng(seed)
    objects = CATEGORIES[:40]
    size_idx, img_of_ann, sizes, boxes, cats = _layout(rng, n_images, n_objects, len(objects))
    attrs = rng.integers(0, len(ATTRIBUTES), size=(len(boxes), 3))
    categories = [{"id": k + 1, "name": c} for k, c in enumerate(objects)]
    categories += [{"id": 100 + k, "name": f"{c}:part"} for k, c in enumerate(objects)]
    names = [f"train2017/{i + 1:012d}.png" for i in range(n_images)]
    images = []
    shown = [set() for _ in range(n_images)]
    for img, cat in zip(img_of_ann.tolist(), cats.tolist()):
        shown[img].add(cat + 1)
    for i, s in enumerate(size_idx):
        # LVIS-style federated negatives: PACO_NEGATIVES categories verified absent per image
        absent = [c for c in rng.permutation(np.arange(1, len(objects) + 1)).tolist() if c not in shown[i]]
        images.append({"id": i + 1, "file_name": names[i], "width": SIZES[s][0], "height": SIZES[s][1],
                       "neg_category_ids": sorted(absent[:PACO_NEGATIVES]), "not_exhaustive_category_ids": [],
                       "neg_category_ids_attrs": [], "not_exhaustive_category_ids_attrs": []})
    anns, next_id = [], 1
    for k in range(len(boxes)):
        box = boxes[k]
        obj_id = next_id
        image_id = int(img_of_ann[k]) + 1
        anns.append({"id": obj_id, "image_id": image_id, "category_id": int(cats[k]) + 1,
                     "bbox": [float(v) for v in box], "segmentation": _octagon(box),
                     "area": round(float(box[2] * box[3]) * 0.82, 2), "iscrowd": 0,
                     "attribute_ids": sorted({int(a) for a in attrs[k]}), "obj_ann_id": obj_id,
                     "unknown_color": 0, "unknown_pattern_marking": 0, "unknown_material": 0,
                     "unknown_transparency": 0})
        part = np.array([box[0], box[1], box[2] / 2, box[3] / 2])
        anns.append({"id": obj_id + 1, "image_id": image_id, "category_id": 100 + int(cats[k]),
                     "bbox": [float(v) for v in part], "segmentation": _octagon(part),
                     "area": round(float(part[2] * part[3]) * 0.82, 2), "iscrowd": 0, "attribute_ids": [],
                     "obj_ann_id": obj_id})
        next_id += 2
    data = {"images": images, "categories": categories, "annotations": anns,
            "attributes": [{"id": k, "name": n, "type": t} for k, (n, t) in enumerate(ATTRIBUTES)]}
    path = directory / "paco_lvis_v1_train.json"
    path.write_text(json.dumps(data, separators=(",", ":")))
    _write_images(directory / "paco_images", names, size_idx)
    return path, directory / "paco_images"


def write_svg(directory: Path, n_images: int, regions: int = 15, relations: int = 10, seed: int = 2) -> tuple[Path, Path]:
    from pycocotools import mask as mask_utils

    rng = np.random.default_rng(seed)
    size_idx = rng.choice(len(SIZES), size=n_images, p=(0.6, 0.25, 0.15))
    names = [f"{2_000_000 + i}.png" for i in range(n_images)]
    path = directory / "svg_train.jsonl"
    with path.open("w") as f:
        for i, s in enumerate(size_idx):
            w, h = SIZES[s]
            boxes = _boxes(rng, np.tile(np.array([w, h]), (regions, 1)))
            rles = mask_utils.frPyObjects([_octagon(b)[0] for b in boxes], h, w)
            objs = [CATEGORIES[int(c)] for c in rng.integers(0, 60, size=regions)]
            pairs = rng.integers(0, regions, size=(relations, 2))
            rels = [[int(a), int(b), PREDICATES[int(rng.integers(len(PREDICATES)))]] for a, b in pairs if a != b]
            row = {"image_id": names[i], "coco_id": i + 1, "metadata": {"width": w, "height": h},
                   "regions": [{"bbox": [float(v) for v in b], "segmentation":
                                {"size": [h, w], "counts": r["counts"].decode("ascii")},
                                "area": round(float(b[2] * b[3]) * 0.82, 2)} for b, r in zip(boxes, rles)],
                   "scene_graph": json.dumps({"objects": objs, "relations": rels})}
            f.write(json.dumps(row, separators=(",", ":")) + "\n")
    _write_images(directory / "svg_images", names, size_idx)
    return path, directory / "svg_images"


def write_sources(directory: Path, scale: float) -> list[str]:
    """Write (or reuse) the three sources; the builder's source arguments."""
    stamp = directory / f"sources-v{SOURCES_VERSION}-{scale}.json"
    if stamp.exists():
        return json.loads(stamp.read_text())
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    n = lambda x: max(10, round(x * scale))  # noqa: E731
    coco = write_coco(directory, n(118_000), n(860_000))
    paco = write_paco(directory, n(45_000), n(180_000))
    svg = write_svg(directory, n(33_000))
    args = ["--coco-rem", str(coco[0]), "--coco-images", str(coco[1]), "--paco", str(paco[0]),
            "--paco-images", str(paco[1]), "--svg", str(svg[0]), "--svg-images", str(svg[1]),
            "--verify-absence-with", str(coco[0])]
    stamp.write_text(json.dumps(args))
    return args


# ------------------------------------------------------------------------------------------------- the runs


def run_build(sources: list[str], out: Path, cache: Path, n_questions: int, repo: Path, name: str = "scale",
              fresh_lint: bool = False) -> dict[str, Any]:
    """One ``python -m builders.mioh`` of the checkout ``repo`` in a fresh process: wall seconds, peak RSS (MiB),
    item count, the build's own ``seconds`` (build.json: up to writing the build, before its lint) and whether
    its lint was reused from the cache; ``fresh_lint`` empties the lint's cache first."""
    if fresh_lint:
        shutil.rmtree(cache / "lint", ignore_errors=True)
    cmd = [sys.executable, "-m", "builders.mioh", *sources, "--n-questions", str(n_questions), "--out", str(out),
           "--name", name, "--no-progress", "--no-clip"]
    env = {**os.environ, "MIRAGE_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(repo)}
    t0 = time.perf_counter()
    # a fresh child per run: RUSAGE_CHILDREN's max RSS covers the children waited for so far, so measure it
    # through a wrapper process that reports its own child's peak
    wrapper = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
               "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
    proc = subprocess.run([sys.executable, "-c", wrapper, *cmd], env=env, capture_output=True, text=True,
                          cwd=repo)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"build failed (exit {proc.returncode})")
    items = out / name / "items.jsonl"
    record = json.loads((out / name / "build.json").read_text())
    return {"seconds": wall, "peak_mib": int(proc.stdout.strip().splitlines()[-1]) / 1024,
            "items": sum(1 for _ in items.open()), "sha256": hashlib.sha256(items.read_bytes()).hexdigest(),
            "build_s": record["stats"]["seconds"], "lint_reused": record.get("lint", {}).get("cache") == "reused"}


READ_SNIPPET = """
import json, resource, sys, time
a = dict(zip(sys.argv[1::2], sys.argv[2::2]))
out = {}
t0 = time.perf_counter()
try:  # columns (older checkouts: records)
    from filters.geometry import measure
    from sources.coco import coco_tables, load_coco_style
    from sources.paco import paco_tables
    from sources.svg import svg_tables
    sets = [coco_tables(load_coco_style(a["--coco-rem"], a["--coco-images"]), a["--coco-rem"]),
            paco_tables(a["--paco"], a["--paco-images"]), svg_tables(a["--svg"], a["--svg-images"])]
    out["read_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    n = sum(len(measure(tables).level) for tables in sets)
except ImportError:
    from filters import geometry
    from sources.coco import read_coco
    from sources.paco import read_paco
    from sources.svg import read_svg
    sets = [read_coco(a["--coco-rem"], a["--coco-images"]), read_paco(a["--paco"], a["--paco-images"]),
            read_svg(a["--svg"], a["--svg-images"])]
    out["read_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    n = sum(len(d) for rs in sets for k in range(0, len(rs.images), 2000)
            for d in geometry.classify_images(rs.images[k:k + 2000]))
out["geometry_s"] = time.perf_counter() - t0
out["instances"] = n
out["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(out))
"""


def time_reading(sources: list[str], repo: Path) -> dict[str, Any]:
    """Reading the three files (validation, records) and the geometry pass over every instance, in a fresh
    process of ``repo``'s code: the part of a build that depends on the source size, not on the question count."""
    proc = subprocess.run([sys.executable, "-c", READ_SNIPPET, *sources], capture_output=True, text=True, cwd=repo,
                          env={**os.environ, "PYTHONPATH": str(repo)})
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"reading failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", metavar="DIR", default="/tmp/mirage-bench-mioh-scale",
                        help="where the synthetic sources are written and kept (default /tmp/mirage-bench-mioh-scale)")
    parser.add_argument("--scale", type=float, default=1.0, metavar="X", help="fraction of paper scale (default 1.0)")
    parser.add_argument("--n-questions", type=int, default=244, metavar="N",
                        help="questions per cell: 84 cells x 244 = 20,496 (default 244)")
    parser.add_argument("--regenerate", action="store_true", help="rewrite the sources even if present")
    parser.add_argument("--cold-only", action="store_true", help="skip the warm reruns")
    parser.add_argument("--read-only", action="store_true",
                        help="time only reading the sources and the geometry pass, not the build")
    parser.add_argument("--before", metavar="DIR",
                        help="also build with this checkout (e.g. a git worktree of an older commit) on the same "
                             "files, each of its runs right after the same run of this one, and compare (default: "
                             "none)")
    parser.add_argument("--repo", metavar="DIR", default=str(Path(__file__).resolve().parents[1]),
                        help="checkout whose builder runs, e.g. a git worktree of an older commit for the 'before' "
                             "figures (default this checkout)")
    args = parser.parse_args(argv)
    directory = Path(args.dir)
    if args.regenerate:
        shutil.rmtree(directory, ignore_errors=True)
    t0 = time.perf_counter()
    sources = write_sources(directory / "sources", args.scale)
    write_s = time.perf_counter() - t0
    repos = {"now": Path(args.repo).resolve()}
    if args.before:
        repos["before"] = Path(args.before).resolve()
    reading = time_reading(sources, repos["now"])
    runs: dict[tuple[str, str], dict[str, Any]] = {}
    if not args.read_only:
        for name in repos:
            shutil.rmtree(directory / f"cache-{name}", ignore_errors=True)
        for kind in ("cold",) if args.cold_only else KINDS:
            for name, repo in repos.items():  # paired: each run of --before right after the same run of this one
                if kind == "warm, lint afresh" and name == "before":
                    continue  # its warm rerun lints afresh already
                runs[(kind, name)] = run_build(sources, directory / "builds", directory / f"cache-{name}",
                                               args.n_questions, repo, name=name,
                                               fresh_lint=kind == "warm, lint afresh")

    table = Table(title=f"MIOH end to end at {args.scale:g}x paper scale ({os.cpu_count()} cores, CLIP off)")
    for col in ("run", "seconds", "build s", "peak MiB", "items", "target"):
        table.add_column(col, justify="left" if col == "run" else "right")
    table.add_row("write sources (not timed in the build)", f"{write_s:.1f}", "", "", "", "")
    table.add_row("read + validate the three files", f"{reading['read_s']:.1f}", "", f"{reading['peak_mib']:,.0f}",
                  "", "")
    table.add_row(f"geometry of {reading['instances']:,} instances", f"{reading['geometry_s']:.1f}", "", "", "", "")
    targets = {"cold": TARGET_COLD_S, "warm": TARGET_WARM_S, "warm, lint afresh": TARGET_WARM_S}
    labels = {"cold": "cold: python -m builders.mioh", "warm": "warm rerun (same cache dir)",
              "warm, lint afresh": "warm rerun, lint cache emptied"}
    for (kind, name), result in runs.items():
        verdict = ("met" if result["seconds"] < targets[kind] else "MISSED") if name == "now" else ""
        reused = " (lint reused)" if result["lint_reused"] else ""
        table.add_row(labels[kind] + (" (--before)" if name == "before" else "") + reused, f"{result['seconds']:.1f}",
                      f"{result['build_s']:.1f}", f"{result['peak_mib']:,.0f}", f"{result['items']:,}",
                      f"< {targets[kind]:.0f} s: {verdict}" if verdict else "")
    Console().print(table)
    for kind in KINDS:
        now, before = runs.get((kind, "now")), runs.get(("warm" if kind == "warm, lint afresh" else kind, "before"))
        if now is not None and before is not None:
            same = "the same items.jsonl" if before["sha256"] == now["sha256"] else "DIFFERENT items.jsonl"
            print(f"{kind}: {before['seconds'] / now['seconds']:.2f}x the speed of --before, peak memory "
                  f"{now['peak_mib']:,.0f} MiB against {before['peak_mib']:,.0f}; {same} (sha256 {now['sha256'][:12]}...)")
    cold, warm = runs.get(("cold", "now")), runs.get(("warm", "now"))
    if warm is not None and cold is not None:
        print(f"warm rerun {cold['seconds'] / warm['seconds']:.1f}x faster than cold; items "
              f"{'identical' if warm['sha256'] == cold['sha256'] else 'DIFFERENT'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
