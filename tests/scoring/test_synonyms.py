"""Synonym graphs: matching as the Mementos authors do, JSON storage, approved pairs, proposals, and the
restricted unpickler for the authors' published graphs (pickles made here, by classes named like theirs)."""

from __future__ import annotations

import json
import os
import pickle
from pathlib import Path

import pytest

from builders.items import make_item, write_items
from scoring.synonyms import (
    Pair,
    SynonymGraph,
    UnsafePickle,
    build_graphs,
    graph_from_authors,
    graph_path,
    guess_domain_kind,
    load_authors_pickle,
    load_graphs,
    main,
    map_to_roots,
    propose_pairs,
    read_pairs,
    write_pairs,
)
from sources.errors import ConfigError


class ActionGraph:
    """The authors' trie, as in their notebook (sym_graphs/build_action_graph.ipynb): a test stand-in that
    pickles under the class name their files carry."""

    def __init__(self) -> None:
        self.graph: dict = {}

    def add_path(self, words: list[str], synonym: str) -> None:
        if len(words) == 1:
            self.graph.setdefault(words[0], {}).setdefault("", []).append(synonym)
            return
        current = words[0]
        for nxt in words[1:-1]:
            self.graph.setdefault(current, {}).setdefault(nxt, [])
            current = nxt
        self.graph.setdefault(current, {}).setdefault(words[-1], []).append(synonym)


class ObjectGraph(ActionGraph):
    pass


class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned > pwned.txt",))


def graph(kind: str = "behaviours", **edges: str) -> SynonymGraph:
    g = SynonymGraph("daily_life", kind)
    for gen, root in edges.items():
        g.add_edge(gen.replace("_", " "), root)
    return g


# --------------------------------------------------------------------------------------------- matching


def test_single_word_synonym_becomes_root_and_is_used_up() -> None:
    g = graph(lift="pick up", raise_="pick up")
    # "lift" takes the root; "raise" finds it used and stays as it is (the authors' pop)
    assert map_to_roots(["pick up", "place"], ["lift", "raise", "place"], g, pairs=True) == ["pick up", "raise", "place"]


def test_two_consecutive_keywords_match_one_root_for_behaviours_only() -> None:
    g = graph(lift_up="pick up")
    assert map_to_roots(["pick up", "drop"], ["lift", "up", "drop"], g, pairs=True) == ["pick up", "drop"]
    assert map_to_roots(["pick up", "drop"], ["lift", "up", "drop"], g, pairs=False) == ["lift", "up", "drop"]


def test_leftovers_after_all_roots_are_plain_words() -> None:
    g = graph(lift="pick up")
    out = map_to_roots(["pick up"], ["lift", "throw", "kick"], g, pairs=True)
    # the authors' code appended one generator object here; the words themselves are kept
    assert out == ["pick up", "throw", "kick"]
    assert all(isinstance(w, str) for w in out)


def test_words_are_compared_normalised_and_a_word_is_its_own_synonym() -> None:
    g = graph(Hound="dog")
    assert map_to_roots(["Dog"], [" HOUND "], g, pairs=False) == ["dog"]
    assert g.is_synonym("dog", "Dog") and g.is_synonym("hound", "dog") and not g.is_synonym("dog", "hound")


def test_an_exact_word_claims_its_root_before_a_synonym_can() -> None:
    """Issue 38: "shelf" (a synonym of "cabinet" in the graph) came first and took "cabinet"; "cabinet" then found
    no root left and counted as a false positive, so the reference scored against itself fell below 100 %."""
    g = graph("objects", shelf="cabinet", cupboard="cabinet")
    assert map_to_roots(["cabinet", "shelf"], ["shelf", "cabinet"], g, pairs=False) == ["shelf", "cabinet"]
    # a synonym still takes a root no exact word claims, wherever it stands
    assert map_to_roots(["cabinet", "shelf"], ["cupboard", "shelf"], g, pairs=False) == ["cabinet", "shelf"]
    # behaviours: a pair may not use a keyword an exact match claimed
    b = graph(pick_up="lift", up="raise")
    assert map_to_roots(["lift", "raise"], ["pick", "up", "raise"], b, pairs=True) == ["lift", "raise"]
    assert map_to_roots(["lift", "up"], ["pick", "up"], b, pairs=True) == ["pick", "up"]


