"""The release summary (a table on stderr) is readable at 80 columns: no "…", no line wider than the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from data_cards.cli import main
from tests.builders.test_cli_usability import assert_readable

from .conftest import make_build


def test_release_table_fits_80_columns(tmp_path: Path, hf_env, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    tasks = ("existence", "a_task_with_a_name_longer_than_half_an_80_column_terminal_can_hold")
    build = make_build(tmp_path, tasks=tasks)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["release", str(build), "--version", "1.0.0", "--out", str(tmp_path / "releases")]) == 0
    err = capsys.readouterr().err
    table = err[: err.index("review_status")]
    assert_readable(table)
    assert "release mioh 1.0.0" in table and "│ total " in table and "[b]" not in table  # plain text, no markup
    assert "a_task_with_a_name_longer_than_half_an_80_column_terminal_can_hold" in "".join(
        line.strip("│ ").split("│")[0].strip() for line in table.splitlines() if line.startswith("│")
    )  # folded onto two lines, never cut
