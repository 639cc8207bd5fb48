"""sources/png.py: the frame cache's PNG writer is lossless whichever encoder is installed."""

from __future__ import annotations

import io
import zlib

import numpy as np
import pytest
from PIL import Image

from sources import png
from sources.video_backends import have_opencv
from tests.conftest import require


def frames() -> list[np.ndarray]:
    """Noise (every byte value, wrapping subtractions), flat colour, a 1x1 and an odd-sized frame."""
    rng = np.random.default_rng(7)
    return [
        rng.integers(0, 256, (48, 64, 3), dtype=np.uint8),
        np.full((16, 16, 3), (250, 3, 128), dtype=np.uint8),
        np.array([[[1, 2, 3]]], dtype=np.uint8),
        rng.integers(0, 256, (37, 53, 3), dtype=np.uint8),
    ]


def _pillow(data: bytes) -> np.ndarray:
    with Image.open(io.BytesIO(data)) as image:
        assert image.mode == "RGB"
        return np.asarray(image)


def _opencv(data: bytes) -> np.ndarray:
    import cv2

    decoded = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_UNCHANGED)
    return cv2.cvtColor(decoded, cv2.COLOR_BGR2RGB)


def test_isal_writer_round_trips_through_pillow_and_opencv():
    require(png.have_isal(), "isal", "bash .ci/install-video.sh")
    require(have_opencv(), "opencv-python-headless", "bash .ci/install-video.sh")
    for frame in frames():
        data = png.encode_png_isal(frame)
        assert data.startswith(png.SIGNATURE)
        assert np.array_equal(_pillow(data), frame)
        assert np.array_equal(_opencv(data), frame)
    assert png.encode_png(frames()[0]) == png.encode_png_isal(frames()[0])  # the default where isal is there


def test_sub_filter_is_the_png_definition():
    """Independent of the writer: undo the filter the way a decoder does (add the reconstructed left byte)."""
    frame = frames()[3]
    filtered = png.sub_filtered(frame)
    assert filtered.shape == (37, 1 + 53 * 3) and set(filtered[:, 0]) == {png.FILTER_SUB}
    for y in range(frame.shape[0]):
        row = [int(b) for b in filtered[y, 1:]]
        for x in range(3, len(row)):
            row[x] = (row[x] + row[x - 3]) % 256
        assert row == list(frame[y].reshape(-1))


def test_chunks_carry_valid_crcs():
    """Strict readers check every chunk's CRC; walk the chunks of a written file and check them."""
    require(png.have_isal(), "isal", "bash .ci/install-video.sh")
    data = png.encode_png_isal(frames()[0])
    pos, kinds = len(png.SIGNATURE), []
    while pos < len(data):
        length = int.from_bytes(data[pos:pos + 4], "big")
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        assert int.from_bytes(data[pos + 8 + length:pos + 12 + length], "big") == zlib.crc32(kind + body)
        kinds.append(kind)
        pos += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]


def test_fallback_encoders_are_lossless_too(monkeypatch):
    monkeypatch.setattr(png, "have_isal", lambda: False)
    for frame in frames():
        assert np.array_equal(_pillow(png.encode_png(frame)), frame)


def test_not_an_rgb_frame():
    with pytest.raises(ValueError, match="RGB uint8"):
        png.sub_filtered(np.zeros((4, 4), dtype=np.uint8))
    with pytest.raises(ValueError, match="RGB uint8"):
        png.sub_filtered(np.zeros((4, 4, 3), dtype=np.float32))
