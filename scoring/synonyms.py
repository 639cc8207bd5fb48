"""Mementos synonym graphs: generated word or phrase -> the human root word it means, per domain and kind.

The paper (Sec. 2.2, "Synonym graph") keeps one directed graph per domain for objects and one for behaviours. Every
root is a keyword of the human-annotated descriptions; every edge goes from a word an MLLM used to the root a
person judged it synonymous with ("lift up" -> "pick up"). Scoring replaces generated keywords by their roots
before counting matches (:func:`map_to_roots`).

Here a graph is a small JSON file (``<domain>_<kind>.json``, see :func:`graph_path`) built from

* the human keyword lists of a build (the roots: ``provenance.keywords`` of its items), plus
* approved pairs, a TSV a person edits (``accept  domain  kind  generated  root  reason``; rows whose ``accept``
  is ``y``/``yes``/``x``/``1`` are taken).

``python -m scoring.synonyms propose`` writes candidate pairs into that TSV format (``accept`` left empty) from
the keywords of predictions that miss the reference of their own sequence, ranked by WordNet-free heuristics:
the same lemmas, the same head noun or main verb, one phrase inside the other, near spelling, and spaCy vector
similarity when the model has vectors. ``build`` turns human lists + approved pairs into graphs;
``import-pickle`` converts the graphs the Mementos authors published.

Those are Python pickles of two tiny trie classes, ``ActionGraph`` and ``ObjectGraph``, whose ``graph`` attribute
is ``{word: {next_word_or_'': [root, ...]}}``. A pickle runs code when loaded, so they are read with
:class:`GraphUnpickler`, which resolves only those two class names (to local stand-ins) and the plain builtin
containers; anything else (``os.system``, ``builtins.eval``, ...) is refused with :class:`UnsafePickle`. The
authors' ``is_synonym`` checks a one-word path ``graph[w][""]`` and a two-word path ``graph[w1][w2]``; the
import turns both into phrase edges (``"w"`` and ``"w1 w2"``), which is all their lookup can ever reach.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import pickle
import sys
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from pathlib import Path
from typing import Any, ClassVar, Iterable, Mapping, Sequence

from builders.cli import ArgumentParser
from commandline.options import add_command, option, run_command
from commandline.parsing import prog
from filters.text import has_vectors, lemma_of_phrase, load_nlp, normalise_keyword
from scoring.mementos_inputs import predicted_keywords, read_predictions, read_reference
from sources.errors import ConfigError, MirageError

KINDS: tuple[str, ...] = ("objects", "behaviours")
DOMAINS: tuple[str, ...] = ("daily_life", "robotics", "comics")
GRAPH_VERSION = 1
ACCEPTED = frozenset({"y", "yes", "x", "1", "true", "accept", "accepted"})
TSV_COLUMNS: tuple[str, ...] = ("accept", "domain", "kind", "generated", "root", "reason")
AUTHOR_PREFIXES = {"dl": "daily_life", "robo": "robotics", "cmc": "comics"}
AUTHOR_KINDS = {"action": "behaviours", "object": "objects"}


class UnsafePickle(MirageError):
    """A pickle asked for something other than the authors' graph classes and plain containers."""


# ------------------------------------------------------------------------------------------------ the graph


