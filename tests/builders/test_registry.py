"""The benchmark registry: every spec's code resolves, the papers are written once (docs/papers.md agrees), reading
the registry imports no builder, and a benchmark installed beside Mirage joins through its entry point."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

from builders import registry
from builders.registry import BenchmarkSpec, Paper, load
from sources.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _papers_table() -> dict[str, list[str]]:
    """docs/papers.md's first table, by its benchmark cell."""
    rows = {}
    for line in (ROOT / "docs" / "papers.md").read_text(encoding="utf-8").split("\n\n## ")[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and len(cells) == 6 and not set(cells[0]) <= {"-"} and cells[0] != "benchmark":
            rows[cells[0]] = cells
    return rows


def test_docs_papers_table_is_the_registry():
    table = _papers_table()
    assert set(table) == {s.pretty for s in registry.specs()}
    for spec in registry.specs():
        _, title, authors, venue, identifiers, _ = table[spec.pretty]
        paper = spec.paper
        assert (title, authors, venue, identifiers) == (
            f"*{paper.title}*", paper.initials, paper.venue, ", ".join(paper.identifiers)), spec.name


def test_the_published_papers_not_the_submissions():
    mioh, mementos = registry.spec("mioh").paper, registry.spec("mementos").paper
    assert mioh.venue == "CVPR 2026" and mioh.authors[0] == "Joonki Min"
    assert mementos.venue.startswith("ACL 2024") and "anonymous" not in " ".join(mementos.authors).lower()
    assert all("anonymous" not in a.lower() for s in registry.specs() for a in s.paper.authors)
    assert registry.spec("reefknot").paper.surnames == "Zheng, Chen, Yan, Zou, Zhou and Hu"


def test_every_spec_names_code_that_exists():
    for spec in registry.specs():
        if spec.config:
            assert dataclasses.is_dataclass(load(spec.config)), spec.name
        for path in (spec.build, spec.cli):
            assert path is None or callable(load(path)), (spec.name, path)
        if spec.scorer:
            module = load(spec.scorer)
            assert callable(module.run) and callable(module.print_report), spec.name
        for module in spec.imports.values():
            assert callable(load(module).read), (spec.name, module)
        for path in spec.authoring:
            assert load(path).benchmark == spec.name, path
        assert spec.twin == bool(spec.config), spec.name  # every builder can make a twin; an import cannot


def test_reading_the_registry_imports_no_builder():
    code = ("import sys; from builders import registry; registry.specs(); "
            "print(sorted(m for m in sys.modules if m.endswith(('.builder', '.cli')) or m.startswith('scoring')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"


def test_unknown_and_duplicate_benchmarks_are_one_line_errors():
    with pytest.raises(ConfigError, match="unknown benchmark 'nope'; known: mementos, mioh"):
        registry.spec("nope")
    assert registry.find("nope") is None
    twin = dataclasses.replace(registry.spec("mioh"))
    with pytest.raises(ConfigError, match="'mioh' is registered twice"):
        registry.register(twin)
    with pytest.raises(ConfigError, match="a twin needs a config and a build"):
        BenchmarkSpec(name="x", pretty="X", paper=Paper("t", ("A B",), "v"), description="")
    with pytest.raises(ConfigError, match="unknown review kind"):
        BenchmarkSpec(name="x", pretty="X", paper=Paper("t", ("A B",), "v"), description="", twin=False,
                      review_kinds=("essay",))


def test_an_installed_package_joins_through_its_entry_point(tmp_path, monkeypatch):
    """What ``pip install`` of a sixth benchmark leaves: a dist-info with one entry point, and the package."""
    (tmp_path / "sixth").mkdir()
    (tmp_path / "sixth" / "__init__.py").write_text("")
    (tmp_path / "sixth" / "spec.py").write_text(
        "from builders.registry import BenchmarkSpec, Paper\n"
        "SPEC = BenchmarkSpec(name='sixth', pretty='Sixth', paper=Paper('A sixth paper', ('Ada Lovelace',), "
        "'Nowhere 2026'), description='a sixth benchmark', twin=False)\n")
    info = tmp_path / "sixth-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: sixth\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mirage.benchmarks]\nsixth = sixth.spec:SPEC\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        registry.reload()
        assert "sixth" in registry.names()
        assert registry.spec("sixth").paper.surnames == "Lovelace"
    finally:
        monkeypatch.undo()
        registry.reload()
    assert "sixth" not in registry.names()


def test_every_builtin_benchmark_package_is_in_the_independence_contract():
    import tomllib

    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (independent,) = [c["modules"] for c in contracts if c["id"] == "benchmarks"]
    packages = {s.config.split(".config:")[0] for s in registry.specs()
                if s.config and s.config.startswith("builders.")}
    assert packages == set(independent)
