"""Mementos metrics against hand-computed values (paper Sec. 2.2; the authors' set-based R/P/F1 per sequence,
averaged over sequences), the synonym step, the breakdowns and the command line."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from builders.items import Item, make_item, write_items
from builders.llm import LLMClient, LLMConfig, LLMResult
from builders.mementos.keywords import KeywordExtractor, keyword_prompt, parse_keyword_lists
from filters.text import Keywords
from scoring.__main__ import main as score_main
from scoring.mementos import bucket, mean_scores, score, score_lists, score_sequence
from scoring.mementos_inputs import Reference, read_predictions, reference_of
from scoring.synonyms import SynonymGraph, graph_path
from sources.errors import ConfigError

# The paper's own example (App. D, Table 6): lists of the human paragraph (1) and the model's (2).
PAPER_ANSWER = """Object list 1: [dog, toy, house]
Action list 1: [interaction, bark, express intimidation, move, lean backward, stop, look up]
Object list 2: [dog, toy]
Action list 2: [play, stand, interaction]"""


def score_mementos(release: Path, predictions: Path, out: Path, *options: str) -> int:
    """``mirage score mementos``: the one command that scores Mementos (results.json under ``out``)."""
    return score_main(["mementos", "--release", str(release), "--predictions", str(predictions), "--out", str(out),
                       *options])



def ref(id_: str = "s1", domain: str = "daily_life", objects=(), behaviours=(), n_frames: int = 5) -> Reference:
    return Reference(id_, domain, "reference text", tuple(objects), tuple(behaviours), n_frames)


def test_score_lists_hand_computed() -> None:
    s = score_lists(["dog", "toy", "house"], ["dog", "toy", "toy"])  # duplicates count once (sets)
    assert (s.tp, s.fp, s.fn) == (2, 0, 1)
    assert s.recall == pytest.approx(2 / 3) and s.precision == 1.0 and s.f1 == pytest.approx(0.8)
    s = score_lists(["a", "b"], ["c"])
    assert (s.recall, s.precision, s.f1) == (0.0, 0.0, 0.0)
    assert score_lists([], []).f1 == 0.0  # the authors' convention: an empty denominator scores 0


def test_the_papers_example() -> None:
    lists = parse_keyword_lists(PAPER_ANSWER)
    r = Keywords(lists[("objects", 1)], lists[("behaviours", 1)])
    p = Keywords(lists[("objects", 2)], lists[("behaviours", 2)])
    s = score_sequence(ref(objects=r.objects, behaviours=r.behaviours), r, p, {})
    # objects: tp 2 (dog, toy), fn 1 (house), fp 0 -> R 2/3, P 1, F1 0.8
    assert (s.objects.recall, s.objects.precision, s.objects.f1) == pytest.approx((2 / 3, 1.0, 0.8))
    # behaviours: tp 1 (interaction) of 7 reference, 3 predicted -> R 1/7, P 1/3, F1 = 2PR/(P+R) = 0.2
    assert (s.behaviours.recall, s.behaviours.precision, s.behaviours.f1) == pytest.approx((1 / 7, 1 / 3, 0.2))
    assert s.episode_length == 7


def test_synonyms_turn_misses_into_hits() -> None:
    objects = SynonymGraph("robotics", "objects")
    objects.add_edge("cube", "block")
    behaviours = SynonymGraph("robotics", "behaviours")
    behaviours.add_edge("lift up", "pick up")
    behaviours.add_edge("put down", "place")
    graphs = {("robotics", "objects"): objects, ("robotics", "behaviours"): behaviours}
    r = Keywords(("robot arm", "block", "bowl"), ("pick up", "place"))
    p = Keywords(("robot arm", "cube", "table"), ("lift", "up", "put down", "push"))
    s = score_sequence(ref(domain="robotics", objects=r.objects, behaviours=r.behaviours), r, p, graphs)
    assert s.mapped == Keywords(("robot arm", "block", "table"), ("pick up", "place", "push"))
    # objects: tp 2 fp 1 fn 1 -> 2/3 each; behaviours: tp 2 fp 1 fn 0 -> R 1, P 2/3, F1 0.8
    assert (s.objects.recall, s.objects.precision, s.objects.f1) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert (s.behaviours.recall, s.behaviours.precision, s.behaviours.f1) == pytest.approx((1.0, 2 / 3, 0.8))
    # the graph of another domain does not apply
    other = score_sequence(ref(domain="comics", objects=r.objects, behaviours=r.behaviours), r, p, graphs)
    assert other.behaviours.recall == 0.0


def test_macro_means_and_buckets() -> None:
    a = score_sequence(ref("a", objects=["x"], behaviours=["b1"]), Keywords(("x",), ("b1",)),
                       Keywords(("x",), ("b1",)), {})
    b = score_sequence(ref("b", objects=["x", "y"], behaviours=["b1", "b2", "b3", "b4"], n_frames=12),
                       Keywords(("x", "y"), ("b1", "b2", "b3", "b4")), Keywords(("x",), ()), {})
    m = mean_scores([a, b])
    # objects: R (1 + 1/2)/2 = 0.75, P (1 + 1)/2 = 1, F1 (1 + 2/3)/2 = 5/6; behaviours: R P F1 (1 + 0)/2
    assert m["n"] == 2
    assert (m["objects"]["recall"], m["objects"]["precision"], m["objects"]["f1"]) == pytest.approx((0.75, 1, 5 / 6), abs=1e-6)
    assert m["behaviours"] == pytest.approx({"recall": 0.5, "precision": 0.5, "f1": 0.5})
    assert [bucket(v, (1, 4, 7)) for v in (0, 1, 3, 4, 6, 7, 20)] == ["0", "1-3", "1-3", "4-6", "4-6", "7+", "7+"]
    assert [bucket(v, (1, 2, 3)) for v in (1, 2, 3)] == ["1", "2", "3+"]


def _item(answer: str, objects: list[str], behaviours: list[str], task: str = "daily_life", n: int = 3,
          review: dict | None = None) -> Item:
    prov = {"keywords": {"objects": objects, "behaviours": behaviours}}
    if review:
        prov["review"] = review
    return make_item(benchmark="mementos", task=task, question_type="description", pressure="easy",
                     images=[f"{answer[:8]}-{i}.png" for i in range(n)], question="q", options=(), answer=answer,
                     provenance=prov)


@pytest.mark.usefixtures("spacy_model")
def test_report_per_domain_breakdowns_and_missing() -> None:
    items = [_item("A dog runs.", ["dog"], ["run"]), _item("A cat sits.", ["cat"], ["sit"], task="comics", n=12),
             _item("Nobody.", ["bird"], ["fly"])]
    refs = [reference_of(it) for it in items]
    report = score(refs, {items[0].id: "The dog chases a ball.", items[1].id: "A cat sits on a mat."}, {})
    assert report.missing == {"daily_life": 1}
    assert report.by_domain["daily_life"]["objects"]["recall"] == 1.0  # dog
    assert report.by_domain["daily_life"]["behaviours"]["recall"] == 0.0  # chase != run
    assert report.by_domain["comics"]["objects"] == pytest.approx({"recall": 1.0, "precision": 0.5, "f1": 2 / 3}, abs=1e-6)
    assert report.by_domain["comics"]["behaviours"]["f1"] == 1.0
    assert set(report.by_frames["comics"]) == {"11-15"} and set(report.by_episode_length["daily_life"]) == {"1-3"}
    assert report.keywords.startswith("spacy:")


@pytest.mark.usefixtures("spacy_model")
def test_fixed_descriptions_get_fresh_keywords() -> None:
    it = _item("A bird flies over a tree.", ["dog"], ["run"], review={"status": "fix", "original_answer": "A dog runs."})
    r = reference_of(it)
    assert r.stale_keywords
    report = score([r], {it.id: "A bird flies over a tree."}, {})
    assert report.overall["objects"]["f1"] == 1.0 and report.overall["behaviours"]["f1"] == 1.0


def test_predictions_file_errors(tmp_path: Path) -> None:
    refs = {"a": ref("a")}
    p = tmp_path / "p.jsonl"
    p.write_text('{"id": "a", "prediction": "x"}\n{"id": "zz", "prediction": "y"}\n')
    with pytest.raises(ConfigError, match="id 'zz' is not a mementos item"):
        read_predictions(p, refs)
    p.write_text('{"id": "a"}\n')
    with pytest.raises(ConfigError, match="line 1: expected a JSON object"):
        read_predictions(p, refs)
    p.write_text('{"id": "a", "prediction": "x"}\n{"id": "a", "prediction": "y"}\n')
    with pytest.raises(ConfigError, match="second prediction"):
        read_predictions(p, refs)


class CannedLLM(LLMClient):
    """A client that answers every request with fixed text, as an endpoint would (no network)."""

    backend = "openai"

    def __init__(self, answer: str) -> None:
        super().__init__(LLMConfig(model="canned"))
        self.answer = answer
        self.prompts: list[str] = []

    def complete(self, messages, *, json_schema=None, fallback=None) -> LLMResult:
        self.prompts.append(messages[0]["content"])
        return LLMResult(self.answer, None, False, "openai")


def test_llm_keywords_use_the_papers_prompt_and_both_lists() -> None:
    llm = CannedLLM(PAPER_ANSWER)
    pairs = KeywordExtractor(llm).pairs(["human text"], ["model text"])
    assert pairs == [(Keywords(("dog", "toy", "house"), ("interaction", "bark", "express intimidation", "move",
                                                           "lean backward", "stop", "look up")),
                      Keywords(("dog", "toy"), ("play", "stand", "interaction")))]
    assert llm.prompts == [keyword_prompt("human text", "model text")]
    assert "1. human text\n2. model text\nThe lists are:" in llm.prompts[0]
    assert "must transfer the synonyms in 4 lists into the same word" in llm.prompts[0]


@pytest.mark.usefixtures("spacy_model")
def test_unreadable_llm_answer_falls_back_to_spacy_and_is_counted() -> None:
    extractor = KeywordExtractor(CannedLLM("I cannot help with that."))
    [kw] = extractor.references(["A man holds a cup."])
    assert kw == Keywords(("man", "cup"), ("hold",)) and extractor.fallbacks == 1


@pytest.mark.usefixtures("spacy_model")
def test_cli_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = [_item("The robot arm picks up the block.", ["robot arm", "block"], ["pick up"], task="robotics"),
             _item("A dog runs to a ball.", ["dog", "ball"], ["run"])]
    write_items(tmp_path / "items.jsonl", items)
    g = SynonymGraph("robotics", "objects")
    g.add_edge("cube", "block")
    g.save(graph_path(tmp_path / "graphs", "robotics", "objects"))
    preds = tmp_path / "preds.jsonl"
    preds.write_text("\n".join(json.dumps({"id": it.id, "prediction": p}) for it, p in
                               zip(items, ["The robot arm picks up a cube.", "A dog runs to a ball."])) + "\n")
    out = tmp_path / "results"
    assert score_mementos(tmp_path, preds, out, "--graphs", str(tmp_path / "graphs"), "--model", "test-model",
                          "--no-plots") == 0
    report = json.loads((out / "results.json").read_text())
    assert report["by_domain"]["robotics"]["objects"]["f1"] == 1.0  # cube -> block
    assert report["overall"]["n"] == 2
    text = capsys.readouterr().out
    assert "Mementos scores - test-model" in text and "robotics" in text and "By episode length" in text

    preds.write_text('{"id": "nope", "prediction": "x"}\n')
    assert score_mementos(tmp_path, preds, out) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "not mementos items" in err[0]


@pytest.mark.usefixtures("spacy_model")
def test_the_score_command_writes_results_and_figure_6(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``mirage score mementos`` writes results.json (the report of :func:`score`, with the run's meta) and
    Figure 6."""
    items = [_item("The robot arm picks up the block.", ["robot arm", "block"], ["pick up"], task="robotics"),
             _item("A dog runs to a ball.", ["dog", "ball"], ["run"])]
    write_items(tmp_path / "items.jsonl", items)
    preds = tmp_path / "preds.jsonl"
    outputs = ["The robot arm picks up a cube.", "A dog runs to a ball."]
    preds.write_text("\n".join(json.dumps({"id": it.id, "output": p, "model": "m1"}) for it, p in
                               zip(items, outputs)) + "\n")
    assert score_mementos(tmp_path, preds, tmp_path / "new") == 0
    new = json.loads((tmp_path / "new" / "results.json").read_text())
    references = [reference_of(it) for it in items]
    expected = score(references, {it.id: p for it, p in zip(items, outputs)}, {}, None).as_dict()
    assert new.pop("meta")["model"] == "m1" and new == expected
    assert (tmp_path / "new" / "recall_by_episode.png").stat().st_size > 0
    assert "Mementos scores - m1" in capsys.readouterr().out