@dataclass
class SynonymGraph:
    """One domain's graph for one kind: the human roots and the edges generated -> roots."""

    domain: str
    kind: str
    roots: set[str] = field(default_factory=set)
    edges: dict[str, set[str]] = field(default_factory=dict)
    """Generated phrase (normalised) -> the roots it may stand for."""

    def add_edge(self, generated: str, root: str) -> None:
        """An edge ``generated -> root``; a self-edge (the authors' graphs hold one for every root, "shelf" ->
        "shelf") only records the root, since every word is its own synonym anyway (:meth:`is_synonym`)."""
        g, r = normalise_keyword(generated), normalise_keyword(root)
        if not g or not r:
            return
        self.roots.add(r)
        if g != r:
            self.edges.setdefault(g, set()).add(r)

    def is_synonym(self, generated: str, root: str) -> bool:
        """Whether ``generated`` may stand for ``root``: the same word, or an edge ``generated -> root``.

        A word is its own synonym, as in the authors' graphs (which list a root among its own synonyms): without it
        an exact word could not claim its root, and references scored against themselves would fall below 100 %."""
        g, r = normalise_keyword(generated), normalise_keyword(root)
        return g == r or r in self.edges.get(g, ())

    def merge(self, other: "SynonymGraph") -> None:
        self.roots |= other.roots
        for g, rs in other.edges.items():
            for r in rs:
                self.add_edge(g, r)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": GRAPH_VERSION,
            "domain": self.domain,
            "kind": self.kind,
            "roots": sorted(self.roots),
            "edges": {g: sorted(rs) for g, rs in sorted(self.edges.items())},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], where: str = "graph") -> "SynonymGraph":
        try:
            if data.get("version") != GRAPH_VERSION:
                raise ConfigError(f"{where}: unknown graph version {data.get('version')!r} (expected {GRAPH_VERSION})")
            graph = cls(str(data["domain"]), str(data["kind"]), {normalise_keyword(r) for r in data["roots"]})
            for g, rs in data["edges"].items():
                for r in rs:
                    graph.add_edge(g, r)
        except (KeyError, TypeError, AttributeError) as exc:
            raise ConfigError(f"{where}: not a synonym graph ({type(exc).__name__}: {exc})") from None
        return graph

    def save(self, path: str | Path) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | Path) -> "SynonymGraph":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"{path}: synonym graph not found") from None
        except ValueError as exc:
            raise ConfigError(f"{path}: malformed JSON: {exc}") from None
        if not isinstance(data, Mapping):
            raise ConfigError(f"{path}: not a synonym graph (expected a JSON object)")
        return cls.from_json(data, str(path))


def graph_path(directory: str | Path, domain: str, kind: str) -> Path:
    return Path(directory) / f"{domain}_{kind}.json"


def load_graphs(directory: str | Path | None) -> dict[tuple[str, str], SynonymGraph]:
    """Every ``<domain>_<kind>.json`` graph in a directory, keyed by (domain, kind); ``{}`` for ``None``."""
    if directory is None:
        return {}
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError(f"{directory}: synonym graph directory not found")
    graphs = {}
    for path in sorted(directory.glob("*.json")):
        g = SynonymGraph.load(path)
        graphs[(g.domain, g.kind)] = g
    return graphs


# --------------------------------------------------------------------------------------------- matching


def map_to_roots(
    reference: Sequence[str], predicted: Sequence[str], graph: SynonymGraph | None, pairs: bool
) -> list[str]:
    """The predicted keywords with synonyms replaced by the reference roots they stand for.

    The authors' procedure (``find_and_replace_*_synonyms``) with exact words first:

    1. every predicted keyword equal to a reference root not yet claimed claims it (a word is its own synonym,
       :meth:`SynonymGraph.is_synonym`, and a root's own word is the surest match it can get);
    2. then the authors' walk over the keywords left: a keyword that is a synonym of a root not yet claimed
       becomes that root and the root is used up; with ``pairs`` (behaviours) two consecutive keywords, both
       unclaimed, joined by a space may match one root together; a keyword matching nothing is kept as it is.

    Without step 1 the authors' walk lets a synonym take a root whose own word comes later in the list ("shelf"
    claims "cabinet" before "cabinet" is reached, and "cabinet" is then counted as a false positive); with it,
    references scored against themselves give 100 % in any order, as the authors' own run on their lists does.
    Once every root is used the walk stops and the rest is kept as plain words - their code appended a
    generator object there (one opaque false positive whatever the count), which is not reproduced. Keywords
    are compared normalised (:func:`~filters.text.normalise_keyword`).
    """
    reference = [normalise_keyword(r) for r in reference]
    predicted = [normalise_keyword(p) for p in predicted]
    if graph is None:
        return predicted
    remaining = list(reference)
    claimed: dict[int, str] = {}
    """Predicted position -> the root it became."""
    for i, word in enumerate(predicted):
        if word in remaining:
            remaining.remove(word)
            claimed[i] = word
    absorbed: set[int] = set()
    """Second keywords of pairs that matched a root together with the keyword before them."""
    i = 0
    while i < len(predicted) and remaining:
        if i in claimed:
            i += 1
            continue
        pair = f"{predicted[i]} {predicted[i + 1]}" if pairs and i + 1 < len(predicted) and i + 1 not in claimed \
            else None
        for j, root in enumerate(remaining):
            if graph.is_synonym(predicted[i], root):
                step = 1
                break
            if pair is not None and graph.is_synonym(pair, root):
                absorbed.add(i + 1)
                step = 2
                break
        else:
            i += 1
            continue
        claimed[i] = remaining.pop(j)
        i += step
    return [claimed.get(k, word) for k, word in enumerate(predicted) if k not in absorbed]


