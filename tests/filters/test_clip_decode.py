"""The CLIP stage's fast decode paths (issue #17): reduced-scale JPEG decoding on CPU, batched decoding on the
device (nvJPEG on CUDA; exercised here on CPU through the same torchvision calls and its per-file fallbacks), the
decode path in the cache identity, and the default worker count. Embeddings of every fast path stay within cosine
0.999 of plain PIL decoding, on the tiny random-weight open_clip model."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import have, require

require(have("torch", "open_clip", "torchvision"), "the clip extra (torch, torchvision, open_clip)",
        "pip install -e '.[clip]' or bash .ci/install-services.sh")

import open_clip  # noqa: E402
import torch  # noqa: E402

from filters import clip as clip_mod  # noqa: E402
from filters.clip import (
    ClipConfig,
    decode_batch_on_device,
    default_workers,
    load_scorer,
    open_for_model,
)

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


@pytest.mark.gpu  # skips without a CUDA GPU, in CI too: tests/conftest.py CI_MAY_SKIP
def test_cuda_stage_decodes_on_the_gpu_within_tolerance(tiny: str, photos: list[str], tmp_path: Path) -> None:
    scorer = load_scorer(ClipConfig(model=tiny, pretrained="", device="cuda", cache_dir=str(tmp_path)))
    try:
        assert scorer.identity["decode"] == "nvjpeg" and scorer.identity["precision"] == "fp16-autocast"
        got = scorer.image_embeddings(photos)
        model, preprocess = _model(tiny)
        assert ((got * _reference(model, preprocess, photos)).sum(axis=1)).min() >= 0.99  # fp16 on top of decoding
    finally:
        scorer.close()


def _one_by_one(paths: list[str], cfg: dict, fallback) -> torch.Tensor:
    """The device path image by image (each its own resize call): what the grouped resize must reproduce."""
    return torch.cat([decode_batch_on_device([p], "cpu", cfg, fallback)[0] for p in paths])


def test_grouped_resize_matches_image_by_image(tiny: str, photos: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from filters import clip_decode

    model, preprocess = _model(tiny)
    cfg = dict(model.visual.preprocess_cfg)
    fallback = lambda p: preprocess(open_for_model(p, None))
    paths = [photos[0], photos[1], photos[0], photos[2], photos[3], photos[0]]  # sizes repeat, a PNG between
    single = _one_by_one(paths, cfg, fallback)
    grouped, errors = decode_batch_on_device(paths, "cpu", cfg, fallback)
    assert errors == [] and torch.allclose(grouped, single, atol=1e-5)
    monkeypatch.setattr(clip_decode, "RESIZE_BYTES", 1)  # one image per resize call: the slicing keeps order
    sliced, _ = decode_batch_on_device(paths, "cpu", cfg, fallback)
    assert torch.allclose(sliced, single, atol=1e-5)
    assert not torch.allclose(grouped[0], grouped[1])  # a planted swap of two images would be caught


def test_device_batches_read_ahead_and_keep_order(tiny: str, photos: list[str]) -> None:
    from filters.clip_decode import DeviceBatches

    model, preprocess = _model(tiny)
    cfg = dict(model.visual.preprocess_cfg)
    fallback = lambda p: preprocess(open_for_model(p, None))
    paths = [photos[i % 4] for i in range(11)]
    with DeviceBatches(paths, 2, "cpu", cfg, fallback, hashed={3, 10}) as batches:
        got = list(batches)
    assert [s for s, _, _, _ in got] == list(range(0, 11, 2))
    assert all(errors == [] for _, _, errors, _ in got)
    assert torch.allclose(torch.cat([b for _, b, _, _ in got]), _one_by_one(paths, cfg, fallback), atol=1e-5)
    sha = {p: hashlib.sha256(Path(p).read_bytes()).hexdigest() for p in photos}
    assert [(s, h) for s, _, _, h in got if h] == [(2, {1: sha[paths[3]]}), (10, {0: sha[paths[10]]})]


def _scorer_on_device_path(tiny: str, tmp_path: Path, batch_size: int):
    """A CPU scorer that takes the CUDA stage's code path (DeviceBatches, deferred copies): CI has no GPU."""
    scorer = load_scorer(ClipConfig(model=tiny, pretrained="", device="cpu", cache_dir=str(tmp_path),
                                    batch_size=batch_size))
    scorer.identity["decode"] = "nvjpeg"
    return scorer


