"""Harness exports of a release: the lmms-eval task folder's YAMLs and the VLMEvalKit TSVs, read back the way the
harnesses read them (YAML with ``!function`` tags; ``pandas.read_csv(sep="\\t")``, base64 images, VLMEvalKit's
``index % 1e6`` circular groups) and checked against the release's parquet rows by plain code.

The circular checker re-derives what a rotation must satisfy without Mirage's rotation code, and is shown to catch
a planted wrong answer letter and a moved "None of the above".
"""

from __future__ import annotations

import ast
import base64
import json
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from builders.semantics.format import is_yes_no
from data_cards.harness.rows import row_item
from scoring.harness.cli import main as export_main
from tests.conftest import require_release_extra
from tests.data_cards.conftest import make_build

REPO = "mirage-org/mioh"
FIXED = ("None of the above", "I don't know", "Sorry, I can't help with it")


class _Loader(yaml.SafeLoader):
    """lmms-eval's YAML: ``!function module.name`` kept as the text ``module.name``."""


_Loader.add_constructor("!function", lambda loader, node: "!function " + loader.construct_scalar(node))


def load_yaml(path: Path) -> dict:
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 - the SafeLoader subclass


def release_rows(release_dir: Path) -> dict[str, dict]:
    """``{id: row}`` of the release's parquet shards, with the image bytes."""
    import pyarrow.parquet as pq

    return {r["id"]: r for p in sorted((release_dir / "data").rglob("*.parquet")) for r in pq.read_table(p).to_pylist()}


def read_sheet(path: Path) -> list[dict]:
    import pandas as pd

    return pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False).to_dict("records")


def decoded_images(cell: str) -> list[bytes]:
    """What VLMEvalKit's ``toliststr`` + ``decode_base64_to_image`` start from: one base64 string or a list."""
    values = ast.literal_eval(cell) if cell.startswith("[") else [cell]
    return [base64.b64decode(v) for v in values]


@pytest.fixture(scope="module")
def released(tmp_path_factory) -> Path:
    """One release for the whole module (the tests only read it)."""
    from data_cards.release import release
    require_release_extra()

    tmp = tmp_path_factory.mktemp("harness")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MPLBACKEND", "Agg")
        return release(make_build(tmp, n_items=16), "1.0.0", out=tmp / "releases", repo_id=REPO).path


def test_release_writes_lmms_eval_folder_listed_in_manifest(released):
    rows = release_rows(released)
    folder = released / "harness" / "lmms_eval"
    manifest = json.loads((released / "manifest.json").read_text())
    for path in folder.iterdir():
        assert f"harness/lmms_eval/{path.name}" in manifest["files"]
    tasks = sorted({r["task"] for r in rows.values()})
    group = load_yaml(folder / "_group.yaml")
    assert group["group"] == "mirage_mioh" and group["task"] == [f"mirage_mioh_{t}" for t in tasks]
    assert [m["metric"] for m in group["aggregate_metric_list"]] == ["accuracy", "unparsed_rate"]
    for task in tasks:
        config = load_yaml(folder / f"{task}.yaml")
        assert config["task"] == f"mirage_mioh_{task}" and config["dataset_path"] == REPO
        assert config["dataset_name"] == task and config["dataset_kwargs"] == {"revision": "v1.0.0"}
        assert config["test_split"] == "test" and config["output_type"] == "generate_until"
        for hook in ("doc_to_visual", "doc_to_text", "doc_to_target", "process_results"):
            assert config[hook] == f"!function utils.{hook}"
        pressures = sorted({r["pressure"] for r in rows.values() if r["task"] == task})
        metrics = [m["metric"] for m in config["metric_list"]]
        assert metrics[:1 + len(pressures)] == ["accuracy", *(f"acc_{p}" for p in pressures)]
        # by the item semantics: a "no" given in review to a question declared open ("vqa") is no yes/no item
        has_yes_no = any(is_yes_no(row_item(r)) for r in rows.values() if r["task"] == task)
        assert ("yes_ratio" in metrics) == has_yes_no
        assert all(m["aggregation"] == "!function utils.mean_of_values" for m in config["metric_list"])
    readme = (released / "harness" / "README.md").read_text()
    assert "harness/README.md" in manifest["files"] and f"{REPO}@v1.0.0" in readme and "mirage_mioh" in readme
    utils = (folder / "utils.py").read_text()
    assert "from scoring.harness.lmms_eval_utils import" in utils and "pip install mirage-bench" in utils


