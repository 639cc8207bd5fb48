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

from huggingface_hub import DatasetCard, DatasetCardData

from builders.items import OPTION_LETTERS, Item
from builders.lint import markdown as lint_markdown
from builders.lint.report import blind_markdown
from builders.lint.base import is_mcq
from builders.pairs import paired_share

from .export import SPLIT, TaskShards
from .features import COLUMNS, release_features
from .plots import bar_chart
from .rechecks import recheck_lines

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
    "pope": {
        "pretty": "POPE",
        "title": "Evaluating Object Hallucination in Large Vision-Language Models",
        "authors": "Li, Du, Zhou, Wang, Zhao and Wen",
        "description": "Object hallucination: \"Is there a/an X in the image?\" asked of COCO images in three "
        "splits (random, popular, adversarial absent objects). `python -m scoring pope` reads answers by POPE's "
        "own rule (evaluate.py: \"no\" when the first sentence holds no/No/not, else \"yes\"), so numbers "
        "compare with the paper's, and reports the strict reading of Mirage's one extractor beside it.",
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


NOTA = "none of the above"


def _is_nota_answer(it: Item) -> bool:
    return is_mcq(it) and it.answer_text.strip().lower() == NOTA


def _image_sizes(paths: Iterable[Path]) -> dict[str, int]:
    """``{"WxH": number of images}`` read from the image headers (PIL opens lazily: no pixel is decoded)."""
    from PIL import Image

    sizes: Counter = Counter()
    for p in paths:
        try:
            with Image.open(p) as im:
                sizes[f"{im.width}x{im.height}"] += 1
        except (OSError, ValueError):
            sizes["unreadable"] += 1
    return dict(sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0])))


def _answers_by_options(items: Sequence[Item]) -> dict[str, dict[str, int]]:
    """Answer letters of multiple-choice items, one distribution per number of options (4-, 5-, 9-option
    questions have different chance levels, so pooling them hides any imbalance)."""
    groups: dict[int, Counter] = {}
    for it in items:
        if it.options:
            groups.setdefault(len(it.options), Counter())[it.answer] += 1
    return {str(n): _sorted_counter(c) for n, c in sorted(groups.items())}


FIXED_OPTION_MIN_ITEMS = 10
"""A question form's fixed options (the same text in every one of its items) are weighed from this many items."""


def _fixed_options(items: Sequence[Item]) -> list[dict[str, Any]]:
    """Per question form (``provenance.template``) and option text offered by every one of its items ("None of
    the above", "I don't know", "Yes, in some of them"): how often it is the gold against its fair share (its
    items over their options). A fixed option right far less often than that is one a blind guesser strikes out."""
    by_template: dict[str, list[Item]] = {}
    for it in items:
        if it.options and it.provenance.get("template"):
            by_template.setdefault(str(it.provenance["template"]), []).append(it)
    out = []
    for template, group in sorted(by_template.items()):
        if len(group) < FIXED_OPTION_MIN_ITEMS:
            continue
        shared = set.intersection(*(set(it.options) for it in group))
        for text in sorted(shared):
            fair = sum(1 / len(it.options) for it in group)
            out.append({"template": template, "option": text, "offered": len(group),
                        "correct": sum(1 for it in group if it.answer_text == text), "fair": round(fair, 1)})
    return out


