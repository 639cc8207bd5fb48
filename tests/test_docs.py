"""The docs stand on their own: every relative link in README.md and docs/*.md resolves inside the repository,
and no committed Markdown file points outside it (``../``), where a clone has nothing.

Plain code, no dependencies: links are read with a small Markdown scan (inline links, images and reference
definitions; fenced code blocks and inline code are skipped) and anchors are checked against GitHub's heading
slugs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
SKIP_DIRS = {"builds", "releases", "node_modules", "build", "dist"}

INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
FENCE = re.compile(r"^(\s*)(```|~~~).*?^\1\2[^\n]*$", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def strip_code(text: str) -> str:
    """The text without fenced code blocks and inline code spans (their brackets are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def link_targets(text: str) -> list[str]:
    """Targets of the inline links, images and reference definitions of a Markdown text, in order."""
    prose = strip_code(text)
    return [m.group(1) for m in INLINE_LINK.finditer(prose)] + [m.group(1) for m in REFERENCE_DEF.finditer(prose)]


def heading_anchors(text: str) -> set[str]:
    """GitHub's anchors of a Markdown text's headings: lower case, punctuation dropped, spaces to hyphens,
    ``-1``, ``-2``, ... for repeats."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for line in FENCE.sub("", text).splitlines():
        m = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        title = re.sub(r"`([^`]*)`", r"\1", m.group(1))
        title = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title)
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f"{slug}-{count}")
    return anchors


def link_problems(md_file: Path, root: Path) -> list[str]:
    """Every relative link of ``md_file`` that leaves ``root``, names nothing, or names a missing heading."""
    text = md_file.read_text(encoding="utf-8")
    problems = []
    for target in link_targets(text):
        if SCHEME.match(target) or target.startswith("//"):
            continue  # http(s), mailto: not a file of the repository
        path_part, _, fragment = target.partition("#")
        resolved = (md_file.parent / unquote(path_part)).resolve() if path_part else md_file.resolve()
        where = f"{md_file.relative_to(root)}: link {target!r}"
        if not resolved.is_relative_to(root):
            problems.append(f"{where} points outside the repository")
        elif not resolved.exists():
            problems.append(f"{where} names no file of the repository")
        elif fragment and resolved.suffix == ".md" and fragment not in heading_anchors(resolved.read_text("utf-8")):
            problems.append(f"{where}: {resolved.name} has no heading with anchor #{fragment}")
    return problems


def committed_markdown(root: Path) -> list[Path]:
    """The repository's Markdown files: ``git ls-files`` where there is a git checkout, else a walk that skips
    hidden folders, virtualenvs and build outputs."""
    try:
        listed = subprocess.run(
            ["git", "-C", str(root), "ls-files", "-z", "--", "*.md"],
            capture_output=True, text=True, timeout=10, check=True,
        ).stdout
        return sorted(root / name for name in listed.split("\0") if name and (root / name).exists())
    except (OSError, subprocess.SubprocessError):
        return sorted(
            p for p in root.rglob("*.md")
            if not any(part.startswith(".") or part in SKIP_DIRS or part.endswith(".egg-info")
                       for part in p.relative_to(root).parts[:-1])
        )


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("md_file", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve_inside_the_repository(md_file: Path) -> None:
    assert link_problems(md_file, ROOT) == []


def test_the_docs_the_readme_promises_exist() -> None:
    readme_links = link_targets((ROOT / "README.md").read_text(encoding="utf-8"))
    for doc in ("docs/architecture.md", "docs/papers.md"):
        assert doc in readme_links, f"README.md does not link {doc}"


def outside_references(md_file: Path, root: Path) -> list[str]:
    """Links of ``md_file`` that climb out of ``root``, and mentions of ``../shared`` (linked or not)."""
    text = md_file.read_text(encoding="utf-8")
    found = []
    for target in link_targets(text):
        path_part = target.partition("#")[0]
        climbs = not SCHEME.match(target) and ".." in Path(path_part).parts
        if climbs and not (md_file.parent / path_part).resolve().is_relative_to(root):
            found.append(f"{md_file.relative_to(root)}: link {target!r} points outside the repository")
    if "../shared" in text:
        found.append(f"{md_file.relative_to(root)}: mentions ../shared, which a clone does not have")
    return found


def test_no_committed_markdown_points_outside_the_repository() -> None:
    files = committed_markdown(ROOT)
    assert ROOT / "README.md" in files and ROOT / "docs" / "architecture.md" in files
    assert [problem for md_file in files for problem in outside_references(md_file, ROOT)] == []


# ------------------------------------------------------------------------------- the scan itself can fail


def test_the_scan_catches_broken_outside_and_anchor_links(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Adding a benchmark\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(
        "See [the guide](docs/guide.md#adding-a-benchmark), ![logo](docs/logo.png), [up](../shared/X.md),\n"
        "[gone](docs/missing.md), [bad anchor](docs/guide.md#no-such-heading), [web](https://example.org/a.md)\n"
        "and [here](#top).\n\n"
        "```bash\necho [not](a-link.md)\n```\n"
        "Inline `[code](skipped.md)` is not a link.\n\n"
        "[ref]: docs/also-missing.md\n",
        encoding="utf-8",
    )
    problems = link_problems(readme, tmp_path)
    assert problems == [
        "README.md: link 'docs/logo.png' names no file of the repository",
        "README.md: link '../shared/X.md' points outside the repository",
        "README.md: link 'docs/missing.md' names no file of the repository",
        "README.md: link 'docs/guide.md#no-such-heading': guide.md has no heading with anchor #no-such-heading",
        "README.md: link '#top': README.md has no heading with anchor #top",
        "README.md: link 'docs/also-missing.md' names no file of the repository",
    ]


def test_heading_anchors_follow_github() -> None:
    text = "# Mirage\n## Two commands\n## MIOH on the paper's data\n## `python -m scoring`\n## Two commands\n"
    assert heading_anchors(text) == {
        "mirage", "two-commands", "mioh-on-the-papers-data", "python--m-scoring", "two-commands-1",
    }


def test_outside_references_are_caught(tmp_path: Path) -> None:
    (tmp_path / "data_cards").mkdir()
    card = tmp_path / "data_cards" / "card_template.md"
    card.write_text("[readme](../README.md) [design](../../shared/ARCHITECTURE.md)\nsee `../shared/seeds/`\n",
                    encoding="utf-8")
    (tmp_path / "README.md").write_text("# x\n", encoding="utf-8")
    assert outside_references(card, tmp_path) == [
        "data_cards/card_template.md: link '../../shared/ARCHITECTURE.md' points outside the repository",
        "data_cards/card_template.md: mentions ../shared, which a clone does not have",
    ]


# ------------------------------------------------------------------------------------------ code references

PACKAGES = ("commandline", "sources", "filters", "templates", "builders", "annotation", "data_cards", "scoring", "lint",
            "mirage")
ROLE = re.compile(r":(?:mod|func|class|meth|data|attr|exc|obj):`~?((?:%s)(?:\.\w+)*)`" % "|".join(PACKAGES))
"""A Sphinx role naming a Mirage module or one of its names (``:func:`builders.seeding.rng```)."""


def _names(body: list) -> dict[str, object]:
    """Top-level names of a module or class body: definitions, assignments and imports (re-exports)."""
    import ast

    out: dict[str, object] = {}
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]  # A, B = ...
                out.update({t.id: node for t in names if isinstance(t, ast.Name)})
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out.update({(a.asname or a.name).split(".")[0]: node for a in node.names})
        elif isinstance(node, (ast.If, ast.Try)):
            out.update(_names(node.body))
    return out


def resolves(name: str, root: Path = ROOT) -> bool:
    """Whether a dotted Mirage name exists in the tree: the longest prefix that is a module, then names
    defined in it (or in a class of it), read from the source without importing anything."""
    import ast

    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:i])
        path = base / "__init__.py" if (base / "__init__.py").is_file() else base.with_suffix(".py")
        if not path.is_file():
            continue
        body = ast.parse(path.read_text(encoding="utf-8")).body
        for attr in parts[i:]:
            found = _names(body).get(attr)
            if found is None:
                return (base / attr).with_suffix(".py").is_file() or (base / attr).is_dir()
            body = found.body if isinstance(found, ast.ClassDef) else []
        return True
    return False


def test_code_references_in_docstrings_resolve() -> None:
    """``:mod:``/``:func:``/``:class:``... references to Mirage names point at something that exists, so a
    docstring does not send a reader to a module that moved (``sources.seeding.rng``, now ``builders.seeding``)."""
    broken = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] not in (*PACKAGES, "tests", "benchmarks"):
            continue
        text = path.read_text(encoding="utf-8")
        for m in ROLE.finditer(text):
            if not resolves(m.group(1)):
                broken.append(f"{rel}:{text[:m.start()].count(chr(10)) + 1}: {m.group(1)}")
    assert not broken, "\n".join(broken)


def test_the_reference_check_catches_a_moved_name() -> None:
    assert resolves("builders.seeding.rng") and resolves("builders.quality.ChiSquare")
    assert resolves("commandline.parsing.ArgumentParser.error") and resolves("data_cards.harness")
    assert resolves("sources.demo.video.OUTCOMES")  # assigned with another name: OUTCOMES, WEIGHTS = ...
    assert not resolves("sources.seeding.rng") and not resolves("builders.mioh.pools.label_code")


BEFORE_AFTER = re.compile(r"\b\d+(?:\.\d+)? ?(?:s|ms|min|MB|GB)\b ?(?:->|→) ?\d")
"""A before/after timing ("29 s -> 20 s"): a session's measurement, which belongs in docs/measurements.md."""


def test_before_after_timings_live_in_the_measurements_page() -> None:
    found = [f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
             for path in sorted(ROOT.rglob("*.py")) if path.relative_to(ROOT).parts[0] in PACKAGES
             for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if BEFORE_AFTER.search(line)]
    assert not found, "\n".join(found)
    assert BEFORE_AFTER.search("the whole build 29 s -> 20 s") and not BEFORE_AFTER.search("a -> b, 3 s")


MEASUREMENTS_PAGE = re.compile(r"\bmeasurements\.md\b")
"""The dated figures' page: the code says why in words and names the benchmark that measures it, never this page
(a docstring that cites a lab notebook goes stale with it)."""


def code_citing_the_measurements(root: Path) -> list[str]:
    """``file:line`` of every Python line under ``root``'s packages and benchmarks/ that cites the measurements page."""
    return [f"{path.relative_to(root)}:{n}" for path in sorted(root.rglob("*.py"))
            if path.relative_to(root).parts[0] in (*PACKAGES, "benchmarks")
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if MEASUREMENTS_PAGE.search(line)]


def test_no_code_cites_the_measurements_page(tmp_path: Path) -> None:
    assert (ROOT / "docs" / "measurements.md").is_file()
    assert code_citing_the_measurements(ROOT) == []
    (tmp_path / "sources").mkdir()
    (tmp_path / "sources" / "a.py").write_text('"""Fast (docs/measurements.md)."""\n', encoding="utf-8")
    assert code_citing_the_measurements(tmp_path) == ["sources/a.py:1"]
