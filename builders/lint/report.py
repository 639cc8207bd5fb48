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
from builders.lint.base import BUILD_KEYS, CheckResult, LintContext
from builders.lint.blind import MARGIN, pct
from builders.lint.blind_open import STRATEGY as OPEN_BASELINE
from builders.lint.dictionary import LazyAllowList, load_dictionary
from sources.executors import ProcessExecutor, usable_cores

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
"""From this many items on, the checks run in worker processes, one per usable core (a paper-scale build: 20,000
items); a text-only model (``llm``) keeps them in this process, with its client."""

SLOWEST = ("independence", "wording")
"""The checks that take longest on a large build, slowest first (the blind audit's cross-validated learner;
the wording check's parser), handed to the worker processes before the others."""

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
        out = {"items": len(self.items), "flagged_items": self.flagged_items, "findings": findings,
               "notes": self.notes(), "clean": self.flagged_items == 0 and not findings, "checks": checks}
        if "independence" in self.results:
            out["blind"] = self.results["independence"].summary["blind"]
        return out

    def findings(self) -> list[str]:
        """Findings about whole tasks (no single item is to blame): unbalanced answers, leaking baselines."""
        out = []
        if "balance" in self.results:
            out += [f"unbalanced answers: {t}" for t in self.results["balance"].summary["unbalanced_tasks"]]
        if "independence" in self.results:
            for cell in self.results["independence"].summary["blind"]["cells"]:
                if cell["flagged"]:
                    out.append(f"answerable blind: {cell['cell']} ({blind_strategies(cell)}; chance "
                               f"{pct(cell['chance'])}, n={cell['n']})")
        return out

    def notes(self) -> list[str]:
        """What the builder declared by design (``build.json`` ``lint_promises``) and the lint confirmed: shown
        beside the findings, never counted as one (a build with only notes is clean)."""
        if "independence" not in self.results:
            return []
        summary = self.results["independence"].summary
        out = []
        for task, design in summary.get("by_design", {}).items():
            cell = next((c for c in summary["blind"]["cells"] if c["cell"] == task), None)
            found = "not audited"
            if cell is not None:
                found = ", ".join(f"{s} {pct(e['accuracy'])}" for s, e in cell["strategies"].items()
                                  if e["low95"] is not None and e["low95"] > cell["chance"] + MARGIN) or "none"
            why = f" ({design['why']})" if design["why"] else ""
            out.append(f"{task} is answered {design['answer']!r} by design in {design['items']} of "
                       f"{design['of']} items{why}; blind strategies finding it: {found}")
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
    context = LintContext(build={key: build[key] for key in BUILD_KEYS if key in build} if build else {}, llm=llm)
    names = [name for name in CHECKS if checks is None or name in checks]

    def run(name: str) -> CheckResult:  # only the wording check reads the word lists: loaded where it runs
        if name == "wording":
            words = replace(context, dictionary=load_dictionary(), allow_words=LazyAllowList(items, allow))
            return CHECKS[name](items, words)
        return CHECKS[name](items, context)

    executor = ProcessExecutor(min(usable_cores(), len(names)))
    if llm is not None or executor.workers < 2 or not executor.inherits or len(items) < PARALLEL_ITEMS:
        results = {name: run(name) for name in names}
    else:  # the slowest checks first, so that neither starts after the quick ones
        order = sorted(names, key=lambda name: SLOWEST.index(name) if name in SLOWEST else len(SLOWEST))
        found = dict(zip(order, executor.map(run, order)))
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
        text = f"{s['exact_groups']} exact, {s['near_groups']} near-duplicate groups"
        return text + (f" ({s['shared_groups']} shared by settings)" if s.get("shared_groups") else "")
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
        audit = s["blind"]
        if audit.get("off"):
            return f"blind audit off: {audit['off']}"
        flagged = audit["flagged"]
        text = f"answerable blind: {len(flagged)} of {len(audit['cells'])} cells"
        if audit.get("overall"):
            text += (f" (learner {pct(audit['overall']['accuracy'])}, chance "
                     f"{pct(audit['overall']['chance'])})")
        paired = audit.get("paired") or {}
        if paired.get("pairs"):
            text += f"; learner's group accuracy {pct(paired['group_accuracy'])} on {paired['pairs']} pairs"
        if s.get("by_design_tasks"):
            text += "; by design: " + ", ".join(s["by_design_tasks"])
        if "text_only_model" in s:
            text += f"; text-only {s['text_only_model']['model']} asked"
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


