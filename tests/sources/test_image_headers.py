"""Image files checked by forked header readers (:mod:`sources.image_headers`) while the annotations are checked:
the same verdicts, and the same first error, as checking each file in turn."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

import sources.image_headers as image_headers
from sources.coco import read_coco
from sources.image_headers import HeaderChecks
from tests.fixtures import real_formats as rf
from tests.sources.test_malformed import expect_error


@pytest.fixture
def in_workers(monkeypatch) -> list[bool]:
    """Header checks in forked workers even for a fixture's dozen images; records, per check, whether workers
    read the headers."""
    monkeypatch.setattr(image_headers, "MIN_IMAGES", 1)
    monkeypatch.setattr(image_headers, "MIN_FILE_BYTES", 0)
    used: list[bool] = []
    check = HeaderChecks.check

    def spy(self, entries):
        check(self, entries)
        used.append(self.in_readers)

    monkeypatch.setattr(HeaderChecks, "check", spy)
    return used


def test_workers_find_the_files_a_check_in_turn_finds(tmp_path: Path, monkeypatch) -> None:
    fx = rf.make_coco(tmp_path)
    files = sorted(fx.images_dir.glob("*.png"))
    (tmp_path / "anim.gif").write_bytes(b"GIF89a" + b"\0" * 20)  # no header parsed here: the caller asks PIL
    entries = [(str(f), 64, 48) for f in files]
    entries[3] = (entries[3][0], 64, 47)  # declared one pixel short
    entries[5] = (str(tmp_path / "missing.png"), 64, 48)
    entries.append((str(tmp_path / "anim.gif"), 64, 48))
    monkeypatch.setattr(image_headers, "MIN_IMAGES", 1)
    with HeaderChecks(readers=True) as checks:
        checks.check(entries)
        assert checks.in_readers
        in_workers = checks.mismatches()
    with HeaderChecks(readers=False) as checks:
        checks.check(entries)
        assert not checks.in_readers
        in_turn = checks.mismatches()
    assert in_workers == in_turn == [3, 5, len(entries) - 1]
    assert not multiprocessing.active_children()


def test_an_image_file_error_comes_before_a_later_annotation_error(tmp_path: Path, in_workers) -> None:
    fx = rf.make_coco(tmp_path)
    (fx.images_dir / "000000000004.png").unlink()
    rf.corrupt(fx.annotations, rf.set_field("annotations", 5, "category_id", 999))
    expect_error(lambda: read_coco(fx.annotations, fx.images_dir), fx.annotations, "images[8] (id=4)",
                 "image file not found")
    assert in_workers == [True]
    assert not multiprocessing.active_children()


def test_a_resized_image_file_is_named_with_both_sizes(tmp_path: Path, in_workers) -> None:
    fx = rf.make_coco(tmp_path)
    rf.corrupt(fx.annotations, rf.set_field("images", 2, "width", 65))
    rf.corrupt(fx.annotations, rf.set_field("annotations", 0, "bbox", [1, 1, 2, 2]))
    expect_error(lambda: read_coco(fx.annotations, fx.images_dir), fx.annotations, "images[2] (id=10)",
                 "is 64x48 pixels, but the annotations declare 65x48")
    assert in_workers == [True]


@pytest.mark.parametrize(("bad_width_at", "record", "problem"), [
    (10, "images[8] (id=4)", "image file not found"),  # the missing file comes first in the file
    (2, "images[2] (id=10)", "'width' must be positive"),  # the bad entry comes first
])
def test_an_image_entry_error_and_a_missing_file_are_reported_in_file_order(
    tmp_path: Path, in_workers, bad_width_at: int, record: str, problem: str
) -> None:
    fx = rf.make_coco(tmp_path)
    (fx.images_dir / "000000000004.png").unlink()  # images[8]
    rf.corrupt(fx.annotations, rf.set_field("images", bad_width_at, "width", -1))
    expect_error(lambda: read_coco(fx.annotations, fx.images_dir), fx.annotations, record, problem)
    assert not multiprocessing.active_children()


def test_a_clean_file_reads_the_same_with_and_without_workers(tmp_path: Path, in_workers, monkeypatch) -> None:
    fx = rf.make_coco(tmp_path)
    with_workers = read_coco(fx.annotations, fx.images_dir)
    monkeypatch.setattr(image_headers, "MIN_FILE_BYTES", 10**12)
    assert read_coco(fx.annotations, fx.images_dir) == with_workers
    assert in_workers == [True, False]


def test_a_daemonic_process_checks_its_images_itself(tmp_path: Path, monkeypatch) -> None:
    """A multiprocessing worker may not start processes: one that reads a large file checks the files itself."""

    class Daemonic:
        daemon = True

    fx = rf.make_coco(tmp_path)
    monkeypatch.setattr(image_headers, "MIN_IMAGES", 1)
    monkeypatch.setattr(image_headers.multiprocessing, "current_process", lambda: Daemonic())
    with HeaderChecks(readers=True) as checks:
        checks.check([(str(f), 64, 48) for f in sorted(fx.images_dir.glob("*.png"))])
        assert not checks.in_readers and checks.mismatches() == []
