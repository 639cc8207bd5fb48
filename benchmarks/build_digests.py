"""Digests of every default build and every fixture build, to show a refactor left the items byte-identical.

Default builds are what the README's commands build on the embedded demo world (each builder with its defaults,
MIOH at 2, 4, 8 and 10 images, its decomposed ablation, MM-SAP with five shuffles, the twin of MIOH n8); fixture
builds are the builds the tests make from the real-format fixtures (tests/fixtures/real_formats.py,
tests/builders/*/). All of them are written into one temporary folder with one cache folder inside it, fresh for
every run, and Hugging Face offline with its home there too, so nothing on the host decides an output.

A build's digest is sha256 over, in order of relative path, every file of its folder (items.jsonl and the images)
except build.json, then build.json's stable part: build.json without its timings (``seconds``, ``*_seconds``) and
the keys of :data:`VOLATILE_KEYS` (the code version, worker counts, whether the cache was warm). In build.json and
the JSON files (items.jsonl) the temporary folder's path is written as ``<root>`` and the checkout's as
``<repo>``: fixture builds name their inputs by absolute path. ``--parts`` gives the files' and build.json's digests
apart, so a change of one can be told from a change of the other.

    python benchmarks/build_digests.py [--only mioh] [--out digests.json] [--parts] [--keep DIR]

A build whose command ends with a non-zero status is reported as ``"exit N: <last line of its stderr>"`` in
place of a digest (it still compares: the same failure before and after is the same value).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Callable, Sequence

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

VOLATILE_KEYS = frozenset({"code_version", "workers", "prepared_pools"})
"""build.json keys (at any depth) whose values depend on the host, the cache's state or the code's version, not on
the inputs: left out of the digest, as is every ``seconds`` or ``*_seconds`` key (the clock)."""


def volatile(key: str) -> bool:
    """Whether a build.json key is left out of the digest."""
    return key in VOLATILE_KEYS or key == "seconds" or key.endswith("_seconds")


@dataclass(frozen=True)
class Build:
    """One build: its digest's name, the builder's ``main`` (imported late) and its arguments."""

    name: str
    module: str
    args: Callable[["Work"], list[str]]
    cached: bool = True
    """Whether ``--cache-dir`` and ``--no-progress`` are passed (``builders.twin`` takes neither)."""


class Work:
    """The temporary folder of one run: its cache, its builds and the fixtures, each made once."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache = root / "cache"
        self.fixtures = root / "fixtures"

    def out(self, build: Build) -> Path:
        return self.root / "builds" / build.name

    @cache
    def fixture(self, name: str) -> Any:
        """The fixture ``name``, written under ``fixtures/<name>`` the first time it is asked for."""
        return FIXTURES[name](self.fixtures / name)


