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
