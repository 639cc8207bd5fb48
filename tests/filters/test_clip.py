"""CLIP scorer and mining.

The scorer tests run the real open_clip code path on a tiny registered architecture with random weights
(preprocessing, DataLoader workers, batching, tokenizer, on-disk cache); the mining tests inject a deterministic
scorer so the selection logic is checked exactly, without torch.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import socket
from pathlib import Path

import numpy as np
import pytest

from filters import clip_mining
from filters.clip_mining import (
    ClipPair,
    category_z_scores,
    mine_hard_negatives,
    mine_hard_positives,
    pair_similarities,
    prompt_for,
)
from sources.errors import ConfigError, SourceError
from tests.conftest import require


@pytest.fixture(autouse=True)
def offline_hf(tmp_path_factory, monkeypatch):
    """Every test runs as our machines do: offline, with empty Hugging Face caches of its own."""
    home = tmp_path_factory.mktemp("hf_home")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)


@pytest.fixture
def no_network(monkeypatch):
    """Fail the test on any attempt to open an internet connection (Unix sockets stay allowed: DataLoader
    workers hand tensors over through them)."""
    attempts: list[object] = []
    real_connect, real_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def guard(real):
        def connect(self, address, *a, **k):
            if self.family in (socket.AF_INET, socket.AF_INET6):
                attempts.append(address)
                raise OSError(f"test forbids network access ({address!r})")
            return real(self, address, *a, **k)

        return connect

    monkeypatch.setattr(socket.socket, "connect", guard(real_connect))
    monkeypatch.setattr(socket.socket, "connect_ex", guard(real_connect_ex))
    return attempts


# ---- mining with an injected deterministic scorer ---------------------------------------------------------------


class TableScorer:
    """Similarities from a table; records each call so tests can check how mining batches its queries."""

    def __init__(self, table: dict[tuple[str, str], float]) -> None:
        self.table = table
        self.calls: list[tuple[list[str], list[str]]] = []

    def similarity(self, image_paths, prompts):
        self.calls.append((list(image_paths), list(prompts)))
        return np.array([[self.table.get((i, p), 0.0) for p in prompts] for i in image_paths])


def test_prompts_follow_the_paper():
    assert prompt_for("dog") == "A photo of dog"
    assert prompt_for("ball", "red") == "red ball"
    assert ClipPair("x.png", "ball", "red").prompt == "red ball"


def test_z_scores_are_per_group_and_nan_for_tiny_or_flat_groups():
    values = [1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 5.0, 5.0, 5.0, 7.0, 8.0]
    groups = ["a", "a", "a", "b", "b", "b", "flat", "flat", "flat", "tiny", "tiny"]
    z = category_z_scores(values, groups)
    sd = np.std([1.0, 2.0, 3.0])
    np.testing.assert_allclose(z[:3], [-1 / sd, 0, 1 / sd])
    np.testing.assert_allclose(z[3:6], z[:3])  # scale-free: the same shape in another category gives the same z
    assert np.isnan(z[6:]).all()
    with pytest.raises(ValueError):
        category_z_scores([1.0, 2.0], ["a"])


def _present_absent_world():
    """Two objects whose prompts have very different baselines: a global threshold would pick wrongly."""
    table: dict[tuple[str, str], float] = {}
    present, absent = [], []
    # "dog" scores ~0.30 on images that show a dog; img_d3 is the abnormal one (0.18: still above every cat value)
    for i, s in enumerate([0.30, 0.31, 0.29, 0.18, 0.30, 0.32, 0.31, 0.29]):
        table[(f"img_d{i}", "A photo of dog")] = s
        present.append(ClipPair(f"img_d{i}", "dog"))
    # "cat" scores ~0.10 on images without a cat; img_n5 is abnormally high (0.22: still below every dog value)
    for i, s in enumerate([0.10, 0.11, 0.09, 0.10, 0.12, 0.22, 0.10, 0.11]):
        table[(f"img_n{i}", "A photo of cat")] = s
        absent.append(ClipPair(f"img_n{i}", "cat"))
    # a lone attribute pair: too small a group to call anything abnormal
    table[("img_d0", "red dog")] = 0.9
    present.append(ClipPair("img_d0", "dog", "red"))
    return table, present, absent


def test_low_z_selects_exactly_the_abnormally_unlike_present_pairs():
    table, present, _ = _present_absent_world()
    mined = mine_hard_positives(present, TableScorer(table), low_z=-1.5)
    chosen = [m.pair for m in mined if m.chosen]
    assert chosen == [ClipPair("img_d3", "dog")]
    by_pair = {m.pair: m for m in mined}
    assert by_pair[ClipPair("img_d3", "dog")].similarity == pytest.approx(0.18)
    assert by_pair[ClipPair("img_d3", "dog")].z < -2
    assert np.isnan(by_pair[ClipPair("img_d0", "dog", "red")].z)
    assert [m.pair for m in mined] == present  # input order kept


def test_high_z_selects_exactly_the_abnormally_like_absent_pairs():
    table, _, absent = _present_absent_world()
    mined = mine_hard_negatives(absent, TableScorer(table), high_z=1.5)
    assert [m.pair.image for m in mined if m.chosen] == ["img_n5"]
    # the thresholds are the knobs: a looser one takes more, a stricter one none
    assert [m.pair.image for m in mine_hard_negatives(absent, TableScorer(table), high_z=0.0) if m.chosen] == [
        "img_n4",
        "img_n5",
    ]
    assert not any(m.chosen for m in mine_hard_negatives(absent, TableScorer(table), high_z=3.0))


def test_each_image_is_scored_once_in_bounded_blocks(monkeypatch):
    monkeypatch.setattr(clip_mining, "IMAGE_BLOCK", 3)
    table, present, absent = _present_absent_world()
    pairs = present + absent + [ClipPair("img_d1", "cat")]
    scorer = TableScorer(table)
    sims = pair_similarities(pairs, scorer)
    assert sims[0] == pytest.approx(0.30) and sims[-1] == 0.0
    seen = [img for images, _ in scorer.calls for img in images]
    assert len(seen) == len(set(seen)) == len({p.image for p in pairs})
    assert all(len(images) <= 3 for images, _ in scorer.calls)


# ---- the real open_clip code path on a tiny model ---------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    require(importlib.util.find_spec("open_clip") is not None, "open_clip_torch")
    from tests.support.tiny_clip import register_tiny_clip

    return register_tiny_clip(tmp_path_factory.mktemp("clip_configs"))


@pytest.fixture
def images(tmp_path):
    from tests.support.tiny_clip import write_images

    paths = write_images(tmp_path / "imgs", 9)
    paths += write_images(tmp_path / "big", 1, size=(120, 70), seed=7)  # another size: preprocessing resizes it
    return paths


def _config(tiny: str, cache: Path, **kw):
    from filters.clip import ClipConfig

    kw.setdefault("device", "cpu")  # the CPU path's batching and precision; the CUDA path has its own tests
    return ClipConfig(model=tiny, pretrained=None, cache_dir=str(cache), batch_size=4, num_workers=1, **kw)


def _count_encodes(scorer) -> list[int]:
    """Wrap the built model's ``encode_image``; the returned list receives each batch size."""
    sizes: list[int] = []
    real = scorer.model.encode_image

    def counting(x, *a, **k):
        sizes.append(int(x.shape[0]))
        return real(x, *a, **k)

    scorer.model.encode_image = counting
    return sizes