def test_process_results_scores_the_models_answers(released):
    """Hand-computed: yes_ratio is the share of the MODEL's yes/no answers that are yes, not the truth's."""
    from scoring.harness.lmms_eval_utils import make_process_results, mean_of_values

    process = make_process_results(("easy", "hard_negative", "sycophantic"))
    rows = [r for r in release_rows(released).values() if is_yes_no(row_item(r))][:3]
    assert len(rows) == 3
    outputs = ["Yes, there is.", "The answer is yes", "Hmm, notice the colours."]
    per_doc = [process(r, [o]) for r, o in zip(rows, outputs)]
    yes_ratio = mean_of_values([d["yes_ratio"] for d in per_doc])
    assert yes_ratio == 1.0  # two yes answers, the third is unparsed ("no" is not found inside "notice")
    assert [d["unparsed_rate"]["value"] for d in per_doc] == [0.0, 0.0, 1.0]
    truth_yes = [r["answer"] == "yes" for r in rows[:2]]
    assert mean_of_values([d["accuracy"] for d in per_doc]) == pytest.approx(sum(truth_yes) / 3)
    assert all(d["accuracy"]["id"] == r["id"] for d, r in zip(per_doc, rows))
    pressure = rows[0]["pressure"]
    others = [p for p in ("easy", "hard_negative", "sycophantic") if p != pressure]
    assert per_doc[0][f"acc_{pressure}"]["value"] is not None
    assert all(per_doc[0][f"acc_{p}"]["value"] is None for p in others)
    assert mean_of_values([{"value": None}]) != mean_of_values([{"value": None}])  # NaN: nothing applies


def test_controls_have_their_own_metric_and_category(released):
    """A linguistic item whose context is true (MIOH's control, ``context_truth``) counts in
    ``acc_<pressure>_control`` and not in ``acc_<pressure>`` (the paper's misleading-context accuracy); VLMEvalKit
    sees it under ``<pressure> (control)``."""
    from data_cards.harness.rows import ReleaseTask
    from data_cards.harness.vlmevalkit import _common
    from scoring.harness.lmms_eval_utils import make_process_results

    row = next(r for r in release_rows(released).values() if is_yes_no(row_item(r)))
    truth = {"yes": "Yes.", "no": "No."}[row["answer"]]
    process = make_process_results((row["pressure"],), (row["pressure"],))
    control = dict(row, provenance=json.dumps({"context_truth": "true"}))
    misleading = dict(row, provenance=json.dumps({"context_truth": "false"}))
    name = f"acc_{row['pressure']}"
    assert process(control, [truth])[name]["value"] is None
    assert process(control, [truth])[name + "_control"]["value"] == 1.0
    assert process(misleading, [truth])[name]["value"] == 1.0
    assert process(misleading, [truth])[name + "_control"]["value"] is None
    assert ReleaseTask("t", "t", "all", [control, misleading]).control_pressures == [row["pressure"]]
    assert ReleaseTask("t", "t", "all", [misleading]).control_pressures == []
    assert _common(control, 0)["l2-category"] == row["pressure"] + " (control)"
    assert _common(control, 0)["context_truth"] == "true" and "context_truth" not in _common(row, 0)


def test_vlmevalkit_sheets_round_trip(released):
    rows = release_rows(released)
    folder = released / "harness" / "vlmevalkit"
    seen = set()
    for sheet in sorted(folder.glob("*.tsv")):
        if sheet.stem.endswith("_CIRCULAR"):
            continue
        form = sheet.stem.rsplit("_", 1)[1]
        records = read_sheet(sheet)
        assert [int(r["index"]) for r in records] == list(range(1, len(records) + 1))
        for rec in records:
            row = rows[rec["id"]]
            seen.add(rec["id"])
            assert decoded_images(rec["image"]) == [im["bytes"] for im in row["images"]]
            names = ast.literal_eval(rec["image_path"]) if rec["image_path"].startswith("[") else [rec["image_path"]]
            assert len(names) == len(row["images"])
            assert rec["category"] == row["task"] and rec["l2-category"] == row["pressure"]
            assert rec["hint"] == row["context"]
            if form == "MCQ":
                options = [rec[c] for c in "ABCDEFGH" if c in rec and rec[c] != ""]
                assert options == row["options"] and rec["answer"] == row["answer"]
                assert rec["question"] == row["question"]
            elif form == "YN":
                assert rec["answer"] == {"yes": "Yes", "no": "No"}[row["answer"]]
            else:
                assert form == "VQA" and rec["answer"] == row["answer"]
            if form != "MCQ":
                asked = f"{row['context']}\n{row['question']}" if row["context"] else row["question"]
                assert rec["question"] == (f"{asked}\nAnswer with yes or no." if form == "YN" else asked)
    assert seen == set(rows)


