"""The evaluation front end: predictions files (Mirage, lmms-eval ``--log_samples``, VLMEvalKit sheets), items
from a build dir / items.jsonl / release dir / Hub repo at a tag, and ``python -m scoring`` dispatch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.items import read_items
from scoring.__main__ import guess_format
from scoring.__main__ import main as score_main
from scoring.predictions import (
    Prediction,
    read_lmms_eval_samples,
    read_predictions,
    read_vlmevalkit_sheet,
    write_predictions,
)
from scoring.registry import scorer, scorers
from scoring.releases import load_items
from sources.errors import ConfigError

from .mioh_release import make_mioh_release


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory):
    return make_mioh_release(tmp_path_factory.mktemp("front"))


# ------------------------------------------------------------------------------------------------ predictions


def test_predictions_round_trip_and_legacy_key(tmp_path: Path) -> None:
    path = write_predictions(tmp_path / "p.jsonl", [Prediction("b", "B", "m", {"temperature": 0}), Prediction("a", "A")])
    assert path.read_text().splitlines()[0].startswith('{"id": "a"')  # sorted by id
    assert read_predictions(path)["b"] == Prediction("b", "B", "m", {"temperature": 0})
    (tmp_path / "old.jsonl").write_text('{"id": "x", "prediction": "text"}\n')
    assert read_predictions(tmp_path / "old.jsonl")["x"].output == "text"


@pytest.mark.parametrize(("content", "message"), [
    ('{"id": "a", "output": "A"}\nnot json\n', "line 2: not valid JSON"),
    ('{"id": "a"}\n', "line 1: expected a JSON object with 'id' and 'output'"),
    ('{"id": "a", "output": 3}\n', "line 1: 'output' must be a string"),
    ('{"id": "a", "output": "A", "params": []}\n', "line 1: 'params' must be a JSON object"),
    ('{"id": "a", "output": "A"}\n{"id": "a", "output": "B"}\n', "line 2: a second prediction for item a"),
])
def test_bad_predictions_name_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text(content)
    with pytest.raises(ConfigError, match=message) as exc:
        read_predictions(path)
    assert str(path) in str(exc.value) and "\n" not in str(exc.value)


def test_lmms_eval_samples(tmp_path: Path) -> None:
    """Lines as lmms-eval's ``--log_samples`` writes them (doc, target, resps nested, filtered_resps)."""
    rows = [
        {"doc_id": 0, "doc": {"id": "i1", "question": "q"}, "target": "B", "arguments": ["..."],
         "resps": [["The answer is (B)."]], "filtered_resps": ["The answer is (B)."], "accuracy": {"id": "i1"}},
        {"doc_id": 1, "doc": {"question": "q2"}, "target": "yes", "resps": [["Yes"]], "filtered_resps": ["Yes"]},
    ]
    path = tmp_path / "samples_mirage_mioh_existence.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    got = read_lmms_eval_samples(path, rows=["i1", "i2"], model="m")
    assert {k: v.output for k, v in got.items()} == {"i1": "The answer is (B).", "i2": "Yes"}
    assert got["i2"].params == {"harness": "lmms-eval", "doc_id": 1}
    assert guess_format(path) == "lmms-eval"
    with pytest.raises(ConfigError, match="line 2: the sample's doc has no 'id'"):
        read_lmms_eval_samples(path)


