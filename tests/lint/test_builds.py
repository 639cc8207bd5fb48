"""Every build is linted at its end (build.json "lint", the summary table); the demo builds of MIOH and Mementos
lint clean; lint never changes items.jsonl."""

from __future__ import annotations

import hashlib
import json

import pytest

from builders.items import make_item
from builders.lint import lint_build_dir
from builders.run import open_build


def test_open_build_lints_and_leaves_items_untouched(tmp_path):
    items = [make_item(benchmark="t", task="x", question_type="yes_no", pressure="easy", images=["a.jpg"],
                       question=q, options=(), answer="yes") for q in ("Is there a dog?", "Is there a  dog?")]
    with open_build(tmp_path, "b") as out:
        out.write_items(items)
        out.write_json("build.json", {"benchmark": "t"})
    before = (tmp_path / "b" / "items.jsonl").read_bytes()
    section = json.loads((tmp_path / "b" / "build.json").read_text())["lint"]
    assert section["checks"]["duplicates"]["flagged"] == 2 and not section["clean"]
    lint_build_dir(tmp_path / "b")
    assert (tmp_path / "b" / "items.jsonl").read_bytes() == before


def _build_with_cache(tmp_path, questions, promises=None):
    items = [make_item(benchmark="t", task="x", question_type="yes_no", pressure="easy", images=["a.jpg"],
                       question=q, options=(), answer="yes") for q in questions]
    with open_build(tmp_path / "out", "b", tmp_path / "cache") as out:
        out.write_items(items)
        out.write_json("build.json", {"benchmark": "t", "seconds": len(questions), **(promises or {})})
    return json.loads((tmp_path / "out" / "b" / "build.json").read_text())["lint"]


def test_a_rebuild_of_the_same_items_reuses_the_lint(tmp_path):
    """The same items and promises: the earlier section, marked reused; other items, other promises or a
    damaged entry: the lint runs again."""
    from builders.lint.cache import FOLDER

    first = _build_with_cache(tmp_path, ["Is there a dog?", "Is there a  dog?"])
    assert "cache" not in first and first["checks"]["duplicates"]["flagged"] == 2
    again = _build_with_cache(tmp_path, ["Is there a dog?", "Is there a  dog?"])
    assert again.pop("cache") == "reused" and again == first
    other = _build_with_cache(tmp_path, ["Is there a dog?", "Is there a cat?"])
    assert "cache" not in other and other["checks"]["duplicates"]["flagged"] == 0
    promised = _build_with_cache(tmp_path, ["Is there a dog?", "Is there a  dog?"], {"lint_promises": {"x": 1}})
    assert "cache" not in promised
    for entry in (tmp_path / "cache" / FOLDER).glob("*.json"):  # a torn entry is a miss, and is rewritten
        entry.write_text(entry.read_text()[:20])
    torn = _build_with_cache(tmp_path, ["Is there a dog?", "Is there a  dog?"])
    assert "cache" not in torn and torn == first
    assert _build_with_cache(tmp_path, ["Is there a dog?", "Is there a  dog?"]).get("cache") == "reused"


DEMO_ITEMS_SHA256 = {
    ("mioh", None): "8d81c46aaf05792750f06d5443652d68e2ac1e8ea52aaddc1206796f55935631",
    ("mementos", "decord"): "c3c754032a36c7ef79a695912ee72fd36a3bd5ae537a4391734e59efc9c6ee5d",
}
"""items.jsonl of the demo builds, by the video decoder the build used (Mementos' items name it in their
provenance, and its frames come from it; MIOH decodes no video). A build by a decoder not listed here is checked
for everything else."""


@pytest.mark.slow
@pytest.mark.parametrize("module, name", [("mioh", "n4-seed0"), ("mementos", "demo-seed0")])
def test_demo_build_lints_clean_but_for_its_blind_cells(tmp_path, capsys, module, name):
    """The demo builds have no wording, duplicate, option or balance fault, and no cell a text-only learner answers
    blind (issue 40); the audit's table is in the summary."""
    import importlib

    from tests.conftest import have

    main = importlib.import_module(f"builders.{module}").main
    assert main(["--out", str(tmp_path), "--no-progress"]) == 0
    items = (tmp_path / name / "items.jsonl").read_bytes()
    backends = {json.loads(line)["provenance"].get("backend") for line in items.splitlines()}
    expected = DEMO_ITEMS_SHA256.get((module, backends.pop() if len(backends) == 1 else "several"))
    assert expected is None or hashlib.sha256(items).hexdigest() == expected
    section = json.loads((tmp_path / name / "build.json").read_text())["lint"]
    out = capsys.readouterr().out
    assert all(c["flagged"] == 0 for n, c in section["checks"].items() if n != "independence"), section
    assert [f for f in section["findings"] if not f.startswith("answerable blind: ")] == []
    blind = section["blind"]
    if not have("sklearn"):
        assert blind["off"] and "not audited" in out
        return
    if module == "mementos":  # open descriptions only: audited by the baseline that writes the reference
        assert [c["cell"] for c in blind["cells"] if c.get("open")] == ["mementos/daily_life:open"]
        assert blind["open_items"] == section["items"]
        assert blind["flagged"] == []
        assert section["clean"] and "Lint: clean" in out
        return
    assert {c["cell"] for c in blind["cells"]} >= {"mioh/existence", "mioh/counting pressure=sycophantic",
                                                    "mioh/position type=selective"}
    assert "Could it be answered without the images?" in out
    flagged = [c["cell"] for c in blind["cells"] if c["flagged"]]
    assert blind["flagged"] == flagged
    assert flagged == [] and section["clean"]  # issue 40: no cell of the default build answerable blind
