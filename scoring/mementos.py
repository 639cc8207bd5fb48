"""Mementos metrics: object and behaviour recall, precision and F1 after synonym mapping (paper Sec. 2.2).

``mirage score mementos --release RELEASE --predictions preds.jsonl [--graphs DIR] [--out DIR]`` (the evaluation
front end, :mod:`scoring.__main__`, which takes a release, a build dir or an items.jsonl).

For every sequence with a prediction (JSONL lines ``{"id": item id, "output": description}``; the older key
``prediction`` is read too):

1. keywords of the reference and of the prediction (:class:`builders.mementos.keywords.KeywordExtractor`): offline,
   the reference lists stored in ``provenance.keywords`` (re-extracted when reviewers fixed the description) and
   spaCy over the prediction; with ``--llm-model``, both lists from one answer to the paper's prompt, as the
   authors' notebook does;
2. predicted keywords replaced by the roots of the domain's synonym graph (:func:`scoring.synonyms.map_to_roots`;
   behaviours also match two consecutive keywords, objects one, as the authors do);
3. per sequence, over keyword *sets*: TP = |ref & pred|, FP = |pred - ref|, FN = |ref - pred|; recall, precision
   and F1, each 0 when its denominator is 0 (the authors' convention, so a sequence with an empty list scores 0);
4. means over sequences (macro, as the paper's ``np.mean``) per domain (Table 2) and over all, plus the breakdowns
   of Figure 6 (recall and the rest against *episode length*, the number of reference behaviours, Sec. 2.1.3)
   and against *sequence length*, the number of frames (Figure 2a).

Sequences without a prediction are not scored and are counted as ``missing`` (scoring them as empty answers
would mix "the model failed" with "the run was partial"); ids that are not Mementos items are an error.
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from builders.cli import stdout, table
from builders.llm import add_llm_arguments, make_client
from builders.mementos.keywords import KeywordExtractor
from commandline.options import add_options, option
from filters.text import Keywords, ListScore, normalise_keyword, score_lists
from scoring.llm import llm_config
from scoring.mementos_inputs import BENCHMARK, Reference, keyword_pairs, reference_of
from scoring.plotting import pyplot, save_png
from scoring.predictions import outputs_of
from scoring.synonyms import KINDS, SynonymGraph, load_graphs, map_to_roots

EPISODE_EDGES: tuple[int, ...] = (1, 4, 7, 10, 13)
"""Episode-length buckets: 0, 1-3, 4-6, 7-9, 10-12, 13+ behaviours (the paper's lengths run 1 to 17)."""
FRAME_EDGES: tuple[int, ...] = (1, 6, 11, 16, 21)
"""Sequence-length buckets: 1-5, 6-10, 11-15, 16-20, 21+ frames (daily-life sequences have 5 to 25)."""
PAIRS = {"objects": False, "behaviours": True}
"""Whether two consecutive predicted keywords may match one root (the authors do it for behaviours only)."""


@dataclass(frozen=True)
class SequenceScore:
    id: str
    domain: str
    n_frames: int
    episode_length: int
    objects: ListScore
    behaviours: ListScore
    reference: Keywords
    predicted: Keywords
    mapped: Keywords


# ------------------------------------------------------------------------------------------------ metrics


def score_sequence(
    ref: Reference, reference: Keywords, predicted: Keywords, graphs: Mapping[tuple[str, str], SynonymGraph]
) -> SequenceScore:
    mapped = {}
    scores = {}
    for kind in KINDS:
        r, p = getattr(reference, kind), getattr(predicted, kind)
        mapped[kind] = tuple(map_to_roots(r, p, graphs.get((ref.domain, kind)), pairs=PAIRS[kind]))
        scores[kind] = score_lists((normalise_keyword(x) for x in r), mapped[kind])
    return SequenceScore(ref.id, ref.domain, ref.n_frames, len(reference.behaviours), scores["objects"],
                         scores["behaviours"], reference, predicted, Keywords(mapped["objects"], mapped["behaviours"]))


METRICS = ("recall", "precision", "f1")


def mean_scores(scores: Sequence[SequenceScore]) -> dict[str, Any]:
    """Macro means over sequences: ``{"n": ..., "objects": {recall, precision, f1}, "behaviours": {...}}``."""
    out: dict[str, Any] = {"n": len(scores)}
    for kind in KINDS:
        out[kind] = {
            m: round(sum(getattr(getattr(s, kind), m) for s in scores) / len(scores), 6) if scores else 0.0
            for m in METRICS
        }
    return out


def bucket(value: int, edges: Sequence[int]) -> str:
    """The label of the bucket of ``value``: below the first edge "0" (or "<e"), then "a-b", last "e+"."""
    if value < edges[0]:
        return str(value) if edges[0] == 1 else f"<{edges[0]}"
    for lo, hi in zip(edges, edges[1:]):
        if lo <= value < hi:
            return f"{lo}-{hi - 1}" if hi - 1 > lo else str(lo)
    return f"{edges[-1]}+"


def breakdown(scores: Sequence[SequenceScore], attr: str, edges: Sequence[int]) -> dict[str, dict[str, Any]]:
    """Per domain, per bucket of ``attr`` (``episode_length`` or ``n_frames``): :func:`mean_scores`."""
    labels = [bucket(v, edges) for v in [0, *edges]]
    out: dict[str, dict[str, Any]] = {}
    for domain in sorted({s.domain for s in scores}):
        rows = {}
        for label in dict.fromkeys(labels):
            group = [s for s in scores if s.domain == domain and bucket(getattr(s, attr), edges) == label]
            if group:
                rows[label] = mean_scores(group)
        out[domain] = rows
    return out


@dataclass
class Report:
    by_domain: dict[str, Any]
    overall: dict[str, Any]
    by_episode_length: dict[str, Any]
    by_frames: dict[str, Any]
    missing: dict[str, int]
    keywords: str
    sequences: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def score(
    references: Sequence[Reference],
    predictions: Mapping[str, str],
    graphs: Mapping[tuple[str, str], SynonymGraph],
    llm: Any = None,
) -> Report:
    """The whole report (see the module docstring)."""
    refs = {r.id: r for r in references}
    pairs = keyword_pairs(predictions, refs, llm)
    scores = [score_sequence(refs[i], r, p, graphs) for i, (r, p) in sorted(pairs.items())]
    domains = sorted({s.domain for s in scores})
    missing: dict[str, int] = {}
    for r in references:
        if r.id not in predictions:
            missing[r.domain] = missing.get(r.domain, 0) + 1
    return Report(
        by_domain={d: mean_scores([s for s in scores if s.domain == d]) for d in domains},
        overall=mean_scores(scores),
        by_episode_length=breakdown(scores, "episode_length", EPISODE_EDGES),
        by_frames=breakdown(scores, "n_frames", FRAME_EDGES),
        missing=dict(sorted(missing.items())),
        keywords=KeywordExtractor(llm).method if scores else "none",
        sequences=[
            {"id": s.id, "domain": s.domain, "n_frames": s.n_frames, "episode_length": s.episode_length,
             "objects": asdict(s.objects), "behaviours": asdict(s.behaviours),
             "reference": s.reference.as_dict(), "predicted": s.predicted.as_dict(), "mapped": s.mapped.as_dict()}
            for s in scores
        ],
    )


# ------------------------------------------------------------------------------------------------ the CLI


def _pct(x: float) -> str:
    return f"{100 * x:.2f}%"


def print_report(report: Report | Mapping[str, Any], model: str = "") -> None:
    """Table 2 (one row per domain and keyword kind, so it fits 80 columns) and the Figure 6 breakdowns.

    ``report``: a :class:`Report`, or the ``results.json`` dict of :func:`run` (the front end passes that)."""
    if not isinstance(report, Report):
        model = model or (report.get("meta") or {}).get("model", "")
        report = Report(**{k: v for k, v in report.items() if k != "meta"})
    rows = [
        [d if i == 0 else "", v["n"] if i == 0 else "", kind, *(_pct(v[kind][m]) for m in METRICS)]
        for d, v in [*report.by_domain.items(), ("all", report.overall)] for i, kind in enumerate(KINDS)
    ]
    stdout.print(table(f"Mementos scores{' - ' + model if model else ''} (Table 2)", ["domain", "n", "keywords",
                       "recall", "precision", "F1"], rows, legend=f"keywords extracted by {report.keywords}"))
    for title, data in (("episode length (reference behaviours)", report.by_episode_length),
                        ("sequence length (frames)", report.by_frames)):
        rows = [[f"{d} {label}", v["n"], _pct(v["objects"]["recall"]), _pct(v["behaviours"]["recall"]),
                 _pct(v["objects"]["f1"]), _pct(v["behaviours"]["f1"])]
                for d, buckets in data.items() for label, v in buckets.items()]
        stdout.print(table(f"By {title} (Figure 6)", ["domain bucket", "n", "obj. recall", "beh. recall",
                                                       "obj. F1", "beh. F1"], rows))
    if report.missing:
        stdout.print(f"not scored (no prediction): {report.missing}")


def plot_recall_by_episode(report: Report, path: str | Path, model: str = "") -> Path:
    """Figure 6's plot: object and behaviour recall against episode length, one line pair per domain."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for domain, buckets in report.by_episode_length.items():
        labels = list(buckets)
        for kind, style in (("objects", "-o"), ("behaviours", "--s")):
            ax.plot(labels, [buckets[b][kind]["recall"] for b in labels], style, label=f"{domain} {kind}")
    ax.set_xlabel("episode length (reference behaviours)")
    ax.set_ylabel("recall")
    ax.set_ylim(0, 1)
    ax.set_title(f"Recall by episode length{' - ' + model if model else ''}")
    ax.legend(fontsize=7)
    return save_png(fig, path)


# ------------------------------------------------------------------------------------------------ front end


@dataclass(kw_only=True)
class MementosScoreOptions:
    graphs: str | None = option(None, metavar="DIR", help="synonym graph directory (<domain>_<kind>.json) (default "
                                                          "none: exact matches only)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Mementos' own options for ``mirage score mementos``: synonym graphs and the keyword LLM."""
    add_options(parser, MementosScoreOptions)
    add_llm_arguments(parser, "keyword LLM (optional; default spaCy and the stored reference keywords)",
                      "model that lists both descriptions' keywords with the paper's prompt")


def run(items: Sequence[Any], predictions: Mapping[str, Any], args: argparse.Namespace) -> dict[str, Any]:
    """:func:`score` as ``results.json`` content, for the front end (``predictions``: id -> ``Prediction``)."""
    references = [reference_of(it) for it in items if it.benchmark == BENCHMARK]
    outputs = outputs_of(predictions)
    llm = make_client(llm_config(args))
    return score(references, outputs, load_graphs(args.graphs), llm).as_dict()


def plots(results: Mapping[str, Any], out_dir: str | Path) -> list[Path]:
    """Figure 6 (recall by episode length) as ``recall_by_episode.png`` in ``out_dir``."""
    report = Report(**{k: v for k, v in results.items() if k != "meta"})
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    return [plot_recall_by_episode(report, Path(out_dir) / "recall_by_episode.png",
                                   (results.get("meta") or {}).get("model", ""))]