def blind_strategies(cell: Mapping[str, Any]) -> str:
    """The strategies above chance in ``cell`` with their accuracy: "learned 73%, frequent_text 40%"."""
    return ", ".join(f"{name} {pct(cell['strategies'][name]['accuracy'])}" for name in cell["above_chance"])


def blind_rows(audit: Mapping[str, Any], every_cell: bool = True) -> list[list[str]]:
    """The blind audit as table rows (80 columns): cell, questions, chance, the learner's accuracy and 95 %
    interval, the best rule, and the verdict. ``every_cell`` false: each task whole and the flagged cells."""
    rows = []
    for cell in audit.get("cells", []):
        whole = " " not in cell["cell"]
        if not (every_cell or whole or cell["flagged"]):
            continue
        rules = {k: v for k, v in cell["strategies"].items() if k not in ("learned", OPEN_BASELINE)
                 and v["accuracy"] is not None}
        best = max(rules, key=lambda k: (rules[k]["low95"], rules[k]["accuracy"]), default=None)
        learner = (f"{_points(cell['accuracy'])} ({_points(cell['low95'])}-{_points(cell['high95'])})"
                   if cell["accuracy"] is not None else "-")
        verdict = "fixed" if "by_design" in cell else "twins" if cell.get("twinned") else (
            "FLAG" if cell["flagged"] else "ok")
        rule = f"{SHORT.get(best, best)} {pct(rules[best]['accuracy'])}" if best else "-"
        rows.append([cell["cell"] if whole else _sub_label(cell["cell"]), str(cell["n"]),
                     pct(cell["chance"]), learner, rule, verdict])
    return rows


def _sub_label(name: str) -> str:
    """"mioh/counting pressure=sycophantic" as a row under its task: "p: sycophantic"."""
    kind, _, value = name.split(" ", 1)[1].partition("=")
    return f"{kind[0]}: {value}"


def _points(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}"


SHORT = {"frequent_text": "text", "numeric_rank": "rank", "always_yes": "yes", "always_refuse": "refuse",
         "text_only_llm": "llm"}
"""Strategy names as the 80-column table shows them (build.json keeps the full names)."""
BLIND_COLUMNS = ["cell", "n", "chance", "learner %", "best rule", "flag"]
BLIND_TITLE = "Could it be answered without the images?"


def blind_caption(audit: Mapping[str, Any]) -> str:
    """What the table means, in two lines."""
    text = (f"p: pressure, t: question type; learner: text-only logistic regression, cross-validated by image "
            f"set (95% interval); rules: letter, longest, text (most often right), rank (among numbers), yes, "
            f"refuse; fixed: the answer is fixed by design; FLAG: the learner's 95% lower bound > "
            f"chance + {audit.get('margin', MARGIN):.0%}")
    if any(cell.get("twinned") for cell in audit.get("cells", [])):
        text += ("; twins: each item has a twin outside the cell (same text and image, another answer), which "
                 "a text-only learner cannot tell apart: never flagged")
    if any(cell.get("open") for cell in audit.get("cells", [])):
        text += ("; open answers: the learner writes the nearest training reference by TF-IDF (its mean score by "
                 "the benchmark's metric), chance: the references shuffled within the task")
    return text