def test_real_path_shapes_batches_and_matches_a_direct_forward(tiny, images, tmp_path, no_network):
    import torch
    from PIL import Image

    from filters.clip import load_scorer

    scorer = load_scorer(_config(tiny, tmp_path / "cache"))
    assert scorer.device == "cpu" and scorer.identity["precision"] == "fp32"
    sizes = _count_encodes(scorer)
    emb = scorer.image_embeddings(images)
    assert emb.shape == (10, 16) and emb.dtype == np.float32
    assert sizes == [4, 4, 2]  # batched in a DataLoader (one worker here)
    np.testing.assert_allclose(np.linalg.norm(emb, axis=1), 1.0, rtol=1e-5)

    # what the DataLoader produced equals preprocessing + forward done by hand
    with torch.inference_mode():
        batch = torch.stack([scorer.preprocess(Image.open(p).convert("RGB")) for p in images])
        direct = torch.nn.functional.normalize(scorer.model.encode_image(batch), dim=-1).numpy()
    np.testing.assert_allclose(emb, direct, atol=1e-5)

    prompts = [prompt_for("dog"), prompt_for("ball", "red"), prompt_for("dog")]
    text = scorer.text_embeddings(prompts)
    assert text.shape == (3, 16)
    np.testing.assert_array_equal(text[0], text[2])
    sim = scorer.similarity(images, prompts)
    assert sim.shape == (10, 3)
    np.testing.assert_allclose(sim, emb @ text.T, atol=1e-6)
    assert no_network == []


