"""``python -m builders.imports FORMAT FILE ...``: a published benchmark's files written as a Mirage build dir."""

from __future__ import annotations

import argparse
import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from builders.cli import ArgumentParser, exit_on_error, print_lint, stderr, stdout
from builders.imports import formats, images_to_copy, importer_of, read_published
from builders.run import code_version, file_sha256, open_build
from commandline.options import add_options, config_of, option
from commandline.parsing import prog
from sources.errors import ConfigError


@dataclass(kw_only=True)
class ImportOptions:
    format: str = option(positional=True, help="the published layout of FILE (reefknot: mirage import reefknot, its "
                                               "own importer)")
    """Its choices are the formats the benchmarks' specs declare (:func:`builders.imports.formats`)."""
    files: list[str] = option(metavar="FILE", positional=True,
                              help="the benchmark's own files (JSON lines, JSON, CSV; POPEv2's test.parquet)")
    images: str | None = option(None, metavar="DIR",
                                help="folder holding the images the files name (default the names as written)")
    out: str | None = option(None, metavar="DIR", help="parent of the build dir (default builds/<benchmark>)")
    name: str | None = option(None, metavar="NAME",
                              help="build dir name (default imported-<first 8 hex digits of the files' sha256>)")


def parser() -> argparse.ArgumentParser:
    p = ArgumentParser(prog=prog("python -m builders.imports"), description=__doc__)
    add_options(p, ImportOptions, choices={"format": sorted(formats())})
    return p


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m builders.imports``."""
    args = config_of(ImportOptions, parser().parse_args(argv))
    if importer_of(args.format):
        raise ConfigError(f"{args.format}: imported by mirage import {args.format} (python -m "
                          f"{importer_of(args.format)}), which adds the benchmark's own checks")
    paths = [Path(f) for f in args.files]
    for p in paths:
        if not p.is_file():
            raise ConfigError(f"{p}: no such file")
    items, promises, warnings = read_published(args.format, paths, Path(args.images) if args.images else None)
    for line in warnings:
        stderr.print(f"warning: {line}", markup=False, highlight=False)
    read_warnings = len(warnings)
    if not items:
        raise ConfigError(f"{', '.join(map(str, paths))}: no items")
    hashes = {p.name: file_sha256(p) for p in paths}
    benchmark = items[0].benchmark
    name = args.name or "imported-" + hashlib.sha256("".join(sorted(hashes.values())).encode()).hexdigest()[:8]
    out_dir = Path(args.out) if args.out else Path("builds") / benchmark
    copies = images_to_copy(args.format, items, Path(args.images) if args.images else None, paths)
    absent = sorted(str(s) for s in copies.values() if isinstance(s, Path) and not s.is_file())
    if absent:
        warnings.append(f"{len(absent)} of {len(copies)} renamed images not found (first: {absent[0]}); their "
                        "items name images the build does not hold")
        stderr.print(f"warning: {warnings[-1]}", markup=False, highlight=False)
    with open_build(out_dir, name) as build:
        for target, source in sorted(copies.items()):
            if isinstance(source, bytes):
                build.images.mkdir(exist_ok=True)
                (build.images / target).write_bytes(source)
            elif source.is_file():
                build.add_image(source, target)
        build.write_items(items)
        build.write_json("build.json", {
            "benchmark": benchmark, "name": name, "seed": None, "config": {"format": args.format},
            "code_version": code_version(), "input_hashes": hashes, "items": len(items),
            "sources": [{"name": f"{args.format} (published)", "path": str(p)} for p in paths],
            "stats": {"imported": {"files": len(paths), "items": len(items), "warnings": read_warnings,
                                   "images_copied": len(copies) - len(absent)}},
            "skipped": [{"reason": w} for w in warnings], "lint_promises": promises,
        })
    stdout.print(f"{len(items)} {benchmark} items written to {out_dir / name}")
    print_lint(out_dir / name)
    return 0
