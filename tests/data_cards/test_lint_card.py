"""The data card carries the build's lint (build.json "lint") as its "Lint" section, and the blind audit as "Can it
be answered without the images?"."""

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
    assert "mioh/existence is answered 'yes' by design in 4 of 6 items (a test's design)" in built["notes"][-1]
    res = release(build, "1.0.0", out=tmp_path / "rel", include_unreviewed=True)
    assert json.loads((res.path / "manifest.json").read_text())["build"]["lint_promises"] == record["lint_promises"]
    assert main([str(res.path), "--out", str(tmp_path / "o")]) == 0
    section = json.loads((tmp_path / "o" / "lint.json").read_text())
    assert section["notes"] == built["notes"] and section["flagged_items"] == built["flagged_items"]


def test_card_and_lint_json_show_the_cells_answerable_blind(tmp_path, hf_env):
    """Every yes/no item of make_build is "yes": a text-only learner answers those tasks blind. The card names the
    flagged cells with the learner's figure, and ``python -m lint --out`` writes them as ``blind.cells``."""
    import json

    from lint.cli import main
    from tests.conftest import have, require

    require(have("sklearn"), "scikit-learn (the blind audit's learner)", "pip install -e '.[lint]'")
    build = make_build(tmp_path, n_items=80, reviewed=False)
    section = lint_build_dir(build)
    flagged = [c for c in section["blind"]["cells"] if c["flagged"]]
    assert {c["cell"] for c in flagged} >= {"mioh/existence", "mioh/counting"}
    res = release(build, "1.0.0", out=tmp_path / "rel", include_unreviewed=True)
    card = (res.path / "README.md").read_text(encoding="utf-8")
    part = card.split("#### Can it be answered without the images?", 1)[1].split("####", 1)[0]
    overall = section["blind"]["overall"]
    assert f"right on {overall['accuracy']:.0%} of {overall['n']} items against {overall['chance']:.0%}" in part
    assert f"{len(flagged)} of {len(section['blind']['cells'])} cells are flagged" in part
    for cell in flagged:
        assert f"| {cell['cell']} | {cell['n']} | {cell['chance']:.0%} | {cell['accuracy']:.0%} (" in part

    assert main([str(build), "--out", str(tmp_path / "o")]) == 0
    cells = json.loads((tmp_path / "o" / "lint.json").read_text())["blind"]["cells"]
    assert all({"cell", "n", "chance", "accuracy", "low95", "flagged"} <= set(c) for c in cells)
    by_name = {c["cell"]: c for c in cells}
    assert by_name["mioh/existence"]["flagged"] and by_name["mioh/existence"]["low95"] > by_name["mioh/existence"]["chance"] + 0.05
    assert [c["cell"] for c in cells if c["flagged"]] == [c["cell"] for c in flagged]


def test_card_says_when_open_items_accept_several_answers():
    from builders.items import make_item
    from data_cards.card_limitations import derived_limitations
    from data_cards.statistics import compute_stats

    def vqa(accepted):
        return make_item(benchmark="reefknot", task="cognition", question_type="vqa", pressure="none",
                         images=[f"{len(accepted)}.jpg"], question="What is the relation between the arrow and the box?",
                         options=(), answer=f"The arrow is {accepted[0]} the box.",
                         provenance={"accepted_answers": [f"The arrow is {a} the box." for a in accepted]})

    items = [vqa(["pointing at", "above"]), vqa(["covering"])]
    status = {it.id: "keep" for it in items}
    text = derived_limitations(compute_stats(items, status), {"benchmark": "reefknot"})
    assert "- 1 open-answer items have more than one true answer" in text
    assert "accepted_answers" not in derived_limitations(compute_stats(items[1:], status), {"benchmark": "reefknot"})