@pytest.mark.usefixtures("spacy_model")
def test_cli_propose_writes_candidates(tmp_path: Path) -> None:
    from scoring.synonyms import main as synonyms_main, read_pairs

    item = _item("A man drinks from a coffee mug.", ["man", "coffee mug"], ["drink"])
    write_items(tmp_path / "items.jsonl", [item])
    (tmp_path / "p.jsonl").write_text(json.dumps({"id": item.id, "prediction": "A man drinks from a mug."}) + "\n")
    assert synonyms_main(["propose", "--items", str(tmp_path / "items.jsonl"), "--predictions",
                          str(tmp_path / "p.jsonl"), "--out", str(tmp_path / "c.tsv")]) == 0
    rows = read_pairs(tmp_path / "c.tsv", accepted_only=False)
    assert [(r.kind, r.generated, r.root) for r in rows] == [("objects", "mug", "coffee mug")]
    assert rows[0].accept == ""


class ObjectGraph:
    """The authors' trie class (their notebook's name, so the pickle carries it): ``graph[word][""]`` lists the
    roots a one-word keyword stands for."""

    def __init__(self) -> None:
        self.graph: dict = {}


class ActionGraph(ObjectGraph):
    pass


def _authors_pickle(path: Path, cls: type, edges: dict[str, list[str]]) -> Path:
    """An authors'-format graph pickle; as in their graphs, every root also lists itself."""
    trie = cls()
    for word, roots in edges.items():
        trie.graph.setdefault(word, {}).setdefault("", []).extend(roots)
    for root in {r for roots in edges.values() for r in roots}:
        trie.graph.setdefault(root, {}).setdefault("", []).append(root)
    path.write_bytes(pickle.dumps(trie))
    return path


