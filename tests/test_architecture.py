"""The layers of docs/architecture.md, enforced: import-linter's contracts (``pyproject.toml``) hold on the
tree, and they allow exactly what the page's table says each layer knows about."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import have, require

ROOT = Path(__file__).resolve().parents[1]


def contracts() -> list[dict]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]


def page_table() -> dict[str, set[str]]:
    """``{layer: layers it may import}`` from the page's table ("everything above", "nothing else")."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    section = text.split("## Layers", 1)[1].split("\n\n", 2)[1]
    known: dict[str, set[str]] = {}
    for line in section.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        layer, knows = cells[0].strip("`/"), cells[-1]
        if knows.startswith("everything above"):
            known[layer] = set(known)
        elif knows.startswith("nothing"):
            known[layer] = set()
        else:
            known[layer] = set(re.findall(r"`(\w+)`", knows))
    return known


def contract_table() -> dict[str, set[str]]:
    """``{layer: layers it may import}`` by the contracts: the layers below, less independent siblings, less
    what a ``forbidden`` contract takes away."""
    found = {c["id"]: c for c in contracts()}
    layers = [[name.strip() for name in re.split(r"[|:]", row)] for row in found["layers"]["layers"]]
    allowed: dict[str, set[str]] = {}
    for i, row in enumerate(layers):
        below = {name for lower in layers[i + 1:] for name in lower}
        for name in row:
            allowed[name] = set(below)
    for c in found.values():
        if c["type"] == "forbidden" and set(c["source_modules"]) <= set(allowed):
            for source in c["source_modules"]:
                allowed[source] -= set(c["forbidden_modules"])
    return allowed


def test_the_page_and_the_contracts_say_the_same() -> None:
    assert page_table() == contract_table()


def test_the_comparison_sees_a_difference() -> None:
    page = page_table()
    page["annotation"].add("data_cards")
    assert page != contract_table()


def test_the_import_contracts_hold() -> None:
    """``lint-imports`` on the tree: the layers, benchmark packages independent, importers apart, no cycles."""
    require(have("importlinter"), "import-linter (the test extra)", "pip install -e '.[test]'")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                          "--no-cache", "--no-logo"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    report = run.stdout + run.stderr
    assert run.returncode == 0, report
    kept = re.search(r"Contracts: (\d+) kept, 0 broken", report)
    assert kept and int(kept.group(1)) == len(contracts()), report


@pytest.mark.parametrize("contract", ["layers", "acyclic"])
def test_a_broken_contract_is_reported(tmp_path: Path, contract: str) -> None:
    """The same run on a copy of a package with a planted import down the table (sources importing builders)
    or a planted cycle (two modules of filters importing each other) fails, naming the import."""
    require(have("importlinter"), "import-linter (the test extra)", "pip install -e '.[test]'")
    tree = tmp_path / "tree"
    for package in ("sources", "filters", "templates", "builders"):
        (tree / package).mkdir(parents=True)
        (tree / package / "__init__.py").write_text("")
    if contract == "layers":
        (tree / "sources" / "planted.py").write_text("import builders\n")
    else:
        (tree / "filters" / "a.py").write_text("from filters import b\n")
        (tree / "filters" / "b.py").write_text("from filters import a\n")
    config = tmp_path / "contracts.toml"
    config.write_text('[tool.importlinter]\nroot_packages = ["sources", "filters", "templates", "builders"]\n'
                      '[[tool.importlinter.contracts]]\nid = "layers"\nname = "layers"\ntype = "layers"\n'
                      'layers = ["builders", "filters | templates", "sources"]\n'
                      '[[tool.importlinter.contracts]]\nid = "acyclic"\nname = "acyclic"\ntype = "acyclic_siblings"\n'
                      'ancestors = ["sources", "filters", "templates", "builders"]\n')
    run = subprocess.run([sys.executable, "-c", "from importlinter.cli import lint_imports_command as c; c()",
                          str(config), "--no-cache", "--no-logo", "--contract", contract],
                         cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True, text=True,
                         timeout=300)
    assert run.returncode != 0 and "BROKEN" in run.stdout + run.stderr
    assert ("sources.planted -> builders" if contract == "layers" else "filters") in run.stdout


PACKAGES = ("commandline", "sources", "filters", "templates", "builders", "annotation", "data_cards", "scoring", "lint",
            "mirage")
LAZY_MODULES = {"data_cards.card": "huggingface_hub"}
"""Mirage modules that may be imported inside a function: importing them imports a heavy optional dependency."""
WITHOUT_HIDDEN_IMPORTS = ("scoring", "data_cards", "builders/*.py")
"""Where every import of a Mirage module is at the top of its file (the rest of the tree still has some inside
functions, for start-up time)."""


def function_level_imports(path: Path, root: Path = ROOT) -> list[tuple[int, str]]:
    """(line, absolute module) of the imports of Mirage modules inside the functions of ``path``."""
    import ast

    package = list(path.relative_to(root).with_suffix("").parts)
    package = package[:-1] if package[-1] != "__init__" else package[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for inner in ast.walk(node):
            if isinstance(inner, ast.ImportFrom):
                base = package[: len(package) - inner.level + 1] if inner.level else []
                modules = ([".".join([*base, inner.module])] if inner.module
                           else [".".join([*base, alias.name]) for alias in inner.names])  # from . import card
            elif isinstance(inner, ast.Import):
                modules = [alias.name for alias in inner.names]
            else:
                continue
            found += [(inner.lineno, module) for module in modules if module.split(".")[0] in PACKAGES]
    return found


def test_imports_hide_no_cycle_inside_functions() -> None:
    """An import inside a function hid the cycles the contracts now forbid; where nothing heavy is imported it
    goes to the top of the file, so the import graph is what a reader sees."""
    paths = sorted({p for pattern in WITHOUT_HIDDEN_IMPORTS
                    for p in (ROOT.glob(pattern) if pattern.endswith(".py") else ROOT.glob(f"{pattern}/**/*.py"))})
    hidden = [f"{p.relative_to(ROOT)}:{line}: {module}" for p in paths
              for line, module in function_level_imports(p) if module not in LAZY_MODULES]
    assert paths and not hidden, "\n".join(hidden)


def test_the_hidden_import_scan_sees_one(tmp_path: Path) -> None:
    (tmp_path / "scoring").mkdir()
    module = tmp_path / "scoring" / "x.py"
    module.write_text("def f():\n    from .llm import llm_config\n    import json\n    from . import run\n")
    assert function_level_imports(module, tmp_path) == [(2, "scoring.llm"), (4, "scoring.run")]
