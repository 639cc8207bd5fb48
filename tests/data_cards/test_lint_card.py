"""The data card carries the build's lint (build.json "lint") as its "Lint" section."""

from __future__ import annotations

from builders.lint import lint_build_dir
from data_cards.release import release
from tests.data_cards.conftest import make_build


def test_card_has_the_lint_section(tmp_path, hf_env):
    build = make_build(tmp_path, n_items=8)
    section = lint_build_dir(build)
    res = release(build, "1.0.0", out=tmp_path / "rel")
    card = (res.path / "README.md").read_text(encoding="utf-8")
    lint_part = card.split("#### Lint", 1)[1].split("####", 1)[0]
    assert "| check | flagged | finding |" in lint_part
    for name, check in section["checks"].items():
        assert f"| `{name}` | {check['flagged']} |" in lint_part


def test_card_of_an_unlinted_build_says_so(tmp_path, hf_env):
    res = release(make_build(tmp_path, n_items=8), "1.0.0", out=tmp_path / "rel")
    assert "This build was not linted" in (res.path / "README.md").read_text(encoding="utf-8")


def test_lint_command_reads_a_release(tmp_path, hf_env, capsys):
    from lint.cli import main

    build = make_build(tmp_path, n_items=8)
    res = release(build, "1.0.0", out=tmp_path / "rel")
    assert main([str(res.path), "--out", str(tmp_path / "o")]) == 0
    assert "Lint of" in capsys.readouterr().out
    rows = (tmp_path / "o" / "issues.jsonl").read_text().splitlines()
    assert len(rows) == res.num_items


def test_lint_of_a_release_keeps_the_builds_promises(tmp_path, hf_env):
    """A by-design answer the build promised (build.json ``lint_promises``) travels in manifest.json, so linting the
    release notes it as the build's lint did instead of flagging it."""
    import json

    from lint.cli import main

    build = make_build(tmp_path, n_items=8, reviewed=False, tasks=("existence",))
    record = json.loads((build / "build.json").read_text())
    record["lint_promises"] = {"fixed_answers": {"existence": {"answer": "yes", "why": "a test's design"}}}
    (build / "build.json").write_text(json.dumps(record))
    built = lint_build_dir(build)
    assert "mioh/existence (yes_no) is answered 'yes' by design in 4 of 4 items (a test's design)" in built["notes"][-1]
    res = release(build, "1.0.0", out=tmp_path / "rel", include_unreviewed=True)
    assert json.loads((res.path / "manifest.json").read_text())["build"]["lint_promises"] == record["lint_promises"]
    assert main([str(res.path), "--out", str(tmp_path / "o")]) == 0
    section = json.loads((tmp_path / "o" / "lint.json").read_text())
    assert section["notes"] == built["notes"] and section["flagged_items"] == built["flagged_items"]
