"""A sixth benchmark as one package plus one registry line (``tests/toy_benchmark``): it builds, lints, has a twin,
is reviewed by three people in a real Label Studio, is released as parquet that ``datasets`` reads, and is scored,
with no other change to Mirage."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import require_annotation_extra, require_release_extra

require_annotation_extra()

from annotation.builddir import load_build  # noqa: E402
from annotation.config import ITEM_ID_FIELD  # noqa: E402
from annotation.pull import pull  # noqa: E402
from annotation.push import push  # noqa: E402
from builders import registry  # noqa: E402
from tests.annotation.lshelpers import reviewers_accept  # noqa: E402
from tests.toy_benchmark import checker  # noqa: E402
from tests.toy_benchmark.spec import SPEC  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture
def toy():
    registry.register(SPEC)  # the one registry line (an installed package says it in its entry points)
    yield SPEC
    registry.unregister(SPEC.name)


def _items(build_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (build_dir / "items.jsonl").read_text().splitlines()]


def test_a_sixth_benchmark_goes_from_build_to_score(toy, ls_server, files_root, tmp_path, monkeypatch, capsys):
    cache = tmp_path / "cache"
    builds = tmp_path / "builds"
    assert registry.load(toy.cli)(["--n-images", "8", "--out", str(builds), "--cache-dir", str(cache)]) == 0
    build_dir = builds / "n8-seed0"
    record = json.loads((build_dir / "build.json").read_text())
    assert record["benchmark"] == "toy" and record["items"] == 8
    assert "lint" in record  # every build is linted, the toy's too
    assert checker.wrong_answers(build_dir) == []
    planted = tmp_path / "planted"
    shutil.copytree(build_dir, planted)
    items = _items(planted)
    items[0]["answer"] = "ABCD"[("ABCD".index(items[0]["answer"]) + 1) % 4]
    (planted / "items.jsonl").write_text("".join(json.dumps(it) + "\n" for it in items))
    assert checker.wrong_answers(planted) == [items[0]["id"]]  # the checker can fail

    from lint.cli import main as lint

    assert lint([str(build_dir)]) == 0

    from builders.twin import main as twin

    assert twin([str(build_dir), "--out", str(tmp_path / "twins")]) == 0
    (twin_dir,) = [p.parent for p in (tmp_path / "twins").rglob("items.jsonl")]
    assert len(_items(twin_dir)) == 8 and checker.wrong_answers(twin_dir) == []
    assert not {it["id"] for it in _items(twin_dir)} & {it["id"] for it in _items(build_dir)}

    # three reviewers accept every item in a real Label Studio; pull resolves them
    admin = ls_server.client()
    build = load_build(build_dir)
    res = push(admin, build, "toy review", files_root=files_root, progress=False)
    ids = {t["data"][ITEM_ID_FIELD]: t["id"] for t in admin.iter_tasks(res.project_id)}
    assert set(ids) == {it.id for it in build.items}
    reviewers_accept(ls_server, ids, build.items, "toyreviewer")
    review = pull(admin, build, "toy review", accept_unverified=True).review  # a bare server: no ledger
    assert {e["status"] for e in review["items"].values()} == {"keep"}

    # released as parquet that datasets reads, with the toy's paper on its card
    require_release_extra()
    for var, value in (("HF_HOME", tmp_path / "hf"), ("HF_DATASETS_CACHE", tmp_path / "hf" / "datasets"),
                       ("HF_HUB_OFFLINE", "1"), ("MPLBACKEND", "Agg")):
        monkeypatch.setenv(var, str(value))
    from data_cards.cli import main as data_cards

    releases = tmp_path / "releases"
    assert data_cards(["release", str(build_dir), "--version", "1.0.0", "--out", str(releases)]) == 0
    (release,) = [p.parent for p in releases.rglob("manifest.json")]
    import datasets

    rows = datasets.load_dataset(str(release), split="test")
    assert sorted(rows["id"]) == sorted(ids) and set(rows["benchmark"]) == {"toy"}
    card = (release / "README.md").read_text()
    assert toy.paper.title in card and toy.pretty in card

    # scored by its own scorer through `python -m scoring toy`
    truth = {it.id: it.answer_text for it in build.items}
    wrong = sorted(truth)[0]
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text("".join(
        json.dumps({"id": i, "output": f"The answer is {'5' if i == wrong else text}.", "model": "m", "params": {}})
        + "\n" for i, text in truth.items()))
    from scoring.__main__ import main as scoring

    capsys.readouterr()
    assert scoring(["toy", "--release", str(release), "--predictions", str(predictions), "--out",
                    str(tmp_path / "results"), "--no-plots"]) == 0
    results = json.loads((tmp_path / "results" / "results.json").read_text())
    assert results["answered"] == 8 and results["accuracy"] == pytest.approx(7 / 8)
