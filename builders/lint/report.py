"""Running the checks and presenting what they found: build.json's ``"lint"`` section, per-item scores, the
summary table (80 columns) and the data card's Markdown."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from builders.items import Item, canonical_json
from builders.lint import balance, choices, contradictions, duplicates, independence, wording
from builders.lint.base import CheckResult, LintContext
from builders.lint.dictionary import LazyAllowList, load_dictionary
from sources.forking import forked_imap, forking_pays, usable_cores
from sources.heap import long_lived

CHECKS: dict[str, Callable[[Sequence[Item], LintContext], CheckResult]] = {
    "contradictions": contradictions.check,
    "duplicates": duplicates.check,
    "wording": wording.check,
    "options": choices.check,
    "balance": balance.check,
    "independence": independence.check,
}
"""Every check, in the order reports list them."""

PARALLEL_ITEMS = 5_000
"""From this many items on, the checks run in forked processes, one per usable core (a paper-scale build: 20,000
items, ~2 s of checks); a text-only model (``llm``) keeps them in this process, with its client."""

EXAMPLES = 10
"""Flagged items named per check in build.json (the full list: ``python -m lint PATH --out DIR``)."""


@dataclass
class LintReport:
    items: Sequence[Item]
    results: dict[str, CheckResult]
    seconds: float

    @property
    def flagged_items(self) -> int:
        return len({i for r in self.results.values() for i in r.reasons})

    def section(self) -> dict[str, Any]:
        """build.json's ``"lint"``: per check the number flagged, the mean score, the summary and examples."""
        checks = {}
        for name, r in self.results.items():
            examples = [{"id": self.items[i].id, "reasons": r.reasons[i][:3]} for i in sorted(r.reasons)[:EXAMPLES]]
            mean = sum(r.scores) / len(r.scores) if r.scores else 1.0
            checks[name] = {"flagged": r.flagged, "mean_score": round(mean, 4), "summary": r.summary,
                            "examples": examples}
        findings = self.findings()
        return {"items": len(self.items), "flagged_items": self.flagged_items, "findings": findings,
                "notes": self.notes(), "clean": self.flagged_items == 0 and not findings, "checks": checks}

    def findings(self) -> list[str]:
        """Findings about whole tasks (no single item is to blame): unbalanced answers, leaking baselines."""
        out = []
        if "balance" in self.results:
            out += [f"unbalanced answers: {t}" for t in self.results["balance"].summary["unbalanced_tasks"]]
        if "independence" in self.results:
            tasks = self.results["independence"].summary["tasks"]
            out += [f"blind baseline above chance: {t} ({', '.join(tasks[t]['leaking'])})"
                    for t in self.results["independence"].summary["leaking_tasks"]]
            model = self.results["independence"].summary.get("text_only_model")
            if model:
                out += [f"text-only model above chance: {t} ({model['tasks'][t]['accuracy']:.0%} right, chance "
                        f"{model['tasks'][t]['chance']:.0%})" for t in model["leaking_tasks"]]
        return out

    def notes(self) -> list[str]:
        """What the builder declared by design (``build.json`` ``lint_promises``) and the lint confirmed: shown
        beside the findings, never counted as one (a build with only notes is clean)."""
        if "independence" not in self.results:
            return []
        summary = self.results["independence"].summary
        out = []
        for task in summary.get("by_design_tasks", []):
            entry = summary["tasks"][task]
            design = entry["by_design"]
            found = ", ".join(f"{b} {entry[b]:.0%}" for b in design["baselines_finding_it"]) or "none above chance"
            why = f" ({design['why']})" if design["why"] else ""
            out.append(f"{task} is answered {design['answer']!r} by design in {design['items']} of "
                       f"{entry['items']} items{why}; blind baselines finding it: {found}")
        return out

    def item_rows(self) -> Iterable[dict[str, Any]]:
        """cleanlab's ``get_issues()``: per item ``<check>_score``, ``is_<check>_issue`` and the reasons."""
        for i, it in enumerate(self.items):
            row: dict[str, Any] = {"id": it.id}
            reasons: list[str] = []
            for name, r in self.results.items():
                row[f"{name}_score"] = round(r.scores[i], 6)
                row[f"is_{name}_issue"] = i in r.reasons
                reasons += [f"{name}: {why}" for why in r.reasons.get(i, [])]
            row["reasons"] = reasons
            yield row