def blind_markdown(section: Mapping[str, Any] | None) -> str:
    """The data card's "Can it be answered without the images?": the overall figure and one row per flagged
    (or by-design) cell."""
    audit = (section or {}).get("blind")
    if not audit:
        return "_This build was not audited for blind answers; run `python -m lint BUILD`._"
    if audit.get("off"):
        return f"_The blind audit did not run: {audit['off']}._"
    if not audit["cells"]:
        return "_Too few items or videos per task to cross-validate a text-only learner._"
    overall = audit.get("overall")
    text = ""
    if overall:
        text = (f"A text-only learner (logistic regression over the context, question and options, cross-validated "
                f"so that items over the same images are never on both sides of a split) and hand rules (answer "
                f"letter, longest option, most frequent answer text, rank among numbers, always yes, always refuse) "
                f"tried to answer every multiple-choice and yes/no item without its images. Overall the learner was "
                f"right on {pct(overall['accuracy'])} of {overall['n']} items against {pct(overall['chance'])} by "
                f"chance. ")
    if any(c.get("open") for c in audit["cells"]):
        text += (f"{audit.get('open_items', 0)} open answers were audited: a text-only baseline wrote each "
                 "reference as the reference of the training item whose question and context are nearest by TF-IDF "
                 "(cross-validated, grouped by video), scored by the benchmark's metric (Mementos' keyword F1, "
                 "Reefknot's exact judge, else token F1) against the same metric with the references shuffled within the task (its "
                 "chance). ")
    text += (f"A cell is flagged when the text-only strategy's (the learner's, the baseline's or a text-only "
             f"LLM's) 95 % lower bound is above chance + {audit.get('margin', MARGIN):.0%}.")
    shown = [c for c in audit["cells"] if c["flagged"] or "by_design" in c]
    if not shown:
        return text + f" **No cell of {len(audit['cells'])} is flagged.**"
    rows = [f"| {c['cell']} | {c['n']} | {pct(c['chance'])} | {pct(c['accuracy'])} ({pct(c['low95'])}-"
            f"{pct(c['high95'])}) | {blind_strategies(c) or '-'} | "
            f"{'by design: ' + repr(c['by_design']) if 'by_design' in c else 'flagged'} |" for c in shown]
    flagged = sum(c["flagged"] for c in audit["cells"])
    return (text + f" **{flagged} of {len(audit['cells'])} cells are flagged**: a score on them partly measures "
            "the text, not the image.\n\n| cell | questions | chance | learner (95 % interval) | above chance | "
            "verdict |\n|---|---|---|---|---|---|\n" + "\n".join(rows))


def lint_build_dir(path: str | Path, cache_dir: str | Path | None = None) -> dict[str, Any] | None:
    """Lint a finished build folder in place: its build.json gains ``"lint"`` (items.jsonl is never touched).

    Called by :func:`builders.run.open_build` before the folder is renamed into place, so every builder's build
    carries its lint. With ``cache_dir`` (the build's cache), the section of an earlier lint of the same items,
    promises, code and libraries is reused (:mod:`builders.lint.cache`; the section then says ``"cache":
    "reused"``), else the lint runs and is stored there. ``None`` when the folder holds no items.jsonl or
    build.json."""
    from builders.items import read_items
    from builders.lint.cache import LintCache, lint_key

    path = Path(path)
    items_path, build_path = path / "items.jsonl", path / "build.json"
    if not items_path.is_file() or not build_path.is_file():
        return None
    build = json.loads(build_path.read_text(encoding="utf-8"))
    cache = LintCache(cache_dir) if cache_dir is not None else None
    key = lint_key(items_path.read_bytes(), build) if cache is not None else ""
    section = cache.load(key) if cache is not None else None
    if section is not None:
        section["cache"] = "reused"
    else:
        section = lint(read_items(items_path), build).section()
        if cache is not None:
            cache.store(key, section)
    build["lint"] = section
    text = json.dumps(build, sort_keys=True, indent=2, ensure_ascii=False)
    build_path.write_text(text + "\n", encoding="utf-8")
    return section