def test_vlmevalkit_sheets(tmp_path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame({"index": [0, 1], "question": ["q1", "q2"], "A": ["cat", "dog"], "B": ["dog", "cat"],
                          "answer": ["A", "B"], "prediction": ["A", "The answer is B"], "id": ["i1", "i2"]})
    tsv, csv = tmp_path / "m_MIRAGE.tsv", tmp_path / "m_MIRAGE.csv"
    frame.to_csv(tsv, sep="\t", index=False)
    frame.drop(columns=["id"]).to_csv(csv, index=False)
    assert {k: v.output for k, v in read_vlmevalkit_sheet(tsv).items()} == {"i1": "A", "i2": "The answer is B"}
    assert set(read_vlmevalkit_sheet(csv, index_to_id={0: "x", 1: "y"})) == {"x", "y"}
    with pytest.raises(ConfigError, match="no 'id' column and no index-to-id mapping"):
        read_vlmevalkit_sheet(csv)
    assert guess_format(tsv) == "vlmevalkit"
    frame.drop(columns=["prediction"]).to_csv(tsv, sep="\t", index=False)
    with pytest.raises(ConfigError, match="no 'prediction' column"):
        read_vlmevalkit_sheet(tsv)


# ------------------------------------------------------------------------------------------------ items


def test_load_items_from_build_items_and_release(released, tmp_path: Path) -> None:
    build, release_dir, by_key = released
    from_build = {it.id: it for it in load_items(build)}
    from_file = {it.id: it for it in load_items(build / "items.jsonl")}
    from_release = {it.id: it for it in load_items(release_dir, cache_dir=tmp_path / "cache")}
    assert set(from_build) == set(from_file) == set(from_release) == {it.id for it in by_key.values()}
    for item_id, it in from_release.items():
        original = from_build[item_id]
        assert (it.question, it.options, it.answer, it.context, it.pressure) == (
            original.question, original.options, original.answer, original.context, original.pressure)
        assert dict(it.provenance) == dict(original.provenance)
        # images: readable files, the build's bytes, in order
        assert [Path(p).read_bytes() for p in it.images] == [Path(p).read_bytes() for p in original.images]
        assert all(Path(p).is_absolute() for p in it.images)
    names_only = load_items(release_dir, cache_dir=tmp_path / "c2", with_images=False)
    assert not (tmp_path / "c2").exists() and all(not Path(p).is_absolute() for it in names_only for p in it.images)


@pytest.mark.parametrize(("make", "message"), [
    (lambda d: d / "missing", "no such file or directory"),
    (lambda d: d, "neither a build dir, an items.jsonl nor a release dir"),
])
def test_load_items_errors(tmp_path: Path, make, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_items(make(tmp_path))


@pytest.mark.slow
def test_load_items_from_the_hub_at_a_tag(released, tmp_path: Path, monkeypatch, capsys) -> None:
    """Publish the release to the Hub stand-in, then read ``org/name@v1.0.0`` through snapshot_download."""
    from data_cards.cli import main as cards_main
    from huggingface_hub import constants
    from tests.data_cards.hub_standin import HubStandIn

    home = tmp_path / "hf_home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(home / "hub"))
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    build, release_dir, by_key = released
    with HubStandIn(tokens=("hf_standin_write",)) as hub:
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        monkeypatch.setattr(constants, "ENDPOINT", hub.url)
        monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", hub.url + "/{repo_id}/resolve/{revision}/{filename}")
        monkeypatch.setenv("HF_TOKEN", "hf_standin_write")
        assert cards_main(["publish", str(release_dir), "--repo", "mirage-org/mioh"]) == 0
        items = load_items("mirage-org/mioh@v1.0.0", cache_dir=tmp_path / "cache")
        assert sorted(it.id for it in items) == sorted(it.id for it in by_key.values())
        from lint.cli import main as lint_main  # the lint reads the same snapshot, manifest.json included

        assert lint_main(["mirage-org/mioh@v1.0.0", "--out", str(tmp_path / "lint")]) == 0
        assert json.loads((tmp_path / "lint" / "lint.json").read_text())["items"] == len(items)
        with pytest.raises(ConfigError, match="mirage-org/mioh@v9.9.9"):
            load_items("mirage-org/mioh@v9.9.9", cache_dir=tmp_path / "cache")
    local = {it.id: it for it in load_items(release_dir, cache_dir=tmp_path / "local")}
    for it in items:
        assert [Path(p).read_bytes() for p in it.images] == [Path(p).read_bytes() for p in local[it.id].images]


# ------------------------------------------------------------------------------------------------ dispatch


def test_registry_and_unknown_benchmark(capsys) -> None:
    assert {"mioh", "mementos"} <= set(scorers())
    for name in scorers():
        module = scorer(name)
        assert callable(module.add_arguments) and callable(module.run) and callable(module.print_report)
    with pytest.raises(ConfigError, match="no scorer for benchmark 'nope'"):
        scorer("nope")
    with pytest.raises(SystemExit) as exc:
        score_main(["nope", "--release", "x", "--predictions", "y"])
    assert exc.value.code == 2 and "invalid choice: 'nope'" in capsys.readouterr().err


def test_help_lists_benchmarks_and_scorer_options(capsys) -> None:
    with pytest.raises(SystemExit):
        score_main(["mioh", "--help"])
    out = capsys.readouterr().out
    assert "--llm-fallback" in out and "--predictions FILE" in out and "mementos" in out


def test_lmms_eval_samples_score_like_mirage_predictions(released, tmp_path: Path) -> None:
    """The same outputs through an lmms-eval samples file and a Mirage file give the same results."""
    build, release_dir, by_key = released
    items = read_items(build / "items.jsonl")
    outputs = {it.id: ("The answer is (B)." if it.options else "yes") for it in items}
    write_predictions(tmp_path / "p.jsonl", [Prediction(i, o) for i, o in outputs.items()])
    (tmp_path / "samples_x.jsonl").write_text("".join(
        json.dumps({"doc_id": n, "doc": {"id": i}, "resps": [[o]], "filtered_resps": [o]}) + "\n"
        for n, (i, o) in enumerate(outputs.items())))
    for name in ("p.jsonl", "samples_x.jsonl"):
        assert score_main(["mioh", "--release", str(release_dir), "--predictions", str(tmp_path / name), "--out",
                           str(tmp_path / name.split(".")[0]), "--no-plots", "--cache-dir", str(tmp_path / "c")]) == 0
    a, b = (json.loads((tmp_path / d / "results.json").read_text()) for d in ("p", "samples_x"))
    assert a["table1"] == b["table1"] and a["decomposed"] == b["decomposed"]
    assert a["table1"]["overall"]["average"]["correct"] == 5  # answer B: e1, e4, e8, c3, c4


def test_llm_fallback_through_the_front_end(released, tmp_path: Path) -> None:
    """``--llm-fallback`` asks the configured model about unparsed answers only (cached through builders.llm)."""
    from tests.support.openai_stub import StubOpenAI

    build, release_dir, by_key = released
    items = read_items(build / "items.jsonl")
    outputs = {it.id: ("The second one, I reckon." if it.options else "Yes.") for it in items}
    write_predictions(tmp_path / "p.jsonl", [Prediction(i, o) for i, o in outputs.items()])
    with StubOpenAI(responder=lambda body: "B") as stub:
        assert score_main(["mioh", "--release", str(release_dir), "--predictions", str(tmp_path / "p.jsonl"),
                           "--out", str(tmp_path / "o"), "--no-plots", "--cache-dir", str(tmp_path / "c"),
                           "--llm-fallback", "--llm-model", "judge", "--llm-base-url", stub.base_url]) == 0
    results = json.loads((tmp_path / "o" / "results.json").read_text())
    assert len(stub.bodies) == 12  # the 12 unparsed multiple-choice outputs; "Yes." was parsed by the rules
    assert results["extraction"] == {"option": 12, "yes_no": 4} and results["llm_fallback"] is True
