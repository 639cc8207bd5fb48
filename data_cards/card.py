"""The dataset card: a generated YAML header and generated tables inside editable prose.

The prose lives in ``card_template.md`` (``string.Template``: ``$name`` placeholders, ``$$`` for a dollar sign);
everything else - the YAML header, the tables, the numbers - is computed here from the build, the review summary
and the released items, so the card cannot disagree with the data.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from string import Template
from typing import Any, Iterable, Mapping, Sequence

import yaml

from builders.items import OPTION_LETTERS, Item
from builders.lint import markdown as lint_markdown

from .export import SPLIT, TaskShards
from .features import COLUMNS

TEMPLATE_PATH = Path(__file__).with_name("card_template.md")

BENCHMARKS: dict[str, dict[str, str]] = {
    "mioh": {
        "pretty": "MIOH",
        "title": "Towards Robust Benchmark of Object Hallucination on Multiple Images",
        "authors": "anonymous authors, under double-blind review",
        "description": "Multi-image object hallucination: existence, counting, attribute and position questions "
        "(comprehensive, comparative and selective multiple-choice questions with a \"None of the above\" option) "
        "under adversarial pressures: hard positives, hard negatives, the number of images and misleading text.",
    },
    "mementos": {
        "pretty": "Mementos",
        "title": "Mementos: A Comprehensive Benchmark for Multimodal Large Language Model Reasoning over Image "
        "Sequences",
        "authors": "anonymous ACL submission",
        "description": "Reasoning over image sequences: object and behaviour hallucination in descriptions of "
        "sequences sampled from videos and comics.",
    },
    "predictive": {
        "pretty": "Predictive Reasoning",
        "title": "Benchmarking Sequential Visual Input Reasoning and Prediction in Multimodal Large Language Models",
        "authors": "Zhu, Sha, Shu, Zhao, Zhao and Yin",
        "description": "Predictive reasoning over image sequences: abstract patterns, human activity and physical "
        "interaction prediction.",
    },
    "reefknot": {
        "pretty": "Reefknot",
        "title": "Reefknot: A Comprehensive Benchmark for Relation Hallucination Evaluation, Analysis and "
        "Mitigation in Multimodal Large Language Models",
        "authors": "Zheng, Chen, Yan, Zou and Hu",
        "description": "Relation hallucination: perceptive and cognitive (subject, relation, object) triplets asked "
        "as yes/no, multiple-choice and open questions.",
    },
    "mmsap": {
        "pretty": "MM-SAP",
        "title": "MM-SAP: A Comprehensive Benchmark for Assessing Self-Awareness of Multimodal Large Language "
        "Models in Perception",
        "authors": "Wang, Liao, Liu, Liu, Wang and Wang",
        "description": "Self-awareness in perception: multiple-choice questions with a refusal option over "
        "known-knowns, knowledge questions and unanswerable questions.",
    },
}

KNOWN_SOURCE_LICENSES: dict[str, tuple[str, str]] = {
    # source name -> (Hub licence id, note)
    "demo": ("cc0-1.0", "generated procedurally by Mirage and dedicated to the public domain (CC0 1.0)"),
    "coco": ("cc-by-4.0", "COCO annotations are CC BY 4.0; the images follow the Flickr terms of use"),
    "visual_genome": ("cc-by-4.0", "Visual Genome is CC BY 4.0"),
    "vqav2": ("cc-by-4.0", "VQA v2 annotations are CC BY 4.0; the images are COCO's"),
}

SOURCE_OPTIONS = {
    # build config option -> source name, for builders whose build.json has no `sources`
    "coco_rem": "coco_rem",
    "coco": "coco",
    "paco": "paco",
    "svg": "svg",
    "visual_genome": "visual_genome",
    "vqav2": "vqav2",
    "nextqa": "nextqa",
    "activitynet": "activitynet",
    "charades": "charades",
    "clevrer": "clevrer",
}

TASK_CATEGORIES = ["visual-question-answering", "image-text-to-text"]


# --------------------------------------------------------------------------------------------------- statistics
def answer_label(item: Item) -> str:
    """How an answer is counted in the answer distribution: a letter, yes/no, or ``(open answer)``."""
    if item.options and len(item.answer) == 1 and item.answer in OPTION_LETTERS:
        return item.answer
    if item.answer.strip().lower() in ("yes", "no"):
        return item.answer.strip().lower()
    return "(open answer)"


def _sorted_counter(counter: Counter, *, numeric: bool = False) -> dict[str, int]:
    keys = sorted(counter, key=(lambda k: int(k)) if numeric else (lambda k: str(k)))
    return {str(k): counter[k] for k in keys}


def compute_stats(items: Sequence[Item], status: Mapping[str, str]) -> dict[str, Any]:
    """Every number the card reports, from the released items."""
    task_pressure: dict[str, Counter] = {}
    for it in items:
        task_pressure.setdefault(it.task, Counter())[it.pressure] += 1
    return {
        "num_items": len(items),
        "num_images": sum(len(it.images) for it in items),
        "tasks": _sorted_counter(Counter(it.task for it in items)),
        "pressures": _sorted_counter(Counter(it.pressure for it in items)),
        "question_types": _sorted_counter(Counter(it.question_type for it in items)),
        "n_images": _sorted_counter(Counter(len(it.images) for it in items), numeric=True),
        "answers": _sorted_counter(Counter(answer_label(it) for it in items)),
        "review_status": _sorted_counter(Counter(status[it.id] for it in items)),
        "task_pressure": {t: dict(sorted(c.items())) for t, c in sorted(task_pressure.items())},
    }


# ------------------------------------------------------------------------------------------------------ licences
def _source_entries(build: Mapping[str, Any]) -> list[dict[str, str]]:
    """Normalise whatever the build recorded about its sources into ``[{name, license, url}]``."""
    config = build.get("config") or {}
    raw: Any = config.get("sources", build.get("sources"))
    if raw is None and isinstance(config.get("source"), str):
        raw = [config["source"]]
    entries: list[dict[str, str]] = []
    if isinstance(raw, str):
        raw = [raw]
    if isinstance(raw, Mapping):
        raw = [
            {"name": k, **(v if isinstance(v, Mapping) else {"license": v} if isinstance(v, str) else {})}
            for k, v in raw.items()
        ]
    for entry in raw or []:
        if isinstance(entry, str):
            entries.append({"name": entry})
        elif isinstance(entry, Mapping):
            name = entry.get("name") or entry.get("id") or entry.get("source") or entry.get("kind") or "?"
            e = {"name": str(name)}
            lic = entry.get("license") or entry.get("licence")
            if lic:
                e["license"] = str(lic)
            if entry.get("url"):
                e["url"] = str(entry["url"])
            entries.append(e)
    if raw is None:
        # Builders that do not list their sources: the sources they say they generated from, and the source
        # options (paths to a dataset's files) that were given.
        stats = build.get("stats") or {}
        names = [str(n) for n in stats.get("generated_sources") or [] if n]
        names += [k for k, v in config.items() if v and k in SOURCE_OPTIONS]
        seen: set[str] = set()
        for n in names:
            n = SOURCE_OPTIONS.get(n, n)
            if n not in seen:
                seen.add(n)
                entries.append({"name": n})
    extra = build.get("licenses") or build.get("licences") or config.get("licenses") or config.get("licences")
    if isinstance(extra, Mapping):
        for name, lic in extra.items():
            for e in entries:
                if e["name"] == name and "license" not in e:
                    e["license"] = str(lic)
            if not any(e["name"] == name for e in entries):
                entries.append({"name": str(name), "license": str(lic)})
    return entries


def resolve_license(build: Mapping[str, Any], override: str | None = None) -> dict[str, Any]:
    """The card's licence: ``--license`` if given, else the sources' licences, else ``unknown`` (said clearly)."""
    sources = _source_entries(build)
    rows = []
    found: list[str] = []
    missing: list[str] = []
    for e in sources:
        lic, note = e.get("license"), "recorded in build.json"
        if not lic and e["name"].lower() in KNOWN_SOURCE_LICENSES:
            lic, note = KNOWN_SOURCE_LICENSES[e["name"].lower()]
        if lic:
            found.append(lic.lower())
        else:
            missing.append(e["name"])
            note = "not recorded: check the source's terms before redistributing"
        rows.append({"source": e["name"], "license": lic or "unknown", "note": note, "url": e.get("url", "")})
    distinct = sorted(set(found))
    if override:
        value: Any = override
        text = f"`{override}` (chosen at release time)"
        note = "The release licence was set explicitly with `--license`."
    elif distinct and not missing:
        value = distinct[0] if len(distinct) == 1 else distinct
        text = ", ".join(f"`{d}`" for d in distinct) + " (from the sources)"
        note = (
            "The licence above is taken from the sources."
            if len(distinct) == 1
            else "The sources carry different licences; each item's source is in its `provenance`, and every "
            "licence above applies to the items from that source."
        )
    else:
        value = "unknown"
        text = "`unknown`"
        what = ", ".join(missing) if missing else "no source was recorded in build.json"
        note = (
            f"**Licence unknown**: the build did not record a licence for: {what}. Check the terms of every source "
            "before using or redistributing this dataset, and set the licence with `--license` in the next release."
        )
    return {"value": value, "text": text, "rows": rows, "note": note}


# ---------------------------------------------------------------------------------------------------- the YAML
def size_category(n: int) -> str:
    for bound, label in (
        (1_000, "n<1K"),
        (10_000, "1K<n<10K"),
        (100_000, "10K<n<100K"),
        (1_000_000, "100K<n<1M"),
        (10_000_000, "1M<n<10M"),
    ):
        if n < bound:
            return label
    return "10M<n<100M"


def _features_yaml() -> list[dict[str, Any]]:
    from .features import release_features

    return release_features()._to_yaml_list()


def config_entries(shards: Sequence[TaskShards]) -> list[dict[str, Any]]:
    """``[{name, files_glob, num_examples, num_bytes, download_size, default}]``: ``all`` first, then per task."""
    total = {
        "name": "all",
        "glob": "data/*/test-*.parquet" if len(shards) > 1 else "data/test-*.parquet",
        "num_examples": sum(s.num_examples for s in shards),
        "num_bytes": sum(s.num_bytes for s in shards),
        "download_size": sum(s.download_size for s in shards),
        "default": True,
        "task": None,
    }
    if len(shards) == 1:
        return [total]
    return [total] + [
        {
            "name": s.slug,
            "glob": f"data/{s.slug}/{SPLIT}-*.parquet",
            "num_examples": s.num_examples,
            "num_bytes": s.num_bytes,
            "download_size": s.download_size,
            "default": False,
            "task": s.task,
        }
        for s in shards
    ]


def card_metadata(
    *, pretty_name: str, benchmark: str, license_value: Any, num_items: int, configs: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    features = _features_yaml()
    meta: dict[str, Any] = {
        "pretty_name": pretty_name,
        "license": license_value,
        "language": ["en"],
        "task_categories": list(TASK_CATEGORIES),
        "size_categories": [size_category(num_items)],
        "tags": ["hallucination", "multimodal", "benchmark", "mirage", benchmark],
        "configs": [],
        "dataset_info": [],
    }
    for c in configs:
        entry: dict[str, Any] = {"config_name": c["name"], "data_files": [{"split": SPLIT, "path": c["glob"]}]}
        if c["default"]:
            entry["default"] = True
        meta["configs"].append(entry)
        meta["dataset_info"].append(
            {
                "config_name": c["name"],
                "features": features,
                "splits": [{"name": SPLIT, "num_bytes": c["num_bytes"], "num_examples": c["num_examples"]}],
                "download_size": c["download_size"],
                "dataset_size": c["num_bytes"],
            }
        )
    return meta


def split_card(text: str) -> tuple[dict[str, Any], str]:
    """(YAML header, body) of a card."""
    if not text.startswith("---\n"):
        return {}, text
    end = text.index("\n---\n", 4)
    return yaml.safe_load(text[4:end]) or {}, text[end + 5 :]


class _NoAliasDumper(yaml.SafeDumper):
    """Writes repeated values (the features of each config) in full: no ``&id001`` anchors in a card."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# ------------------------------------------------------------------------------------------------------ tables