SHELF_EDGES = {"shelf": ["cabinet"], "cupboard": ["cabinet"], "drawer": ["cabinet"]}


def test_references_against_themselves_score_100_with_the_authors_graphs(tmp_path: Path) -> None:
    """Issue 38: with the authors' graphs the references scored 96.0 % object recall against themselves: "shelf"
    (a synonym of "cabinet") took "cabinet" before "cabinet" itself was reached. Every order of the lists must
    give 100 %."""
    from scoring.synonyms import graph_from_authors, load_authors_pickle

    trie = load_authors_pickle(_authors_pickle(tmp_path / "dl_object_graph_v1.pkl", ObjectGraph, SHELF_EDGES))
    graphs = {("daily_life", "objects"): graph_from_authors(trie, "daily_life", "objects")}
    words = ("man", "shelf", "cabinet", "cup")
    for order in (words, words[::-1], ("shelf", "cupboard", "cabinet"), ("cabinet", "shelf", "drawer", "cupboard")):
        kw = Keywords(order, ())
        s = score_sequence(ref(objects=order), kw, kw, graphs)
        assert (s.objects.recall, s.objects.precision, s.objects.f1) == (1.0, 1.0, 1.0), order
        assert s.mapped.objects == tuple(order)
    # a synonym still counts where the reference word is absent
    s = score_sequence(ref(objects=words), Keywords(words, ()), Keywords(("man", "shelf", "cupboard", "cup"), ()),
                       graphs)
    assert s.mapped.objects == ("man", "shelf", "cabinet", "cup") and s.objects.f1 == 1.0


