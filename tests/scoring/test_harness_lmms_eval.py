"""The exported lmms-eval task folder run by the real lmms-eval (PyPI) gives the numbers of ``python -m scoring``.

A small MIOH demo build is released (its ``harness/lmms_eval/`` written by the release) and published to the
in-process Hub stand-in, so lmms-eval reads the exported YAMLs unchanged: ``load_dataset("mirage-org/mioh",
<task config>, revision="v1.0.0")`` over loopback. A stand-in model answers from one fixed mapping (truth in
several dresses, wrong letters, option text, a thinking block, unparseable text); the same mapping, as a Mirage
predictions file, is scored by ``python -m scoring mioh``. Every per-task accuracy, accuracy per pressure, the
group's accuracy and the unparsed rate must agree; and lmms-eval's own ``--log_samples`` file, read back by
:mod:`scoring.predictions`, must score to the same tables.

lmms-eval lives in ``.venv-lmms-eval`` (``.ci/install-harness.sh``); the test skips without it (fails in CI).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from builders.items import OPTION_LETTERS
from tests.conftest import require, venv_imports
from tests.data_cards.test_publish import TOKEN, hub, hub_env  # noqa: F401 - fixtures: the Hub stand-in

ROOT = Path(__file__).resolve().parents[2]
VENV_PYTHON = ROOT / ".venv-lmms-eval" / "bin" / "python"
DRIVER = ROOT / "tests" / "support" / "lmms_eval_driver.py"
REPO = "mirage-org/mioh"

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::DeprecationWarning")]


YES_NO_STYLES = (("Yes.", "yes"), ("No, there is none.", "no"), ("The answer is yes", "yes"),
                 ("Hmm, notice the colours.", None), ("truth", "truth"))
"""Outputs for yes/no items and the answer each one gives (``None``: unparsed; "truth": the item's answer)."""


def answer_for(n: int, item) -> str:
    """Output number ``n`` of the fixed mapping: a mix of answer styles, right and wrong, and unparseable ones."""
    if item.answer in ("yes", "no"):
        text, _ = YES_NO_STYLES[n % len(YES_NO_STYLES)]
        return item.answer.capitalize() + "." if text == "truth" else text
    letters = OPTION_LETTERS[: len(item.options)]
    wrong = letters[(letters.index(item.answer) + 1) % len(letters)]
    styles = [
        f"The answer is ({item.answer}).",
        wrong,
        f"<think>Maybe {wrong}? Let me check every image again.</think>\nFinal answer: {item.answer}",
        "I would rather describe the scene: a park with trees.",
        item.answer_text,
        f"**{wrong}**",
        f"{item.answer}. {item.answer_text}",
    ]
    return styles[n % len(styles)]


def expected_yes_ratio(items: list, task: str) -> float:
    """The share of "yes" among the yes/no answers the mapping gives in ``task`` (from the styles, by hand)."""
    given = []
    for n, it in enumerate(items):
        if it.task == task and it.answer in ("yes", "no"):
            _, says = YES_NO_STYLES[n % len(YES_NO_STYLES)]
            says = it.answer if says == "truth" else says
            if says is not None:
                given.append(says == "yes")
    return sum(given) / len(given)


@pytest.fixture
def released(tmp_path: Path, hub, monkeypatch) -> tuple[Path, list]:  # noqa: F811 - the imported fixture
    from builders import mioh
    from data_cards.publish import publish
    from data_cards.release import release
    from scoring.releases import load_items

    out = tmp_path / "builds"
    assert mioh.main(["--n-questions", "1", "--demo-images", "100", "--decomposed", "--out", str(out), "--name", "small",
                      "--cache-dir", os.environ["MIRAGE_CACHE_DIR"], "--no-progress"]) == 0
    rel = release(out / "small", "1.0.0", include_unreviewed=True, repo_id=REPO, out=tmp_path / "releases").path
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    publish(rel, REPO)
    monkeypatch.delenv("HF_TOKEN")
    return rel, load_items(rel, cache_dir=tmp_path / "cache")


def run_lmms_eval(hub_url: str, include_path: Path, answers: dict[str, str], out: Path) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    (out / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(HF_ENDPOINT=hub_url, HF_HOME=str(out / "hf_home"), HF_HUB_DISABLE_XET="1",
               HF_HUB_DISABLE_TELEMETRY="1", HF_DATASETS_CACHE=str(out / "hf_home" / "datasets"),
               PYTHONPATH=str(ROOT), TOKENIZERS_PARALLELISM="false")
    proc = subprocess.run([str(VENV_PYTHON), str(DRIVER), str(include_path), "mirage_mioh",
                           str(out / "answers.json"), str(out)], env=env, capture_output=True, text=True,
                          timeout=300, cwd=out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def score_with_mirage(release_dir: Path, predictions: Path, out: Path) -> dict:
    from scoring.__main__ import main

    assert main(["mioh", "--release", str(release_dir), "--predictions", str(predictions), "--out", str(out),
                 "--no-plots", "--cache-dir", str(out / "cache")]) == 0
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_lmms_eval_run_equals_python_m_scoring(tmp_path, hub, released):  # noqa: F811
    require(venv_imports(VENV_PYTHON, "lmms_eval.evaluator", "lmms_eval.tasks", "filelock._api",
                         "scoring.harness.lmms_eval_utils"),
            "lmms-eval (.venv-lmms-eval, importing lmms_eval and Mirage)", "bash .ci/install-harness.sh")
    from scoring.harness.lmms_eval_utils import metric_name, prompt_text
    from scoring.predictions import Prediction, read_lmms_eval_samples, write_predictions

    release_dir, items = released
    items = sorted(items, key=lambda it: it.id)
    answers = {it.id: answer_for(n, it) for n, it in enumerate(items)}
    preds = tmp_path / "predictions.jsonl"
    write_predictions(preds, [Prediction(i, o, "stand-in") for i, o in answers.items()])
    mirage = score_with_mirage(release_dir, preds, tmp_path / "mirage")
    lmms = run_lmms_eval(hub.url, release_dir / "harness" / "lmms_eval", answers, tmp_path / "lmms")

    # lmms-eval read the published release at its tag: every item once, its images, Mirage's prompt
    seen = json.loads((tmp_path / "lmms" / "requests.json").read_text())
    assert sorted(seen) == [it.id for it in items]
    for it in items:
        assert len(seen[it.id]["images"]) == len(it.images) and seen[it.id]["prompt"] == prompt_text(it)
        assert seen[it.id]["gen_kwargs"]["temperature"] == 0

    # a chat model (lmms-eval builds its messages from doc_to_visual + doc_to_text) sees the same and scores the same
    chat_seen = json.loads((tmp_path / "lmms" / "requests_chat.json").read_text())
    assert {i: (len(s["images"]), s["prompt"]) for i, s in chat_seen.items()} == {
        i: (len(s["images"]), s["prompt"]) for i, s in seen.items()}
    chat_results = json.loads((tmp_path / "lmms" / "results_chat.json").read_text())["results"]
    assert {t: {k: v for k, v in r.items() if k != "alias"} for t, r in chat_results.items()} == {
        t: {k: v for k, v in r.items() if k != "alias"} for t, r in lmms["results"].items()}

    table1, results = mirage["table1"], lmms["results"]
    tasks = sorted({it.task for it in items})
    assert {f"mirage_mioh_{t}" for t in tasks} | {"mirage_mioh"} <= set(results)
    for task in tasks:
        got = results[f"mirage_mioh_{task}"]
        assert got["accuracy,none"] == pytest.approx(table1[task]["average"]["accuracy"], abs=1e-6), task
        for pressure in {it.pressure for it in items if it.task == task}:
            want = table1[task][pressure]["accuracy"]  # None: every item of the cell is a context control
            value = got[f"{metric_name(pressure)},none"]
            assert math.isnan(value) if want is None else value == pytest.approx(want, abs=1e-6), (task, pressure)
        if any(it.task == task and it.answer in ("yes", "no") for it in items):  # the decomposed questions
            assert got["yes_ratio,none"] == pytest.approx(expected_yes_ratio(items, task), abs=1e-9), task
        cov = mirage["coverage"]["by_task"][task]
        assert got["unparsed_rate,none"] == pytest.approx(cov["unparsed"] / cov["predicted"], abs=1e-6)
    overall = results["mirage_mioh"]["accuracy,none"]
    assert overall == pytest.approx(table1["overall"]["average"]["accuracy"], abs=1e-6)
    yes_no_tasks = sorted({it.task for it in items if it.answer in ("yes", "no")})
    assert yes_no_tasks == ["existence"]  # the decomposed questions: MIOH's scorer reports their yes ratio too
    assert results["mirage_mioh_existence"]["yes_ratio,none"] == pytest.approx(mirage["decomposed"]["yes_ratio"],
                                                                              abs=1e-6)
    # the group's figures are its tasks' weighted by their sample count, which lmms-eval takes from `accuracy`:
    # Table 1's items (MIOH's context controls have their own metric), so the group's unparsed rate is the tasks'
    # rates (over every scored item, as in Mirage's coverage) weighted by the Table 1 counts
    by_task = mirage["coverage"]["by_task"]
    weights = {t: table1[t]["average"]["n"] for t in tasks}
    group_unparsed = sum(by_task[t]["unparsed"] / by_task[t]["predicted"] * weights[t] for t in tasks)
    assert results["mirage_mioh"]["unparsed_rate,none"] == pytest.approx(group_unparsed / sum(weights.values()),
                                                                          abs=1e-6)
    assert any(it.question_type == "decomposed" for it in items)  # kept out of accuracy, as in scoring.mioh
    # the mapping is a real mix, so equal numbers are not equal by accident
    assert 0.2 < overall < 0.8 and mirage["coverage"]["all"]["unparsed"] > 0

    # lmms-eval's --log_samples files, as written, score to the same tables: python -m scoring mioh reads them
    ids_by_task = {t: [it.id for it in items if it.task == t] for t in tasks}
    combined = tmp_path / "all_samples.jsonl"
    with combined.open("w", encoding="utf-8") as fh:
        for task in tasks:
            (path,) = (tmp_path / "lmms" / "samples").rglob(f"*_samples_mirage_mioh_{task}.jsonl")
            text = path.read_text(encoding="utf-8")
            # every logged metric carries the item id (lmms-eval 0.7 drops `doc` from the saved samples)
            lines = [json.loads(line) for line in text.splitlines()]
            assert all(row["unparsed_rate"]["id"] == ids_by_task[task][row["doc_id"]] for row in lines)
            fh.write(text)
    assert {i: p.output for i, p in read_lmms_eval_samples(combined).items()} == answers
    assert score_with_mirage(release_dir, combined, tmp_path / "mirage2")["table1"] == table1