def test_rerun_is_served_from_the_cache_without_building_the_model(tiny, images, tmp_path):
    from filters.clip import load_scorer

    cache = tmp_path / "cache"
    first = load_scorer(_config(tiny, cache))
    sim = first.similarity(images, ["A photo of dog", "red ball"])
    assert first.stats.images_encoded == 10 and first.stats.texts_encoded == 2

    again = load_scorer(_config(tiny, cache))
    sim2 = again.similarity(images, ["A photo of dog", "red ball"])
    np.testing.assert_array_equal(sim, sim2)
    assert again._model is None  # nothing to encode, so the model was never even built
    s = again.stats
    assert (s.images_encoded, s.image_cache_hits, s.texts_encoded, s.text_cache_hits) == (0, 10, 0, 2)

    # and a built model is not called either; a copied file (same bytes, new path) is a cache hit too
    sizes = _count_encodes(again)
    copy = tmp_path / "copy.png"
    shutil.copy(images[0], copy)
    np.testing.assert_array_equal(again.image_embeddings([copy])[0], again.image_embeddings([images[0]])[0])
    assert sizes == []


def test_changed_image_content_is_reencoded(tiny, images, tmp_path):
    from filters.clip import load_scorer
    from tests.support.tiny_clip import write_images

    scorer = load_scorer(_config(tiny, tmp_path / "cache"))
    before = scorer.image_embeddings(images[:1])
    (replacement,) = write_images(tmp_path / "other", 1, seed=99)
    os.replace(replacement, images[0])
    sizes = _count_encodes(scorer)
    after = scorer.image_embeddings(images[:1])
    assert sizes == [1] and not np.allclose(before, after)


@pytest.mark.parametrize("decode", ["pil-draft", "nvjpeg"])
def test_a_crash_keeps_the_batches_already_encoded(tiny, images, tmp_path, decode):
    """Both encode paths: the DataLoader's, and the CUDA path's (taken here on CPU), whose batches are cached
    one step late so the GPU runs ahead: a crash must still leave the finished batch in the cache."""
    from filters.clip import load_scorer

    cache = tmp_path / "cache"
    scorer = load_scorer(_config(tiny, cache))
    scorer.identity["decode"] = decode
    real = scorer.model.encode_image
    calls = []

    def crash_on_second(x):
        calls.append(x.shape[0])
        if len(calls) == 2:
            raise KeyboardInterrupt  # the user pressed Ctrl-C mid-stage
        return real(x)

    scorer.model.encode_image = crash_on_second
    with pytest.raises(KeyboardInterrupt):
        scorer.image_embeddings(images)
    assert scorer.store.count(kind="image") == 4  # the first batch was committed

    resumed = load_scorer(_config(tiny, cache))
    resumed.identity["decode"] = decode
    sizes = _count_encodes(resumed)
    resumed.image_embeddings(images)
    assert sum(sizes) == 6 and resumed.stats.image_cache_hits == 4


def test_local_checkpoint_file(tiny, images, tmp_path):
    import torch

    from filters.clip import load_scorer

    random_init = load_scorer(_config(tiny, tmp_path / "cache"))
    reference = random_init.image_embeddings(images[:3])
    ckpt = tmp_path / "weights" / "tiny.pt"
    ckpt.parent.mkdir()
    torch.save(random_init.model.state_dict(), ckpt)

    from_file = load_scorer(_config(tiny, tmp_path / "cache", checkpoint=str(ckpt)))
    assert from_file.describe()["weights"].startswith("sha256:") and from_file.key != random_init.key
    np.testing.assert_allclose(from_file.image_embeddings(images[:3]), reference, atol=1e-6)
    assert from_file.stats.images_encoded == 3  # a different identity: never mixed with the random-init rows

    # other weights in the same file name are another model
    state = {k: v + 0.01 if v.is_floating_point() else v for k, v in random_init.model.state_dict().items()}
    torch.save(state, ckpt)
    assert load_scorer(_config(tiny, tmp_path / "cache", checkpoint=str(ckpt))).key != from_file.key


def test_pretrained_tag_without_local_weights_is_unavailable_and_never_dials_out(tiny, tmp_path, no_network):
    from filters.clip import ClipConfig, ClipUnavailable, load_scorer

    for allow_download in (False, True):  # HF_HUB_OFFLINE wins over --clip-download
        with pytest.raises(ClipUnavailable) as err:
            load_scorer(ClipConfig(model="ViT-B-32", pretrained="openai", cache_dir=str(tmp_path),
                                   allow_download=allow_download))
        msg = str(err.value)
        assert "\n" not in msg and "ViT-B-32/openai" in msg and "HF_HUB_OFFLINE" in msg
    assert no_network == []


def test_tag_weights_already_in_the_hf_cache_are_found_offline(tiny, tmp_path):
    import open_clip

    from filters.clip import _find_local_tag_weights

    tag_cfg = open_clip.get_pretrained_cfg("ViT-B-32", "openai")
    repo = tag_cfg["hf_hub"].strip("/")
    root = Path(os.environ["HF_HOME"]) / "hub" / f"models--{repo.replace('/', '--')}"
    (root / "refs").mkdir(parents=True)
    (root / "refs" / "main").write_text("abc123")
    snap = root / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "open_clip_model.safetensors").write_bytes(b"weights")
    assert _find_local_tag_weights(tag_cfg, None) == str(snap / "open_clip_model.safetensors")
    assert _find_local_tag_weights(tag_cfg, str(tmp_path / "elsewhere")) == str(snap / "open_clip_model.safetensors")


