"""Sources prepared in forked children (builders/mioh/source_workers.py): the build one process makes, the same
errors one process reports, and one process taking over when a child dies."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from builders import mioh
from builders.mioh import builder, cell_workers, source_workers
from builders.mioh.config import MiohConfig
from sources import forking as forking_module
from tests.fixtures.real_formats import (
    corrupt,
    make_coco,
    make_coco_for_svg,
    make_coco_source_for_svg,
    make_paco,
    make_svg,
    set_field,
)

pytestmark = [
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.skipif(not source_workers.fork_affordable(), reason="this system cannot fork (not Linux, or too "
                                                                    "little free memory)"),
]


@pytest.fixture()
def sources(tmp_path: Path) -> dict[str, Path]:
    coco, paco, svg = make_coco(tmp_path / "coco"), make_paco(tmp_path / "paco"), make_svg(tmp_path / "svg")
    verify = make_coco_for_svg(tmp_path / "verify")
    return {"coco": coco.annotations, "coco_images": coco.images_dir, "paco": paco.annotations,
            "paco_images": paco.images_dir, "svg": svg.annotations, "svg_images": svg.images_dir,
            "verify": verify.annotations}


def argv(sources: dict[str, Path]) -> list[str]:
    return ["--coco-rem", str(sources["coco"]), "--coco-images", str(sources["coco_images"]),
            "--paco", str(sources["paco"]), "--paco-images", str(sources["paco_images"]),
            "--svg", str(sources["svg"]), "--svg-images", str(sources["svg_images"]),
            "--verify-absence-with", str(sources["verify"])]


@pytest.fixture()
def forking(monkeypatch) -> None:
    """Fork for the tests' small files, on any number of cores."""
    monkeypatch.setattr(source_workers, "MIN_SOURCE_BYTES", 0)
    monkeypatch.setattr(source_workers, "usable_cores", lambda: 2)


def build(tmp_path: Path, sources: dict[str, Path], name: str, *extra: str) -> tuple[int, bytes, dict]:
    out = tmp_path / "out"
    code = mioh.main([*argv(sources), "--n-images", "2", "--n-questions", "3", "--out", str(out), "--name", name,
                      "--cache-dir", str(tmp_path / f"cache-{name}"), "--no-clip", "--no-progress", *extra])
    if code != 0:
        return code, b"", {}
    return code, (out / name / "items.jsonl").read_bytes(), json.loads((out / name / "build.json").read_text())


def test_forked_sources_make_the_build_one_process_makes(tmp_path, sources, monkeypatch):
    _, serial, serial_build = build(tmp_path, sources, "serial")
    monkeypatch.setattr(source_workers, "MIN_SOURCE_BYTES", 0)
    monkeypatch.setattr(source_workers, "usable_cores", lambda: 2)
    _, forked, forked_build = build(tmp_path, sources, "forked")
    assert serial_build["stats"]["preparing"] == {"processes": 1}
    assert forked_build["stats"]["preparing"] == {"processes": 3}
    assert forked == serial and serial
    for key in ("filters", "federated_refusals", "sources", "pools", "quality", "verify_absence"):
        assert forked_build["stats"][key] == serial_build["stats"][key], key
    # the entry the forked build stored serves a rerun with the same items
    _, warm, warm_build = build(tmp_path, sources, "forked")
    assert warm_build["stats"]["prepared_pools"] == "reused" and warm == serial


def test_forking_is_only_for_large_sources_without_clip(tmp_path, sources):
    config = MiohConfig(coco_rem=str(sources["coco"]), coco_images=str(sources["coco_images"]),
                        paco=str(sources["paco"]), paco_images=str(sources["paco_images"]), no_clip=True)
    readers = builder.source_readers(config)
    assert [r.name for r in readers] == ["coco-rem", "paco"]
    assert not source_workers.worth_forking(config, readers)  # a few kilobytes: not worth a process
    source_workers.MIN_SOURCE_BYTES, saved = 0, source_workers.MIN_SOURCE_BYTES
    try:
        assert source_workers.worth_forking(config, readers) == (source_workers.usable_cores() >= 2)
        assert not source_workers.worth_forking(config, readers[:1])  # one source: nothing to do at once
        with_clip = MiohConfig(coco_rem=config.coco_rem, coco_images=config.coco_images, paco=config.paco,
                               paco_images=config.paco_images)
        assert not source_workers.worth_forking(with_clip, readers)
    finally:
        source_workers.MIN_SOURCE_BYTES = saved


