"""How close the CLIP scoring stage comes to the bare model, and what a warm cache buys.

Four timings, same model (ViT-B-32 with random weights, so nothing is downloaded), same batch size, same device
(``--device``: CUDA with fp16 autocast where present, else CPU):

* **bare forward** - ``model.encode_image`` over tensors already decoded, preprocessed and stacked, moved to the
  device inside the timing (the host-to-device copy is part of any real run): the ceiling.
* **decode only** - the stage's decode + preprocessing path alone: on CUDA batched ``decode_jpeg`` on the GPU with
  resize and normalisation there (:class:`filters.clip_decode.DeviceBatches`, files read ahead by threads); on CPU
  PIL (reduced-scale JPEG decoding) in DataLoader workers.
* **stage, cold** - ``ClipScorer.image_embeddings`` on the files with an empty cache: content hashing, decode and
  preprocessing, encoding, normalisation and the cache write. Target (issue #17, on a GPU): >= 0.8x bare.
* **stage, warm** - the same call from a fresh scorer on the filled cache (the rerun of a build: files known to
  the store by their signature are only ``stat``-ed, not hashed). Target: >= 50x faster than cold.

Run: ``python benchmarks/bench_clip.py [--images 128] [--batch-size 32] [--size 640x480] [--format jpg|png]
[--device auto|cpu|cuda] [--workers N] [--image-dir DIR] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from filters.clip import ClipConfig, load_scorer  # noqa: E402
from sources import hashing  # noqa: E402


def _make_image(job: tuple[str, int, tuple[int, int], int, str]) -> str:
    """One photo-like image (smooth gradients, shapes, mild noise), its own seeded generator: decode cost like
    real images, not like noise."""
    from PIL import Image, ImageDraw

    path, i, (w, h), seed, fmt = job
    if os.path.exists(path):
        return path
    rng = np.random.default_rng([seed, i])
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    c0, c1 = rng.integers(0, 256, 3), rng.integers(0, 256, 3)
    t = (xx / w * rng.uniform(0.2, 1) + yy / h * rng.uniform(0.2, 1))[..., None] / 2
    arr = (c0 * (1 - t) + c1 * t + rng.normal(0, 6, (h, w, 3))).clip(0, 255).astype(np.uint8)
    im = Image.fromarray(arr)
    draw = ImageDraw.Draw(im)
    for _ in range(6):
        x0, y0 = rng.integers(0, w - 20), rng.integers(0, h - 20)
        box = (x0, y0, x0 + rng.integers(10, w // 3), y0 + rng.integers(10, h // 3))
        fill = tuple(int(v) for v in rng.integers(0, 256, 3))
        (draw.ellipse if rng.random() < 0.5 else draw.rectangle)(box, fill=fill)
    tmp = f"{path}.tmp.{os.getpid()}"
    im.save(tmp, format="JPEG" if fmt == "jpg" else "PNG", quality=90)
    os.replace(tmp, path)  # a bench stopped halfway leaves no truncated image for the next run to reuse
    return path


def make_pngs(folder: Path, n: int, size: tuple[int, int], seed: int = 0, fmt: str = "png") -> list[str]:
    """``n`` photo-like PNGs or JPEGs (quality 90) in ``folder``; files already there are reused, so
    ``--image-dir`` makes a second run start at once. Written by a process pool (4,000 take a minute alone)."""
    from multiprocessing import get_context

    folder.mkdir(parents=True, exist_ok=True)
    jobs = [(str(folder / f"img{i:05d}.{fmt}"), i, size, seed, fmt) for i in range(n)]
    if n < 64:
        return [_make_image(j) for j in jobs]
    with get_context("spawn").Pool(max(1, (os.cpu_count() or 1))) as pool:
        return pool.map(_make_image, jobs, chunksize=32)


def ready_batches(scorer, paths: list[str], batch_size: int) -> list:
    """Decoded, preprocessed, stacked tensors (untimed): the bare forward's input."""
    import torch
    from PIL import Image

    tensors = [scorer.preprocess(Image.open(p).convert("RGB")) for p in paths]
    return [torch.stack(tensors[i : i + batch_size]) for i in range(0, len(tensors), batch_size)]


