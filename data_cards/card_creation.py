"""The card's "Dataset Creation" section: how the build was made (its parameters, statistics and skipped
candidates), its pairs, what the lint found, and its sources with their licences."""

from __future__ import annotations

from collections import Counter
from typing import Any, Callable, Mapping, Sequence

from builders.lint import markdown as lint_markdown
from builders.lint.report import blind_markdown

from .tables import flatten, md_table, short


def creation_values(
    build: Mapping[str, Any], stats: Mapping[str, Any], licence: Mapping[str, Any], scrub: Callable[[Any], Any]
) -> dict[str, Any]:
    """The template's values for this section (``licence``: :func:`data_cards.licences.resolve_license`)."""
    return {
        "clip_rationale": _clip_rationale(build),
        "parameters_table": _parameters_table(build, scrub),
        "build_stats_table": _build_stats_table(build, scrub),
        "skipped_text": _skipped_text(build, scrub),
        "pairs_text": pairs_text(stats.get("pairs") or {}),
        "lint_text": lint_markdown(build.get("lint")),
        "blind_text": blind_markdown(build.get("lint")),
        "sources_table": _sources_table(licence["rows"]),
    }


def _parameters_table(build: Mapping[str, Any], scrub: Callable[[Any], Any]) -> str:
    """Everything that decides the build's bytes: seed, code version, config (less the option families it did not
    use), input hashes and the twin it was built from."""
    config = scrub(dict(build.get("config") or {}))
    unused = unused_option_prefixes(build)
    config = {k: v for k, v in config.items() if not k.startswith(unused)}
    params = [("seed", build.get("seed")), ("code_version", build.get("code_version")), ("build", build.get("name"))]
    params += [(f"config.{k}", v) for k, v in flatten(config)]
    params += [(f"input_hashes.{k}", v) for k, v in flatten(scrub(build.get("input_hashes") or {}))]
    params += [(f"twin_of.{k}", v) for k, v in flatten(scrub(build.get("twin_of") or {}))]  # shared_images too
    table = md_table(["parameter", "value"], [(f"`{k}`", f"`{short(v)}`") for k, v in params])
    if unused:
        table += "\n\nLeft out: the " + " and ".join(
            f"`{u}*`" for u in unused
        ) + " options, which this build did not use (" + "; ".join(_unused_reasons(build, unused)) + ")."
    return table


def _build_stats_table(build: Mapping[str, Any], scrub: Callable[[Any], Any]) -> str:
    build_stats = [(k, v) for k, v in flatten(scrub(build.get("stats") or {})) if not isinstance(v, (list, dict))]
    if not build_stats:
        return "_The build recorded no statistics._"
    return md_table(["statistic", "value"], [(f"`{k}`", short(v)) for k, v in build_stats])


def _skipped_text(build: Mapping[str, Any], scrub: Callable[[Any], Any]) -> str:
    skipped = build.get("skipped") or []
    if not skipped:
        return "The build skipped nothing."
    reasons = Counter(
        (s.get("reason") or s.get("why") or "unspecified") if isinstance(s, Mapping) else str(s) for s in skipped
    )
    return f"The build skipped {len(skipped)} candidate(s):\n\n" + md_table(
        ["reason", "count"], [(short(scrub(r)), n) for r, n in reasons.most_common(20)]
    )


def _sources_table(rows: Sequence[Mapping[str, str]]) -> str:
    if not rows:
        return "_The build did not record its sources._"
    return md_table(
        ["source", "licence", "note"],
        [(f"`{r['source']}`", f"`{r['license']}`", r["note"] + (f" ({r['url']})" if r["url"] else "")) for r in rows],
    )


def pairs_text(pairs: Mapping[str, Any]) -> str:
    """What the paired metric is and how many released items it covers (a pair whose partner was dropped in
    review is no pair: its remaining item is released and counted unpaired)."""
    every = pairs.get("all") or {}
    if not every.get("pairs"):
        return "_No item of this release has a partner: the paired metric does not apply._"
    rows = [[t, v["items"], v["pairs"], v["unpaired"], f"{v['share']:.0%}"]
            for t, v in pairs["tasks"].items() if v["items"]]
    return (
        "A closed question is asked of two images that give it different answers; both items carry "
        "`provenance.pair` (`id`, `role` `a` / `b`). A model that does not look answers both the same way, so it "
        "cannot get both right. Every scorer reports `paired` beside the paper's metrics (which count a pair's "
        "items one by one): `group_accuracy`, the share of pairs with both items right, `question_accuracy` over "
        "the same items, and the numbers of `pairs` and `unpaired` items; the lmms-eval tasks report "
        "`group_accuracy` and the VLMEvalKit sheets carry `pair_id`. An item whose partner was dropped in review "
        "stays in the release, unpaired.\n\n"
        f"{every['paired']} of {every['items']} items ({every['share']:.0%}) are in {every['pairs']} complete "
        f"pairs.\n\n" + md_table(["task", "items", "pairs", "unpaired", "paired"], rows)
    )


def unused_option_prefixes(build: Mapping[str, Any]) -> tuple[str, ...]:
    """Option families the build did not use: ``llm_`` without an LLM model, ``clip_`` when CLIP was skipped."""
    config = build.get("config") or {}
    stats = build.get("stats") or {}
    out = []
    if not config.get("llm_model"):
        out.append("llm_")
    clip = stats.get("clip") if isinstance(stats.get("clip"), Mapping) else {}
    if config.get("no_clip") or (clip and clip.get("ran") is False) or not any(k.startswith("clip_") for k in config):
        out.append("clip_")
    return tuple(out)


def _unused_reasons(build: Mapping[str, Any], unused: Sequence[str]) -> list[str]:
    reasons = []
    if "llm_" in unused:
        reasons.append("no LLM model was configured: texts came from templates")
    if "clip_" in unused:
        reasons.append("the CLIP stage did not run")
    return reasons


def clip_ran(build: Mapping[str, Any]) -> bool:
    clip = (build.get("stats") or {}).get("clip")
    return isinstance(clip, Mapping) and clip.get("ran") is True


def _clip_rationale(build: Mapping[str, Any]) -> str:
    if clip_ran(build):
        return "size, occlusion, co-occurrence and CLIP similarity"
    return "size, occlusion and co-occurrence; the CLIP similarity stage did not run for this build"