def test_device_stage_pipeline_caches_every_batch(tiny: str, photos: list[str], tmp_path: Path) -> None:
    paths = [photos[0], photos[1], photos[2], photos[3], photos[2]]  # the repeat is encoded once
    scorer = _scorer_on_device_path(tiny, tmp_path, batch_size=2)
    try:
        got = scorer.image_embeddings(paths)
        assert scorer.stats.images_encoded == 4
        model, preprocess = _model(tiny)
        cosine = (got * _reference(model, preprocess, paths)).sum(axis=1)
        assert cosine.min() >= TOLERANCE, cosine
        assert np.array_equal(got[2], got[4])
    finally:
        scorer.close()


def test_device_stage_keeps_the_batches_before_a_broken_file(tiny: str, photos: list[str], tmp_path: Path) -> None:
    from sources.errors import SourceError

    broken = tmp_path / "broken.png"
    broken.write_bytes(b"\x89PNG\r\n\x1a\n not an image")
    scorer = _scorer_on_device_path(tiny, tmp_path / "cache", batch_size=2)
    try:
        with pytest.raises(SourceError, match="broken.png.*cannot decode image"):
            scorer.image_embeddings([photos[0], photos[1], photos[2], str(broken)])
        assert scorer.stats.images_encoded == 2  # the first batch reached the cache before the error
    finally:
        scorer.close()
    again = _scorer_on_device_path(tiny, tmp_path / "cache", batch_size=2)
    try:
        again.image_embeddings([photos[0], photos[1]])
        assert again.stats.images_encoded == 0 and again.stats.image_cache_hits == 2
    finally:
        again.close()


def test_digests_come_in_order_and_a_missing_file_is_named(tiny: str, tmp_path: Path) -> None:
    from sources.errors import SourceError

    files = []
    for i in range(9):
        f = tmp_path / f"f{i}.bin"
        f.write_bytes(bytes([i]) * (1000 + i))
        files.append(str(f))
    scorer = load_scorer(ClipConfig(model=tiny, pretrained="", device="cpu", cache_dir=str(tmp_path / "c")))
    try:
        assert scorer._digests_of(files) == [hashlib.sha256(Path(f).read_bytes()).hexdigest() for f in files]
        with pytest.raises(SourceError, match="missing.jpg"):
            scorer._digests_of(files[:5] + [str(tmp_path / "missing.jpg")] + files[5:])
    finally:
        scorer.close()


def test_known_files_are_not_read_again_and_changed_ones_are(tiny: str, photos: list[str], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from filters import clip as clip_module
    from sources import hashing

    a, b = tmp_path / "a.jpg", tmp_path / "b.jpg"
    shutil.copy(photos[0], a)
    shutil.copy(photos[1], b)
    config = ClipConfig(model=tiny, pretrained="", device="cpu", cache_dir=str(tmp_path / "c"))
    first = load_scorer(config)
    try:
        fresh = first._digests_of([str(a)])
        assert len(first.store._db.execute("SELECT * FROM file_content").fetchall()) == 0  # too recent to keep
        monkeypatch.setattr(hashing, "RACY_SECONDS", 0.0)
        hashing._HASHED.clear()
        assert first._digests_of([str(a), str(b)])[0] == fresh[0]
    finally:
        first.close()

    reads: list[str] = []
    real = clip_module.file_sha256
    monkeypatch.setattr(clip_module, "file_sha256", lambda p, **kw: reads.append(str(p)) or real(p, **kw))
    hashing._HASHED.clear()
    again = load_scorer(config)
    try:
        assert again._digests_of([str(a), str(b)])[0] == fresh[0] and reads == []  # a rerun only stats
        time.sleep(0.05)  # past the kernel's timestamp tick (RACY_SECONDS covers this outside tests)
        st = os.stat(a)
        data = bytearray(a.read_bytes())
        data[-10] ^= 0xFF  # same size, other bytes
        a.write_bytes(bytes(data))
        os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))  # mtime put back, as cp -p would: ctime still moves
        assert again._digests_of([str(a)])[0] != fresh[0] and reads == [str(a)]
    finally:
        again.close()


def test_device_stage_hashes_new_files_on_the_way_and_skips_known_content(tiny: str, photos: list[str],
                                                                          tmp_path: Path) -> None:
    import shutil

    scorer = _scorer_on_device_path(tiny, tmp_path / "cache", batch_size=2)
    try:
        first = scorer.image_embeddings([photos[0]])
        a, b = tmp_path / "a.jpg", tmp_path / "b.jpg"  # photos[0]'s bytes under two new names: never hashed yet
        shutil.copy(photos[0], a)
        shutil.copy(photos[0], b)
        got = scorer.image_embeddings([str(a), photos[1], str(b)])
        assert scorer.stats.images_encoded == 2  # photos[0] once, then photos[1]: the copies were dropped
        assert np.array_equal(got[0], first[0]) and np.array_equal(got[2], first[0])
        assert scorer.stats.image_cache_hits == 1 and scorer.stats.images_requested == 3
    finally:
        scorer.close()