def lint(items: Sequence[Item], build: Mapping[str, Any] | None = None, *, allow: Iterable[str] = (),
         llm: Any = None, checks: Sequence[str] | None = None) -> LintReport:
    """Run the checks over ``items``; ``build`` is the build's build.json (what the builder promises)."""
    start = time.perf_counter()
    context = LintContext(build=build or {}, llm=llm)
    names = [name for name in CHECKS if checks is None or name in checks]

    def run(name: str) -> CheckResult:  # only the wording check reads the word lists: loaded where it runs
        if name == "wording":
            words = replace(context, dictionary=load_dictionary(), allow_words=LazyAllowList(items, allow))
            return CHECKS[name](items, words)
        return CHECKS[name](items, context)

    workers = min(usable_cores(), len(names))
    if llm is not None or not forking_pays(workers, len(items), PARALLEL_ITEMS):
        results = {name: run(name) for name in names}
    else:  # the slowest check first, so it does not start last
        order = sorted(names, key=lambda name: name != "wording")
        found = dict(zip(order, forked_imap(run, order, workers)))
        results = {name: found[name] for name in names}
    return LintReport(items, results, time.perf_counter() - start)


def write_item_scores(report: LintReport, path: str | Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for row in report.item_rows():
            fh.write(canonical_json(row) + "\n")


def summary_rows(section: Mapping[str, Any]) -> list[list[str]]:
    """One row per check: flagged items and the main finding, short enough for an 80-column table."""
    checks = section["checks"]
    order = [n for n in CHECKS if n in checks] + sorted(set(checks) - set(CHECKS))  # build.json sorts its keys
    return [[name, str(checks[name]["flagged"]), headline(name, checks[name])] for name in order]


def headline(name: str, check: Mapping[str, Any]) -> str:
    s = check["summary"]
    if name == "contradictions":
        return f"{s['conflicting_groups']} conflicting, {s['unpaired_groups']} unpaired yes/no groups"
    if name == "duplicates":
        return f"{s['exact_groups']} exact, {s['near_groups']} near-duplicate groups"
    if name in ("wording", "options"):
        rules = s["faults_per_rule"]
        text = ", ".join(f"{k} {v}" for k, v in rules.items()) or "no faults"
        if name == "wording" and s["dictionary"].startswith("off"):
            text += " (no dictionary: spelling not checked)"
        if name == "wording" and s.get("parser", "").startswith("off"):
            text += " (no parser: grammar not checked)"
        return text
    if name == "balance":
        return "unbalanced: " + (", ".join(s["unbalanced_tasks"]) or "none")
    if name == "independence":
        text = "blind baselines above chance: " + (", ".join(s["leaking_tasks"]) or "none")
        if s.get("by_design_tasks"):
            text += "; by design: " + ", ".join(s["by_design_tasks"])
        if "text_only_model" in s:
            model = s["text_only_model"]
            text += f"; text-only {model['model']} above chance: " + (", ".join(model["leaking_tasks"]) or "none")
        return text
    return ""


def markdown(section: Mapping[str, Any] | None) -> str:
    """The data card's "Lint" section."""
    if not section:
        return "_This build was not linted (it predates `builders.lint`); run `python -m lint BUILD`._"
    verdict = ("No item was flagged." if not section["flagged_items"]
               else f"{section['flagged_items']} of {section['items']} items were flagged by at least one check.")
    if section.get("findings"):
        verdict += " Findings about whole tasks: " + "; ".join(section["findings"]) + "."
    if section.get("notes"):
        verdict += " Declared by the builder and confirmed (not faults): " + "; ".join(section["notes"]) + "."
    rows = [(f"`{name}`", flagged, finding.replace("|", "\\|")) for name, flagged, finding in summary_rows(section)]
    header = "| check | flagged | finding |\n|---|---|---|\n"
    return (f"The lint (`python -m lint`) ran at the end of the build. {verdict}\n\n" + header
            + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows))


def lint_build_dir(path: str | Path) -> dict[str, Any] | None:
    """Lint a finished build folder in place: its build.json gains ``"lint"`` (items.jsonl is never touched).

    Called by :func:`builders.run.open_build` before the folder is renamed into place, so every builder's build
    carries its lint. ``None`` when the folder holds no items.jsonl or build.json."""
    from builders.items import read_items

    path = Path(path)
    items_path, build_path = path / "items.jsonl", path / "build.json"
    if not items_path.is_file() or not build_path.is_file():
        return None
    build = json.loads(build_path.read_text(encoding="utf-8"))
    with long_lived():  # tens of thousands of items read back, kept to the end: no collector passes over them
        section = lint(read_items(items_path), build).section()
    build["lint"] = section
    text = json.dumps(build, sort_keys=True, indent=2, ensure_ascii=False)
    build_path.write_text(text + "\n", encoding="utf-8")
    return section
