"""The benchmarks Mirage knows, one :class:`BenchmarkSpec` each: the one place a benchmark is named.

A benchmark declares itself in its own package (``builders/<name>/spec.py``: ``SPEC = BenchmarkSpec(...)``), and
one line makes it known: an entry of :data:`BUILTIN` for the benchmarks shipped with Mirage, an entry point of the
group ``mirage.benchmarks`` (``toy = my_package.spec:SPEC``) for a package installed beside it, or
:func:`register` at run time. The card, the review rooms, the authoring screens, the scorers, twins, importers,
the lint and the harness exports read the spec; none of them names a benchmark.

A spec names code by dotted path (``"builders.mioh.builder:write_build"``), resolved when it is used
(:func:`load`): reading the registry imports no builder, scorer or heavy dependency, and the layers above
``builders/`` (the scorer lives in ``scoring/``) are named without being imported from below.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any, Callable, Mapping

from sources.errors import ConfigError

ENTRY_POINT_GROUP = "mirage.benchmarks"
"""Installed packages add benchmarks under this entry-point group, each entry naming a spec (``module:SPEC``)."""

BUILTIN: tuple[str, ...] = (
    "builders.mioh.spec:SPEC",
    "builders.mementos.spec:SPEC",
    "builders.mmsap.spec:SPEC",
    "builders.predictive.spec:SPEC",
    "builders.reefknot.spec:SPEC",
    "builders.imports.pope:SPEC",
)
"""The specs of the benchmarks shipped with Mirage (a benchmark Mirage only imports, POPE, has one too)."""

SOURCE_LICENCES: dict[str, tuple[str, str]] = {
    "demo": ("cc0-1.0", "generated procedurally by Mirage and dedicated to the public domain (CC0 1.0)"),
    "coco": ("cc-by-4.0", "COCO annotations are CC BY 4.0; the images follow the Flickr terms of use"),
    "visual_genome": ("cc-by-4.0", "Visual Genome is CC BY 4.0"),
    "vqav2": ("cc-by-4.0", "VQA v2 annotations are CC BY 4.0; the images are COCO's"),
}
"""Source name -> (Hub licence id, note) of the sources whose terms Mirage knows; a spec lists those it reads
(:func:`licences`)."""

ITEM_KINDS = ("mcq", "yes_no", "vqa")
"""What a review room can show: multiple choice, yes/no, an open answer (``annotation.config`` renders each)."""


@dataclass(frozen=True)
class Paper:
    """The published paper a benchmark follows, as it appeared; ``specified_from`` names the text Mirage was
    specified from where that differs (a submission under review, an earlier version)."""

    title: str
    authors: tuple[str, ...]
    venue: str
    identifiers: tuple[str, ...] = ()
    specified_from: str = ""

    @property
    def surnames(self) -> str:
        """``"Zheng, Chen, Yan, Zou and Hu"``: the authors as a card cites them."""
        names = [a.split()[-1] for a in self.authors]
        return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"

    @property
    def initials(self) -> str:
        """``"K. Zheng, J. Chen, ..."``: the authors as docs/papers.md lists them."""
        return ", ".join(" ".join(f"{p[0]}." for p in a.split()[:-1]) + f" {a.split()[-1]}" for a in self.authors)


@dataclass(frozen=True)
class BenchmarkSpec:
    """Everything the stages after a build need to know about one benchmark.

    Code is named by dotted path (``module:attribute``, or a module for ``scorer``) and imported on use."""

    name: str
    """The ``benchmark`` of its items and builds, the folder ``builds/<name>``, the scorer's command word."""
    pretty: str
    paper: Paper
    description: str
    """One paragraph for the data card: what the benchmark asks and how."""
    config: str | None = None
    """The build options' dataclass (``builders.X.config:XConfig``); ``None`` for a benchmark Mirage only imports."""
    build: str | None = None
    """``write_build(config) -> (path, items, stats)``."""
    cli: str | None = None
    """``main(argv) -> int`` of ``python -m builders.X``."""
    scorer: str | None = None
    """The scorer module (``scoring.X``): ``add_arguments``, ``run``, ``print_report``, optionally ``plots``."""
    review_kinds: tuple[str, ...] = ITEM_KINDS
    """The item kinds (:data:`ITEM_KINDS`) its builds hold: a review push refuses an item of another kind."""
    authoring: tuple[str, ...] = ()
    """Its authoring hooks (``builders.X.authoring:HOOK``, :class:`builders.authoring.AuthoringHook`): what people
    write for it in ``annotation author``."""
    imports: Mapping[str, str] = field(default_factory=dict)
    """Formats of its published files -> the importer module (``read``, optionally ``promises``,
    ``images_to_copy``), for ``python -m builders.imports`` and ``python -m lint --format``."""
    licences: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    """Source name (as build.json's ``sources`` names it) -> (Hub licence id, note) of the sources it reads."""
    source_options: Mapping[str, str] = field(default_factory=dict)
    """Config option -> source name, for builds whose build.json lists no ``sources``."""
    lint_promises: Mapping[str, Any] = field(default_factory=dict)
    """What its items promise the lint by design when build.json says nothing (``yes_no_pairs``: provenance keys
    of 1:1 yes/no pairs)."""
    open_metric: str = "token_f1"
    """How the lint's blind audit scores an open answer against a reference (:mod:`builders.lint.blind_open`)."""
    scored_apart: tuple[str, ...] = ()
    """Question types its scorer keeps out of the accuracy tables (MIOH's decomposed ablation); the harness too."""
    uses_clip: bool = False
    """Whether its builds have a CLIP stage whose absence the card should mention."""
    twin: bool = True
    """Whether ``python -m builders.twin`` can rebuild a build of it from its recorded config."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.review_kinds) - set(ITEM_KINDS))
        if unknown:
            raise ConfigError(f"benchmark {self.name!r}: unknown review kind(s) {', '.join(unknown)}; "
                              f"known: {', '.join(ITEM_KINDS)}")
        if self.twin and not (self.config and self.build):
            raise ConfigError(f"benchmark {self.name!r}: a twin needs a config and a build")


def licences(*sources: str) -> dict[str, tuple[str, str]]:
    """The known licences of ``sources`` (:data:`SOURCE_LICENCES`), for a spec's ``licences``."""
    return {name: SOURCE_LICENCES[name] for name in sources}