def compute_stats(
    items: Sequence[Item], status: Mapping[str, str], build_dir: Path | None = None
) -> dict[str, Any]:
    """Every number the card reports, from the released items (image sizes read from ``build_dir``'s files)."""
    task_pressure: dict[str, Counter] = {}
    for it in items:
        task_pressure.setdefault(it.task, Counter())[it.pressure] += 1
    unique = sorted({(Path(build_dir) / p).resolve() if build_dir else Path(p) for it in items for p in it.images})
    return {
        "num_items": len(items),
        "num_images": sum(len(it.images) for it in items),
        "num_unique_images": len(unique),
        "image_sizes": _image_sizes(unique) if build_dir else {},
        "answers_by_options": _answers_by_options(items),
        "several_accepted": sum(1 for it in items if len(it.provenance.get("accepted_answers") or ()) > 1),
        "nota": {
            "offered": sum(1 for it in items if any(o.strip().lower() == NOTA for o in it.options)),
            "correct": sum(1 for it in items if it.options and _is_nota_answer(it)),
        },
        "fixed_options": _fixed_options(items),
        "templates": _sorted_counter(Counter(str(it.provenance.get("template")) for it in items
                                             if it.provenance.get("template"))),
        "tasks": _sorted_counter(Counter(it.task for it in items)),
        "pressures": _sorted_counter(Counter(it.pressure for it in items)),
        "question_types": _sorted_counter(Counter(it.question_type for it in items)),
        "n_images": _sorted_counter(Counter(len(it.images) for it in items), numeric=True),
        "answers": _sorted_counter(Counter(answer_label(it) for it in items)),
        "review_status": _sorted_counter(Counter(status[it.id] for it in items)),
        "task_pressure": {t: dict(sorted(c.items())) for t, c in sorted(task_pressure.items())},
        "pairs": {"all": paired_share(items),
                  "tasks": {t: paired_share([it for it in items if it.task == t]) for t in sorted(task_pressure)}},
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
    """The card's YAML header as a mapping: the Hub's dataset metadata, one ``configs`` and one ``dataset_info``
    entry per config (each with its own copy of the features, so the YAML repeats them instead of writing
    ``&id001`` anchors)."""
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
                "features": _features_yaml(),
                "splits": [{"name": SPLIT, "num_bytes": c["num_bytes"], "num_examples": c["num_examples"]}],
                "download_size": c["download_size"],
                "dataset_size": c["num_bytes"],
            }
        )
    return meta