def check_circular(records: list[dict], rows: dict[str, dict]) -> list[str]:
    """Problems in a circular sheet, re-derived from the release rows by plain code."""
    problems = []
    groups: dict[int, list[dict]] = defaultdict(list)
    for rec in records:
        groups[int(rec["index"]) % 1_000_000].append(rec)
    for base, members in groups.items():
        main = [m for m in members if int(m["index"]) == base]
        if len(main) != 1:
            problems.append(f"group {base}: {len(main)} original rows")
            continue
        row = rows[main[0]["id"]]
        options = row["options"]
        movable = [i for i, o in enumerate(options) if o not in FIXED]
        if len(members) != (len(movable) if len(movable) >= 2 else 1):
            problems.append(f"group {base}: {len(members)} rotations for {len(movable)} movable options")
        truth = options["ABCDEFGH".index(row["answer"])]
        at_position = defaultdict(set)
        for m in members:
            shown = [m[c] for c in "ABCDEFGH" if c in m and m[c] != ""]
            if m["id"] != row["id"] or sorted(shown) != sorted(options):
                problems.append(f"row {m['index']}: not the item's options")
                continue
            if shown["ABCDEFGH".index(m["answer"])] != truth:
                problems.append(f"row {m['index']}: answer {m['answer']} is not the true option {truth!r}")
            if any(shown[i] != options[i] for i, o in enumerate(options) if o in FIXED):
                problems.append(f"row {m['index']}: a fixed option moved")
            if int(m["index"]) != base and m["image"] != str(base):
                problems.append(f"row {m['index']}: image is not a reference to row {base}")
            for i in movable:
                at_position[i].add(shown[i])
        if len(movable) >= 2 and any(len(v) != len(movable) for v in at_position.values()):
            problems.append(f"group {base}: some option never reaches some position")
    return problems


def test_circular_sheet_rotates_content_options_only(released):
    rows = release_rows(released)
    sheets = sorted((released / "harness" / "vlmevalkit").glob("*_MCQ_CIRCULAR.tsv"))
    assert sheets
    for sheet in sheets:
        records = read_sheet(sheet)
        assert check_circular(records, rows) == []
        plain = read_sheet(sheet.with_name(sheet.name.replace("_CIRCULAR", "")))
        assert [r for r in records if int(r["index"]) < 1_000_000] == [dict(r, rotation="0") for r in plain]
        assert any(int(r["index"]) > 1_000_000 for r in records)


def test_circular_checker_catches_planted_errors(released):
    rows = release_rows(released)
    (sheet,) = sorted((released / "harness" / "vlmevalkit").glob("*_MCQ_CIRCULAR.tsv"))[:1]
    records = read_sheet(sheet)
    rotated = next(i for i, r in enumerate(records) if int(r["index"]) > 1_000_000)
    wrong = [dict(r) for r in records]
    wrong[rotated]["answer"] = "C" if wrong[rotated]["answer"] != "C" else "A"
    assert any("is not the true option" in p for p in check_circular(wrong, rows))
    moved = [dict(r) for r in records]
    rec = moved[rotated]
    nota = next(c for c in "ABC" if rec[c] == "None of the above")
    other = next(c for c in "ABC" if c != nota)
    rec[nota], rec[other] = rec[other], rec[nota]
    assert any("fixed option moved" in p for p in check_circular(moved, rows))


def test_export_command_reproduces_the_release_harness(released, tmp_path, capsys):
    out = tmp_path / "exported"
    assert export_main(["export", str(released), "--out", str(out)]) == 0
    mine = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    shipped = {p.relative_to(released / "harness").as_posix(): p.read_bytes()
               for p in (released / "harness").rglob("*") if p.is_file()}
    assert mine == shipped
    assert export_main(["export", str(released), "--out", str(out), "--repo", "other/name", "--version", "2.0.0"]) == 0
    config = load_yaml(out / "lmms_eval" / "counting.yaml")
    assert config["dataset_path"] == "other/name" and config["dataset_kwargs"]["revision"] == "v2.0.0"
    assert not list(tmp_path.glob("*.partial"))
    capsys.readouterr()


