"""How fast does ``sources.image_files.header_size`` read an image's size, against maintained readers?

Writes ``--files`` images (default 2,000, sizes 200-640 px, seeded) of the kinds the photo sources hold: PNG,
baseline JPEG, JPEG with a 2 kB EXIF segment before the frame header, progressive JPEG. Then, with the files in the
page cache, times per header (best of ``--repeats`` passes over all files):

- ``ours``: :func:`sources.image_files.header_size` (a few positioned reads on the bare file descriptor);
- ``imagesize``: ``imagesize.get(path, exif_rotation=False)`` (pure Python, MIT, no dependencies; the size as
  stored, like ours and the annotations' width and height), when the package is installed;
- ``PIL``: ``PIL.Image.open(path).size`` (reads the header only, no pixel is decoded).

Every reader must give every file's true size before anything is timed. The ratios (reader / ours) decide whether
the hand parser stays: it stays while a maintained reader costs more than about 1.5 times as much.

    python benchmarks/bench_image_headers.py [--files 2000] [--repeats 5]

Never asserted in tests.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sources.image_files import header_size  # noqa: E402

KINDS = ("png", "jpeg", "jpeg-exif", "jpeg-progressive")


def make_images(folder: Path, n: int, seed: int = 0) -> list[tuple[str, tuple[int, int]]]:
    """``n`` images cycling through :data:`KINDS`, with their true sizes."""
    from PIL import Image

    rng = random.Random(seed)
    files = []
    for k in range(n):
        kind, size = KINDS[k % len(KINDS)], (rng.randint(200, 640), rng.randint(200, 640))
        image = Image.new("RGB", size, (k % 256, 128, 64))
        path = folder / f"{k}.{'png' if kind == 'png' else 'jpg'}"
        if kind == "png":
            image.save(path)
        else:
            exif = Image.Exif()
            if kind == "jpeg-exif":
                exif[0x010E] = "x" * 2000  # ImageDescription: the frame header sits 2 kB into the file
            image.save(path, "JPEG", exif=exif, progressive=kind == "jpeg-progressive")
        files.append((str(path), size))
    return files


def pil_size(path: str) -> tuple[int, int]:
    from PIL import Image

    with Image.open(path) as image:
        return image.size


def readers() -> dict[str, Callable[[str], tuple[int, int] | None]]:
    found: dict[str, Callable[[str], tuple[int, int] | None]] = {"ours": header_size}
    try:
        import imagesize
    except ImportError:
        print("imagesize is not installed (pip install imagesize): compared with PIL only")
    else:
        found["imagesize"] = lambda path: tuple(imagesize.get(path, exif_rotation=False))  # type: ignore[assignment]
    found["PIL"] = pil_size
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="images to write and read (default: 2000)")
    parser.add_argument("--repeats", type=int, default=5, help="passes over all files; the best counts (default: 5)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        files = make_images(Path(tmp), args.files)
        best: dict[str, float] = {}
        for name, read in readers().items():
            wrong = [path for path, size in files if read(path) != size]  # also brings the files into the cache
            if wrong:
                raise SystemExit(f"{name} misreads {len(wrong)} file(s), e.g. {wrong[0]}")
            for _ in range(args.repeats):
                start = time.perf_counter()
                for path, _size in files:
                    read(path)
                best[name] = min(best.get(name, float("inf")), (time.perf_counter() - start) / len(files))
    print(f"{args.files} headers ({', '.join(KINDS)}), best of {args.repeats} passes, files in the page cache:")
    for name, seconds in best.items():
        print(f"  {name:<10} {seconds * 1e6:6.1f} us a header   {seconds / best['ours']:5.2f}x ours")


if __name__ == "__main__":
    main()