# ------------------------------------------------------------------------------- the authors' pickles


class _AuthorsTrie:
    """Stand-in for the authors' ``ActionGraph``/``ObjectGraph``: only the ``graph`` dict, checked on load."""

    graph: dict[str, dict[str, list[str]]]

    def __setstate__(self, state: Any) -> None:
        if not isinstance(state, dict) or set(state) != {"graph"}:
            raise UnsafePickle(f"{type(self).__name__}: unexpected state {type(state).__name__} "
                               f"with fields {sorted(state) if isinstance(state, dict) else '?'} (expected only 'graph')")
        graph = state["graph"]
        ok = isinstance(graph, dict) and all(
            isinstance(w, str) and isinstance(nxt, dict) and all(
                isinstance(w2, str) and isinstance(rs, list) and all(isinstance(r, str) for r in rs)
                for w2, rs in nxt.items()
            )
            for w, nxt in graph.items()
        )
        if not ok:
            raise UnsafePickle(f"{type(self).__name__}.graph is not {{word: {{word: [root, ...]}}}}")
        self.graph = graph


class ActionGraph(_AuthorsTrie):
    """Local stand-in for the authors' behaviour graph class."""


class ObjectGraph(_AuthorsTrie):
    """Local stand-in for the authors' object graph class."""


_STANDINS: dict[str, type] = {"ActionGraph": ActionGraph, "ObjectGraph": ObjectGraph}
_BUILTINS: dict[str, Any] = {"dict": dict, "list": list, "set": set, "frozenset": frozenset, "tuple": tuple}


class GraphUnpickler(pickle.Unpickler):
    """Resolves the two graph class names (from any module: the authors pickled them from ``__main__``) to the
    stand-ins, and builtin containers; refuses every other global. ``__newobj__`` (protocols 2+) needs no
    lookup; protocols 0/1 also need ``copyreg._reconstructor`` with ``object``, which only allocate instances
    of the classes admitted here."""

    def find_class(self, module: str, name: str) -> Any:
        if name in _STANDINS:
            return _STANDINS[name]
        if module in ("builtins", "__builtin__") and name in _BUILTINS:
            return _BUILTINS[name]
        if (module, name) in (("copyreg", "_reconstructor"), ("copy_reg", "_reconstructor")):
            import copyreg

            return copyreg._reconstructor
        if (module, name) in (("builtins", "object"), ("__builtin__", "object")):
            return object
        raise UnsafePickle(f"refused to load {module}.{name}: a synonym-graph pickle may only hold ActionGraph / "
                           "ObjectGraph and plain containers")


