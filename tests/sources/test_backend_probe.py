"""``--backend auto`` takes the first decoder that really decodes, and a decoder that cannot load its libraries says
so in one line (issue 51).

The FFmpeg case is real, not mocked: a child process runs in a private mount namespace where FFmpeg's shared
libraries (libavutil, libavcodec, ...) are covered by ``/dev/null``, so torchcodec imports but cannot load them,
as on a machine where ``pip install torchcodec`` ran and ``apt-get install ffmpeg`` did not. The system's packages
are untouched: the mounts end with the child.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sources import video_backends
from sources.errors import ConfigError, SourceError
from sources.video_backends import backend_problem, read_frames, resolve_backend, write_video
from tests.conftest import require

ROOT = Path(__file__).resolve().parents[2]
FFMPEG_LIBRARIES = ("libavutil", "libavcodec", "libavformat", "libavdevice", "libavfilter", "libswscale",
                    "libswresample")
READY = "namespace-ready"
TORCHCODEC_HINT = "apt-get install ffmpeg && pip install -e '.[video-torchcodec]' (bash .ci/install-video.sh)"


def system_ffmpeg_files() -> list[str]:
    """Every FFmpeg shared library the dynamic loader knows (``ldconfig -p``), resolved to its file."""
    listing = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True, check=True).stdout
    found = set()
    for line in listing.splitlines():
        name, _, path = line.strip().partition(" => ")
        if name.split(".so")[0] in FFMPEG_LIBRARIES and path:
            found.add(os.path.realpath(path))
    return sorted(found)


def without_ffmpeg(code: str) -> subprocess.CompletedProcess:
    """Run ``code`` in a child Python that cannot load the system's FFmpeg libraries (see the module docstring):
    as root in a new mount namespace, else in a user namespace that maps the caller to root."""
    files = system_ffmpeg_files()
    assert files, "FFmpeg's libraries are not installed, so hiding them proves nothing"
    mounts = "".join(f"mount --bind /dev/null '{f}' && " for f in files)
    script = f"{mounts}echo {READY} && exec '{sys.executable}' -c \"$0\""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    unshare = shutil.which("unshare")
    require(unshare is not None, "unshare (util-linux)", "apt-get install util-linux")
    tried = []
    for flags in (["--mount", "--propagation", "private"],
                  ["--user", "--map-root-user", "--mount", "--propagation", "private"]):
        run = subprocess.run([unshare, *flags, "sh", "-c", script, code], capture_output=True, text=True,
                             timeout=300, env=env, cwd=ROOT)
        if run.stdout.startswith(READY + "\n"):
            run.stdout = run.stdout[len(READY) + 1:]
            return run
        tried.append((run.stderr.strip().splitlines() or ["failed"])[-1])
    require(False, f"a private mount namespace ({'; '.join(tried)})", "run as root, or allow user namespaces")
    raise AssertionError("unreachable")


def test_torchcodec_really_decodes_here():
    """CI installs FFmpeg and the video-torchcodec extra, so ``auto`` runs its first choice there."""
    require(video_backends.have_torchcodec(), "torchcodec", TORCHCODEC_HINT)
    assert backend_problem("torchcodec") is None
    assert resolve_backend("auto") == "torchcodec"


def test_without_ffmpeg_auto_takes_the_next_decoder_and_torchcodec_says_why(tmp_path):
    require(video_backends.have_torchcodec(), "torchcodec", TORCHCODEC_HINT)
    require(video_backends.have_opencv(), "OpenCV", "bash .ci/install-video.sh")
    frames = np.zeros((5, 32, 32, 3), np.uint8)
    frames[3] = 120
    video = tmp_path / "ordinary.avi"
    write_video(video, frames, fps=10.0, fourcc="FFV1")  # lossless: the grey comes back exact
    run = without_ffmpeg(textwrap.dedent(f"""
        from sources.errors import ConfigError
        from sources.video_backends import read_frames, resolve_backend, DECODERS
        from sources.video import sample_video
        print("auto", resolve_backend("auto"))
        print("mean", int(read_frames({str(video)!r}, [3], backend="auto")[0].mean()))
        for way in (lambda: resolve_backend("torchcodec"), lambda: read_frames({str(video)!r}, [3], "torchcodec")):
            try:
                way()
            except ConfigError as exc:
                print("error", exc)
    """))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == f"auto {'decord' if video_backends.have_decord() else 'opencv'}"
    assert lines[1] == "mean 120"  # the ordinary 8-bit file reads: nothing called it corrupt
    line = "error torchcodec cannot load FFmpeg's libraries (libavutil): apt-get install ffmpeg, or --backend decord"
    assert lines[2:] == [line, line]


def test_corrupt_is_said_only_when_every_usable_decoder_refuses(tmp_path, monkeypatch):
    require(video_backends.have_opencv(), "OpenCV", "bash .ci/install-video.sh")
    frames = np.zeros((4, 32, 32, 3), np.uint8)
    video = tmp_path / "ok.avi"
    write_video(video, frames, fps=10.0)
    junk = tmp_path / "junk.avi"
    junk.write_bytes(bytes(range(256)) * 40)
    with pytest.raises(SourceError, match="corrupt"):
        read_frames(junk, [0], backend="opencv")
    usable = [n for n in video_backends.DECODERS if backend_problem(n) is None]
    require(len(usable) >= 2, "a second video decoder (decord)", "bash .ci/install-video.sh")

    def refuses(path, wanted):  # a decoder built without this file's codec
        raise SourceError(path, "", "cannot open video (corrupt, truncated or not a video file)")

    monkeypatch.setitem(video_backends._READERS, usable[0], refuses)
    with pytest.raises(SourceError) as caught:
        read_frames(video, [0], backend=usable[0])
    assert caught.value.problem == f"the {usable[0]} decoder cannot read it, {usable[1]} can: --backend {usable[1]}"
    with pytest.raises(SourceError, match="past the end"):  # the caller's error is said as it is
        read_frames(video, [9], backend=usable[1])


def test_an_unknown_or_missing_backend_is_one_line(monkeypatch):
    with pytest.raises(ConfigError, match="valid: auto, torchcodec, decord, opencv"):
        resolve_backend("ffmpeg")
    monkeypatch.setattr(video_backends, "have_decord", lambda: False)
    backend_problem.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"^video backend 'decord' is not installed: pip install decord"):
            resolve_backend("decord")
    finally:
        backend_problem.cache_clear()


def test_without_ffmpeg_the_demo_video_builds_make_every_task(tmp_path):
    """Issue 51's case: torchcodec installed, FFmpeg's libraries not. With ``--backend auto`` the demo Mementos and
    predictive builds make every task (they exit 1 when one is empty) from frames of the next decoder."""
    require(video_backends.have_torchcodec(), "torchcodec", TORCHCODEC_HINT)
    run = without_ffmpeg(textwrap.dedent(f"""
        import sys
        from builders.mementos.cli import main as mementos
        from builders.predictive.cli import main as predictive
        common = ["--out", {str(tmp_path)!r}, "--no-progress", "--backend", "auto", "--cache-dir", {str(tmp_path)!r}]
        print("exit", mementos(["--demo-videos", "3", "--name", "m", *common]),
              predictive(["--demo-videos", "4", "--patterns", "2", "--name", "p", *common]))
        named = [*common[:3], "--backend", "torchcodec", "--cache-dir", {str(tmp_path)!r}]
        print("named", mementos(["--demo-videos", "1", "--name", "t", *named]), file=sys.stderr)
    """))
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[-1] == "exit 0 0", run.stderr
    assert run.stderr.splitlines()[-2:] == [  # --backend torchcodec, named: one line, exit status 2
        "error: torchcodec cannot load FFmpeg's libraries (libavutil): apt-get install ffmpeg, or --backend decord",
        "named 2"]
    for name, tasks in (("m", {"daily_life"}), ("p", {"abstract_pattern", "human_activity", "physical_interaction"})):
        build = json.loads((tmp_path / name / "build.json").read_text())
        assert {t for t, entry in build["tasks"].items() if entry["items"]} == tasks
    items = [json.loads(line) for line in (tmp_path / "m" / "items.jsonl").read_text().splitlines()]
    decoders = {it["provenance"]["backend"] for it in items}
    assert decoders == {"decord" if video_backends.have_decord() else "opencv"}
