"""Command-line options declared once: on the fields of a config dataclass.

A config (a builder's ``XConfig``, or a part every builder shares: ``BuildOptions``, ``LLMOptions``,
``ClipOptions``, ``ExecutorOptions``) declares each option as a field whose default :func:`option` wraps with its
help, metavar and choices. :func:`add_options` makes the argparse options from those fields, so the command line,
a ``--config`` YAML file (field names) and ``--help`` all come from the one declaration: the flag is the field's
name with hyphens, the type its annotation (``int``, ``float``, ``str``, ``X | None``; ``list[X]`` takes one or
more values; ``bool`` is a switch), the default its default.

Why not jsonargparse, simple-parsing or tyro: each brings its own help layout (``(type: int, default: 4)``,
panels), its own boolean flags (``--decomposed true``) and its own error output, where Mirage's command lines
keep their options, help texts and one-line errors (:class:`builders.cli.ArgumentParser`); what is needed of them
here is a loop over ``dataclasses.fields`` and standard argparse.

Help texts are ``str.format`` templates: ``{default}`` (``{default:g}``) is the field's default, other names come
from the config's ``OPTION_HELP`` (a class attribute merged along the class hierarchy, so a builder fills in what
its seed draws or where its executor runs) or from ``add_options(help_values=...)``; ``{{`` and ``}}`` are literal
braces. A name that nothing fills in is an error when the parser is made.
"""

from __future__ import annotations

import argparse
import dataclasses
import types
import typing
from dataclasses import MISSING
from typing import Any, Callable, Mapping, Sequence

OPTION = "mirage.option"
"""The key of a field's ``metadata`` that holds its :class:`Option`."""


@dataclasses.dataclass(frozen=True)
class Option:
    """How a config field appears on the command line."""

    help: str
    metavar: str | None = None
    choices: Sequence[Any] | None = None
    flag: str | None = None
    """The option string; default ``--`` and the field name with hyphens (a switch whose default is true needs
    one, e.g. ``--no-progress`` for ``progress``)."""
    group: str | None = None
    """Title of the argparse group the option is listed under in ``--help``; ``None``: the main options."""
    type: Callable[[str], Any] | None = None
    """Converts the text on the command line; default from the field's annotation."""


def option(default: Any = MISSING, *, help: str, metavar: str | None = None, choices: Sequence[Any] | None = None,
           flag: str | None = None, group: str | None = None, type: Callable[[str], Any] | None = None,
           default_factory: Callable[[], Any] | Any = MISSING) -> Any:
    """A dataclass field that is also a command-line option (see the module docstring)."""
    declared = Option(help, metavar, tuple(choices) if choices is not None else None, flag, group, type)
    return dataclasses.field(default=default, default_factory=default_factory, metadata={OPTION: declared})


def declaration(config_type: type, name: str) -> Option | None:
    """The :class:`Option` of field ``name``: a subclass that only changes a field's default (``out: str =
    "builds/mioh"``) keeps the declaration of the class that declared the option."""
    for cls in config_type.__mro__:
        found = getattr(cls, "__dataclass_fields__", {}).get(name)
        if found is not None and OPTION in found.metadata:
            return found.metadata[OPTION]
    return None


def option_names(config_type: type) -> list[str]:
    """The fields of ``config_type`` that are options, in ``--help`` order: the config's own first, then those
    of the classes it inherits from, nearest first (a field is listed where its option is declared). The
    config's ``NO_OPTIONS`` (a class attribute) leaves inherited options out that it has no use for."""
    excluded = set(getattr(config_type, "NO_OPTIONS", ()))
    names: list[str] = []
    for cls in config_type.__mro__:
        own = getattr(cls, "__dataclass_fields__", {})
        for name in cls.__dict__.get("__annotations__", {}):
            declared = own.get(name)
            if (declared is not None and OPTION in declared.metadata and name not in names
                    and name not in excluded):
                names.append(name)
    return names


def default_of(config_type: type, name: str) -> Any:
    """The default of field ``name`` as ``config_type`` declares it (a default factory is called)."""
    found = config_type.__dataclass_fields__[name]  # type: ignore[attr-defined]
    if found.default is not MISSING:
        return found.default
    if found.default_factory is not MISSING:
        return found.default_factory()
    raise ValueError(f"{config_type.__name__}.{name}: an option needs a default")


def inherited_help_values(config_type: type) -> dict[str, str]:
    """``OPTION_HELP`` of ``config_type`` merged along its classes, the nearest winning."""
    merged: dict[str, str] = {}
    for cls in reversed(config_type.__mro__):
        merged.update(cls.__dict__.get("OPTION_HELP", {}))
    return merged


def add_options(parser: argparse.ArgumentParser, config_type: type, *, help_values: Mapping[str, str] | None = None,
                title: str | None = None, helps: Mapping[str, str] | None = None) -> list[str]:
    """Add an option to ``parser`` for every option field of ``config_type``; returns their names.

    A parser made with ``argument_default=argparse.SUPPRESS`` leaves the options not given out of the namespace
    (what :func:`builders.cli.parse_config` merges over a config file); any other parser gets the fields'
    defaults. ``title`` replaces the group title of every option, ``helps`` the help of the fields it names
    (a command that reuses ``LLMOptions`` for the model it evaluates words them its own way)."""
    values = {**inherited_help_values(config_type), **(help_values or {})}
    hints = typing.get_type_hints(config_type)
    groups: dict[str | None, Any] = {None: parser}
    names = option_names(config_type)
    for name in names:
        declared = declaration(config_type, name)
        assert declared is not None
        group_title = title or declared.group
        if group_title not in groups:
            groups[group_title] = parser.add_argument_group(group_title)
        default = default_of(config_type, name)
        text = (helps or {}).get(name, declared.help)
        kwargs: dict[str, Any] = {"dest": name, "help": _render(config_type, name, text, default, values)}
        value_type, many = _value_type(hints[name])
        if value_type is bool:
            kwargs["action"] = "store_false" if default else "store_true"
            if default and not declared.flag:
                raise ValueError(f"{config_type.__name__}.{name}: a switch that is on by default needs a flag")
        else:
            kwargs.update(type=declared.type or (None if value_type is str else value_type),
                          metavar=declared.metavar, choices=declared.choices)
            if many:
                kwargs["nargs"] = "+"
        if parser.argument_default is not argparse.SUPPRESS:
            kwargs["default"] = default
        groups[group_title].add_argument(declared.flag or "--" + name.replace("_", "-"), **kwargs)
    return names


def _render(config_type: type, name: str, text: str, default: Any, values: Mapping[str, str]) -> str:
    try:
        return text.format_map({**values, "default": default})
    except (KeyError, IndexError, ValueError) as e:
        raise ValueError(f"{config_type.__name__}.{name}: help {text!r} names {e} that nothing fills in "
                         f"(OPTION_HELP or help_values)") from None


def _value_type(hint: Any) -> tuple[Any, bool]:
    """(type of one value, whether the option takes a list) of a field's annotation."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if typing.get_origin(hint) in (typing.Union, types.UnionType) and len(args) == 1:
        hint = args[0]
    if typing.get_origin(hint) in (list, tuple):
        return typing.get_args(hint)[0], True
    return hint, False
