"""The Ray executor (issue 18) on a local Ray cluster this module starts: the same builds as the local executor,
byte for byte; a CLIP encoder actor killed by its process id mid-stage; bad images and videos reported as locally.

One ``ray.init(num_cpus=2)`` for the whole module (starting Ray costs seconds), its temp dir under pytest's, shut
down at the end. No GPU: the encoder actors run on CPU.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import have, require

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


@pytest.fixture(scope="module")
def ray_cluster(tmp_path_factory):
    require(have("ray", "pandas", "pyarrow"), "Ray Data (the scale extra)", "bash .ci/install-scale.sh")
    import ray

    if ray.is_initialized():  # pragma: no cover - another module left one running
        ray.shutdown()
    ray.init(num_cpus=2, num_gpus=0, include_dashboard=False, log_to_driver=False,
             _temp_dir=str(tmp_path_factory.mktemp("ray")))
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    require(have("open_clip", "torch"), "open_clip_torch and torch")
    from tests.support.tiny_clip import register_tiny_clip

    return register_tiny_clip(tmp_path_factory.mktemp("clip-configs"))


def ray_executor():
    from sources.executors import RayExecutor, RaySettings

    return RayExecutor(RaySettings(actors=1))


def mioh_args(model: str, cache: Path, out: Path) -> list[str]:
    return ["--n-images", "2", "--n-questions", "2", "--tasks", "existence", "--pressures", "easy", "hard_positive",
            "hard_negative", "--demo-images", "48", "--clip-model", model, "--clip-pretrained", "none",
            "--clip-workers", "0", "--clip-batch-size", "8", "--cache-dir", str(cache), "--out", str(out),
            "--no-progress"]


def built(out: Path) -> tuple[bytes, dict]:
    folder = next(p for p in out.iterdir() if p.is_dir())
    return (folder / "items.jsonl").read_bytes(), json.loads((folder / "build.json").read_text())


@pytest.fixture(scope="module")
def local_mioh(tmp_path_factory, tiny_clip):
    """The reference: the MIOH build with the tiny CLIP model through the local executor."""
    from builders import mioh

    root = tmp_path_factory.mktemp("mioh-local")
    assert mioh.main(mioh_args(tiny_clip, root / "cache", root / "out")) == 0
    items, build = built(root / "out")
    assert build["stats"]["clip"]["stats"]["images_encoded"] == 48
    return items


# ------------------------------------------------------------------------------------------------ MIOH CLIP


def test_mioh_through_ray_is_byte_identical_and_a_rerun_is_served_from_the_cache(
        ray_cluster, tiny_clip, local_mioh, tmp_path):
    from builders import mioh

    args = mioh_args(tiny_clip, tmp_path / "cache", tmp_path / "a") + ["--executor", "ray"]
    assert mioh.main(args) == 0
    items, build = built(tmp_path / "a")
    clip = build["stats"]["clip"]
    assert clip["stats"]["images_encoded"] == 48  # encoded on the cluster, not served from another cache
    assert clip["executor"]["executor"] == "ray" and clip["executor"]["clip"][0]["batches"] == 6
    assert items == local_mioh
    assert build["config"]["executor"] == "ray"
    # a rerun (local this time) finds every embedding the Ray run wrote
    assert mioh.main(mioh_args(tiny_clip, tmp_path / "cache", tmp_path / "b")) == 0
    rerun_items, rerun = built(tmp_path / "b")
    assert rerun["stats"]["clip"]["stats"]["images_encoded"] == 0 and rerun_items == local_mioh


class SlowPreprocess:
    """The scorer's open_clip transform, slowed down so that batches are still waiting when the test kills the
    actor (pickled by reference: the actors import this module)."""

    def __init__(self, transform) -> None:
        self.transform = transform

    def __call__(self, image):
        time.sleep(0.06)
        return self.transform(image)


def test_an_encoder_actor_killed_mid_stage_loses_only_its_batch(
        ray_cluster, tiny_clip, local_mioh, tmp_path, monkeypatch):
    from builders import mioh
    from filters import clip_ray
    from filters.clip import ClipScorer

    killed: list[int] = []
    seen: list[int] = []

    def kill_first_actor(batch: dict) -> None:
        seen.append(batch["pid"])
        if not killed:
            killed.append(batch["pid"])
            os.kill(batch["pid"], signal.SIGKILL)

    real = ClipScorer.preprocess
    monkeypatch.setattr(ClipScorer, "preprocess", property(lambda self: SlowPreprocess(real.fget(self))))
    monkeypatch.setattr(clip_ray, "batch_listeners", [kill_first_actor])
    args = mioh_args(tiny_clip, tmp_path / "cache", tmp_path / "out") + ["--executor", "ray", "--ray-actors", "1"]
    assert mioh.main(args) == 0
    items, build = built(tmp_path / "out")
    assert killed and len(seen) == 6
    # one actor: a batch from another process can only come from the actor Ray Data restarted
    assert any(pid != killed[0] for pid in seen[1:]), "no batch came from a restarted actor: nothing was tested"
    assert build["stats"]["clip"]["stats"]["images_encoded"] == 48
    assert items == local_mioh


def test_a_corrupt_image_is_the_same_one_line_error_as_locally(ray_cluster, tiny_clip, tmp_path):
    from filters.clip import ClipConfig, load_scorer
    from sources.errors import SourceError
    from tests.support.tiny_clip import write_images

    from PIL import Image

    jpegs = []  # large enough for the pil-draft decode path (reduced-scale JPEG decoding) to kick in
    for i, arr in enumerate(np.random.default_rng(1).integers(0, 256, (4, 120, 160, 3), dtype=np.uint8)):
        Image.fromarray(arr).save(tmp_path / f"photo{i}.jpg", quality=90)
        jpegs.append(str(tmp_path / f"photo{i}.jpg"))
    paths = jpegs + write_images(tmp_path / "img", 6) + write_images(tmp_path / "copy", 2)  # two share content
    bad = tmp_path / "img" / "broken.png"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n not really a png")
    paths.insert(9, str(bad))
    config = ClipConfig(model=tiny_clip, pretrained=None, batch_size=4, num_workers=0)
    outcomes = []
    for executor in (None, ray_executor()):
        scorer, progress = load_scorer(config, executor), []
        with pytest.raises(SourceError) as info:
            scorer.image_embeddings(paths, on_progress=lambda *a, seen=progress: seen.append(a))
        kept = scorer.store.get_many(scorer.key, "image", [scorer._digest(p) for p in paths[:8]])
        outcomes.append((str(info.value), progress, np.stack([kept[scorer._digest(p)] for p in paths[:8]])))
    (local_error, local_progress, local_vectors), (ray_error, ray_progress, ray_vectors) = outcomes
    assert local_error == ray_error and local_error.startswith(f"{bad}: cannot decode image:")
    assert "\n" not in local_error
    # the two batches before the broken one were encoded, cached and reported, as locally, to the same bits
    assert local_progress == ray_progress == [(4, 11), (8, 11)]
    assert np.array_equal(local_vectors, ray_vectors)


# --------------------------------------------------------------------------------------------- frames


def test_mementos_through_ray_is_byte_identical(ray_cluster, tmp_path):
    from builders import mementos

    def run(name: str, *extra: str) -> tuple[bytes, dict]:
        out = tmp_path / name
        args = ["--demo-videos", "4", "--cache-dir", str(tmp_path / f"cache-{name}"), "--out", str(out),
                "--no-progress", *extra]
        assert mementos.main(args) == 0
        return built(out)

    local_items, local = run("local")
    ray_items, remote = run("ray", "--executor", "ray")
    assert ray_items == local_items
    assert remote["stats"]["frames"] == local["stats"]["frames"] == {"decoded": 4}
    assert remote["stats"]["executor"]["executor"] == "ray"


def test_unreadable_videos_are_skipped_or_fatal_with_the_local_reason(ray_cluster, tmp_path):
    from sources.demo.video import load_demo_videos
    from sources.errors import SourceError
    from sources.video import SampledVideo, VideoSkipped
    from sources.video_jobs import VideoJob, sample_videos

    good = load_demo_videos(seed=0, n_videos=2, cache_dir=tmp_path / "demo")
    corrupt = tmp_path / "corrupt.avi"
    corrupt.write_bytes(b"RIFF\x00\x00\x00\x00AVI garbage")
    missing = tmp_path / "missing.avi"
    videos = [good[0], corrupt, good[1], missing]

    def jobs(cache: Path, on_error: str) -> list[VideoJob]:
        return [VideoJob(v, "uniform:4", cache, "auto", on_error) for v in videos]  # type: ignore[arg-type]

    outcomes = []
    for name, executor in (("local", None), ("ray", ray_executor())):
        got = sample_videos(jobs(tmp_path / f"cache-{name}", "skip"), executor)
        outcomes.append([(type(r).__name__, str(r) if isinstance(r, VideoSkipped) else r.indices) for r in got])
        assert [type(r) for r in got] == [SampledVideo, VideoSkipped, SampledVideo, VideoSkipped]
    assert outcomes[0] == outcomes[1]
    assert str(corrupt) in outcomes[0][1][1] and str(missing) in outcomes[0][3][1]

    errors = []
    for name, executor in (("local", None), ("ray", ray_executor())):
        with pytest.raises(SourceError) as info:
            sample_videos(jobs(tmp_path / f"fail-{name}", "fail"), executor)
        errors.append(str(info.value))
    assert errors[0] == errors[1] and errors[0].startswith(str(corrupt)) and "\n" not in errors[0]


def test_executor_options_are_checked():
    from builders.mementos.config import MementosConfig
    from sources.errors import ConfigError

    with pytest.raises(ConfigError, match="--ray-address needs --executor ray"):
        MementosConfig(ray_address="auto")
    with pytest.raises(ConfigError, match="executor must be one of local, ray"):
        MementosConfig(executor="dask")
    with pytest.raises(ConfigError, match="--ray-gpus-per-actor"):
        MementosConfig(executor="ray", ray_gpus_per_actor=-1)


def test_an_address_where_nothing_answers_is_one_line_not_minutes_of_retries():
    import socket

    from sources.executors import RayUnavailable, _check_reachable

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(RayUnavailable, match=f"--ray-address 127.0.0.1:{port}: nothing answers there") as info:
        _check_reachable(f"127.0.0.1:{port}", timeout=2)
    assert "\n" not in str(info.value)
    with pytest.raises(RayUnavailable, match="expected auto, HOST:PORT or ray://HOST:PORT"):
        _check_reachable("head-node")
    _check_reachable("auto")  # Ray finds the cluster itself
