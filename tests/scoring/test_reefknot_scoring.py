"""Reefknot metrics on hand-computed cases, the NLI judge's real loading code on a tiny random DeBERTa-v2, and
``python -m scoring reefknot`` on a demo build with a stand-in model."""

from __future__ import annotations

import json
from argparse import Namespace
from pathlib import Path

import pytest

from builders.items import make_item
from scoring import reefknot as rk
from tests.conftest import have, require


def _item(qset: str, cat: str, answer: str, relation: str = "on", options=()) -> object:
    return make_item(
        benchmark="reefknot",
        task=cat,
        question_type=qset,
        pressure="none",
        images=["1.jpg"],
        question=f"{qset} {cat} {answer} {relation} {len(options)}",
        options=options,
        answer=answer,
        provenance={"triplet": {"subject": "cup", "relation": relation, "object": "table"}},
    )


def _cases():
    opts = ("on", "under", "left of", "near")
    items = [
        _item("yes_no", "perception", "yes"),
        _item("yes_no", "perception", "no", "under"),
        _item("yes_no", "perception", "yes", "near"),
        _item("yes_no", "perception", "no", "left of"),
        _item("mcq", "perception", "A", options=opts),
        _item("mcq", "perception", "C", "left of", opts),
        _item("vqa", "perception", "The cup is on the table."),
        _item("yes_no", "cognition", "yes", "holding"),
        _item("yes_no", "cognition", "no", "eating"),
        _item("mcq", "cognition", "B", "holding", ("eating", "holding", "riding", "watching")),
        _item("vqa", "cognition", "The man is riding the horse.", "riding"),
    ]
    outputs = dict(
        zip(
            [it.id for it in items],
            [
                "Yes",
                "Yes, it is.",
                "No",
                "no",  # perception Y/N: right, wrong (no->yes), wrong (yes->no), right
                "A",
                "The answer is D.",  # perception MCQ: right, wrong
                "the cup is on the table",  # perception VQA: right (exact after normalising)
                "yes",
                "maybe",  # cognition Y/N: right, unparsed (wrong)
                "B",  # cognition MCQ: right
                "The man is feeding the horse.",  # cognition VQA: wrong
            ],
        )
    )
    return items, outputs


def test_halr_r_score_confusion_and_letters_by_hand():
    items, outputs = _cases()
    res = rk.score(items, outputs)
    t3 = res["table3"]
    assert t3["perception"]["yes_no"] == {"halr": 50.0, "n": 4}
    assert t3["perception"]["mcq"] == {"halr": 50.0, "n": 2}
    assert t3["perception"]["vqa"] == {"halr": 0.0, "n": 1}
    assert t3["cognition"]["yes_no"] == {"halr": 50.0, "n": 2}
    assert t3["cognition"]["mcq"] == {"halr": 0.0, "n": 1}
    assert t3["cognition"]["vqa"] == {"halr": 100.0, "n": 1}
    assert t3["total"]["yes_no"] == {"halr": 50.0, "n": 6}
    # formula 1: mean of (100 - Halr) over the six cells = (50 + 50 + 100 + 50 + 100 + 0) / 6
    assert res["r_score"] == pytest.approx(58.33, abs=0.01)
    assert res["r_score_micro"] == pytest.approx(100 * 6 / 11, abs=0.01)
    yn = res["yes_no_confusion"]
    assert yn["matrix"] == {"yes": {"yes": 2, "no": 1, "other": 0}, "no": {"yes": 1, "no": 1, "other": 1}}
    assert (yn["no_to_yes"], yn["yes_to_no"], yn["error_ratio_no_to_yes_over_yes_to_no"]) == (1, 1, 1.0)
    assert yn["yes_share"] == 0.5
    letters = res["mcq_letters"]
    assert letters["matrix"]["C"]["D"] == 1 and letters["matrix"]["A"]["A"] == 1 and letters["matrix"]["B"]["B"] == 1
    assert letters["chosen_share"]["D"] == pytest.approx(1 / 3, abs=1e-4)
    rel = res["relations"]
    assert rel["yes_no"]["on"] == {"halr": 0.0, "n": 1} and rel["yes_no"]["near"] == {"halr": 100.0, "n": 1}
    assert res["coverage"] == {"items": 11, "scored": 11, "missing": 0, "unparsed": 1, "refusals": 0}


def test_missing_predictions_are_not_scored():
    items, outputs = _cases()
    del outputs[items[0].id]
    res = rk.score(items, outputs)
    assert res["coverage"]["missing"] == 1 and res["table3"]["perception"]["yes_no"]["n"] == 3


def test_bidirectional_entailment_needs_both_directions():
    from scoring.nli import entailment_index, equivalent

    assert entailment_index({0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}) == 2
    assert equivalent(2, 2, 2) and not equivalent(2, 1, 2) and not equivalent(0, 2, 2)