def load_authors_pickle(path: str | Path) -> _AuthorsTrie:
    """The authors' graph object from a pickle, through :class:`GraphUnpickler` (never ``pickle.load``)."""
    data = Path(path).read_bytes()
    try:
        obj = GraphUnpickler(io.BytesIO(data)).load()
    except UnsafePickle as exc:
        raise UnsafePickle(f"{path}: {exc}") from None
    except (pickle.UnpicklingError, EOFError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise ConfigError(f"{path}: not a readable graph pickle ({type(exc).__name__}: {exc})") from None
    if not isinstance(obj, _AuthorsTrie) or not hasattr(obj, "graph"):
        raise UnsafePickle(f"{path}: holds a {type(obj).__name__}, not an ActionGraph or ObjectGraph")
    return obj


def graph_from_authors(trie: _AuthorsTrie, domain: str, kind: str) -> SynonymGraph:
    """Phrase edges of an authors' trie: ``graph[w][""]`` -> ``"w"``, ``graph[w1][w2]`` -> ``"w1 w2"``."""
    out = SynonymGraph(domain, kind)
    for word, nexts in trie.graph.items():
        for nxt, roots in nexts.items():
            phrase = word if nxt == "" else f"{word} {nxt}"
            for root in roots:
                out.add_edge(phrase, root)
    return out


def guess_domain_kind(path: str | Path) -> tuple[str | None, str | None]:
    """Domain and kind from the authors' file names (``dl_action_graph_v1.pkl`` -> daily_life, behaviours)."""
    stem = Path(path).name.lower()
    domain = next((d for p, d in AUTHOR_PREFIXES.items() if stem.startswith(p + "_")), None)
    kind = next((k for p, k in AUTHOR_KINDS.items() if f"_{p}_" in stem), None)
    return domain, kind


# --------------------------------------------------------------------------------- approved pairs (TSV)


@dataclass(frozen=True)
class Pair:
    domain: str
    kind: str
    generated: str
    root: str
    reason: str = ""
    accept: str = ""


def read_pairs(path: str | Path, accepted_only: bool = True) -> list[Pair]:
    """Rows of a pairs TSV (header :data:`TSV_COLUMNS`); only accepted ones unless ``accepted_only`` is off."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: pairs file not found") from None
    rows = list(csv.reader(io.StringIO(text), delimiter="\t"))
    if not rows or [c.strip().lower() for c in rows[0][: len(TSV_COLUMNS)]] != list(TSV_COLUMNS):
        raise ConfigError(f"{path}: the first line must be the header {' / '.join(TSV_COLUMNS)} (tab-separated)")
    out = []
    for n, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        row = row + [""] * (len(TSV_COLUMNS) - len(row))
        accept, domain, kind, generated, root, reason = (c.strip() for c in row[: len(TSV_COLUMNS)])
        if kind not in KINDS:
            raise ConfigError(f"{path}: line {n}: kind {kind!r} is not one of {', '.join(KINDS)}")
        if not generated or not root:
            raise ConfigError(f"{path}: line {n}: generated and root must both be given")
        if accepted_only and accept.lower() not in ACCEPTED:
            continue
        out.append(Pair(domain, kind, normalise_keyword(generated), normalise_keyword(root), reason, accept))
    return out


def write_pairs(path: str | Path, pairs: Iterable[Pair]) -> int:
    rows = list(pairs)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(TSV_COLUMNS)
        for p in rows:
            w.writerow([p.accept, p.domain, p.kind, p.generated, p.root, p.reason])
    return len(rows)


def build_graphs(
    human: Iterable[tuple[str, str, Iterable[str]]], pairs: Iterable[Pair]
) -> tuple[dict[tuple[str, str], SynonymGraph], list[str]]:
    """Graphs from human keyword lists ``(domain, kind, keywords)`` plus approved pairs; returns the graphs and
    the pairs left out (a root that no human list of that domain holds cannot be matched by scoring)."""
    graphs: dict[tuple[str, str], SynonymGraph] = {}
    for domain, kind, words in human:
        g = graphs.setdefault((domain, kind), SynonymGraph(domain, kind))
        g.roots.update(w for w in (normalise_keyword(w) for w in words) if w)
    ignored = []
    for p in pairs:
        g = graphs.get((p.domain, p.kind))
        if g is None or p.root not in g.roots:
            ignored.append(f"{p.domain}/{p.kind}: {p.generated} -> {p.root} (root not in the human keywords)")
            continue
        g.add_edge(p.generated, p.root)
    return graphs, ignored


# ------------------------------------------------------------------------------------------- proposals


def _words(phrase: str) -> list[str]:
    return phrase.split()


def propose_pairs(
    sequences: Iterable[tuple[str, str, Sequence[str], Sequence[str]]],
    graphs: Mapping[tuple[str, str], SynonymGraph],
    lemma: Any = None,
    similarity: Any = None,
    min_ratio: float = 0.8,
    min_similarity: float = 0.75,
) -> list[Pair]:
    """Candidate (generated -> root) pairs for a person to accept.

    ``sequences`` yields ``(domain, kind, reference keywords, predicted keywords)`` per sequence; a candidate
    pairs a predicted keyword that misses its own reference (and has no edge yet) with a root of that same
    reference, when a heuristic says they may mean the same: ``same lemma``, ``same head`` (last word of an
    object, first word of a behaviour), ``contains`` (every word of one is in the other), ``spelling`` (difflib
    ratio >= ``min_ratio``), or ``similar`` (``similarity(a, b) >= min_similarity``, where vectors exist).
    ``lemma`` maps a phrase to its lemmatised form (spaCy); without it lemmas are compared as written.
    Each (domain, kind, generated, root) is proposed once, with the reasons joined and the number of sequences.
    """
    lemma = lemma or (lambda s: s)
    found: dict[tuple[str, str, str, str], tuple[set[str], int]] = {}
    for domain, kind, reference, predicted in sequences:
        graph = graphs.get((domain, kind))
        refs = [normalise_keyword(r) for r in reference]
        for gen in (normalise_keyword(p) for p in predicted):
            if not gen or gen in refs or (graph and gen in graph.edges):
                continue
            for root in refs:
                reasons = _reasons(gen, root, kind, lemma, similarity, min_ratio, min_similarity)
                if reasons:
                    key = (domain, kind, gen, root)
                    old, count = found.get(key, (set(), 0))
                    found[key] = (old | reasons, count + 1)
    out = [
        Pair(d, k, g, r, f"{', '.join(sorted(rs))}; {n} sequence{'s' if n > 1 else ''}")
        for (d, k, g, r), (rs, n) in found.items()
    ]
    return sorted(out, key=lambda p: (p.domain, p.kind, p.root, p.generated))


def _reasons(gen: str, root: str, kind: str, lemma: Any, similarity: Any, min_ratio: float, min_sim: float) -> set[str]:
    reasons = set()
    lg, lr = lemma(gen), lemma(root)
    if lg == lr:
        reasons.add("same lemma")
    wg, wr = _words(lg), _words(lr)
    head = (lambda w: w[-1]) if kind == "objects" else (lambda w: w[0])
    if wg and wr and head(wg) == head(wr) and lg != lr:
        reasons.add("same head")
    if lg != lr and (set(wg) <= set(wr) or set(wr) <= set(wg)):
        reasons.add("contains")
    if lg != lr and SequenceMatcher(None, gen, root).ratio() >= min_ratio:
        reasons.add("spelling")
    if similarity is not None:
        score = similarity(gen, root)
        if score is not None and score >= min_sim:
            reasons.add(f"similar {score:.2f}")
    return reasons


# --------------------------------------------------------------------------------------------- the CLI


def _cmd_import(ns: ImportPickleOptions) -> int:
    for path in ns.pickles:
        domain, kind = guess_domain_kind(path)
        domain, kind = ns.domain or domain, ns.kind or kind
        if not domain or not kind:
            raise ConfigError(f"{path}: cannot tell domain and kind from the name; give --domain and --kind")
        graph = graph_from_authors(load_authors_pickle(path), domain, kind)
        target = graph_path(ns.out, domain, kind)
        if target.exists():
            existing = SynonymGraph.load(target)
            existing.merge(graph)
            graph = existing
        graph.save(target)
        print(f"{path} -> {target}: {len(graph.roots)} roots, {sum(map(len, graph.edges.values()))} edges")
    return 0


def _cmd_build(ns: BuildGraphsOptions) -> int:
    refs = read_reference(ns.items)
    human = [(r.domain, kind, getattr(r, kind)) for r in refs for kind in KINDS]
    pairs = [p for path in ns.approved for p in read_pairs(path)]
    graphs, ignored = build_graphs(human, pairs)
    for g in graphs.values():
        if ns.merge and graph_path(ns.out, g.domain, g.kind).exists():
            g.merge(SynonymGraph.load(graph_path(ns.out, g.domain, g.kind)))
        g.save(graph_path(ns.out, g.domain, g.kind))
        print(f"{g.domain}/{g.kind}: {len(g.roots)} roots, {sum(map(len, g.edges.values()))} edges "
              f"-> {graph_path(ns.out, g.domain, g.kind)}")
    for line in ignored:
        print(f"ignored: {line}", file=sys.stderr)
    return 0


def _cmd_propose(ns: ProposeOptions) -> int:
    refs = {r.id: r for r in read_reference(ns.items)}
    predictions = read_predictions(ns.predictions, refs)
    predicted = predicted_keywords(predictions, refs, llm=None)
    graphs = load_graphs(ns.graphs) if ns.graphs else {}
    nlp = load_nlp()
    cache: dict[str, str] = {}

    def lemma(s: str) -> str:
        if s not in cache:
            cache[s] = lemma_of_phrase(s, nlp)
        return cache[s]

    similarity = None
    if has_vectors(nlp):
        similarity = lambda a, b: nlp(a).similarity(nlp(b))  # noqa: E731
    seqs = [(refs[i].domain, kind, getattr(refs[i], kind), getattr(kw, kind))
            for i, kw in predicted.items() for kind in KINDS]
    pairs = propose_pairs(seqs, graphs, lemma=lemma, similarity=similarity)
    n = write_pairs(ns.out, pairs)
    print(f"{n} candidate pairs -> {ns.out}; mark accepted rows with 'y' in the first column, then run "
          f"mirage synonyms build --approved {ns.out}")
    return 0


@dataclass(kw_only=True)
class ImportPickleOptions:
    OPTION_HELP: ClassVar[dict[str, str]] = {"domains": ", ".join(DOMAINS)}

    pickles: list[str] = option(metavar="FILE", positional=True,
                                help="e.g. dl_action_graph_v1.pkl robo_object_graph_v1.pkl")
    domain: str | None = option(None, choices=DOMAINS, metavar="DOMAIN",
                                help="domain of the graphs: {domains} (default from the file name: dl_, robo_, cmc_)")
    kind: str | None = option(None, choices=KINDS,
                              help="keyword kind of the graphs (default from the file name: _action_, _object_)")
    out: str = option(metavar="DIR", help="graph directory (graphs already there are merged into)")


@dataclass(kw_only=True)
class BuildGraphsOptions:
    items: str = option(metavar="PATH", help="build dir or items.jsonl (reference keywords)")
    approved: list[str] = option(default_factory=list, metavar="FILE",
                                 help="pairs TSV files; rows with accept=y are used (default none)")
    out: str = option(metavar="DIR", help="graph directory")
    merge: bool = option(False, help="keep the edges of graphs already in --out")


@dataclass(kw_only=True)
class ProposeOptions:
    items: str = option(metavar="PATH", help="build dir or items.jsonl")
    predictions: str = option(metavar="FILE", help="JSONL of {{id, prediction}}")
    graphs: str | None = option(None, metavar="DIR",
                                help="existing graph directory (known edges are not proposed again)")
    out: str = option(metavar="FILE", help="TSV of candidates (accept column empty)")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=prog("python -m scoring.synonyms"), description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_command(sub, "import-pickle", ImportPickleOptions, _cmd_import,
                help="convert the Mementos authors' graph pickles (restricted unpickler)")
    add_command(sub, "build", BuildGraphsOptions, _cmd_build,
                help="graphs from a build's human keyword lists plus approved pairs")
    add_command(sub, "propose", ProposeOptions, _cmd_propose,
                help="candidate pairs from predictions, for a person to accept")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m scoring.synonyms``."""
    try:
        return run_command(parser(), argv)
    except MirageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