def test_a_bad_source_is_reported_as_one_process_reports_it(tmp_path, sources, capsys, monkeypatch, forking):
    """A bad PACO file is reported while COCO is fine; with COCO bad as well, COCO's error comes first (it is
    read first), whichever child fails first; nothing of the build is written."""
    corrupt(sources["paco"], set_field("annotations", 0, "bbox", [1, 2, 3]))
    code, _, _ = build(tmp_path, sources, "bad")
    paco_error = capsys.readouterr().err
    assert code == 2 and str(sources["paco"]) in paco_error and "annotations[0]" in paco_error
    corrupt(sources["coco"], set_field("images", 0, "width", -5))
    code, _, _ = build(tmp_path, sources, "bad")
    coco_error = capsys.readouterr().err
    assert code == 2 and str(sources["coco"]) in coco_error and "images[0]" in coco_error
    monkeypatch.setattr(source_workers, "MIN_SOURCE_BYTES", 1 << 60)  # one process: the same messages
    assert build(tmp_path, sources, "bad")[0] == 2
    assert capsys.readouterr().err == coco_error
    assert not (tmp_path / "out" / "bad").exists()
    assert not list((tmp_path / "cache-bad" / "mioh-pools").glob(".preparing-*"))  # no scratch left behind


def test_a_child_that_dies_leaves_the_preparing_to_one_process(tmp_path, sources, monkeypatch, forking):
    _, expected, _ = build(tmp_path, sources, "expected")
    monkeypatch.setattr(source_workers, "packed", lambda pools: os._exit(9))  # as if killed for memory
    _, items, built = build(tmp_path, sources, "after-a-death")
    assert built["stats"]["preparing"] == {"processes": 1} and items == expected


def test_the_cells_of_a_finished_source_are_drawn_while_the_others_are_prepared(tmp_path, sources, monkeypatch,
                                                                                forking):
    """COCO's and PACO's cells are drawn while the SVG child still works; when that child then dies, what was
    drawn is dropped and one process prepares and draws everything: the items of a one-process build."""
    _, expected, _ = build(tmp_path, sources, "expected")
    real_packed = source_workers.packed

    drawn = tmp_path / "coco-and-paco-drawn"

    def svg_dies_late(pools):
        if pools.records.source == "svg":  # once the caller has drawn the other sources' cells ...
            deadline = time.monotonic() + 120
            while not drawn.exists():
                assert time.monotonic() < deadline
                time.sleep(0.05)
            os._exit(9)  # ... as if killed for memory
        return real_packed(pools)

    events: list[str] = []
    real_draw, real_forget = cell_workers.CellDrawing.draw, cell_workers.CellDrawing.forget

    def draw(self, pools_by_task, **options):
        events.append("draw " + " ".join(sorted(set(pools_by_task) - set(self.builders))))
        real_draw(self, pools_by_task, **options)
        if len(events) == 2:
            drawn.touch()  # the SVG child (forked, polling for this file) may die now

    def forget(self):
        events.append("forget")
        real_forget(self)

    monkeypatch.setattr(source_workers, "packed", svg_dies_late)
    monkeypatch.setattr(cell_workers.CellDrawing, "draw", draw)
    monkeypatch.setattr(cell_workers.CellDrawing, "forget", forget)
    _, items, built = build(tmp_path, sources, "svg-dies")
    assert sorted(events[:2]) == ["draw attribute", "draw counting existence"]
    assert events[2:] == ["forget", "draw attribute counting existence position"]
    assert built["stats"]["preparing"] == {"processes": 1} and items == expected


