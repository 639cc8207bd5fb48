"""Demo videos: deterministic, cached, samplable, and their event scripts agree with their pixels.

Shapes are found in a decoded frame by their exact colour (the videos are lossless and the colours of one video
are distinct; pattern ink never touches a shape's rim), so the checks below measure what the script claims.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from sources.demo import video as demo_video
from sources.demo.video import BEHAVIOUR_LEMMAS, FPS, HEIGHT, MAX_FRAMES, MIN_FRAMES, WIDTH, load_demo_videos
from sources.demo.world import CATEGORIES, COLOURS
from sources.errors import ConfigError
from sources.video import LastFramePerSecond, Robotics, Uniform, read_frames, sample_video
from sources.video_backends import have_opencv
from tests.conftest import require

require(have_opencv(), "opencv-python-headless", "bash .ci/install-video.sh")

N_VIDEOS = 12


@pytest.fixture(scope="module")
def videos(tmp_path_factory):
    return load_demo_videos(seed=0, n_videos=N_VIDEOS, cache_dir=tmp_path_factory.mktemp("demo-video"))


@pytest.fixture(scope="module")
def decoded(videos):
    return {v.id: np.stack(read_frames(v.file, list(range(v.frame_count)), backend="opencv")) for v in videos}


def test_shape_of_the_records(videos):
    assert [v.id for v in videos] == [f"demo-video-{i:04d}" for i in range(N_VIDEOS)]
    actions = set()
    for v in videos:
        assert MIN_FRAMES <= v.frame_count <= MAX_FRAMES and (v.width, v.height, v.fps) == (WIDTH, HEIGHT, FPS)
        assert v.file.endswith(".avi") and Path(v.file).is_file()
        cast = v.meta["cast"]
        assert len({c["colour"] for c in cast}) == len(cast) and all(c["category"] in CATEGORIES for c in cast)
        assert v.meta["objects"] == list(dict.fromkeys(c["category"] for c in cast))
        assert v.meta["events"][0] == {"frame": 0, "object": cast[0]["name"], "action": "appears"}
        assert set(v.meta["behaviours"]) <= set(BEHAVIOUR_LEMMAS.values()) and v.meta["behaviours"]
        assert v.meta["description"][0].startswith("At the start, there ")
        assert len(v.meta["description"]) == 1 + sum(
            1 for e in v.meta["events"] if not (e["action"] == "appears" and e["frame"] == 0))
        # the builder samples them with robotics or uniform; last_per_second applies too
        assert Robotics().indices(v.frame_count, v.fps) and Uniform(16).indices(v.frame_count, v.fps)
        assert len(LastFramePerSecond().indices(v.frame_count, v.fps)) == v.frame_count // 15
        actions |= {e["action"] for e in v.meta["events"]}
    assert {"appears", "moves", "collides with", "disappears", "jumps", "rotates", "grows", "shrinks"} <= actions


WAY = {"left": "to the left", "right": "to the right", "up": "up", "down": "down"}
BACK = {"left": "right", "right": "left", "up": "down", "down": "up"}


def test_description_reads_the_script(videos):
    staged = [v for v in videos if v.meta["interaction"]]
    for video in staged:
        it = video.meta["interaction"]
        text = " ".join(video.meta["description"])
        mover, other, way = it["object"], it["target"], it["direction"]
        assert f"The {mover} moves {WAY[way]}. " in text
        if it["outcome"] in ("stops short", "passes"):
            assert "collides" not in text and "collide" not in video.meta["behaviours"]
            continue
        then = f"The {other} moves {WAY[way]}." if it["outcome"] == "pushed" else f"The {mover} moves {WAY[BACK[way]]}."
        assert f"The {mover} collides with the {other}. {then}" in text, text
        assert "collide" in video.meta["behaviours"]
    outcomes = {v.meta["interaction"]["outcome"] for v in staged}
    assert len(outcomes) >= 3 and len({v.meta["interaction"]["direction"] for v in staged}) >= 2


def test_deterministic_and_cached(videos, tmp_path, monkeypatch):
    again = load_demo_videos(seed=0, n_videos=N_VIDEOS, cache_dir=tmp_path)
    assert [(v.id, v.frame_count, v.meta) for v in again] == [(v.id, v.frame_count, v.meta) for v in videos]
    assert all(Path(a.file).read_bytes() == Path(b.file).read_bytes() for a, b in zip(again, videos))
    other = load_demo_videos(seed=1, n_videos=2, cache_dir=tmp_path)
    assert [v.meta for v in other] != [v.meta for v in again[:2]]
    assert [v.meta for v in load_demo_videos(seed=0, n_videos=2, cache_dir=tmp_path)] == [v.meta for v in videos[:2]]

    def no_rendering(*args, **kwargs):
        raise AssertionError("rendered again")

    monkeypatch.setattr(demo_video, "_valid_script", no_rendering)
    calls = []
    assert load_demo_videos(seed=0, n_videos=N_VIDEOS, cache_dir=tmp_path, progress=lambda *a: calls.append(a)) \
        == again
    assert calls == [(N_VIDEOS, N_VIDEOS)]
    assert not list((tmp_path / "demo-video").glob("*.partial"))


def test_frame_folders_without_an_encoder(tmp_path, monkeypatch):
    def no_encoder(*args, **kwargs):
        raise ConfigError("OpenCV cannot write 'FFV1' video")

    monkeypatch.setattr(demo_video, "write_video", no_encoder)
    folders = load_demo_videos(seed=0, n_videos=2, cache_dir=tmp_path)
    assert all(Path(v.file).is_dir() for v in folders) and folders[0].fps == FPS
    sampled = sample_video(folders[0], LastFramePerSecond(), tmp_path)
    assert sampled.backend == "frames" and len(sampled.frames) == folders[0].frame_count // 15


def test_bad_parameters():
    for kwargs in ({"seed": -1}, {"n_videos": 0}, {"seed": "0"}):
        with pytest.raises(ConfigError):
            load_demo_videos(**kwargs)  # type: ignore[arg-type]


def test_sampled_frames_are_the_painted_frames(videos, decoded, tmp_path):
    video = videos[0]
    sampled = sample_video(video, Robotics(), tmp_path)
    from PIL import Image

    for index, png in zip(sampled.indices, sampled.frames):
        assert np.array_equal(np.asarray(Image.open(png)), decoded[video.id][index])


# --- the script against the pixels ----------------------------------------------------------------------


def _mask(frame: np.ndarray, colour: str) -> np.ndarray:
    return (frame == np.array(COLOURS[colour], dtype=np.uint8)).all(axis=2)


def _centroid(mask: np.ndarray) -> tuple[float, float]:
    ys, xs = np.nonzero(mask)
    return float(xs.mean()), float(ys.mean())


def test_scripts_agree_with_pixels(videos, decoded):
    checked = 0
    for video in videos:
        frames = decoded[video.id]
        colour_of = {c["name"]: c["colour"] for c in video.meta["cast"]}

        def mask(name: str, t: int) -> np.ndarray:
            return _mask(frames[t], colour_of[name])

        for event in video.meta["events"]:
            name, action = event["object"], event["action"]
            if action == "appears":
                k = event["frame"]
                assert mask(name, k).sum() > 20 and (k == 0 or not mask(name, k - 1).any()), (video.id, event)
            elif action == "disappears":
                k = event["frame"]
                assert mask(name, k - 1).any() and not mask(name, k).any() and not mask(name, -1).any()
            elif action == "collides with":
                t = event["frame"]
                a, b = mask(name, t), mask(event["target"], t)
                assert not (a & b).any() and ((a[:, :-1] & b[:, 1:]).any() or (a[:, 1:] & b[:, :-1]).any()
                                              or (a[:-1] & b[1:]).any() or (a[1:] & b[:-1]).any()), (video.id, event)
                gap = lambda f: np.hypot(*np.subtract(_centroid(mask(name, f)), _centroid(mask(event["target"], f))))
                assert gap(t - 3) > gap(t), (video.id, event)  # touching, not overlapping, after an approach
            else:
                s, e = event["start"], event["end"]
                (x0, y0), (x1, y1) = _centroid(mask(name, s)), _centroid(mask(name, e))
                area0, area1 = mask(name, s).sum(), mask(name, e).sum()
                if action == "moves":
                    dx, dy = demo_video.DIRECTIONS[event["direction"]]
                    along = (x1 - x0) * dx + (y1 - y0) * dy
                    across = abs((x1 - x0) * dy) + abs((y1 - y0) * dx)
                    assert abs(along - event["pixels"]) <= 1.5 and across <= 1.5, (video.id, event, along, across)
                elif action == "jumps":
                    ym = _centroid(mask(name, (s + e) // 2))[1]
                    assert ym < y0 - event["height"] / 2 and abs(y1 - y0) <= 1.0, (video.id, event)
                elif action == "grows":
                    assert area1 > 1.5 * area0, (video.id, event)
                elif action == "shrinks":
                    # a vanishing shape's first steps are its smallest: 6/7 of its size (a pattern's ink varies)
                    assert area1 < max(0.75, event["scale"] ** 2 + 0.08) * area0, (video.id, event)
                elif action == "rotates":
                    # turning about the box centre: the centroid of an asymmetric shape moves a little only (a
                    # crescent's, far from its box centre, most)
                    assert np.hypot(x1 - x0, y1 - y0) <= 0.6 * np.sqrt(area0), (video.id, event)
                    assert any((mask(name, t) != mask(name, s)).any() for t in range(s + 1, e)), (video.id, event)
                    # visible in frames sampled before and after: the shape at the end is clearly turned (not by a
                    # multiple of its symmetry step, which would leave it looking unturned)
                    turned = np.roll(mask(name, e), (round(y0 - y1), round(x0 - x1)), axis=(0, 1))
                    assert (turned ^ mask(name, s)).sum() > 0.06 * area0, (video.id, event)
            checked += 1
    assert checked >= 40