def test_bad_names_and_files_are_one_line_errors(tiny, images, tmp_path):
    from filters.clip import ClipConfig, load_scorer

    cases = [
        (ClipConfig(model="ViT-B32", cache_dir=None), "did you mean ViT-B-32"),
        (ClipConfig(model="ViT-B-32", pretrained="no-such-tag"), "laion2b_s34b_b79k"),
        (ClipConfig(model=tiny, checkpoint=str(tmp_path / "missing.pt")), "no such file"),
    ]
    for config, expected in cases:
        with pytest.raises(ConfigError) as err:
            load_scorer(config)
        assert expected in str(err.value) and "\n" not in str(err.value)

    broken = tmp_path / "broken.png"
    broken.write_bytes(b"not a png")
    scorer = load_scorer(_config(tiny, tmp_path / "cache"))
    with pytest.raises(SourceError) as err:
        scorer.image_embeddings([images[0], broken])
    assert str(err.value).startswith(str(broken)) and "cannot decode image" in str(err.value)
    with pytest.raises(SourceError, match="not readable"):
        scorer.image_embeddings([tmp_path / "absent.png"])


def test_mining_on_the_real_scorer(tiny, images, tmp_path):
    from filters.clip import load_scorer

    scorer = load_scorer(_config(tiny, tmp_path / "cache"))
    pairs = [ClipPair(p, "dog") for p in images]
    mined = mine_hard_positives(pairs, scorer, low_z=-1.0)
    sims = scorer.similarity(images, ["A photo of dog"])[:, 0]
    np.testing.assert_allclose([m.similarity for m in mined], sims, atol=1e-6)
    z = (sims - sims.mean()) / sims.std()
    assert [m.chosen for m in mined] == list(z <= -1.0)


def test_cli_options_round_trip(tmp_path):
    from filters.clip import ClipConfig, add_clip_arguments

    parser = argparse.ArgumentParser()
    add_clip_arguments(parser)
    assert ClipConfig.from_args(parser.parse_args([])) == ClipConfig()
    ns = parser.parse_args(["--clip-model", "ViT-L-14", "--clip-pretrained", "none", "--clip-checkpoint", "w.pt",
                            "--clip-low-z", "-2", "--clip-high-z", "2.5", "--clip-workers", "0", "--no-clip"])
    config = ClipConfig.from_args(ns, cache_dir=tmp_path)
    assert (config.model, config.pretrained, config.checkpoint, config.low_z, config.high_z) == (
        "ViT-L-14", None, "w.pt", -2.0, 2.5)
    assert config.num_workers == 0 and not config.enabled and config.cache_dir == str(tmp_path)


def test_matrix_form_agrees_with_the_pair_form(monkeypatch):
    from filters.clip_mining import column_z_scores, similarity_matrix

    rng = np.random.default_rng(3)
    images = [f"img{i}" for i in range(12)]
    objects = ["dog", "cat", "ball"]
    incidence = rng.random((12, 3)) < 0.5
    incidence[:, 2] = [True, True] + [False] * 10  # too few present balls for a z-score
    table = {(img, prompt_for(o)): float(rng.normal(0.2 + 0.1 * j, 0.05))
             for img in images for j, o in enumerate(objects)}
    scorer = TableScorer(table)
    sim = similarity_matrix(scorer, images, [prompt_for(o) for o in objects], block=5)
    assert sim.shape == (12, 3) and [len(c[0]) for c in scorer.calls] == [5, 5, 2]

    z_present = column_z_scores(sim, incidence)
    z_absent = column_z_scores(sim, ~incidence)
    present = [ClipPair(images[i], objects[j]) for i, j in zip(*np.nonzero(incidence))]
    absent = [ClipPair(images[i], objects[j]) for i, j in zip(*np.nonzero(~incidence))]
    for pairs, z, mine in ((present, z_present, mine_hard_positives), (absent, z_absent, mine_hard_negatives)):
        mined = mine(pairs, TableScorer(table), -0.5 if mine is mine_hard_positives else 0.5)
        for m in mined:
            i, j = images.index(m.pair.image), objects.index(m.pair.object)
            np.testing.assert_allclose(z[i, j], m.z, rtol=1e-5, atol=1e-6, equal_nan=True)
    assert np.isnan(z_present[:, 2]).all() and np.isnan(z_present[~incidence]).all()
    assert not np.isnan(z_absent[2:, 2]).any()  # ten images without a ball: a population