def _tiny_deberta(directory: Path, favour: str) -> Path:
    """A randomly initialised 2-layer DeBERTa-v2 NLI model with a word-level tokenizer, saved like a Hub model;
    the classifier bias makes ``favour`` the winning label whatever the input."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification, PreTrainedTokenizerFast

    words = "[PAD] [UNK] [CLS] [SEP] the cat is on under laptop man riding horse feeding . a".split()
    tok = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]", sep_token="[SEP]"
    )
    fast.save_pretrained(directory)
    labels = {0: "CONTRADICTION", 1: "NEUTRAL", 2: "ENTAILMENT"}
    config = DebertaV2Config(
        vocab_size=len(words),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=64,
        num_labels=3,
        id2label=labels,
        label2id={v: k for k, v in labels.items()},
    )
    torch.manual_seed(0)
    model = DebertaV2ForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.bias.copy_(torch.tensor([0.0, 0.0, 0.0]))
        model.classifier.bias[{v: k for k, v in labels.items()}[favour]] = 1000.0
    model.save_pretrained(directory)
    return directory


@pytest.mark.slow
def test_nli_judge_loads_a_saved_deberta_v2(tmp_path):
    try:
        import transformers  # noqa: F401

        available = True
    except ImportError:
        available = False
    require(available, "transformers", "pip install 'mirage-bench[nli]'")
    from scoring.nli import NliJudge

    yes = NliJudge(str(_tiny_deberta(tmp_path / "entail", "ENTAILMENT")))
    assert yes.entail == 2
    assert yes.judge(["the cat is on the laptop ."], ["the cat is under the laptop ."]) == [True]
    no = NliJudge(str(_tiny_deberta(tmp_path / "contradict", "CONTRADICTION")))
    assert no.judge(["the man is riding the horse .", "a cat"], ["the man is feeding the horse .", "a cat"]) == [
        False,
        False,
    ]
    items, outputs = _cases()
    res = rk.score(items, outputs, yes.judge, "nli:tiny")
    assert res["table3"]["cognition"]["vqa"]["halr"] == 0.0  # the always-entailing model accepts the wrong VQA answer


def test_missing_nli_model_is_one_line(tmp_path):
    from sources.errors import ConfigError
    from tests.conftest import have, require

    require(have("transformers", "torch"), "transformers and torch (the nli extra)", "pip install -e '.[nli]'")

    with pytest.raises(ConfigError) as info:
        rk.make_vqa_judge(Namespace(vqa_judge="nli", nli_model=str(tmp_path / "absent")), needed=True)
    assert "\n" not in str(info.value) and "--vqa-judge" in str(info.value)


@pytest.mark.slow
def test_scoring_a_demo_build_with_a_stand_in_model(tmp_path, capsys):
    from builders import reefknot
    from scoring.__main__ import main

    assert (
        reefknot.main(
            ["--demo-images", "30", "--out", str(tmp_path), "--no-progress", "--cache-dir", str(tmp_path / "cache")]
        )
        == 0
    )
    build = tmp_path / "demo-seed0"
    items = [json.loads(line) for line in (build / "items.jsonl").read_text().splitlines()]
    preds = tmp_path / "preds.jsonl"
    with preds.open("w") as fh:  # the stand-in: always "yes", always "A", the reference itself
        for it in items:
            out = {"yes_no": "Yes.", "mcq": "A", "vqa": it["answer"]}[it["question_type"]]
            fh.write(json.dumps({"id": it["id"], "output": out, "model": "stand-in"}) + "\n")
    assert (
        main(
            [
                "reefknot",
                "--release",
                str(build),
                "--predictions",
                str(preds),
                "--vqa-judge",
                "exact",
                "--out",
                str(tmp_path / "scores"),
                *([] if have("matplotlib") else ["--no-plots"]),
            ]
        )
        == 0
    )
    res = json.loads((tmp_path / "scores" / "results.json").read_text())
    n_a = sum(it["answer"] == "A" for it in items if it["question_type"] == "mcq")
    n_mcq = sum(it["question_type"] == "mcq" for it in items)
    assert res["table3"]["total"]["yes_no"]["halr"] == 50.0
    assert res["table3"]["total"]["mcq"]["halr"] == pytest.approx(100 * (1 - n_a / n_mcq), abs=0.01)
    assert res["table3"]["total"]["vqa"]["halr"] == 0.0
    assert "R_score" in capsys.readouterr().out
    require(have("matplotlib"), "matplotlib (the release extra) for Fig. 5", "pip install -e '.[release]'")
    assert (tmp_path / "scores" / "confusion.png").stat().st_size > 0  # Fig. 5


def test_vqa_accepts_every_true_relation_the_build_lists():
    """The arrow pointing at the octagon is also left of it: either answer is right, a false one is not."""
    item = make_item(
        benchmark="reefknot", task="cognition", question_type="vqa", pressure="none", images=["1.jpg"],
        question="What is the relation between the arrow and the octagon in this photo?", options=(),
        answer="The arrow is pointing at the octagon.",
        provenance={"accepted_answers": ["The arrow is pointing at the octagon.", "The arrow is left of the octagon."]},
    )
    for output, right in (("The arrow is left of the octagon.", True), ("The arrow is pointing at the octagon.", True),
                          ("The arrow is above the octagon.", False), ("", False)):
        (scored,) = rk.score_items([item], {item.id: output})
        assert scored.correct is right, output
    assert rk.accepted_answers(item) == ["The arrow is pointing at the octagon.", "The arrow is left of the octagon."]
