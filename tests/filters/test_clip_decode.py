"""The CLIP stage's fast decode paths (issue #17): reduced-scale JPEG decoding on CPU, batched decoding on the
device (nvJPEG on CUDA; exercised here on CPU through the same torchvision calls and its per-file fallbacks), the
decode path in the cache identity, and the default worker count. Embeddings of every fast path stay within cosine
0.999 of plain PIL decoding, on the tiny random-weight open_clip model."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
open_clip = pytest.importorskip("open_clip")
pytest.importorskip("torchvision")

from filters import clip as clip_mod  # noqa: E402
from filters.clip import ClipConfig, decode_batch_on_device, default_workers, load_scorer, open_for_model  # noqa: E402

TOLERANCE = 0.999


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> str:
    from tests.support.tiny_clip import register_tiny_clip

    return register_tiny_clip(tmp_path_factory.mktemp("clip_configs"))


@pytest.fixture(scope="module")
def photos(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Smooth photo-like JPEGs (gradients and discs, as JPEG is made for) of two sizes, and one PNG."""
    from PIL import Image, ImageDraw

    folder = tmp_path_factory.mktemp("photos")
    rng = np.random.default_rng(0)
    paths = []
    for k, (w, h) in enumerate([(640, 480), (480, 640), (320, 240), (200, 150)]):
        ys, xs = np.mgrid[0:h, 0:w]
        arr = np.stack([(xs * 255 // w), (ys * 255 // h), ((xs + ys) * 127 // (w + h)) + 64], axis=2).astype(np.uint8)
        im = Image.fromarray(arr)
        draw = ImageDraw.Draw(im)
        for _ in range(4):
            x, y, r = int(rng.integers(0, w)), int(rng.integers(0, h)), int(rng.integers(10, min(w, h) // 3))
            draw.ellipse((x - r, y - r, x + r, y + r), fill=tuple(int(c) for c in rng.integers(0, 256, 3)))
        path = folder / f"photo{k}.{'png' if k == 3 else 'jpg'}"
        im.save(path, quality=90) if path.suffix == ".jpg" else im.save(path)
        paths.append(str(path))
    return paths


def _model(tiny: str):
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model, _, preprocess = open_clip.create_model_and_transforms(tiny)
    return model.eval(), preprocess


def _embed(model, batch) -> np.ndarray:
    with torch.inference_mode():
        return torch.nn.functional.normalize(model.encode_image(batch).float(), dim=-1).numpy()


def _reference(model, preprocess, paths: list[str]) -> np.ndarray:
    """Plain PIL decoding at full scale, open_clip's own transform: the reference path."""
    from PIL import Image

    return _embed(model, torch.stack([preprocess(Image.open(p).convert("RGB")) for p in paths]))


def test_default_workers_follow_the_usable_cpus(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(16)), raising=False)
    assert default_workers() == 15  # no cap at 4: the stage is decode-bound
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert default_workers() == 0


def test_draft_decoding_reduces_large_jpegs_only(photos: list[str]) -> None:
    big = open_for_model(photos[0], 32)
    assert big.size == (80, 60)  # 1/8 scale: libjpeg's largest reduction still >= 32 on both sides
    assert open_for_model(photos[0], 300).size == (640, 480)  # not twice the target: decoded at full scale
    assert open_for_model(photos[3], 32).size == (200, 150)  # a PNG: never reduced


def test_draft_and_device_paths_stay_within_tolerance_of_pil(tiny: str, photos: list[str]) -> None:
    model, preprocess = _model(tiny)
    reference = _reference(model, preprocess, photos)
    side = 32
    drafted = _embed(model, torch.stack([preprocess(open_for_model(p, side)) for p in photos]))
    cfg = dict(model.visual.preprocess_cfg)
    fallbacks: list[str] = []

    def fallback(path: str):
        fallbacks.append(path)
        return preprocess(open_for_model(path, None))

    batch, errors = decode_batch_on_device(photos, "cpu", cfg, fallback)
    assert errors == [] and batch.shape == (len(photos), 3, side, side)
    assert fallbacks == [photos[3]]  # the PNG went through the CPU transform, the JPEGs through decode_jpeg
    on_device = _embed(model, batch)
    for name, got in (("draft", drafted), ("device", on_device)):
        cosine = (got * reference).sum(axis=1)
        assert cosine.min() >= TOLERANCE, (name, cosine)


def test_device_path_reports_a_broken_file_and_keeps_the_others(tiny: str, photos: list[str], tmp_path: Path) -> None:
    model, preprocess = _model(tiny)
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(Path(photos[0]).read_bytes()[:300])  # a JPEG cut short: the batch decoder rejects it
    paths = [photos[0], str(broken), photos[1]]
    batch, errors = decode_batch_on_device(paths, "cpu", dict(model.visual.preprocess_cfg),
                                           lambda p: preprocess(open_for_model(p, None)))
    assert [i for i, _ in errors] == [1] and "cannot decode image" in errors[0][1]
    assert batch.shape[0] == 2


def test_decode_path_is_part_of_the_cache_identity(tiny: str, photos: list[str], tmp_path: Path) -> None:
    scorer = load_scorer(ClipConfig(model=tiny, pretrained="", device="cpu", cache_dir=str(tmp_path)))
    try:
        assert scorer.identity["decode"] == "pil-draft"
        other = dict(scorer.identity, decode="nvjpeg")
        assert clip_mod.model_key(other) != scorer.key
        got = scorer.image_embeddings(photos)
        model, preprocess = _model(tiny)
        assert ((got * _reference(model, preprocess, photos)).sum(axis=1)).min() >= TOLERANCE
    finally:
        scorer.close()


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (nvJPEG decoding); CI has none")
def test_cuda_stage_decodes_on_the_gpu_within_tolerance(tiny: str, photos: list[str], tmp_path: Path) -> None:
    scorer = load_scorer(ClipConfig(model=tiny, pretrained="", device="cuda", cache_dir=str(tmp_path)))
    try:
        assert scorer.identity["decode"] == "nvjpeg" and scorer.identity["precision"] == "fp16-autocast"
        got = scorer.image_embeddings(photos)
        model, preprocess = _model(tiny)
        assert ((got * _reference(model, preprocess, photos)).sum(axis=1)).min() >= 0.99  # fp16 on top of decoding
    finally:
        scorer.close()