@pytest.mark.parametrize(("cores", "sizes", "shares"), [
    (2, [216, 126, 179], [1, 1, 1]),  # the sources outnumber the cores: no child starts workers
    (16, [216, 126, 179], [6, 5, 5]),
    (4, [1, 3, 2], [1, 2, 1]),
    (5, [7, 7], [3, 2]),  # a tie: reading order
    (1, [1, 2], [1, 1]),
])
def test_the_cores_are_shared_out_largest_file_first(cores, sizes, shares):
    assert source_workers.core_shares(cores, sizes) == shares


def test_each_child_measures_with_its_share_of_the_cores(tmp_path, sources, monkeypatch, forking):
    """With 7 cores for 3 sources the child of the largest file may use 3, the others 2; the caller keeps all."""
    monkeypatch.setattr(source_workers, "usable_cores", lambda: 7)
    real = source_workers.Pools

    def spy(records, *args, **kwargs):
        (tmp_path / f"{Path(records.path).name}.cores").write_text(str(forking_module.usable_cores()))
        return real(records, *args, **kwargs)

    monkeypatch.setattr(source_workers, "Pools", spy)
    code, _, built = build(tmp_path, sources, "shared")
    assert code == 0 and built["stats"]["preparing"] == {"processes": 3}
    files = [sources["coco"], sources["paco"], sources["svg"]]
    largest = max(files, key=lambda f: f.stat().st_size)
    assert {f.name: int((tmp_path / f"{f.name}.cores").read_text()) for f in files} == {
        f.name: 3 if f == largest else 2 for f in files}
    assert forking_module._SHARE is None


def test_a_bug_in_a_child_is_raised_with_where_it_happened(tmp_path, sources, monkeypatch, forking):
    def broken(*args, **kwargs):
        raise ValueError("a bug")

    monkeypatch.setattr(source_workers, "Pools", broken)
    with pytest.raises(ValueError, match="a bug") as info:
        build(tmp_path, sources, "bug")
    assert any("raised in the process preparing coco-rem" in note and "broken" in note
               for note in info.value.__notes__)
    assert not list((tmp_path / "cache-bug" / "mioh-pools").glob(".preparing-*"))


@pytest.mark.parametrize("processes", [1, 3])
def test_absence_verified_with_the_coco_source_file_reads_it_once(tmp_path, sources, monkeypatch, processes):
    """Where --verify-absence-with names the --coco-rem file, the COCO reader hands its presence over
    (builders/mioh/shared_presence.py), in process or from child to child: verification never reads the file
    again, and the build is the one made when it verifies against a copy (read the old way)."""
    import shutil

    from sources import absence

    coco = make_coco_source_for_svg(tmp_path / "shared")
    copy = shutil.copy(coco.annotations, tmp_path / "copy.json")
    sources = {**sources, "coco": coco.annotations, "coco_images": coco.images_dir}
    if processes > 1:
        monkeypatch.setattr(source_workers, "MIN_SOURCE_BYTES", 0)
        monkeypatch.setattr(source_workers, "usable_cores", lambda: 2)
    else:
        monkeypatch.setattr(source_workers, "MIN_SOURCE_BYTES", 1 << 60)
    _, expected, expected_build = build(tmp_path, {**sources, "verify": copy}, "copy")
    assert expected_build["stats"]["verify_absence"]["images_matched"] == 6

    def read_again(path):
        raise AssertionError(f"{path} read again")

    monkeypatch.setattr(absence, "read_coco_presence", read_again)
    code, items, built = build(tmp_path, {**sources, "verify": coco.annotations}, "shared")
    assert code == 0 and built["stats"]["preparing"] == {"processes": processes}
    assert items == expected
    assert {**built["stats"]["verify_absence"], "file": None} == {**expected_build["stats"]["verify_absence"],
                                                                  "file": None}
