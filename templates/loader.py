"""Load question templates stored as YAML, with includes, and render them strictly.

Templates are data so that wording can be reviewed and changed without touching builder code. A template file
may ``include`` other files of the same benchmark folder (shared options, instructions); included mappings are
merged underneath the including file, so shared parts are written once and never copied.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping

import yaml

from sources.errors import ConfigError
from templates.english import with_article

__all__ = ["deep_merge", "load_templates", "render", "with_article"]
"""(:func:`~templates.english.with_article` is the wording's article, kept importable from here.)"""

TEMPLATE_ROOT = Path(__file__).resolve().parent


def deep_merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` merged onto ``base``: nested mappings merge, everything else is replaced."""
    merged: dict[str, Any] = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


@lru_cache(maxsize=None)
def _load_file(path: Path) -> Mapping[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: template file not found") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a template file must hold a mapping")
    merged: dict[str, Any] = {}
    for name in data.get("include", []):
        merged = deep_merge(merged, _load_file(path.parent / name))
    return deep_merge(merged, {k: v for k, v in data.items() if k != "include"})


def load_templates(benchmark: str, name: str, root: Path = TEMPLATE_ROOT) -> Mapping[str, Any]:
    """The merged content of ``templates/<benchmark>/<name>.yaml`` (includes resolved)."""
    return _load_file((root / benchmark / f"{name}.yaml").resolve())


def render(template: str, **values: Any) -> str:
    """Fill ``{name}`` fields; a field without a value is an error, never silently left in the text.

    (``str.format_map``, not ``string.Formatter``: the same rules in C, ten times faster over the hundreds of
    thousands of wordings a paper-scale build renders.)"""
    try:
        return template.format_map(values)
    except KeyError as exc:
        raise ConfigError(f"template {template!r} needs a value for {exc.args[0]!r}") from None
