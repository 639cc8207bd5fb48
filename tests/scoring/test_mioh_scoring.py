"""MIOH metrics end to end: a release answered by stand-in models (tests/support/openai_stub.py) through
``python -m scoring.run``, scored by ``python -m scoring mioh``, every number checked against values computed by
hand from the twelve items of tests/scoring/mioh_release.py (listed in the comments)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from builders.items import read_items
from scoring.__main__ import main as score_main
from scoring.predictions import read_predictions
from scoring.run import main as run_main
from tests.support.openai_stub import StubOpenAI, VisionAnswers

from .mioh_release import make_mioh_release


@pytest.fixture(scope="module")
def released(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("mioh")
    build, release_dir, by_key = make_mioh_release(root)
    return root, build, release_dir, by_key


def answer_and_score(released, tmp_path: Path, pattern: str, pressure: str | None = None,
                     fail_once: tuple[str, ...] = ()) -> tuple[dict, VisionAnswers]:
    root, build, release_dir, _ = released
    responder = VisionAnswers(read_items(build / "items.jsonl"), build, pattern, pressure, fail_once)
    preds = tmp_path / f"{pattern}.jsonl"
    with StubOpenAI(responder=responder) as stub:
        args = [str(release_dir), "--llm-model", f"stub-{pattern}", "--llm-base-url", stub.base_url,
                "--out", str(preds), "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--llm-retries", "0"]
        assert run_main(args) == 0
    assert score_main(["mioh", "--release", str(release_dir), "--predictions", str(preds),
                       "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache")]) == 0
    return json.loads((tmp_path / "out" / "results.json").read_text()), responder


def acc(cell: dict) -> float | None:
    return cell["accuracy"]


def test_truth_scores_everything(released, tmp_path: Path) -> None:
    results, responder = answer_and_score(released, tmp_path, "truth")
    assert set(responder.asked.values()) == {1} and len(responder.asked) == 16  # every item asked once
    t1 = results["table1"]
    assert acc(t1["overall"]["average"]) == 1.0 and t1["overall"]["average"]["n"] == 12  # decomposed kept out
    assert acc(t1["counting"]["hard_positive"]) is None  # no such items: "-", not 0
    assert results["decomposed"]["decomposed_accuracy"] == 1.0 and results["decomposed"]["comprehensive_accuracy"] == 1.0
    assert results["extraction"] == {"option": 12, "yes_no": 4}
    assert results["meta"]["model"] == "stub-truth"
    assert {p.name for p in (tmp_path / "out").iterdir()} == {"results.json", "accuracy_robustness.png",
                                                             "pressures.png", "n_images.png", "decomposed.png"}


def test_always_a_hand_computed(released, tmp_path: Path) -> None:
    results, _ = answer_and_score(released, tmp_path, "A")
    t1 = results["table1"]
    # answer A: e3 (HN), e5 (LC-S), e7 (NI, 2 images), c1 (easy)
    ex, co, al = t1["existence"], t1["counting"], t1["overall"]
    assert [acc(ex[p]) for p in ("easy", "hard_negative", "hard_positive", "n_images", "sycophantic",
                                  "instructional_override")] == [0.0, 1.0, 0.0, 0.5, 1.0, 0.0]
    assert ex["average"] == {"n": 8, "correct": 3, "accuracy": 0.375}
    assert [acc(co[p]) for p in ("easy", "hard_negative", "n_images", "sycophantic")] == [1.0, 0.0, 0.0, 0.0]
    assert acc(co["average"]) == 0.25 and acc(al["average"]) == pytest.approx(4 / 12, abs=1e-6)
    assert acc(al["easy"]) == pytest.approx(1 / 3, abs=1e-6)
    # robustness: existence easy 0 -> 0; overall mean(HN .5, HP 0, NI 1/3, LC-S .5, LC-I 0) / (1/3) = 0.8
    rob = results["robustness"]
    assert rob["existence"]["robustness"] == 0.0
    assert rob["overall"]["robustness"] == pytest.approx(0.8, abs=1e-5)
    assert rob["overall"]["drop"]["sycophantic"] == pytest.approx(1 / 3 - 1 / 2, abs=1e-6)
    # accuracy vs number of images: existence family 2 images (e7, A) right, 4 images (e8, B) wrong
    ni = results["n_images"]
    assert ni["sizes"] == [2, 4] and ni["families"] == 2
    assert acc(ni["by_task"]["existence"]["2"]) == 1.0 and acc(ni["by_task"]["existence"]["4"]) == 0.0
    assert ni["by_task"]["overall"]["2"] == {"n": 2, "correct": 1, "accuracy": 0.5}  # e7 right, c4 (B) wrong
    # position bias: the model says A 12 times; truth A4 B5 C2 D0 E1 -> chi2 = 16 + 5 + 2 + 1 = 24, dof 3
    let = results["letters"]
    assert let["model"] == {"A": 12, "B": 0, "C": 0, "D": 0, "E": 0}
    assert let["truth"] == {"A": 4, "B": 5, "C": 2, "D": 0, "E": 1}
    assert let["chi2"] == 24.0 and let["dof"] == 3 and let["most_chosen"] == "A"
    # "A" answers no yes/no question: the four decomposed questions are unparsed, counted, wrong
    assert results["extraction"] == {"option": 12, "unparsed": 4}
    assert results["decomposed"]["single_image_accuracy"] == 0.0
    nota = results["abstentions"]["None of the above"]
    assert (nota["offered"], nota["not_the_answer"], nota["chosen_wrongly"], nota["recall"]) == (11, 9, 0, 0.0)
    # Fig. 3 by question type: comprehensive e1 e4 c1 c4 -> 1/4; comparative e3 e6 c2 -> 1/3; selective
    # e2 e5 e7 e8 c3 -> 2/5
    types = results["figure3"]["type"]
    assert [types[q]["correct"] for q in ("comprehensive", "comparative", "selective")] == [1, 1, 2]
    assert [types[q]["n"] for q in ("comprehensive", "comparative", "selective")] == [4, 3, 5]
    assert results["figure3"]["task_x_type"]["existence"]["selective"] == {"n": 4, "correct": 2, "accuracy": 0.5}


def test_always_yes_is_unparsed_on_mcq_and_decomposed_all_correct(released, tmp_path: Path) -> None:
    results, _ = answer_and_score(released, tmp_path, "yes")
    assert acc(results["table1"]["overall"]["average"]) == 0.0
    assert results["coverage"]["all"] == {"items": 12, "predicted": 12, "missing": 0, "unparsed": 12, "refusal": 0}
    dec = results["decomposed"]
    # e1: yes, yes -> both right; e4: yes, no -> one wrong. Single-image 3/4, groups 1/2, multi-image 0/2.
    assert dec["single_image_accuracy"] == 0.75 and dec["decomposed_accuracy"] == 0.5
    assert dec["comprehensive_accuracy"] == 0.0 and dec["groups"] == 2
    assert dec["by_pressure"]["easy"]["decomposed_accuracy"] == 1.0
    assert dec["yes_ratio"] == 1.0 and dec["truth_yes_ratio"] == 0.75  # the model's answers, not the truth


def test_truth_except_sycophantic(released, tmp_path: Path) -> None:
    results, _ = answer_and_score(released, tmp_path, "truth_except", "sycophantic")
    t1 = results["table1"]
    assert acc(t1["overall"]["sycophantic"]) == 0.0 and acc(t1["overall"]["easy"]) == 1.0
    assert acc(t1["existence"]["average"]) == 7 / 8 and acc(t1["counting"]["average"]) == 0.75
    rob = results["robustness"]["overall"]
    assert rob["drop"]["sycophantic"] == 1.0 and rob["drop"]["hard_negative"] == 0.0
    assert rob["robustness"] == pytest.approx(0.8)
    # the wrong letter is the next one: e5 (A -> B = "Image 2"), c3 (B -> C = "3"): no abstention chosen
    assert results["abstentions"]["None of the above"]["chosen_wrongly"] == 0


@pytest.mark.parametrize("pattern", ["verbose", "text"])
def test_verbose_and_option_text_read_like_truth(released, tmp_path: Path, pattern: str) -> None:
    results, _ = answer_and_score(released, tmp_path, pattern)
    assert acc(results["table1"]["overall"]["average"]) == 1.0
    assert results["extraction"] == {"option": 12, "yes_no": 4}


def test_mumble_is_unparsed_never_guessed(released, tmp_path: Path) -> None:
    results, _ = answer_and_score(released, tmp_path, "mumble")
    assert results["extraction"] == {"unparsed": 16}
    assert acc(results["table1"]["overall"]["average"]) == 0.0
    assert sum(results["letters"]["model"].values()) == 0


def test_interrupted_run_resumes_from_the_cache(released, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    root, build, release_dir, by_key = released
    items = sorted(read_items(build / "items.jsonl"), key=lambda it: it.id)
    victim = items[5].id
    responder = VisionAnswers(items, build, "truth", fail_once=(victim,))
    preds = tmp_path / "p.jsonl"
    with StubOpenAI(responder=responder) as stub:
        args = [str(release_dir), "--llm-model", "stub", "--llm-base-url", stub.base_url, "--out", str(preds),
                "--cache-dir", str(tmp_path / "cache"), "--no-progress", "--llm-retries", "0",
                "--llm-concurrency", "1"]
        assert run_main(args) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "HTTP 503" in err[0] and "rerun" in err[0]
        assert not preds.exists()  # nothing that looks complete
        first = dict(responder.asked)
        assert run_main(args) == 0
    # the items answered before the failure were not asked again; the failed one was asked twice
    assert all(responder.asked[i] == 1 for i in first if i != victim) and responder.asked[victim] == 2
    assert len(responder.asked) == 16
    predictions = read_predictions(preds)
    assert len(predictions) == 16 and predictions[victim].params["temperature"] == 0


def test_request_layout(released, tmp_path: Path) -> None:
    """Images in order as data URLs, each after "Image k:", then context, question, lettered options and the
    instruction; temperature 0."""
    root, build, release_dir, by_key = released
    responder = VisionAnswers(read_items(build / "items.jsonl"), build, "truth")
    with StubOpenAI(responder=responder) as stub:
        run_main([str(release_dir), "--llm-model", "stub", "--llm-base-url", stub.base_url, "--out",
                  str(tmp_path / "p.jsonl"), "--cache-dir", str(tmp_path / "c"), "--no-progress"])
    e5 = by_key["e5"]
    body = next(b for b in stub.bodies if e5.question in b["messages"][0]["content"][-1]["text"])
    parts = body["messages"][0]["content"]
    assert body["temperature"] == 0
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]
    assert parts[0]["text"] == "Image 1:" and parts[2]["text"] == "Image 2:"
    assert parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    text = parts[-1]["text"]
    assert text.index(e5.context) < text.index(e5.question) < text.index("A. Image 1") < text.index("C. None")
    assert text.rstrip().endswith("Answer with the option's letter from the given choices.")


def test_bad_predictions_are_one_line_errors(released, tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    _, _, release_dir, _ = released
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "nope", "output": "A"}\n')
    assert score_main(["mioh", "--release", str(release_dir), "--predictions", str(bad), "--out",
                       str(tmp_path / "o"), "--cache-dir", str(tmp_path / "c")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not mioh items" in err[0] and not (tmp_path / "o").exists()
    bad.write_text('{"id": "x", "output": "A"}\n{"id": "x", "output": "B"}\n')
    assert score_main(["mioh", "--release", str(release_dir), "--predictions", str(bad)]) == 2
    assert "line 2: a second prediction" in capsys.readouterr().err


def test_abstaining_model_and_the_multi_model_plot(released, tmp_path: Path) -> None:
    """A model that answers "None of the above" (or "I don't know") to everything, scored directly; then Fig. 4
    over two runs with ``python -m scoring.mioh compare``."""
    from scoring.mioh import main as mioh_main
    from scoring.mioh import score

    _, build, _, by_key = released
    items = read_items(build / "items.jsonl")
    abstain = {it.id: ("I don't know." if "I don't know" in it.options else "None of the above.") for it in items}
    results = score(items, abstain)
    nota, idk = results["abstentions"]["None of the above"], results["abstentions"]["I don't know"]
    # NOTA offered by 11 items, the answer of 2 (e2, c2): chosen wrongly 9 of 9, recalled 2 of 2
    assert (nota["chosen"], nota["chosen_wrongly"], nota["wrong_rate"], nota["recall"]) == (11, 9, 1.0, 1.0)
    # "I don't know" offered by e4 only (answer B): chosen wrongly 1 of 1
    assert (idk["offered"], idk["chosen_wrongly"], idk["wrong_rate"], idk["recall"]) == (1, 1, 1.0, None)
    # NOTA is C with three options (e2, e5, e7), E with five (8 items); "I don't know" is D (e4)
    assert results["letters"]["model"] == {"A": 0, "B": 0, "C": 3, "D": 1, "E": 8}
    assert acc(results["table1"]["overall"]["average"]) == pytest.approx(2 / 12, abs=1e-6)
    truth = score(items, {it.id: it.answer for it in items})
    paths = []
    for name, r in (("abstainer", results), ("oracle", truth)):
        r["meta"] = {"model": name}
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(r))
    assert mioh_main(["compare", *map(str, paths), "--out", str(tmp_path / "fig4.png")]) == 0
    assert (tmp_path / "fig4.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    (tmp_path / "bad.json").write_text("{}")
    assert mioh_main(["compare", str(tmp_path / "bad.json"), "--out", str(tmp_path / "x.png")]) == 2


def test_concurrency_is_bounded(released, tmp_path: Path) -> None:
    root, build, release_dir, _ = released
    responder = VisionAnswers(read_items(build / "items.jsonl"), build, "truth")
    with StubOpenAI(responder=responder, delay=0.05) as stub:
        assert run_main([str(release_dir), "--llm-model", "stub", "--llm-base-url", stub.base_url, "--out",
                         str(tmp_path / "p.jsonl"), "--cache-dir", str(tmp_path / "c"), "--no-progress",
                         "--llm-concurrency", "2"]) == 0
    assert stub.max_in_flight == 2 and stub.attempts == 16


def test_controls_stay_out_of_the_papers_figures_and_are_reported_beside_them() -> None:
    """Issue 40: an item whose context is true (a control) is not the paper's accuracy under a misleading
    context; it is reported beside it, with the gap. Hand-computed: the model answers "A" everywhere."""
    from builders.items import make_item
    from scoring.mioh import score

    options = ("Image 1", "Image 2", "None of the above")

    def item(k: int, truth: str, answer: str):
        return make_item(benchmark="mioh", task="existence", question_type="selective", pressure="sycophantic",
                         images=[f"{k}a.png", f"{k}b.png"], question=f"Based on the images, which image {k}?",
                         options=options, answer=answer, context=f"I think so {k}.",
                         provenance={"context_truth": truth})

    # misleading: 1 of 3 answered A right; controls: 2 of 2 right
    items = [item(0, "false", "A"), item(1, "false", "B"), item(2, "false", "C"), item(3, "true", "A"),
             item(4, "true", "A")]
    results = score(items, {it.id: "A" for it in items})
    assert results["table1"]["existence"]["sycophantic"] == {"n": 3, "correct": 1, "accuracy": round(1 / 3, 6)}
    row = results["context_controls"]["existence"]["sycophantic"]
    assert row["misleading"]["n"] == 3 and row["control"] == {"n": 2, "correct": 2, "accuracy": 1.0}
    assert row["gap"] == pytest.approx(1 - 1 / 3, abs=1e-6)
    assert results["context_controls"]["overall"]["sycophantic"]["gap"] == row["gap"]
    assert {r["context_truth"] for r in results["items"]} == {"true", "false"}
