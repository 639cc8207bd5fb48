"""Issue 9 input checks: a truncated JSON file is a complete sentence with its line and column, and an image
whose file disagrees with its declared width/height is refused (COCO, COCO-ReM and PACO share the reader)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from builders import mioh
from sources.coco import read_coco
from sources.errors import SourceError
from sources.paco import read_paco
from tests.fixtures.real_formats import make_coco, make_paco


def test_truncated_json_is_a_complete_sentence_with_line_and_column(tmp_path: Path) -> None:
    whole = json.dumps({"images": [{"id": 1, "file_name": "000000000001.png"}]}, indent=1)
    cut = tmp_path / "cut.json"
    cut.write_text(whole[: whole.index("000000000001") + 4])  # a download that stopped inside a string
    with pytest.raises(SourceError) as info:
        read_coco(cut, tmp_path)
    message = str(info.value)
    assert "line 5, column 17" in message and "never closed" in message and "truncated" in message
    assert message.endswith("(is the file truncated?)") and not message.endswith(" at")
    cut.write_text(whole[: whole.index('"file_name"')])  # stopped between two keys
    with pytest.raises(SourceError, match=r"line 5, column 4: expecting property name .*, but the text ends here "
                                          r"\(is the file truncated\?\)$"):
        read_coco(cut, tmp_path)


def test_a_complete_file_with_a_syntax_error_does_not_claim_truncation(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"images": [] "categories": []}')
    with pytest.raises(SourceError) as info:
        read_coco(bad, tmp_path)
    assert str(info.value).endswith("malformed JSON at line 1, column 15: expecting ',' delimiter")


def _resize(image: Path, dx: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Replace ``image`` with a copy ``dx`` pixels wider; (declared size, new size)."""
    with Image.open(image) as im:
        declared = im.size
        im.load()
        bigger = im.resize((declared[0] + dx, declared[1]))
    bigger.save(image)
    return declared, bigger.size


@pytest.mark.parametrize("reader, make", [(read_coco, make_coco), (read_paco, make_paco)], ids=["coco", "paco"])
def test_image_size_disagreeing_with_the_annotations_is_refused(reader, make, tmp_path: Path) -> None:
    fx = make(tmp_path / "src")
    data = json.loads(fx.annotations.read_text())
    first = data["images"][0]
    image = fx.images_dir / first["file_name"]
    reader(fx.annotations, fx.images_dir)  # as made: every declared size is the file's
    declared, actual = _resize(image, 7)
    assert declared == (first["width"], first["height"])
    with pytest.raises(SourceError) as info:
        reader(fx.annotations, fx.images_dir)
    err = info.value
    assert err.file == str(fx.annotations) and err.record == f"images[0] (id={first['id']})"
    assert err.problem == (f"image file {image} is {actual[0]}x{actual[1]} pixels, but the annotations declare "
                           f"{declared[0]}x{declared[1]}")


def test_a_wrong_image_size_stops_a_build_with_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fx = make_coco(tmp_path / "coco")
    image = fx.images_dir / json.loads(fx.annotations.read_text())["images"][3]["file_name"]
    _resize(image, -5)
    out = tmp_path / "out"
    code = mioh.main(["--coco-rem", str(fx.annotations), "--coco-images", str(fx.images_dir), "--n-images", "2",
                      "--out", str(out), "--no-progress", "--no-clip"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert str(fx.annotations) in err[0] and str(image) in err[0] and "declare" in err[0]
    assert not out.exists()


@pytest.mark.parametrize("folder", ["imgs", "imgs/", "./imgs", "/data/imgs", "/", "//", "//net", ".", "", "a//b"])
@pytest.mark.parametrize("name", ["x.jpg", "sub/x.jpg", "./x.jpg", "../x.jpg", "/abs/x.jpg", ".", ".."])
def test_image_paths_join_as_pathlib_does(folder: str, name: str) -> None:
    from sources.image_files import image_path, image_paths

    assert image_paths(folder)(name) == image_path(folder, name) == str(Path(folder) / name)


def test_an_image_that_is_missing_a_folder_or_a_fifo_is_not_found(tmp_path: Path) -> None:
    """The one-open check of an image (its header) leaves every failure to the checks before it: a missing file
    and anything that is not a regular file are 'not found' (a FIFO is not waited on), a wrong size is said so."""
    import os

    from sources.image_files import check_image

    fx = make_coco(tmp_path / "coco")
    image = next(fx.images_dir.iterdir())
    with Image.open(image) as im:
        width, height = im.size
    assert check_image(str(image), width, height, "f.json", "r") == str(image)
    with pytest.raises(SourceError, match="is .* pixels, but the annotations declare"):
        check_image(str(image), width + 1, height, "f.json", "r")
    os.mkfifo(tmp_path / "fifo.png")
    (tmp_path / "folder.png").mkdir()
    for missing in ("fifo.png", "folder.png", "absent.png"):
        with pytest.raises(SourceError, match="image file not found"):
            check_image(str(tmp_path / missing), width, height, "f.json", "r")


@pytest.mark.parametrize("waits", [False, True], ids=["page-cache", "disk"])
def test_headers_read_in_one_thread_or_many_find_the_same_files(waits: bool, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Headers are read in the calling thread while they come from the page cache, and by threads from the first
    block that waited on the disk; either way every mismatched file is found, and the error is the first in file
    order (here a block of two is read, then the threads take over where every block counts as waiting)."""
    from sources import coco

    fx = make_coco(tmp_path / "coco")
    data = json.loads(fx.annotations.read_text())
    names = [im["file_name"] for im in data["images"]]
    _resize(fx.images_dir / names[7], 3)
    (fx.images_dir / names[4]).unlink()
    _resize(fx.images_dir / names[10], -2)
    monkeypatch.setattr(coco, "HEADER_BLOCK", 2)
    if waits:
        monkeypatch.setattr(coco, "CACHED_HEADER_SECONDS", -1.0)
    path, images_dir = Path(fx.annotations), str(fx.images_dir)
    _, (raw_images, _, _) = coco.load_sections(path)
    images = coco._images(raw_images, images_dir, path)
    assert coco._unmatched_headers(images) == [4, 7, 10]
    with pytest.raises(SourceError, match="image file not found") as info:
        read_coco(fx.annotations, fx.images_dir)
    assert info.value.record.startswith("images[4] ")