def md_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def count_table(name: str, counts: Mapping[str, int], total: int) -> str:
    rows = [(f"`{k}`", v, f"{100.0 * v / total:.1f}%") for k, v in counts.items()]
    rows.append(("**total**", sum(counts.values()), "100.0%"))
    return md_table([name, "items", "share"], rows)


def _flatten(value: Any, prefix: str = "", depth: int = 0) -> list[tuple[str, Any]]:
    if isinstance(value, Mapping) and value and depth < 4:
        out = []
        for k in sorted(value, key=str):
            out += _flatten(value[k], f"{prefix}.{k}" if prefix else str(k), depth + 1)
        return out
    return [(prefix, value)]


def _short(value: Any, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


# -------------------------------------------------------------------------------------------------- rendering
def render_card(
    *,
    version: str,
    name: str,
    build: Mapping[str, Any],
    stats: Mapping[str, Any],
    configs: Sequence[Mapping[str, Any]],
    review: Mapping[str, Any] | None,
    include_unreviewed: bool,
    excluded: Mapping[str, int],
    license_override: str | None = None,
    scrub=lambda v: v,
    repo_id: str | None = None,
    template_path: Path = TEMPLATE_PATH,
) -> str:
    """The full README.md: YAML header + the prose template filled with generated numbers and tables."""
    benchmark = str(build["benchmark"])
    info = BENCHMARKS.get(
        benchmark,
        {"pretty": benchmark, "title": f"the {benchmark} benchmark", "authors": "see the paper", "description": ""},
    )
    pretty_name = f"Mirage {info['pretty']} ({name})" if name != benchmark else f"Mirage {info['pretty']}"
    lic = resolve_license(build, license_override)
    meta = card_metadata(
        pretty_name=pretty_name,
        benchmark=benchmark,
        license_value=lic["value"],
        num_items=stats["num_items"],
        configs=configs,
    )
    header = yaml.dump(meta, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=1000)

    config = scrub(dict(build.get("config") or {}))
    params = [("seed", build.get("seed")), ("code_version", build.get("code_version")), ("build", build.get("name"))]
    params += [(f"config.{k}", v) for k, v in _flatten(config)]
    params += [(f"input_hashes.{k}", v) for k, v in _flatten(scrub(build.get("input_hashes") or {}))]
    parameters_table = md_table(["parameter", "value"], [(f"`{k}`", f"`{_short(v)}`") for k, v in params])
    build_stats = [(k, v) for k, v in _flatten(scrub(build.get("stats") or {})) if not isinstance(v, (list, dict))]
    build_stats_table = (
        md_table(["statistic", "value"], [(f"`{k}`", _short(v)) for k, v in build_stats])
        if build_stats
        else "_The build recorded no statistics._"
    )
    skipped = build.get("skipped") or []
    if skipped:
        reasons = Counter(
            (s.get("reason") or s.get("why") or "unspecified") if isinstance(s, Mapping) else str(s) for s in skipped
        )
        skipped_text = f"The build skipped {len(skipped)} candidate(s):\n\n" + md_table(
            ["reason", "count"], [(_short(scrub(r)), n) for r, n in reasons.most_common(20)]
        )
    else:
        skipped_text = "The build skipped nothing."

    sources_table = (
        md_table(
            ["source", "licence", "note"],
            [(f"`{r['source']}`", f"`{r['license']}`", r["note"] + (f" ({r['url']})" if r["url"] else "")) for r in lic["rows"]],
        )
        if lic["rows"]
        else "_The build did not record its sources._"
    )

    n_unrev = stats["review_status"].get("unreviewed", 0)
    unreviewed_warning = ""
    if review is None:
        unreviewed_warning = (
            "> **Warning: this release was not reviewed by people.** It was made with `--include-unreviewed` from a "
            "build that has no human review; answers come from the source annotations alone.\n"
        )
        annotation_process = (
            "None: this release was made with `--include-unreviewed` and **no item was reviewed by people**. "
            "Answers come from the source annotations through the builder's templates."
        )
        annotators = "No human annotators reviewed this release."
        review_limitation = "No human review checked them in this release."
    else:
        if n_unrev:
            unreviewed_warning = (
                f"> **Warning: {n_unrev} of {stats['num_items']} items were not reviewed by people** (released with "
                "`--include-unreviewed`; their `review_status` is `unreviewed`).\n"
            )
        counts = review.get("counts") or {}
        kappa = review.get("fleiss_kappa")
        kappa_text = f"{kappa:.3f}" if isinstance(kappa, (int, float)) else "not computed"
        counts_table = md_table(
            ["outcome", "items"], [(f"`{k}`", counts[k]) for k in ("total", "keep", "fix", "drop", "adjudicate", "pending") if k in counts]
        )
        released = md_table(["review_status", "items"], [(f"`{k}`", v) for k, v in stats["review_status"].items()])
        excluded_text = (
            "Left out of this release: " + ", ".join(f"{v} `{k}`" for k, v in sorted(excluded.items())) + "."
            if excluded
            else "No reviewed item was left out except those the reviewers dropped."
        )
        problems = review.get("problems") or []
        problems_text = (
            "Problems reported by the review:\n\n" + "\n".join(f"- {_short(p, 200)}" for p in problems)
            if problems
            else "The review reported no problems."
        )
        annotation_process = (
            "Every item of the build was put to human reviewers in Label Studio (project "
            f"`{_short(review.get('project'), 60)}`, exported {review.get('pulled_at') or 'at an unrecorded time'}). "
            f"{review.get('overlap') or 3} reviewers see each item; each accepts it, fixes its answer, or rejects it; "
            "the majority decides "
            "(`keep`, `fix`: answer corrected, `drop`), and items without a majority go to adjudication. Only kept "
            "and fixed items are released unless the release says otherwise.\n\n"
            f"Review outcome over the build:\n\n{counts_table}\n\nIn this release:\n\n{released}\n\n{excluded_text}\n\n"
            f"Inter-annotator agreement (Fleiss' kappa): **{kappa_text}**.\n\n{problems_text}"
        )
        reviewers = review.get("reviewers") or []
        rows = [
            (
                r["id"],
                r["annotations"],
                f"{r['agreement_with_majority']:.3f}" if isinstance(r.get("agreement_with_majority"), (int, float)) else "-",
            )
            for r in reviewers
        ]
        annotators = (
            f"{len(reviewers)} reviewer(s) of the Mirage team, listed by anonymised id only (no names or e-mail "
            "addresses are published):\n\n" + md_table(["reviewer", "annotations", "agreement with majority"], rows)
            if reviewers
            else "The review export lists no reviewers."
        )
        review_limitation = (
            "Human reviewers checked the released answers (see Annotations)."
            if not n_unrev
            else f"{n_unrev} released items were not checked by people."
        )

    first_task = next((c for c in configs if c.get("task")), None)
    config_example = (
        f'ds_task = load_dataset("{repo_id or "ORG/NAME"}", "{first_task["name"]}", revision="v{version}", '
        'split="test")  # one task'
        if first_task
        else ""
    )
    configs_table = md_table(
        ["config", "task", "files", "items"],
        [
            (f"`{c['name']}`" + (" (default)" if c["default"] else ""), f"`{c['task']}`" if c["task"] else "all tasks",
             f"`{c['glob']}`", c["num_examples"])
            for c in configs
        ],
    )
    from .features import release_features

    feats = release_features()
    fields_table = md_table(
        ["field", "type", "description"],
        [(f"`{n}`", f"`{_feature_type(feats[n])}`", d) for n, d in COLUMNS],
    )
    tp = stats["task_pressure"]
    pressures = list(stats["pressures"])
    task_pressure_table = md_table(
        ["task"] + [f"`{p}`" for p in pressures] + ["total"],
        [[f"`{t}`"] + [c.get(p, 0) for p in pressures] + [stats["tasks"][t]] for t, c in tp.items()]
        + [["**total**"] + [stats["pressures"][p] for p in pressures] + [stats["num_items"]]],
    )
    total = stats["num_items"]
    paper_authors = info["authors"]
    citation = (
        f"@misc{{mirage_{benchmark}_{version.replace('.', '_').replace('-', '_')},\n"
        f"  title  = {{{pretty_name}, version {version}}},\n"
        f"  note   = {{Built with Mirage (code version {build.get('code_version')}) following: {info['title']}}},\n"
        f"  year   = {{{_year(review)}}}\n}}"
    )
    values = {
        "pretty_name": pretty_name,
        "repo_id": repo_id or "ORG/NAME",
        "version": version,
        "benchmark": benchmark,
        "benchmark_description": info["description"],
        "paper_title": info["title"],
        "paper_authors": paper_authors,
        "num_items": total,
        "num_tasks": len(stats["tasks"]),
        "num_images": stats["num_images"],
        "max_images": max((int(k) for k in stats["n_images"]), default=0),
        "license_text": lic["text"],
        "license_note": lic["note"],
        "build_name": build.get("name"),
        "code_version": build.get("code_version"),
        "seed": build.get("seed"),
        "config_example": config_example,
        "configs_table": configs_table,
        "fields_table": fields_table,
        "task_pressure_table": task_pressure_table,
        "pressure_table": count_table("pressure", stats["pressures"], total),
        "question_type_table": count_table("question type", stats["question_types"], total),
        "n_images_table": count_table("images", stats["n_images"], total),
        "answer_table": count_table("answer", stats["answers"], total),
        "parameters_table": parameters_table,
        "build_stats_table": build_stats_table,
        "skipped_text": skipped_text,
        "lint_text": lint_markdown(build.get("lint")),
        "sources_table": sources_table,
        "annotation_process": annotation_process,
        "annotators": annotators,
        "review_limitation": review_limitation,
        "unreviewed_warning": unreviewed_warning,
        "citation": citation,
    }
    body = Template(template_path.read_text(encoding="utf-8")).substitute(values)
    return f"---\n{header}---\n\n{body.rstrip()}\n"


def _feature_type(feature: Any) -> str:
    from datasets import Image, List, Value

    if isinstance(feature, List):
        return f"list<{_feature_type(feature.feature)}>"
    if isinstance(feature, Image):
        return "image"
    if isinstance(feature, Value):
        return feature.dtype
    return type(feature).__name__


def _year(review: Mapping[str, Any] | None) -> str:
    from datetime import datetime, timezone

    when = (review or {}).get("pulled_at")
    if isinstance(when, str) and len(when) >= 4 and when[:4].isdigit():
        return when[:4]
    return str(datetime.now(timezone.utc).year)


PLOTS = {
    "tasks": ("tasks", "Items per task", "task"),
    "pressures": ("pressures", "Items per pressure", "pressure"),
    "n_images": ("n_images", "Number of images per item", "images"),
    "answers": ("answers", "Answer distribution", "answer"),
}


def write_plots(out_dir: Path, stats: Mapping[str, Any]) -> list[str]:
    """The card's PNG plots under ``plots/``; returns their paths relative to ``out_dir``."""
    from .plots import bar_chart

    written = []
    for fname, (key, title, xlabel) in PLOTS.items():
        path = out_dir / "plots" / f"{fname}.png"
        bar_chart(path, stats[key], title=title, xlabel=xlabel)
        written.append(path.relative_to(out_dir).as_posix())
    return written
