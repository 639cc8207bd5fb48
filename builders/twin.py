"""``python -m builders.twin BUILD_DIR``: a twin of a build, the same cells from a derived seed (issue 44).

A model that saw a release in training does better on it than on fresh items built the same way. A twin is
that fresh set: the build's recorded config (``build.json`` ``config``: tasks, question types, pressures, counts,
difficulty rules, sources) run again by the same builder with another seed, so every cell holds as many items
made by the same rules, drawn anew (other images wherever the source has more than the build used; the demo
world draws other scenes). ``python -m scoring twin RELEASE TWIN`` then compares each model's accuracy on both.

A twin should show other pictures: a model that memorised the release's image-answer pairs would carry them
over, and the twin gap would understate memorisation. The demo world draws other scenes under another seed (and
names them by it), so a demo twin shares no image; a real source has the images it has, and its twin may show
some of the release's. ``build.json``'s ``twin_of.shared_images`` says how many (:func:`shared_images`), and the
data card shows it.

The seed is derived, not chosen: ``twin_seed(seed, k)`` hashes the original seed and the twin's number ``k``, so
twin 1 of a build is the same set wherever it is rebuilt, and twins 1, 2, ... are independent draws. The twin's
``build.json`` records ``twin_of`` (the original's name, seed, code version and item count); the release copies
it into its manifest.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any, Sequence

from builders.cli import ArgumentParser, exit_on_error, stdout, table
from builders.items import read_items
from builders.registry import BenchmarkSpec, find, load
from commandline.options import add_options, config_of, option
from commandline.parsing import prog
from sources.atomic import write_atomic
from sources.errors import ConfigError
from sources.hashing import file_sha256

KEEP_OUT = ("seed", "name", "out", "progress")
"""Config fields a twin does not copy from the original: it gets its own seed, name and folder."""


def twin_seed(seed: int, k: int = 1) -> int:
    """The seed of twin ``k`` of a build made with ``seed`` (32 bits of a SHA-256; never the seed itself)."""
    digest = hashlib.sha256(f"{int(seed)}\x00twin\x00{int(k)}".encode()).digest()
    derived = int.from_bytes(digest[:4], "little")
    return derived if derived != seed else derived + 1


def read_build_json(build_dir: Path) -> dict[str, Any]:
    path = build_dir / "build.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: not found; is {build_dir} a Mirage build?") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("config"), dict) or not data.get("benchmark"):
        raise ConfigError(f"{path}: no benchmark and config recorded; a twin needs both")
    return data


def twin_config(record: dict[str, Any], seed: int, name: str, out: str) -> tuple[BenchmarkSpec, Any]:
    """The builder's config from a ``build.json``: the recorded options, another seed, name and folder."""
    benchmark = str(record["benchmark"])
    spec = find(benchmark)
    if spec is None or not spec.twin:
        raise ConfigError(f"build.json: benchmark {benchmark!r} has no builder here (an imported benchmark "
                          "cannot be rebuilt)")
    config_type = load(spec.config)
    names = {f.name for f in dataclasses.fields(config_type)}
    unknown = sorted(set(record["config"]) - names - {"progress"})
    if unknown:
        raise ConfigError(f"build.json: config option(s) {', '.join(unknown)} unknown to this {benchmark} builder "
                          "(a build of other code?)")
    values = {k: v for k, v in record["config"].items() if k in names and k not in KEEP_OUT}
    try:
        return spec, config_type(**values, seed=seed, name=name, out=out, progress=False)
    except TypeError as exc:
        raise ConfigError(f"build.json: its config does not make a {benchmark} config ({exc})") from None