@pytest.mark.usefixtures("spacy_model")
def test_reference_descriptions_as_predictions_score_100_with_imported_pickles(tmp_path: Path) -> None:
    """The issue's run end to end: the authors' pickles imported with ``scoring.synonyms import-pickle``, the
    reference descriptions given as the predictions, keywords from the same extractor on both sides."""
    from scoring.synonyms import main as synonyms_main

    pickles = [_authors_pickle(tmp_path / "dl_object_graph_v1.pkl", ObjectGraph, SHELF_EDGES),
               _authors_pickle(tmp_path / "dl_action_graph_v1.pkl", ActionGraph, {"put": ["place"], "place": ["put"]})]
    assert synonyms_main(["import-pickle", *map(str, pickles), "--out", str(tmp_path / "graphs")]) == 0
    texts = ["A man puts a cup on the shelf and opens the cabinet.",
             "The woman places a plate in the cupboard, then puts a bowl on the shelf beside the cabinet."]
    items = [make_item(benchmark="mementos", task="daily_life", question_type="description", pressure="easy",
                       images=[f"s{k}-{i}.png" for i in range(3)], question="q", options=(), answer=text)
             for k, text in enumerate(texts)]  # no stored keywords: both sides come from one extractor
    write_items(tmp_path / "items.jsonl", items)
    preds = tmp_path / "preds.jsonl"
    preds.write_text("".join(json.dumps({"id": it.id, "output": it.answer}) + "\n" for it in items))
    assert score_mementos(tmp_path / "items.jsonl", preds, tmp_path / "results", "--graphs", str(tmp_path / "graphs"),
                          "--no-plots") == 0
    report = json.loads((tmp_path / "results" / "results.json").read_text())
    assert all("cabinet" in s["reference"]["objects"] for s in report["sequences"])
    for kind in ("objects", "behaviours"):
        assert report["overall"][kind] == {"recall": 1.0, "precision": 1.0, "f1": 1.0}