def split_card(text: str) -> tuple[dict[str, Any], str]:
    """(YAML header, body) of a card, read by ``huggingface_hub``'s :class:`DatasetCard`."""
    card = DatasetCard(text)
    return card.data.to_dict(), card.text


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
    project_url: str | None = None,
    maintainers: str | None = None,
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

    config = scrub(dict(build.get("config") or {}))
    unused = unused_option_prefixes(build)
    config = {k: v for k, v in config.items() if not k.startswith(unused)}
    params = [("seed", build.get("seed")), ("code_version", build.get("code_version")), ("build", build.get("name"))]
    params += [(f"config.{k}", v) for k, v in _flatten(config)]
    params += [(f"input_hashes.{k}", v) for k, v in _flatten(scrub(build.get("input_hashes") or {}))]
    params += [(f"twin_of.{k}", v) for k, v in _flatten(scrub(build.get("twin_of") or {}))]  # shared_images too
    parameters_table = md_table(["parameter", "value"], [(f"`{k}`", f"`{_short(v)}`") for k, v in params])
    if unused:
        parameters_table += "\n\nLeft out: the " + " and ".join(
            f"`{u}*`" for u in unused
        ) + " options, which this build did not use (" + "; ".join(_unused_reasons(build, unused)) + ")."
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
        agreement_text = _agreement_text(review)
        adjudicated = int(review.get("adjudicated") or 0)
        adjudicated_text = (
            f"**{adjudicated} item(s) had no majority and were settled by the maintainer's adjudication** "
            "(their `review_status` is the adjudicated outcome)."
            if adjudicated
            else "No item was settled by adjudication."
        )
        tags = review.get("issue_tags") or {}
        by_outcome = review.get("issue_tags_by_outcome") or {}
        outcomes = ("kept or fixed", "dropped", "undecided")
        issues_text = (
            "Issues the reviewers tagged, counted over every item of the build's review, **including the items they "
            "dropped**, which are not in this release (an item counts once per tag; it can have several), and what "
            "the review decided for those items:\n\n"
            + md_table(["issue", "items", *outcomes],
                       [(t, n, *((by_outcome.get(t) or {}).get(o, 0) for o in outcomes)) for t, n in tags.items()])
            if tags
            else "The reviewers tagged no issues."
        )
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
            f"{adjudicated_text}\n\n{agreement_text}\n\n{issues_text}\n\n{problems_text}\n\n{_ledger_text(review)}"
        )
        rechecked = recheck_lines(review.get("rechecked") or [])
        if rechecked:
            annotation_process += (
                "\n\nItems were sent back to three reviewers after several models agreed on another answer than "
                "the released one (`python -m scoring health`); the reviewers saw the models' answer beside the "
                "gold and decided by majority as before:\n\n" + "\n".join(rechecked))
        reviewers = review.get("reviewers") or []
        rows = [
            (
                r["id"],
                r["annotations"],
                _agreement_cell(r),
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

    feats = release_features()
    fields_table = md_table(
        ["field", "type", "description"],
        [(f"`{n}`", f"`{_feature_type(feats[n])}`", _field_description(n, d, benchmark, stats)) for n, d in COLUMNS],
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
    year = _year(review)
    release_key = f"mirage_{benchmark}_{version.replace('.', '_').replace('-', '_')}"
    citation = (
        f"@misc{{{benchmark}_method,\n"
        f"  title  = {{{info['title']}}},\n"
        f"  author = {{{info['authors']}}},\n"
        f"  note   = {{the construction this release follows}}\n}}\n\n"
        f"@misc{{{release_key},\n"
        f"  title  = {{{pretty_name}, version {version}}},\n"
        f"  author = {{{maintainers or 'the Mirage maintainers'}}},\n"
        f"  note   = {{Built with Mirage (code version {build.get('code_version')}) following "
        f"\\citet{{{benchmark}_method}}}},\n"
        + (f"  url    = {{{project_url}}},\n" if project_url else "")
        + (f"  howpublished = {{\\url{{https://huggingface.co/datasets/{repo_id}}}, revision v{version}}},\n"
           if repo_id else "")
        + f"  year   = {{{year}}}\n}}"
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
        "num_unique_images": stats.get("num_unique_images", stats["num_images"]),
        "images_per_item": _images_per_item(stats["n_images"]),
        "resolution_text": _resolution_text(stats.get("image_sizes") or {}),
        "answers_by_options_text": _answers_by_options_text(stats.get("answers_by_options") or {}, total)
        + "".join(f"\n\n![Answer letters, {n} options](plots/answers-{n}-options.png)"
                  for n in (stats.get("answers_by_options") or {})),
        "curated_by": maintainers or "the Mirage maintainers",
        "project_line": f"- **Project:** {project_url}" if project_url else "",
        "clip_rationale": _clip_rationale(build),
        "derived_limitations": _derived_limitations(stats, build),
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
        "blind_text": blind_markdown(build.get("lint")),
        "pairs_text": _pairs_text(stats.get("pairs") or {}),
        "sources_table": sources_table,
        "annotation_process": annotation_process,
        "annotators": annotators,
        "review_limitation": review_limitation,
        "unreviewed_warning": unreviewed_warning,
        "citation": citation,
    }
    body = Template(template_path.read_text(encoding="utf-8")).substitute(values)
    return str(DatasetCard(f"---\n{DatasetCardData(**meta).to_yaml()}\n---\n\n{body.rstrip()}\n"))


def _pairs_text(pairs: Mapping[str, Any]) -> str:
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
        "the same items, and the numbers of `pairs` and `unpaired` items; the lmms-eval tasks report it as "
        "`group_acc` and the VLMEvalKit sheets carry `pair_id`. An item whose partner was dropped in review "
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


def _clip_ran(build: Mapping[str, Any]) -> bool:
    clip = (build.get("stats") or {}).get("clip")
    return isinstance(clip, Mapping) and clip.get("ran") is True


def _clip_rationale(build: Mapping[str, Any]) -> str:
    if _clip_ran(build):
        return "size, occlusion, co-occurrence and CLIP similarity"
    return "size, occlusion and co-occurrence; the CLIP similarity stage did not run for this build"


def _images_per_item(n_images: Mapping[str, int]) -> str:
    values = sorted(int(k) for k in n_images)
    if not values:
        return "no"
    if len(values) == 1:
        return str(values[0])
    if len(values) <= 4:
        return ", ".join(map(str, values[:-1])) + f" or {values[-1]}"
    return f"{values[0]} to {values[-1]}"


def _resolution_text(sizes: Mapping[str, int]) -> str:
    if not sizes:
        return "image resolution not recorded"
    if len(sizes) == 1:
        (size,) = sizes
        return f"every image {size} pixels"
    shown = ", ".join(f"{k} ({v})" for k, v in list(sizes.items())[:3])
    return f"image sizes in pixels: {shown}" + (f" and {len(sizes) - 3} other sizes" if len(sizes) > 3 else "")


def _answers_by_options_text(groups: Mapping[str, Mapping[str, int]], total: int) -> str:
    if not groups:
        return ""
    parts = ["Answer letters of the multiple-choice items, per number of options (chance differs between them):"]
    for n, counts in groups.items():
        m = sum(counts.values())
        cells = ", ".join(f"{k} {v} ({100 * v / m:.1f}%)" for k, v in counts.items())
        parts.append(f"- {n} options ({m} items; uniform {100 / int(n):.1f}% each): {cells}")
    return "\n".join(parts)


def _field_description(name: str, generic: str, benchmark: str, stats: Mapping[str, Any]) -> str:
    """A column's description with the values this release actually holds (not every benchmark's examples)."""
    def values(key: str) -> str:
        return ", ".join(f"`{v}`" for v in stats.get(key) or {})

    if name == "benchmark":
        return f"The Mirage benchmark: `{benchmark}` in this release."
    if name == "task":
        return f"The task: {values('tasks')}."
    if name == "question_type":
        return f"How the question is asked: {values('question_types')}."
    if name == "pressure":
        return f"The adversarial pressure applied: {values('pressures')}."
    if name in ("answer", "options"):
        answers = stats.get("answers") or {}
        kinds = []
        if stats.get("answers_by_options"):
            kinds.append("an option letter (multiple choice)")
        if "yes" in answers or "no" in answers:
            kinds.append("`yes`/`no`")
        if "(open answer)" in answers:
            kinds.append("the reference text (open answers)")
        if name == "answer":
            return "The expected answer: " + (" or ".join(kinds) or "none") + "."
        return ("Answer options of the multiple-choice items" if stats.get("answers_by_options") else
                "Always empty in this release (no multiple-choice items)") + "; empty for other items."
    return generic


def _agreement_cell(r: Mapping[str, Any]) -> str:
    a = r.get("agreement_with_majority")
    if not isinstance(a, (int, float)):
        return "-"
    agreed, decided = r.get("agreed_items"), r.get("decided_items")
    frac = f" ({agreed}/{decided})" if isinstance(agreed, int) and isinstance(decided, int) else ""
    return f"{100 * a:.1f}%{frac}"


def _agreement_text(review: Mapping[str, Any]) -> str:
    def fmt(v: Any, pct: bool = False) -> str:
        if not isinstance(v, (int, float)):
            return "not computed"
        return f"{100 * v:.1f}%" if pct else f"{v:.3f}"

    n = review.get("rated_items")
    over = f" over the {n} items with all their votes" if isinstance(n, int) else ""
    return (
        f"Agreement between reviewers on the verdict (accept / fix / reject){over}: raw agreement "
        f"**{fmt(review.get('raw_agreement'), True)}** (the share of reviewer pairs giving the same verdict), "
        f"Gwet's AC1 **{fmt(review.get('gwet_ac1'))}**, Fleiss' kappa **{fmt(review.get('fleiss_kappa'))}**. "
        "Reading them: kappa corrects for chance with the verdicts' own shares, so when nearly every verdict is "
        "\"accept\" its chance term approaches 1 and kappa falls even though reviewers almost always agree (the kappa "
        "paradox); AC1 (Gwet 2008) uses a chance term that shrinks in that case, so read raw agreement and AC1 "
        "together, and kappa as a warning about the rare verdicts."
    )


def _derived_limitations(stats: Mapping[str, Any], build: Mapping[str, Any]) -> str:
    """Limitations read off this release's own numbers rather than written in general."""
    lines = []
    nota = stats.get("nota") or {}
    if nota.get("offered"):
        if not nota.get("correct"):
            lines.append(
                f"- \"None of the above\" is offered in {nota['offered']} items but is never the correct answer: a "
                "model that never picks it loses nothing here."
            )
        else:
            lines.append(
                f"- \"None of the above\" is offered in {nota['offered']} items and correct in {nota['correct']}."
            )
    for fixed in stats.get("fixed_options") or ():
        if fixed["correct"] < fixed["fair"] / 2:
            lines.append(
                f"- In `{fixed['template']}`, \"{fixed['option']}\" is offered in {fixed['offered']} items and correct "
                f"in {fixed['correct']} (its fair share: {fixed['fair']}): a blind guesser gains by striking it out. "
                "The question form leaves it no more room (see the benchmark's notes in docs/papers.md)."
            )
    if stats.get("several_accepted"):
        lines.append(
            f"- {stats['several_accepted']} open-answer items have more than one true answer (e.g. a pair that is "
            "both \"pointing at\" and \"above\"): each lists them in `provenance.accepted_answers`, and Mirage's "
            "scorer counts a reply right when it states any of them."
        )
    small = [
        f"{t}/{p} ({n})" for t, c in stats["task_pressure"].items() for p, n in c.items() if n < 5
    ]
    if small:
        lines.append(
            f"- {len(small)} task/pressure cell(s) hold fewer than 5 items ({', '.join(small[:8])}"
            + (", ..." if len(small) > 8 else "")
            + "): do not read a rate off them."
        )
    templates = stats.get("templates") or {}
    if templates and max(templates.values()) > 0.5 * stats["num_items"] and len(templates) > 1:
        top, n = max(templates.items(), key=lambda kv: kv[1])
        lines.append(f"- One template (`{top}`) writes {n} of {stats['num_items']} items: its wording artefacts weigh.")
    if not _clip_ran(build) and build.get("benchmark") == "mioh":
        lines.append("- The CLIP stage did not run: hard positives and negatives were chosen without CLIP scores.")
    return "\n".join(lines)


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


def plot_specs(stats: Mapping[str, Any]) -> list[tuple[str, Mapping[str, int], dict[str, Any]]]:
    """``(path relative to the release, counts, bar_chart options)`` of every plot of the card."""
    specs = [(f"plots/{fname}.png", stats[key], {"title": title, "xlabel": xlabel})
             for fname, (key, title, xlabel) in PLOTS.items()]
    for n, counts in (stats.get("answers_by_options") or {}).items():
        specs.append((f"plots/answers-{n}-options.png", counts,
                      {"title": f"Answer letters of {n}-option questions", "xlabel": "answer",
                       "reference": sum(counts.values()) / int(n)}))
    return specs


def write_plots(out_dir: Path, stats: Mapping[str, Any]) -> list[str]:
    """The card's PNG plots under ``plots/`` (:func:`plot_specs`); returns their paths relative to ``out_dir``."""
    specs = plot_specs(stats)
    for rel, counts, options in specs:
        bar_chart(out_dir / rel, counts, **options)
    return [rel for rel, _, _ in specs]


def _ledger_text(review: Mapping[str, Any]) -> str:
    """What the counts above rest on: only votes the rooms' vote ledgers vouch for, or the maintainer's word."""
    left_out, accepted = review.get("votes_quarantined") or 0, review.get("votes_accepted_unverified") or 0
    text = ("Only votes the review rooms' vote ledgers vouch for are counted (each vote as its reviewer submitted "
            "it, unchanged by anyone else)")
    if left_out:
        text += f"; {left_out} vote(s) they did not vouch for were left out"
    if accepted:
        text += (f"; {accepted} vote(s) they did not vouch for were counted on the maintainer's word "
                 "(`pull --accept-unverified`)")
    return text + "."