def _sync(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def bare_forward(scorer, batches: list) -> float:
    """Seconds for the host-to-device copy, encode_image (fp16 autocast on CUDA) and the same normalisation the
    stage does, over ready CPU tensors."""
    import torch

    model, device = scorer.model, scorer.device
    with torch.inference_mode(), scorer._autocast():
        _sync(device)
        t0 = time.perf_counter()
        for b in batches:
            feats = model.encode_image(b.to(device, non_blocking=True))
            torch.nn.functional.normalize(feats.float(), dim=-1).cpu().numpy()
        _sync(device)
        return time.perf_counter() - t0


def decode_only(scorer, paths: list[str], batch_size: int, workers: int) -> float:
    """Seconds for the stage's decode + preprocessing path alone (no model): on CUDA the stage's own
    :class:`filters.clip_decode.DeviceBatches` (threads read ahead, nvJPEG decodes), on CPU its DataLoader."""
    from torch.utils.data import DataLoader

    from filters.clip_decode import (
        DeviceBatches,
        ImageFiles,
        collate,
        model_input_side,
        open_for_model,
    )

    cfg, preprocess, device = scorer.preprocess_cfg, scorer.preprocess, scorer.device
    _sync(device)
    t0 = time.perf_counter()
    if scorer.identity.get("decode") == "nvjpeg":
        with DeviceBatches(paths, batch_size, device, cfg, lambda p: preprocess(open_for_model(p, None))) as it:
            for _ in it:
                pass
    else:
        loader = DataLoader(ImageFiles(paths, preprocess, model_input_side(cfg)), batch_size=batch_size,
                            num_workers=workers, collate_fn=collate, prefetch_factor=4 if workers else None)
        for _ in loader:
            pass
    _sync(device)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=128, metavar="N", help="images generated and scored (default 128)")
    ap.add_argument("--batch-size", type=int, default=32, metavar="N", help="images per forward pass (default 32)")
    ap.add_argument("--size", default="640x480", help="WxH of the generated images (default 640x480)")
    ap.add_argument("--format", choices=("jpg", "png"), default="jpg", help="image format (default jpg)")
    ap.add_argument("--device", default="auto", help="auto, cpu or cuda (default auto: CUDA where present)")
    ap.add_argument("--model", default="ViT-B-32", metavar="NAME",
                    help="open_clip architecture, random weights (default ViT-B-32)")
    ap.add_argument("--workers", type=int, default=None, metavar="N",
                    help="DataLoader workers (default: the scorer's choice, usable CPUs - 1)")
    ap.add_argument("--image-dir", default=None, metavar="DIR",
                    help="keep the generated images here and reuse them on the next run (default: a temporary "
                         "folder, removed)")
    ap.add_argument("--repeat", type=int, default=3, metavar="N",
                    help="interleaved repetitions; the best of each is shown (default 3)")
    args = ap.parse_args(argv)
    w, h = (int(v) for v in args.size.split("x"))
    import torch

    with tempfile.TemporaryDirectory(prefix="bench_clip_") as tmp:
        root = Path(tmp)
        images = Path(args.image_dir) / f"{args.format}-{w}x{h}" if args.image_dir else root / "imgs"
        paths = make_pngs(images, args.images, (w, h), fmt=args.format)
        mb = sum(os.path.getsize(p) for p in paths) / 1e6

        def scorer(cache: str):
            return load_scorer(ClipConfig(model=args.model, pretrained=None, cache_dir=str(root / cache),
                                          batch_size=args.batch_size, num_workers=args.workers,
                                          device=args.device))

        # Interleaved repetitions, best of each: on a shared machine other tenants' load comes and goes, and
        # the minimum is the run least disturbed by it (the usual rule for timing under noise).
        probe = scorer("probe")
        batches = ready_batches(probe, paths, args.batch_size)
        model = probe.model
        with torch.inference_mode(), probe._autocast():
            model.encode_image(batches[0].to(probe.device))  # warm-up for both
        workers = probe._workers_for(len(paths))
        bares, stages, decodes = [], [], []
        for rep in range(args.repeat):
            bares.append(bare_forward(probe, batches))
            decodes.append(decode_only(probe, paths, args.batch_size, workers))
            cold = scorer(f"cache{rep}")
            with torch.inference_mode(), cold._autocast():
                cold.model.encode_image(batches[0].to(cold.device))  # built and warmed up outside the timing
            hashing._HASHED.clear()  # a cold run is a new process: no file hashed yet
            t0 = time.perf_counter()
            emb = cold.image_embeddings(paths)
            stages.append(time.perf_counter() - t0)
            assert cold.stats.images_encoded == len(paths)
            cold.close()
        bare, stage, decode = min(bares), min(stages), min(decodes)

        warm_scorer = scorer(f"cache{args.repeat - 1}")
        hashing._HASHED.clear()  # the rerun is a new process too: it knows files only through the store
        t0 = time.perf_counter()
        emb2 = warm_scorer.image_embeddings(paths)
        warm = time.perf_counter() - t0
        assert warm_scorer.stats.images_encoded == 0 and warm_scorer._model is None
        np.testing.assert_array_equal(emb, emb2)

    n = len(paths)
    print(f"CLIP scoring: {args.model} (random weights), {n} {args.format.upper()}s {w}x{h} ({mb:.1f} MB), batch "
          f"{args.batch_size}, device {cold.device} ({cold.identity['precision']}, decode {cold.identity['decode']}), "
          f"torch threads {torch.get_num_threads()}, CPUs {os.cpu_count()}, decode workers {cold._workers_for(n)}")
    rows = [("bare forward (ready tensors)", bare), ("decode + preprocess only", decode),
            ("stage, cold cache", stage), ("stage, warm cache", warm)]
    print("all runs (s): bare " + " ".join(f"{t:.2f}" for t in bares)
          + " | decode " + " ".join(f"{t:.2f}" for t in decodes)
          + " | stage " + " ".join(f"{t:.2f}" for t in stages))
    print(f"{'':32}{'seconds':>10}{'images/s':>12}{'vs bare':>10}{'vs cold':>10}")
    for name, sec in rows:
        print(f"{name:32}{sec:10.3f}{n / sec:12.1f}{bare / sec:9.2f}x{stage / sec:9.1f}x")
    print(f"stage/bare throughput: {bare / stage:.2f}x (target >= 0.8x); "
          f"warm rerun {stage / warm:.0f}x faster than cold (target >= 50x)")


if __name__ == "__main__":
    main()