class _TempFactory:
    """The one method of pytest's ``tmp_path_factory`` a fixture function uses, over a fixed folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def mktemp(self, name: str) -> Path:
        path = self.root / name
        path.mkdir(parents=True)
        return path


def _mmsap_real(root: Path) -> dict[str, Any]:
    from tests.builders.mmsap.test_build import real

    return real.__wrapped__(_TempFactory(root))


def _predictive_sources(root: Path) -> dict[str, Any]:
    from tests.builders.predictive import test_sources as t

    return {"root": root, "activitynet": t.make_activitynet(root / "anet"),
            "charades": t.make_charades(root / "charades"), "clevrer": t.make_clevrer(root / "clevrer"),
            "roboset": t.make_roboset(root / "robo")}


def _predictive_authored(root: Path) -> Path:
    from tests.builders.predictive.test_build import GOOD, authored_file

    return authored_file(root, [GOOD, {**GOOD, "id": "other"}])


def _mementos_paper(root: Path) -> Path:
    from tests.builders.mementos.test_build import write_folder, write_nextqa

    write_nextqa(root / "nextqa", {"1001": 401, "1002": 100, "1003": 0})
    write_folder(root / "robot" / "ep_0", 25, "The robot arm picks up the cup and places it on the table.")
    write_folder(root / "robot" / "ep_1", 25, None)
    write_folder(root / "comics" / "c1", 3, "A cat chases a mouse and the mouse hides in a box.")
    return root


def _real_formats(maker: str, *args: Any) -> Callable[[Path], Any]:
    def make(root: Path) -> Any:
        from tests.fixtures import real_formats

        return getattr(real_formats, maker)(root, *args)

    return make


def _vg(version: str) -> Callable[[Path], dict[str, Path]]:
    def make(root: Path) -> dict[str, Path]:
        from tests.builders.reefknot.vg_fixture import make_vg

        return make_vg(root, version)

    return make


FIXTURES: dict[str, Callable[[Path], Any]] = {
    "coco": _real_formats("make_coco"), "paco": _real_formats("make_paco"), "svg": _real_formats("make_svg"),
    "coco_for_svg": _real_formats("make_coco_for_svg"),
    "vg1.0": _vg("1.0"), "vg1.2": _vg("1.2"), "vg1.4": _vg("1.4"),
    "mmsap_real": _mmsap_real, "predictive_sources": _predictive_sources,
    "predictive_authored": _predictive_authored, "mementos_paper": _mementos_paper,
}


def _mioh_real(w: Work) -> list[str]:
    coco, paco, svg = w.fixture("coco"), w.fixture("paco"), w.fixture("svg")
    return ["--coco-rem", str(coco.annotations), "--coco-images", str(coco.images_dir),
            "--paco", str(paco.annotations), "--paco-images", str(paco.images_dir),
            "--svg", str(svg.annotations), "--svg-images", str(svg.images_dir),
            "--n-images", "2", "--n-questions", "2", "--pressures", "easy", "hard_negative", "sycophantic"]


def _mioh_federated(w: Work) -> list[str]:
    paco, svg, coco = w.fixture("paco"), w.fixture("svg"), w.fixture("coco_for_svg")
    return ["--paco", str(paco.annotations), "--paco-images", str(paco.images_dir), "--svg", str(svg.annotations),
            "--svg-images", str(svg.images_dir), "--verify-absence-with", str(coco.annotations),
            "--n-images", "2", "--n-questions", "2"]


REEFKNOT_FIXTURE_OPTIONS = ["--min-predicate-count", "1", "--min-name-count", "1", "--prior-support", "100"]


def _reefknot_vg(version: str) -> Callable[[Work], list[str]]:
    def args(w: Work) -> list[str]:
        vg = w.fixture(f"vg{version}")
        objects = ["--vg-objects", str(vg["objects"])] if version != "1.0" else []
        return ["--vg-relationships", str(vg["relationships"]), "--vg-images", str(vg["images"]),
                "--vg-image-data", str(vg["image_data"]), *objects, *REEFKNOT_FIXTURE_OPTIONS]

    return args


def _reefknot_svg(w: Work) -> list[str]:
    svg = w.fixture("svg")
    return ["--svg", str(svg.annotations), "--svg-images", str(svg.images_dir), "--min-area", "0",
            *REEFKNOT_FIXTURE_OPTIONS]


def _mmsap_real_args(w: Work) -> list[str]:
    real = w.fixture("mmsap_real")
    return [*real["argv"], "--authored", str(real["authored"])]


def _predictive_sources_args(w: Work) -> list[str]:
    data = w.fixture("predictive_sources")
    return ["--patterns", "0", "--no-clip", "--activitynet", str(data["activitynet"]["json"]),
            "--charades", str(data["charades"]["csv"]), "--charades-classes", str(data["charades"]["classes"]),
            "--clevrer-annotations", str(data["clevrer"]["annotations"]), "--roboset", str(data["roboset"]["root"]),
            "--videos", str(data["root"])]


def _mementos_paper_args(w: Work) -> list[str]:
    root = w.fixture("mementos_paper")
    return ["--nextqa", str(root / "nextqa" / "val.csv"), "--videos", str(root / "nextqa" / "videos"),
            "--robot", str(root / "robot"), "--comics", str(root / "comics")]


def _twin_of(original: str) -> Callable[[Work], list[str]]:
    def args(w: Work) -> list[str]:
        (folder,) = _build_folders(w.root / "builds" / original)
        return [str(folder)]

    return args


def _const(*argv: str) -> Callable[[Work], list[str]]:
    return lambda w: list(argv)


BUILDS: tuple[Build, ...] = (
    # the defaults, on the demo world (README, docs/)
    *(Build(f"default/mioh-n{n}", "builders.mioh", _const("--n-images", str(n))) for n in (2, 4, 8, 10)),
    Build("default/mioh-decomposed", "builders.mioh", _const("--decomposed")),
    Build("default/mioh-n8-twin1", "builders.twin", _twin_of("default/mioh-n8"), cached=False),
    Build("default/mementos", "builders.mementos", _const()),
    Build("default/predictive", "builders.predictive", _const()),
    Build("default/reefknot", "builders.reefknot", _const()),
    Build("default/mmsap", "builders.mmsap", _const()),
    Build("default/mmsap-shuffles5", "builders.mmsap", _const("--shuffles", "5")),
    # the tests' builds from the real-format fixtures
    Build("fixture/mioh-coco-paco-svg", "builders.mioh", _mioh_real),
    Build("fixture/mioh-paco-svg-verified", "builders.mioh", _mioh_federated),
    *(Build(f"fixture/reefknot-vg{v}", "builders.reefknot", _reefknot_vg(v)) for v in ("1.0", "1.2", "1.4")),
    Build("fixture/reefknot-svg", "builders.reefknot", _reefknot_svg),
    Build("fixture/mmsap-vqav2-coco-authored", "builders.mmsap", _mmsap_real_args),
    Build("fixture/predictive-sources", "builders.predictive", _predictive_sources_args),
    Build("fixture/predictive-authored", "builders.predictive",
          lambda w: ["--tasks", "abstract_pattern", "--patterns", "0",
                     "--authored", str(w.fixture("predictive_authored"))]),
    Build("fixture/mementos-nextqa-robot-comics", "builders.mementos", _mementos_paper_args),
)


def _build_folders(out: Path) -> list[Path]:
    return sorted(p for p in out.iterdir() if p.is_dir() and ".partial." not in p.name)


def run_build(build: Build, work: Work) -> str | Path:
    """Run ``build`` into its own folder: the build folder, or ``exit N: <stderr's last line>``."""
    import importlib

    out = work.out(build)
    argv = [*build.args(work), "--out", str(out)]
    if build.cached:
        argv += ["--cache-dir", str(work.cache), "--no-progress"]
    main = importlib.import_module(build.module).main
    log = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(log):
        code = main(argv)
    if code != 0:
        last = (log.getvalue().strip().splitlines() or [""])[-1]
        return f"exit {code}: {last.replace(str(work.root), '<root>')}"
    (folder,) = _build_folders(out)
    return folder