def load(path: str) -> Any:
    """The object a dotted path names: ``package.module:attribute`` or, without a colon, the module."""
    module, _, attribute = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in filter(None, attribute.split(".")):
        obj = getattr(obj, part)
    return obj


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's ``__getattr__`` that imports ``exports`` (name -> its submodule) on first use: a benchmark
    package's ``spec`` is read without importing its builder, so reading the registry stays cheap."""

    def __getattr__(name: str) -> Any:
        if name not in exports:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{exports[name]}"), name)

    return __getattr__


_specs: dict[str, BenchmarkSpec] = {}
_loaded = False


def register(spec: BenchmarkSpec) -> BenchmarkSpec:
    """Make ``spec`` known (a second spec of the same name is an error, not a silent override)."""
    _load()
    if spec.name in _specs and _specs[spec.name] is not spec:
        raise ConfigError(f"benchmark {spec.name!r} is registered twice")
    _specs[spec.name] = spec
    return spec


def unregister(name: str) -> None:
    """Forget a benchmark registered at run time (tests add and remove one)."""
    _specs.pop(name, None)


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    found = [*BUILTIN, *(ep.value for ep in entry_points(group=ENTRY_POINT_GROUP))]
    for path in found:
        spec = load(path)
        if not isinstance(spec, BenchmarkSpec):
            raise ConfigError(f"{path}: not a BenchmarkSpec")
        if spec.name in _specs:
            raise ConfigError(f"{path}: benchmark {spec.name!r} is registered twice")
        _specs[spec.name] = spec


def reload() -> None:
    """Read :data:`BUILTIN` and the entry points again (after a package was installed)."""
    global _loaded
    _specs.clear()
    _loaded = False
    _load()


def names() -> list[str]:
    """Every known benchmark, sorted."""
    _load()
    return sorted(_specs)


def specs() -> list[BenchmarkSpec]:
    """Every known spec, sorted by name."""
    return [_specs[n] for n in names()]


def find(name: str) -> BenchmarkSpec | None:
    """The spec of ``name``, or ``None`` for a benchmark Mirage does not know."""
    _load()
    return _specs.get(name)


def scored_apart(item: Any) -> bool:
    """Whether ``item``'s question type is scored on its own, out of its benchmark's main metrics (``scored_apart``
    of the benchmark's spec: MIOH's decomposed questions); the scorer and the lmms-eval tasks both ask here."""
    found = find(item.benchmark)
    return found is not None and item.question_type in found.scored_apart


def spec(name: str) -> BenchmarkSpec:
    """The spec of ``name``; a one-line error naming the known ones otherwise."""
    found = find(name)
    if found is None:
        raise ConfigError(f"unknown benchmark {name!r}; known: {', '.join(names())}")
    return found
