"""The dataset card: a generated YAML header and generated tables inside editable prose.

The prose lives in ``card_template.md``, a Jinja template that ``huggingface_hub``'s
:meth:`DatasetCard.from_template` fills; everything else - the YAML header, the tables, the numbers - is computed
from the build, the review summary and the released items (the ``card_*`` modules, one a section), so the card
cannot disagree with the data. A placeholder the values do not fill is an error, not an empty line.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import jinja2
import jinja2.meta
from huggingface_hub import DatasetCard, DatasetCardData

from builders.registry import BenchmarkSpec, find

from .card_creation import creation_values
from .card_limitations import derived_limitations
from .card_review import review_values
from .card_structure import structure_values
from .licences import resolve_license
from .metadata import card_metadata

TEMPLATE_PATH = Path(__file__).with_name("card_template.md")


def render_card(
    *,
    version: str,
    name: str,
    build: Mapping[str, Any],
    stats: Mapping[str, Any],
    configs: Sequence[Mapping[str, Any]],
    review: Mapping[str, Any] | None,
    excluded: Mapping[str, int],
    license_override: str | None = None,
    scrub: Callable[[Any], Any] = lambda v: v,
    repo_id: str | None = None,
    template_path: Path = TEMPLATE_PATH,
    project_url: str | None = None,
    maintainers: str | None = None,
) -> str:
    """The full README.md: YAML header + the prose template filled with generated numbers and tables."""
    benchmark = str(build["benchmark"])
    info = paper_info(find(benchmark), benchmark)
    pretty_name = f"Mirage {info['pretty']} ({name})" if name != benchmark else f"Mirage {info['pretty']}"
    curated_by = maintainers or "the Mirage maintainers"
    lic = resolve_license(build, license_override)
    meta = card_metadata(
        pretty_name=pretty_name,
        benchmark=benchmark,
        license_value=lic["value"],
        num_items=stats["num_items"],
        configs=configs,
    )
    values = {
        "pretty_name": pretty_name,
        "repo_id": repo_id or "ORG/NAME",
        "version": version,
        "benchmark": benchmark,
        "benchmark_description": info["description"],
        "paper_title": info["title"],
        "paper_authors": info["authors"],
        "curated_by": curated_by,
        "project_line": f"- **Project:** {project_url}" if project_url else "",
        "license_text": lic["text"],
        "license_note": lic["note"],
        "build_name": build.get("name"),
        "code_version": build.get("code_version"),
        "seed": build.get("seed"),
        **structure_values(stats, configs, benchmark=benchmark, repo_id=repo_id or "ORG/NAME", version=version),
        **creation_values(build, stats, lic, scrub),
        **review_values(review, stats, excluded),
        "derived_limitations": derived_limitations(stats, build),
        "citation": _citation(benchmark, info, pretty_name, version, build, review, curated_by, project_url,
                              repo_id),
    }
    template = template_path.read_text(encoding="utf-8")
    unfilled = _placeholders(template) - set(values) - {"card_data"}
    if unfilled:
        raise ValueError(f"{template_path}: placeholder(s) {', '.join(sorted(unfilled))} have no value")
    card = DatasetCard.from_template(DatasetCardData(**meta), template_str=template, **values)
    return str(card).rstrip("\n") + "\n"  # Jinja drops the template's last newline; a README ends with one


def paper_info(spec: BenchmarkSpec | None, benchmark: str) -> dict[str, str]:
    """What the card says of the benchmark and its paper, from the benchmark's spec (:mod:`builders.registry`);
    a benchmark the registry does not know is named as it is and its paper left to the reader."""
    if spec is None:
        return {"pretty": benchmark, "title": f"the {benchmark} benchmark", "authors": "see the paper",
                "venue": "", "description": ""}
    paper = spec.paper
    return {"pretty": spec.pretty, "title": paper.title, "authors": paper.surnames,
            "venue": ", ".join((paper.venue, *paper.identifiers)), "description": spec.description}


def _placeholders(template: str) -> set[str]:
    """The variables a Jinja template reads (``from_template`` renders a missing one as an empty string)."""
    return jinja2.meta.find_undeclared_variables(jinja2.Environment().parse(template))


def _citation(
    benchmark: str, info: Mapping[str, str], pretty_name: str, version: str, build: Mapping[str, Any],
    review: Mapping[str, Any] | None, curated_by: str, project_url: str | None, repo_id: str | None,
) -> str:
    """BibTeX for the paper whose construction the release follows and for the release itself."""
    release_key = f"mirage_{benchmark}_{version.replace('.', '_').replace('-', '_')}"
    return (
        f"@misc{{{benchmark}_method,\n"
        f"  title  = {{{info['title']}}},\n"
        f"  author = {{{info['authors']}}},\n"
        + (f"  howpublished = {{{info['venue']}}},\n" if info["venue"] else "")
        + f"  note   = {{the construction this release follows}}\n}}\n\n"
        f"@misc{{{release_key},\n"
        f"  title  = {{{pretty_name}, version {version}}},\n"
        f"  author = {{{curated_by}}},\n"
        f"  note   = {{Built with Mirage (code version {build.get('code_version')}) following "
        f"\\citet{{{benchmark}_method}}}},\n"
        + (f"  url    = {{{project_url}}},\n" if project_url else "")
        + (f"  howpublished = {{\\url{{https://huggingface.co/datasets/{repo_id}}}, revision v{version}}},\n"
           if repo_id else "")
        + f"  year   = {{{_year(review)}}}\n}}"
    )


def _year(review: Mapping[str, Any] | None) -> str:
    when = (review or {}).get("pulled_at")
    if isinstance(when, str) and len(when) >= 4 and when[:4].isdigit():
        return when[:4]
    return str(datetime.now(timezone.utc).year)


def split_card(text: str) -> tuple[dict[str, Any], str]:
    """(YAML header, body) of a card, read by ``huggingface_hub``'s :class:`DatasetCard`."""
    card = DatasetCard(text)
    return card.data.to_dict(), card.text