def stable_record(record: Any) -> Any:
    """build.json without its :func:`volatile` keys, at any depth."""
    if isinstance(record, dict):
        return {k: stable_record(v) for k, v in record.items() if not volatile(k)}
    if isinstance(record, list):
        return [stable_record(v) for v in record]
    return record


REPO = Path(__file__).resolve().parents[1]
"""The checkout being measured: a default build may name a file of it (MM-SAP's authored demo questions)."""


def _rooted(data: bytes, root: Path) -> bytes:
    """``data`` with the run's temporary folder written as ``<root>`` and the checkout as ``<repo>``, so two
    checkouts in different folders compare."""
    for path in {str(root.resolve()), str(root)}:
        data = data.replace(path.encode(), b"<root>")
    return data.replace(str(REPO).encode(), b"<repo>")


def digests(folder: Path, root: Path) -> dict[str, str]:
    """The digests of a build folder: ``files`` (all but build.json), ``record`` (build.json's stable part) and
    ``build`` (both). JSON files name the temporary folder as ``<root>`` (items may hold absolute paths)."""
    files = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.relative_to(folder) != Path("build.json")):
        data = path.read_bytes()
        if path.suffix in (".json", ".jsonl"):
            data = _rooted(data, root)
        files.update(path.relative_to(folder).as_posix().encode() + b"\0")
        files.update(hashlib.sha256(data).digest())
    text = _rooted((folder / "build.json").read_bytes(), root).decode()
    record = json.dumps(stable_record(json.loads(text)), sort_keys=True).encode()
    record_digest = hashlib.sha256(record).hexdigest()
    both = hashlib.sha256(files.digest() + bytes.fromhex(record_digest)).hexdigest()
    return {"build": both, "files": files.hexdigest(), "record": record_digest}


def offline_in(root: Path) -> None:
    """Hugging Face offline with its caches under ``root``: CLIP weights or datasets on the host decide nothing."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["HF_HOME"] = str(root / "hf")
    os.environ["HF_DATASETS_CACHE"] = str(root / "hf-datasets")
    os.environ["MIRAGE_CACHE_DIR"] = str(root / "cache")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="TEXT", default=[],
                        help="only the builds whose name holds one of these texts (e.g. mioh, fixture/)")
    parser.add_argument("--out", metavar="FILE", help="also write the JSON here")
    parser.add_argument("--parts", action="store_true",
                        help="per build, the digests of its files and of build.json apart, beside the whole")
    parser.add_argument("--keep", metavar="DIR",
                        help="build in DIR (made empty first) and keep it, instead of a temporary folder")
    parser.add_argument("--list", action="store_true", help="list the builds' names and exit")
    args = parser.parse_args(argv)
    chosen = [b for b in BUILDS if not args.only or any(t in b.name for t in args.only)]
    if args.list:
        print("\n".join(b.name for b in chosen))
        return 0
    needed = {b.name for b in chosen}
    for b in chosen:  # a twin needs its original built first
        if b.module == "builders.twin":
            needed.add(b.name.removesuffix("-twin1"))
    chosen = [b for b in BUILDS if b.name in needed]

    with contextlib.ExitStack() as stack:
        if args.keep:
            root = Path(args.keep).resolve()
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir(parents=True)
        else:
            root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mirage-digests-")))
        offline_in(root)
        work = Work(root)
        result: dict[str, Any] = {}
        for build in chosen:
            print(f"building {build.name}", file=sys.stderr, flush=True)
            folder = run_build(build, work)
            if isinstance(folder, str):
                result[build.name] = folder
            else:
                d = digests(folder, root)
                result[build.name] = d if args.parts else d["build"]
    text = json.dumps(result, indent=2, sort_keys=True) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
