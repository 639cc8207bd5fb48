"""VLMEvalKit itself (ms-vlmeval, VLMEvalKit's code packaged for PyPI) reads the exported sheets and scores them.

The release's ``harness/vlmevalkit/*.tsv`` go into a temporary ``$LMUData``; ``build_dataset(NAME)`` loads each as
``run.py --data NAME`` would, ``build_prompt`` writes every row's images to files and builds its message. Checked
against the release by plain code: the images VLMEvalKit decoded show the release's pixels, in order (rotated
circular rows included, whose image is a reference to the original row); the MCQ message has the hint (context),
question and lettered options; a yes/no message asks for yes or no. Then a stand-in's result sheet for the circular
sheet is scored by VLMEvalKit's own CircularEval (exact matching) and by ``python -m scoring.harness circular``:
the same circular accuracy.

VLMEvalKit lives in ``.venv-vlmevalkit`` (``.ci/install-harness.sh``); the test skips without it (fails in CI).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from scoring.harness.cli import main as harness_main
from tests.conftest import require, venv_imports
from tests.data_cards.conftest import make_build

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv-vlmevalkit" / "bin" / "python"
DRIVER = ROOT / "tests" / "support" / "vlmevalkit_driver.py"

pytestmark = pytest.mark.slow


def pixels(data_or_path) -> tuple:
    import io

    from PIL import Image

    source = io.BytesIO(data_or_path) if isinstance(data_or_path, bytes) else data_or_path
    with Image.open(source) as im:
        rgb = im.convert("RGB")
        return rgb.size, rgb.tobytes()


def test_vlmevalkit_reads_the_sheets_and_its_circular_eval_agrees(tmp_path, monkeypatch):
    require(venv_imports(VENV_PYTHON, "vlmeval.dataset"),
            "VLMEvalKit (.venv-vlmevalkit, importing vlmeval.dataset)", "bash .ci/install-harness.sh")
    import pandas as pd
    import pyarrow.parquet as pq

    from data_cards.release import release

    monkeypatch.setenv("MPLBACKEND", "Agg")
    rel = release(make_build(tmp_path, n_items=16), "1.0.0", out=tmp_path / "releases").path
    rows = {r["id"]: r for p in (rel / "data").rglob("*.parquet") for r in pq.read_table(p).to_pylist()}
    lmu = tmp_path / "LMUData"
    shutil.copytree(rel / "harness" / "vlmevalkit", lmu)
    sheets = {p.stem: pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False) for p in lmu.glob("*.tsv")}
    (circular,) = [n for n in sheets if n.endswith("_MCQ_CIRCULAR")][:1]
    records = sheets[circular].to_dict("records")
    # a stand-in that answers every rotation right but slips on the first rotated row
    slip = next(i for i, r in enumerate(records) if int(r["index"]) > 1_000_000)
    predictions = {str(r["index"]): r["answer"] for r in records}
    predictions[records[slip]["index"]] = "A" if records[slip]["answer"] != "A" else "B"
    (tmp_path / "predictions.json").write_text(json.dumps({circular: predictions}))

    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(LMUData=str(lmu), PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="1", HOME=str(tmp_path))
    proc = subprocess.run([str(VENV_PYTHON), str(DRIVER), str(tmp_path / "out"), str(tmp_path / "predictions.json"),
                           *sorted(sheets)], env=env, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads((tmp_path / "out" / "vlmevalkit.json").read_text())

    for name, frame in sheets.items():
        entry = report[name]
        assert entry["class"] == ("CustomMCQDataset" if "_MCQ" in name else "CustomVQADataset")
        for rec in frame.to_dict("records"):
            row, prompt = rows[rec["id"]], entry["prompts"][rec["index"]]
            assert [pixels(Path(p)) for p in prompt["images"]] == [pixels(im["bytes"]) for im in row["images"]]
            if "_MCQ" in name:
                options = [rec[c] for c in "ABCDEFGH" if c in rec and rec[c] != ""]
                assert ("Hint: " + row["context"] in prompt["text"]) == bool(row["context"])
                assert f"Question: {row['question']}\n" in prompt["text"]
                assert "".join(f"{c}. {o}\n" for c, o in zip("ABCDEFGH", options)) in prompt["text"]
                assert sorted(options) == sorted(row["options"])
            elif name.endswith("_YN"):
                assert prompt["text"].endswith("\nAnswer with yes or no.") and row["question"] in prompt["text"]

    # VLMEvalKit's CircularEval and Mirage's on the same result sheet
    vlm_overall = report[circular]["accuracy"]["Overall"][0]
    out = tmp_path / "mirage_circular.json"
    assert harness_main(["circular", report[circular]["result_sheet"], "--out", str(out)]) == 0
    mirage = json.loads(out.read_text())
    n = mirage["items"]
    assert mirage["circular_accuracy"] == pytest.approx((n - 1) / n) == pytest.approx(vlm_overall)
    assert mirage["vanilla_accuracy"] == 1.0
