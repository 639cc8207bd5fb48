#!/usr/bin/env bash
# Video decoders for sources/video.py (OpenCV, decord) and their tests; called by .ci/install. Idempotent: a second
# run only checks that both import and that OpenCV can write the codecs the tests and the demo videos use.
#
# decord publishes manylinux x86-64 wheels only (decord 0.6.0, tag py3-none: it installs on Python 3.11 too);
# eva-decord is a maintained fork with the same module name, tried when decord does not install. Without either,
# sources/video.py still works through OpenCV, but CI must test both backends, so this script then fails.
#
# torchcodec (the video-torchcodec extra), the first decoder `--backend auto` takes, loads FFmpeg's shared libraries
# only when it opens a video; pip cannot install them, so this script installs Debian's ffmpeg (apt-get, as
# install-annotation.sh installs Chromium) and then checks that torchcodec really decodes, so CI runs its tests.
# torchcodec is pinned to the release built for the torch that install-services.sh installs (0.17 <-> 2.14).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1

if ! python -c "import cv2" 2>/dev/null; then
  pip_install "opencv-python-headless>=4.8"
fi
if ! python -c "from isal import isal_zlib" 2>/dev/null; then  # ISA-L deflate for the frame cache's PNGs
  pip_install "isal>=1.6"
fi
if ! python -c "import decord" 2>/dev/null; then
  pip_install "decord>=0.6" || pip_install "eva-decord>=0.6"
fi
if ! command -v ffmpeg >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ffmpeg >/dev/null
fi
if ! python -c "import torchcodec" 2>/dev/null; then
  pip_install "torchcodec==0.17.0"
fi

python - <<'PY'
import tempfile, os
import cv2, decord, numpy as np
from isal import isal_zlib  # noqa: F401

with tempfile.TemporaryDirectory() as d:
    for fourcc, suffix in (("MJPG", ".avi"), ("mp4v", ".mp4"), ("FFV1", ".avi")):
        path = os.path.join(d, "probe" + suffix)
        writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*fourcc), 10.0, (32, 32))
        assert writer.isOpened(), f"OpenCV cannot write {fourcc} video"
        writer.write(np.zeros((32, 32, 3), np.uint8))
        writer.release()
        assert len(decord.VideoReader(path)) == 1, f"decord cannot read {fourcc} video"
from sources.video_backends import backend_problem
problem = backend_problem("torchcodec")
assert problem is None, problem
import torchcodec
print(f"video deps: opencv {cv2.__version__}, decord {decord.__version__}, torchcodec {torchcodec.__version__}")
PY
