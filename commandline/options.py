"""Command-line options declared once: on the fields of a config dataclass.

A config (a builder's ``XConfig``, or a part every builder shares: ``BuildOptions``, ``LLMOptions``,
``ClipOptions``, ``ExecutorOptions``) declares each option as a field whose default :func:`option` wraps with its
help, metavar and choices. :func:`add_options` makes the argparse options from those fields, so the command line,
a ``--config`` YAML file (field names) and ``--help`` all come from the one declaration: the flag is the field's
name with hyphens, the type its annotation (``int``, ``float``, ``str``, ``Path``, ``X | None``; ``list[X]`` takes
one or more values; ``bool`` is a switch; a ``Literal`` of values or an ``Enum`` takes one of them, and ``--help``
names them), the default its default. A field without a default is a required option; ``positional=True`` makes it an
argument without a flag (``BUILD_DIR``; ``list[X]``: one or more).

Why not jsonargparse, simple-parsing or tyro: each brings its own help layout (``(type: int, default: 4)``,
panels), its own boolean flags (``--decomposed true``) and its own error output, where Mirage's command lines
keep their options, help texts and one-line errors (:class:`commandline.parsing.ArgumentParser`); what is needed of them
here is a loop over ``dataclasses.fields`` and standard argparse.

Help texts are ``str.format`` templates: ``{default}`` (``{default:g}``) is the field's default, other names come
from the config's ``OPTION_HELP`` (a class attribute merged along the class hierarchy, so a builder fills in what
its seed draws or where its executor runs) or from ``add_options(help_values=...)``; ``{{`` and ``}}`` are literal
braces. A name that nothing fills in is an error when the parser is made.

Commands with subcommands give each its own config and handler (:func:`add_command`); :func:`run_command` parses
the command line into the chosen subcommand's config and calls its handler, so a handler is typed on its config
rather than on an ``argparse.Namespace``.
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import types
import typing
from dataclasses import MISSING
from typing import Any, Callable, Literal, Mapping, Sequence, TypeVar

C = TypeVar("C")

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
    positional: bool = False
    """An argument without a flag (``BUILD_DIR``), named by its metavar in ``--help``."""


def option(default: Any = MISSING, *, help: str, metavar: str | None = None, choices: Sequence[Any] | None = None,
           flag: str | None = None, group: str | None = None, type: Callable[[str], Any] | None = None,
           default_factory: Callable[[], Any] | Any = MISSING, positional: bool = False) -> Any:
    """A dataclass field that is also a command-line option (see the module docstring)."""
    declared = Option(help, metavar, tuple(choices) if choices is not None else None, flag, group, type, positional)
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
    """The default of field ``name`` as ``config_type`` declares it (a default factory is called); ``MISSING``
    for a field without one (a required option)."""
    found = config_type.__dataclass_fields__[name]  # type: ignore[attr-defined]
    if found.default is not MISSING:
        return found.default
    if found.default_factory is not MISSING:
        return found.default_factory()
    return MISSING


def inherited_help_values(config_type: type) -> dict[str, str]:
    """``OPTION_HELP`` of ``config_type`` merged along its classes, the nearest winning."""
    merged: dict[str, str] = {}
    for cls in reversed(config_type.__mro__):
        merged.update(cls.__dict__.get("OPTION_HELP", {}))
    return merged


def add_options(parser: argparse.ArgumentParser, config_type: type, *, help_values: Mapping[str, str] | None = None,
                title: str | None = None, helps: Mapping[str, str] | None = None,
                choices: Mapping[str, Sequence[Any]] | None = None) -> list[str]:
    """Add an option to ``parser`` for every option field of ``config_type``; returns their names.

    A parser made with ``argument_default=argparse.SUPPRESS`` leaves the options not given out of the namespace
    (what :func:`builders.cli.parse_config` merges over a config file); any other parser gets the fields'
    defaults. ``title`` replaces the group title of every option, ``helps`` the help of the fields it names
    (a command that reuses ``LLMOptions`` for the model it evaluates words them its own way), ``choices`` the
    choices of the fields it names (known only when the parser is made: the benchmarks' authoring flows)."""
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
        shown = default.value if isinstance(default, enum.Enum) else default
        kwargs: dict[str, Any] = {"help": _render(config_type, name, text, shown, values)}
        kwargs.update(_value_kwargs(config_type, name, hints[name], declared, default))
        if name in (choices or {}):
            kwargs.update(choices=tuple(choices[name]), metavar=declared.metavar)  # help lists them, as argparse does
        if declared.positional:
            if default is not MISSING:
                kwargs.update(nargs="*" if kwargs.get("nargs") == "+" else "?", default=default)
            groups[group_title].add_argument(name, **kwargs)
            continue
        if default is MISSING:
            kwargs["required"] = True
        elif parser.argument_default is not argparse.SUPPRESS:
            kwargs["default"] = default
        groups[group_title].add_argument(declared.flag or "--" + name.replace("_", "-"), dest=name, **kwargs)
    return names


def _value_kwargs(config_type: type, name: str, hint: Any, declared: Option, default: Any) -> dict[str, Any]:
    """``add_argument``'s ``action``/``type``/``choices``/``metavar``/``nargs`` for a field's annotation."""
    value_type, many = _value_type(hint)
    if value_type is bool:
        if default is True and not declared.flag:
            raise ValueError(f"{config_type.__name__}.{name}: a switch that is on by default needs a flag")
        return {"action": "store_false" if default is True else "store_true"}
    kwargs: dict[str, Any] = {"type": declared.type, "metavar": declared.metavar, "choices": declared.choices}
    if typing.get_origin(value_type) is Literal:
        values = typing.get_args(value_type)
        kwargs["choices"] = declared.choices or values
        value_type = type(values[0])
    if isinstance(value_type, type) and issubclass(value_type, enum.Enum):
        kwargs["type"] = declared.type or _enum_value(value_type)
        kwargs["metavar"] = declared.metavar or "{" + ",".join(str(m.value) for m in value_type) + "}"
    elif kwargs["type"] is None and value_type is not str:
        kwargs["type"] = value_type  # int, float, Path
    if many:
        kwargs["nargs"] = "+"
    if declared.positional and kwargs["choices"] is None:
        kwargs["metavar"] = kwargs["metavar"] or name.upper()
    return kwargs


def _enum_value(enum_type: type[enum.Enum]) -> Callable[[str], enum.Enum]:
    """``type=`` of an ``Enum`` option: the member of that value; argparse turns the error into one line naming
    the valid values (as it does for ``choices``)."""
    def convert(text: str) -> enum.Enum:
        for member in enum_type:
            if str(member.value) == text:
                return member
        valid = ", ".join(repr(str(m.value)) for m in enum_type)
        raise argparse.ArgumentTypeError(f"invalid choice: {text!r} (choose from {valid})")
    convert.__name__ = enum_type.__name__
    return convert


def config_of(config_type: type[C], namespace: argparse.Namespace) -> C:
    """The config of ``config_type`` from a namespace that :func:`add_options` filled in."""
    return config_type(**{n: getattr(namespace, n) for n in option_names(config_type) if hasattr(namespace, n)})


def add_command(subparsers: Any, name: str, config_type: type, handler: Callable[[Any], int], *, help: str,
                description: str | None = None, help_values: Mapping[str, str] | None = None,
                choices: Mapping[str, Sequence[Any]] | None = None) -> argparse.ArgumentParser:
    """Subcommand ``name`` of a command: its options are the fields of ``config_type`` (``help_values`` and
    ``choices`` as :func:`add_options` takes them); :func:`run_command` calls ``handler(config)`` when it is
    chosen."""
    sub = subparsers.add_parser(name, help=help, description=description or help[:1].upper() + help[1:] + ".")
    add_options(sub, config_type, help_values=help_values, choices=choices)
    sub.set_defaults(command_config=config_type, command_handler=handler)
    return sub


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    """Parse ``argv`` (subcommands made by :func:`add_command`) and run the chosen subcommand's handler."""
    namespace = parser.parse_args(argv)
    return namespace.command_handler(config_of(namespace.command_config, namespace))


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