def test_no_graph_means_exact_matching() -> None:
    assert map_to_roots(["dog"], ["Dog", "cat"], None, pairs=False) == ["dog", "cat"]


# ------------------------------------------------------------------------------------------------ storage


def test_json_round_trip(tmp_path: Path) -> None:
    g = graph(lift="pick up", hoist="pick up", grab="take")
    g.roots.add("place")
    path = g.save(graph_path(tmp_path, g.domain, g.kind))
    assert path.name == "daily_life_behaviours.json"
    back = SynonymGraph.load(path)
    assert back == g
    assert load_graphs(tmp_path) == {("daily_life", "behaviours"): g}


def test_bad_graph_files_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("{not json")
    with pytest.raises(ConfigError, match="malformed JSON"):
        SynonymGraph.load(tmp_path / "x.json")
    (tmp_path / "x.json").write_text(json.dumps({"version": 1, "domain": "d"}))
    with pytest.raises(ConfigError, match="not a synonym graph"):
        SynonymGraph.load(tmp_path / "x.json")


def test_pairs_tsv_round_trip_and_only_accepted_rows(tmp_path: Path) -> None:
    pairs = [Pair("daily_life", "objects", "hound", "dog", "same head", "y"),
             Pair("daily_life", "objects", "kitty", "cat", "", "")]
    write_pairs(tmp_path / "p.tsv", pairs)
    assert read_pairs(tmp_path / "p.tsv") == [pairs[0]]
    assert read_pairs(tmp_path / "p.tsv", accepted_only=False) == pairs
    (tmp_path / "bad.tsv").write_text("generated\troot\n")
    with pytest.raises(ConfigError, match="header"):
        read_pairs(tmp_path / "bad.tsv")


def test_build_graphs_from_human_lists_and_approved_pairs() -> None:
    human = [("daily_life", "objects", ["Dog", "ball"]), ("daily_life", "objects", ["cat"])]
    pairs = [Pair("daily_life", "objects", "hound", "dog"), Pair("daily_life", "objects", "kitten", "lion")]
    graphs, ignored = build_graphs(human, pairs)
    g = graphs[("daily_life", "objects")]
    assert g.roots == {"dog", "ball", "cat"}
    assert g.edges == {"hound": {"dog"}}
    assert ignored == ["daily_life/objects: kitten -> lion (root not in the human keywords)"]


def test_propose_pairs_heuristics() -> None:
    lemmas = {"cups": "cup", "picking up": "pick up"}
    seqs = [
        ("daily_life", "objects", ["cup", "coffee mug", "grey cat"], ["cups", "mug", "gray cat", "sofa"]),
        ("daily_life", "behaviours", ["pick up"], ["picking up", "pick"]),
    ]
    found = {(p.generated, p.root): p.reason for p in propose_pairs(seqs, {}, lemma=lambda s: lemmas.get(s, s))}
    assert found[("cups", "cup")].startswith("same lemma")
    assert "same head" in found[("mug", "coffee mug")] and "contains" in found[("mug", "coffee mug")]
    assert "spelling" in found[("gray cat", "grey cat")]
    assert "same head" in found[("pick", "pick up")]
    assert ("picking up", "pick up") in found
    assert not any(g == "sofa" for g, _ in found)


def test_known_edges_are_not_proposed_again() -> None:
    g = SynonymGraph("daily_life", "objects")
    g.add_edge("mug", "coffee mug")
    seqs = [("daily_life", "objects", ["coffee mug"], ["mug"])]
    assert propose_pairs(seqs, {("daily_life", "objects"): g}) == []


# ---------------------------------------------------------------------------------------- authors' pickles


@pytest.mark.parametrize("protocol", range(0, pickle.HIGHEST_PROTOCOL + 1))
def test_authors_pickle_loads_through_the_restricted_unpickler(tmp_path: Path, protocol: int) -> None:
    trie = ActionGraph()
    trie.add_path(["lift", "up"], "pick up")
    trie.add_path(["grab"], "take")
    trie.add_path(["grab"], "hold")
    path = tmp_path / "dl_action_graph_v1.pkl"
    path.write_bytes(pickle.dumps(trie, protocol=protocol))
    loaded = load_authors_pickle(path)
    assert type(loaded).__name__ == "ActionGraph" and type(loaded).__module__ == "scoring.synonyms"
    g = graph_from_authors(loaded, *guess_domain_kind(path))
    assert (g.domain, g.kind) == ("daily_life", "behaviours")
    assert g.edges == {"lift up": {"pick up"}, "grab": {"take", "hold"}}