def make_twin(build_dir: str | Path, k: int = 1, seed: int | None = None, out: str | Path | None = None,
              name: str | None = None) -> Path:
    """Build twin ``k`` of ``build_dir`` beside it (or in ``out``) and return its folder."""
    build_dir = Path(build_dir)
    record = read_build_json(build_dir)
    seed = twin_seed(int(record.get("seed") or 0), k) if seed is None else seed
    name = name or f"{record.get('name') or build_dir.name}-twin{k}"
    spec, config = twin_config(record, seed, name, str(out or build_dir.parent))
    path, _, _ = load(spec.build)(config)
    twin = json.loads((Path(path) / "build.json").read_text(encoding="utf-8"))
    twin["twin_of"] = {"name": record.get("name"), "seed": record.get("seed"), "twin": k,
                       "code_version": record.get("code_version"), "items": record.get("items"),
                       "shared_images": shared_images(build_dir, Path(path))}
    write_atomic(Path(path) / "build.json",
                 (json.dumps(twin, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8"))
    return Path(path)


def image_files(build_dir: Path) -> set[Path]:
    """The image files a build's items show (paths inside the build resolved against it)."""
    return {(build_dir / p).resolve() for it in read_items(build_dir / "items.jsonl") for p in it.images}


def shared_images(original: Path, twin: Path) -> dict[str, Any]:
    """How many of the twin's images the original shows too: the same picture (equal bytes), or the same file name
    (which goes into the items' ids, :func:`builders.items.make_item`: a twin item would take a release item's
    id)."""
    ours, theirs = image_files(original), image_files(twin)
    digests = {file_sha256(str(p)) for p in ours if p.is_file()}
    names = {p.name for p in ours}
    shared = sum(1 for p in theirs if p.name in names or (p.is_file() and file_sha256(str(p)) in digests))
    return {"images": len(theirs), "shared": shared, "share": round(shared / len(theirs), 4) if theirs else 0.0}


def cells(build_dir: Path) -> Counter[tuple[str, str, str]]:
    """Items per (task, question type, pressure) of a build."""
    return Counter((it.task, it.question_type, it.pressure) for it in read_items(build_dir / "items.jsonl"))


@dataclass(kw_only=True)
class TwinOptions:
    build_dir: str = option(metavar="BUILD_DIR", positional=True,
                            help="the original build (builds/<benchmark>/<name>)")
    twin: int = option(1, metavar="K", help="which twin: K gives its own derived seed and the name <name>-twinK "
                                            "(default {default})")
    seed: int | None = option(None, metavar="N", help="use this seed instead of the derived one (default derived from "
                                                      "the build's seed and K)")
    out: str | None = option(None, metavar="DIR", help="parent folder of the twin (default the build's)")
    name: str | None = option(None, metavar="NAME", help="the twin's name (default <name>-twinK)")


def parser() -> ArgumentParser:
    p = ArgumentParser(
        prog=prog("python -m builders.twin"),
        description="Build a twin of a build: its recorded config (cells, pressures, difficulty rules, sources) "
                    "from a seed derived from the original's, so every cell holds fresh items made the same way. "
                    "Release it beside the original and compare models with mirage twin-gap.",
    )
    add_options(p, TwinOptions)
    return p


@exit_on_error
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m builders.twin``."""
    args = config_of(TwinOptions, parser().parse_args(argv))
    if args.twin < 1:
        raise ConfigError(f"--twin {args.twin}: a twin number from 1")
    original = Path(args.build_dir)
    path = make_twin(original, args.twin, args.seed, args.out, args.name)
    ours, theirs = cells(original), cells(path)
    rows = [[" / ".join(cell), ours[cell], theirs[cell]] for cell in sorted(set(ours) | set(theirs))]
    record = json.loads((path / "build.json").read_text(encoding="utf-8"))
    stdout.print(table(f"twin {path} (seed {record['seed']})",
                       ["task / question type / pressure", "original", "twin"], rows))
    shared = record["twin_of"]["shared_images"]
    stdout.print(f"images shown by the original too: {shared['shared']} of {shared['images']} "
                 f"({shared['share']:.0%})", markup=False, highlight=False)
    if ours != theirs:
        stdout.print("note: the cells differ: the source had too few candidates for some cell at this seed",
                     markup=False, highlight=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
