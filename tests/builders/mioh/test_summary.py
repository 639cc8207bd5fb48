"""What a MIOH build tells its user (issue 9): README's sample summary is a real build's, every table fits 80
columns, an empty build shows its skipped cells before the error, and a 'None of the above' share that rounds
to nothing is a warning, not a silence."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from rich.console import Console

from builders import mioh
from builders.mioh import cli as mioh_cli
from tests.builders.test_cli_usability import assert_readable
from tests.fixtures.real_formats import make_coco

README = Path(__file__).resolve().parents[3] / "README.md"


def readme_sample() -> list[str]:
    """The fenced block of README.md that starts with ``MIOH build:``."""
    found = re.search(r"^```\n(MIOH build:.*?)^```$", README.read_text(encoding="utf-8"), re.S | re.M)
    assert found, "README.md has no sample MIOH summary block"
    return found.group(1).splitlines()


def summary_at(width: int, monkeypatch: pytest.MonkeyPatch, argv: list[str]) -> tuple[int, str]:
    """Run ``python -m builders.mioh ARGV`` with its summary on a ``width``-column terminal."""
    console = Console(file=__import__("io").StringIO(), width=width, color_system=None)
    monkeypatch.setattr(mioh_cli, "stdout", console)
    code = mioh.main([*argv, "--no-progress"])
    return code, console.file.getvalue()


@pytest.mark.slow
def test_readme_sample_is_the_summary_of_a_real_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # README's command, python -m builders.mioh --n-images 8, on a machine without CLIP weights (--no-clip
    # gives the same summary whatever weights this machine has)
    monkeypatch.chdir(tmp_path)  # the default --out, builds/mioh, as in README
    code, text = summary_at(80, monkeypatch, ["--n-images", "8", "--no-clip"])
    assert code == 0
    assert_readable(text)
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines == readme_sample(), "README's sample summary is stale: paste the output of COLUMNS=80 python -m builders.mioh --n-images 8"


def test_readme_comparison_can_fail() -> None:
    sample = readme_sample()
    assert sample[0] == "MIOH build: 576 items -> builds/mioh/n8-seed0"
    assert any("'None of the above' answers" in line for line in sample)
    assert any("paired items" in line for line in sample)  # issue 55


@pytest.fixture(scope="module")
def coco(tmp_path_factory):
    return make_coco(tmp_path_factory.mktemp("coco"))


def test_an_empty_build_prints_its_skipped_cells_before_the_error(coco, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    out = tmp_path / "out"
    # 10 images per question from a 12-image source, hard positives only: nothing can be built
    code = mioh.main(["--coco-rem", str(coco.annotations), "--coco-images", str(coco.images_dir),
                      "--n-images", "10", "--n-questions", "1", "--max-attempts", "3", "--tasks", "existence",
                      "attribute", "--pressures", "hard_positive", "--out", str(out), "--no-progress", "--no-clip"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    err = captured.err
    table, last = err[: err.rindex("error:")], err.strip().splitlines()[-1]
    assert_readable(table)
    assert last.startswith("error: the build produced no items: see the skipped tasks and cells above")
    assert "Skipped" in table
    for cell in ("existence/comprehensive/hard_positive", "existence/comparative/hard_positive",
                 "existence/selective/hard_positive"):
        assert re.search(rf"{cell} +│ 0/1 +│ \w", table), cell  # the cell, what it made, its main reason
    assert re.search(r"attribute +│ skipped +│ no paco data given", table)
    assert not out.exists()


def test_an_empty_mementos_build_prints_its_skipped_videos(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from PIL import Image

    from builders import mementos

    for comic in ("c1", "c2"):  # panels without a description: skipped at the description stage
        (tmp_path / "comics" / comic).mkdir(parents=True)
        for i in range(3):
            Image.new("RGB", (16, 16), (40 * i, 0, 0)).save(tmp_path / "comics" / comic / f"p{i}.png")
    monkeypatch.setenv("COLUMNS", "80")
    code = mementos.main(["--comics", str(tmp_path / "comics"), "--out", str(tmp_path / "out"),
                          "--cache-dir", str(tmp_path / "cache"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert_readable(err[: err.rindex("error:")])
    assert "Skipped videos" in err and re.search(r"description: .* +│ +2 │", err)
    assert err.strip().splitlines()[-1] == "error: the build produced no items: see the skipped videos above"
    assert not (tmp_path / "out").exists()


def test_a_nota_share_rounded_to_nothing_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--n-images", "2", "--tasks", "existence", "--pressures", "easy", "--demo-images", "120",
            "--no-clip", "--out", str(tmp_path)]
    code, text = summary_at(80, monkeypatch, [*base, "--n-questions", "2", "--nota-share", "0.2", "--name", "small"])
    err = capsys.readouterr().err
    assert code == 0
    stats = json.loads((tmp_path / "small" / "build.json").read_text())["stats"]["nota"]
    assert stats["answers"] == 0 and stats["eligible"] > 0 and stats["requested"] == 0.2
    assert "raise --n-questions" in stats["warning"]
    assert f"warning: {stats['warning']}" in " ".join(err.split())  # on stderr while building ...
    assert "warning: 'None of the above': --nota-share 0.2" in " ".join(text.split())  # ... and in the summary
    assert_readable(text)
    items = [json.loads(line) for line in (tmp_path / "small" / "items.jsonl").read_text().splitlines()]
    assert not any(it["options"] and it["options"][ord(it["answer"]) - 65] == "None of the above"
                   for it in items if len(it["answer"]) == 1)  # what the warning is about, seen independently

    code, text = summary_at(80, monkeypatch, [*base, "--n-questions", "5", "--nota-share", "0.2", "--name", "enough"])
    assert code == 0 and "warning" not in text and "warning" not in capsys.readouterr().err
    stats = json.loads((tmp_path / "enough" / "build.json").read_text())["stats"]["nota"]
    assert stats["answers"] > 0 and stats["warning"] is None