@pytest.mark.parametrize("args, message", [
    (["{release}", "--out", "{release}/harness2"], "inside the release"),
    (["{tmp}"], "not a release dir"),
    (["{release}", "--repo", "no-slash", "--out", "{tmp}/x"], "expected ORG/NAME"),
    (["{release}", "--version", "1.0", "--out", "{tmp}/x"], "not a semantic version"),
])
def test_export_command_errors_are_one_line(released, tmp_path, capsys, args, message):
    argv = ["export", *(a.format(release=released, tmp=tmp_path) for a in args)]
    assert export_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not (released / "harness2").exists()


def _result_sheet(path: Path, records: list[dict], predictions: list[str]) -> Path:
    """A VLMEvalKit result sheet (PRED_FORMAT=tsv): the dataset's columns without images, plus ``prediction``."""
    import pandas as pd

    frame = pd.DataFrame([{k: v for k, v in r.items() if k != "image"} | {"prediction": p}
                          for r, p in zip(records, predictions)])
    frame.to_csv(path, sep="\t", index=False)
    return path


def test_circular_result_sheet_is_scored_per_rotation(released, tmp_path, capsys):
    """CircularEval by hand: truth scores 1; a slip in one rotation costs that item; always-"A" keeps only the
    items whose every rotation has its answer under A; an unparsed row is counted and wrong."""
    sheet = sorted((released / "harness" / "vlmevalkit").glob("*_MCQ_CIRCULAR.tsv"))[0]
    records = read_sheet(sheet)
    groups = defaultdict(list)
    for r in records:
        groups[int(r["index"]) % 1_000_000].append(r)
    n = len(groups)
    truth = [f"The answer is ({r['answer']})." for r in records]
    slip = list(truth)
    first_rotated = next(i for i, r in enumerate(records) if int(r["index"]) > 1_000_000)
    slip[first_rotated] = "B" if records[first_rotated]["answer"] != "B" else "A"
    slip[0] = "Hmm, let me think about the colours."
    slipped = {int(records[i]["index"]) % 1_000_000 for i in (0, first_rotated)}
    always_a = ["A"] * len(records)
    expected_a = sum(all(r["answer"] == "A" for r in g) for g in groups.values()) / n
    expected_a_vanilla = sum(r["answer"] == "A" for r in records if int(r["index"]) < 1_000_000) / n
    for predictions, circular, vanilla, unparsed in [
        (truth, 1.0, 1.0, 0),
        (slip, (n - len(slipped)) / n, (n - 1) / n, 1),
        (always_a, expected_a, expected_a_vanilla, 0),
    ]:
        path = _result_sheet(tmp_path / "model_sheet.tsv", records, predictions)
        out = tmp_path / "circular.json"
        assert export_main(["circular", str(path), "--out", str(out)]) == 0
        got = json.loads(out.read_text())
        assert got["items"] == n and got["rows"] == len(records) and got["unparsed"] == unparsed
        assert got["circular_accuracy"] == pytest.approx(circular, abs=1e-6)
        assert got["vanilla_accuracy"] == pytest.approx(vanilla, abs=1e-6)
    assert expected_a < 1.0  # always-"A" loses items once their answer rotates away from A
    assert "CircularEval" in capsys.readouterr().out


def test_one_task_release_names_the_all_config(tmp_path):
    """A release of one task has no per-task config: its lmms-eval task reads ``all``."""
    require_release_extra()
    from data_cards.release import release

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("MPLBACKEND", "Agg")
        rel = release(make_build(tmp_path, n_items=6, tasks=("existence",)), "0.2.0", out=tmp_path / "r").path
    folder = rel / "harness" / "lmms_eval"
    assert sorted(p.name for p in folder.glob("*.yaml")) == ["_group.yaml", "existence.yaml"]
    config = load_yaml(folder / "existence.yaml")
    assert config["dataset_name"] == "all" and config["dataset_path"] == "ORG/NAME"
    assert config["dataset_kwargs"] == {"revision": "v0.2.0"}
    assert load_yaml(folder / "_group.yaml")["task"] == ["mirage_mioh_existence"]


def test_export_of_a_corrupt_release_is_one_line(tmp_path, capsys):
    require_release_extra()
    shard = tmp_path / "rel" / "data" / "test-00000-of-00001.parquet"
    shard.parent.mkdir(parents=True)
    shard.write_bytes(b"not a parquet file")
    argv = ["export", str(tmp_path / "rel"), "--version", "1.0.0", "--name", "x", "--out", str(tmp_path / "out")]
    assert export_main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert str(shard) in err and "cannot read the release shard" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists() and not (tmp_path / "out.partial").exists()
