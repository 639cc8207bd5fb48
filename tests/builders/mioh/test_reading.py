"""The paper's sources read and measured (builders/mioh/reading.py): in worker processes or in this one, the
same build, the same one-line errors; SVG's absences verified with the COCO-ReM file itself as with a copy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from builders import mioh
from builders.mioh import reading
from tests.fixtures.real_formats import (
    corrupt,
    make_coco,
    make_coco_for_svg,
    make_coco_source_for_svg,
    make_paco,
    make_svg,
    set_field,
)

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


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


@pytest.fixture(params=["1", "2"])
def processes(request) -> str:
    """Read in this process (``--processes 1``) or in two worker processes (``--processes 2``)."""
    return request.param


def build(tmp_path: Path, sources: dict[str, Path], name: str, *extra: str, processes: str = "1"
          ) -> tuple[int, bytes, dict]:
    out = tmp_path / "out"
    code = mioh.main([*argv(sources), "--n-images", "2", "--n-questions", "3", "--out", str(out), "--name", name,
                      "--cache-dir", str(tmp_path / f"cache-{name}"), "--no-clip", "--no-progress",
                      "--processes", processes, *extra])
    if code != 0:
        return code, b"", {}
    return code, (out / name / "items.jsonl").read_bytes(), json.loads((out / name / "build.json").read_text())


def test_sources_read_in_processes_make_the_build_one_process_makes(tmp_path, sources, monkeypatch):
    _, serial, serial_build = build(tmp_path, sources, "serial")
    mapped = []
    monkeypatch.setattr(reading.ProcessExecutor, "map", lambda self, fn, items, progress, real=reading.ProcessExecutor.map:
                        mapped.append(len(items)) or real(self, fn, items, progress))
    _, parallel, parallel_build = build(tmp_path, sources, "parallel", processes="2")
    assert mapped[0] == 3 and parallel == serial and serial  # the three sources; then the tasks, here
    assert parallel_build["stats"]["drawing"]["workers"] == 2 and serial_build["stats"]["drawing"]["workers"] == 1
    for key in ("filters", "federated_refusals", "sources", "pools", "quality", "verify_absence"):
        assert parallel_build["stats"][key] == serial_build["stats"][key], key


def test_a_bad_source_is_reported_in_reading_order(tmp_path, sources, capsys, processes):
    """A bad PACO file is reported while COCO is fine; with COCO bad as well, COCO's error comes first (it is
    read first), wherever the sources are read; nothing of the build is written."""
    corrupt(sources["paco"], set_field("annotations", 0, "bbox", [1, 2, 3]))
    code, _, _ = build(tmp_path, sources, "bad", processes=processes)
    paco_error = capsys.readouterr().err
    assert code == 2 and str(sources["paco"]) in paco_error and "annotations[0]" in paco_error
    corrupt(sources["coco"], set_field("images", 0, "width", -5))
    code, _, _ = build(tmp_path, sources, "bad", processes=processes)
    coco_error = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(coco_error) == 1 and str(sources["coco"]) in coco_error[0] and "images[0]" in coco_error[0]
    assert not (tmp_path / "out" / "bad").exists()


def test_absence_verified_with_the_coco_source_file_is_verified_as_with_a_copy(tmp_path, sources, processes):
    """Where --verify-absence-with names the --coco-rem file, the SVG task reads that file's presence while the
    COCO task reads it whole: the build is the one made when it verifies against a copy."""
    coco = make_coco_source_for_svg(tmp_path / "shared")
    copy = shutil.copy(coco.annotations, tmp_path / "copy.json")
    sources = {**sources, "coco": coco.annotations, "coco_images": coco.images_dir}
    _, expected, expected_build = build(tmp_path, {**sources, "verify": copy}, "copy", processes=processes)
    assert expected_build["stats"]["verify_absence"]["images_matched"] == 6
    code, items, built = build(tmp_path, {**sources, "verify": coco.annotations}, "shared", processes=processes)
    assert code == 0 and items == expected
    assert {**built["stats"]["verify_absence"], "file": None} == {**expected_build["stats"]["verify_absence"],
                                                                  "file": None}


def test_pools_made_by_the_source_tasks_are_those_the_build_makes_with_a_clip_stage_asked_for(tmp_path, sources,
                                                                                            processes):
    """With --no-clip each source task makes its pools (in its worker); with CLIP asked for (its weights are not
    here: the stage is skipped) the build's process makes them, after reading: the same items either way."""
    made_here = []
    real = reading.Pools.build

    def counted(*args, **kwargs):
        made_here.append(args[0].source)
        return real(*args, **kwargs)

    _, no_clip, _ = build(tmp_path, sources, "no-clip", processes=processes)
    out = tmp_path / "out"
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reading.Pools, "build", counted)
        code = mioh.main([*argv(sources), "--n-images", "2", "--n-questions", "3", "--out", str(out), "--name",
                          "clip-asked", "--cache-dir", str(tmp_path / "cache-clip"), "--no-progress",
                          "--processes", processes])
    assert code == 0 and (out / "clip-asked" / "items.jsonl").read_bytes() == no_clip and no_clip
    assert made_here == ["coco-rem", "paco", "svg"]  # all in this process, after reading