def test_object_graph_name(tmp_path: Path) -> None:
    trie = ObjectGraph()
    trie.add_path(["puppy"], "dog")
    path = tmp_path / "robo_object_graph_v1.pkl"
    path.write_bytes(pickle.dumps(trie))
    assert guess_domain_kind(path) == ("robotics", "objects")
    assert graph_from_authors(load_authors_pickle(path), "robotics", "objects").edges == {"puppy": {"dog"}}


def test_malicious_pickle_is_refused_and_never_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "dl_action_graph_v1.pkl"
    path.write_bytes(pickle.dumps(Evil()))
    with pytest.raises(UnsafePickle, match=r"refused to load (posix|nt|os)\.system"):
        load_authors_pickle(path)
    assert not (tmp_path / "pwned.txt").exists()


def test_other_globals_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.pkl"
    # written as opcodes, not pickle.dumps(print): a library imported earlier in the session (Ray) replaces
    # builtins.print, and its replacement would be pickled under another name
    path.write_bytes(b"(dp0\nVgraph\np1\ncos\nsystem\np2\ns.")
    with pytest.raises(UnsafePickle, match="os.system"):
        load_authors_pickle(path)


def test_a_graph_of_the_wrong_shape_is_refused(tmp_path: Path) -> None:
    trie = ActionGraph()
    trie.graph = {"lift": {"up": [1, 2]}}
    path = tmp_path / "g.pkl"
    path.write_bytes(pickle.dumps(trie))
    with pytest.raises(UnsafePickle, match="not"):
        load_authors_pickle(path)
    path.write_bytes(pickle.dumps({"a": ["b"]}))
    with pytest.raises(UnsafePickle, match="not an ActionGraph or ObjectGraph"):
        load_authors_pickle(path)


def test_truncated_pickle_is_a_one_line_error(tmp_path: Path) -> None:
    path = tmp_path / "g.pkl"
    path.write_bytes(pickle.dumps(ActionGraph())[:5])
    with pytest.raises(ConfigError, match="not a readable graph pickle"):
        load_authors_pickle(path)


# --------------------------------------------------------------------------------------------------- CLI


def test_cli_import_build_and_refusal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trie = ActionGraph()
    trie.add_path(["lift"], "pick up")
    (tmp_path / "dl_action_graph_v1.pkl").write_bytes(pickle.dumps(trie))
    out = tmp_path / "graphs"
    assert main(["import-pickle", str(tmp_path / "dl_action_graph_v1.pkl"), "--out", str(out)]) == 0
    assert SynonymGraph.load(out / "daily_life_behaviours.json").edges == {"lift": {"pick up"}}

    item = make_item(benchmark="mementos", task="daily_life", question_type="description", pressure="easy",
                     images=["a.png"], question="q", options=(), answer="A man picks up a cup.",
                     provenance={"keywords": {"objects": ["man", "cup"], "behaviours": ["pick up"]}})
    write_items(tmp_path / "items.jsonl", [item])
    write_pairs(tmp_path / "ok.tsv", [Pair("daily_life", "objects", "mug", "cup", "", "y")])
    assert main(["build", "--items", str(tmp_path / "items.jsonl"), "--approved", str(tmp_path / "ok.tsv"),
                 "--out", str(out), "--merge"]) == 0
    graphs = load_graphs(out)
    assert graphs[("daily_life", "objects")].edges == {"mug": {"cup"}}
    assert graphs[("daily_life", "behaviours")].edges == {"lift": {"pick up"}}  # merged, not lost

    (tmp_path / "evil_action_graph.pkl").write_bytes(pickle.dumps(Evil()))
    assert main(["import-pickle", str(tmp_path / "evil_action_graph.pkl"), "--domain", "comics",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "refused to load" in err[0]
