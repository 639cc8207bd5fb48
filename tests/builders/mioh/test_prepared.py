"""The prepared-pools cache: a rerun on the same sources reuses the pools and gives the same items; a changed
source, rule or code misses; a broken entry is a miss, never an error."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from builders import mioh
from builders.mioh import prepared
from tests.fixtures.real_formats import make_coco, make_svg

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture()
def sources(tmp_path: Path) -> list[str]:
    coco, svg = make_coco(tmp_path / "coco"), make_svg(tmp_path / "svg")
    return ["--coco-rem", str(coco.annotations), "--coco-images", str(coco.images_dir),
            "--svg", str(svg.annotations), "--svg-images", str(svg.images_dir)]


def build(out: Path, cache: Path, sources: list[str], *extra: str, name: str = "b") -> tuple[bytes, dict]:
    argv = [*sources, "--n-images", "2", "--n-questions", "2", "--pressures", "easy", "hard_negative",
            "--out", str(out), "--name", name, "--cache-dir", str(cache), "--no-clip", "--no-progress",
            "--allow-empty-tasks", *extra]  # the small SVG fixture makes no position question: not what is tested
    assert mioh.main(argv) == 0
    return (out / name / "items.jsonl").read_bytes(), json.loads((out / name / "build.json").read_text())


def entries(cache: Path) -> list[Path]:
    return sorted(path.parent for path in (cache / prepared.CACHE_FOLDER).glob(f"*/{prepared.ENTRY_FILE}"))


def test_a_rerun_reuses_the_pools_and_gives_the_same_build(tmp_path, sources):
    cache = tmp_path / "cache"
    cold, cold_build = build(tmp_path / "out", cache, sources)
    warm, warm_build = build(tmp_path / "out", cache, sources)
    assert cold_build["stats"]["prepared_pools"] == "stored"
    assert warm_build["stats"]["prepared_pools"] == "reused"
    assert warm == cold
    for key in ("filters", "federated_refusals", "sources", "pools", "quality"):
        assert warm_build["stats"][key] == cold_build["stats"][key], key
    assert warm_build["input_hashes"] == cold_build["input_hashes"]
    # question options are not part of the key: another seed reuses the same entry
    _, other_seed = build(tmp_path / "out", cache, sources, "--seed", "3")
    assert other_seed["stats"]["prepared_pools"] == "reused" and len(entries(cache)) == 1


def test_changed_sources_or_rules_miss(tmp_path, sources):
    cache = tmp_path / "cache"
    build(tmp_path / "out", cache, sources)
    _, stricter = build(tmp_path / "out", cache, sources, "--hard-area", "0.05")
    assert stricter["stats"]["prepared_pools"] == "stored" and len(entries(cache)) == 2
    annotations = Path(sources[1])
    data = json.loads(annotations.read_text())
    data["annotations"] = data["annotations"][:-1]  # one annotation fewer: other counts, other items
    annotations.write_text(json.dumps(data))
    _, changed = build(tmp_path / "out", cache, sources)
    assert changed["stats"]["prepared_pools"] == "stored" and len(entries(cache)) == 3


@pytest.fixture()
def settled_at_once(monkeypatch):
    """Files count as settled as soon as they are written (:data:`sources.hashing.RACY_SECONDS`), and each build
    starts with no hash remembered in memory, as a new process would."""
    from sources import hashing

    monkeypatch.setattr(hashing, "RACY_SECONDS", 0.0)
    monkeypatch.setattr(hashing, "_HASHED", {})
    return hashing


def test_a_rerun_hashes_no_unchanged_source_again(tmp_path, sources, settled_at_once, monkeypatch):
    cache = tmp_path / "cache"
    cold, cold_build = build(tmp_path / "out", cache, sources)
    memo = json.loads((cache / prepared.CACHE_FOLDER / prepared.DIGESTS_FILE).read_text())
    assert sorted(memo.values()) == sorted(h.removeprefix("sha256:") for h in cold_build["input_hashes"].values())
    settled_at_once._HASHED.clear()
    hashed: list[str] = []
    real = settled_at_once.file_sha256
    monkeypatch.setattr(settled_at_once, "file_sha256", lambda path, **kw: hashed.append(str(path)) or real(path, **kw))
    warm, warm_build = build(tmp_path / "out", cache, sources)
    assert warm_build["stats"]["prepared_pools"] == "reused" and warm == cold and hashed == []
    assert warm_build["input_hashes"] == cold_build["input_hashes"]


def test_a_source_rewritten_with_its_size_and_mtime_is_hashed_again(tmp_path, sources, settled_at_once):
    """The remembered hash stands for the bytes only while the file's signature does: a rewrite in place that
    keeps the size and the modification time (``cp -p``) still moves the change time."""
    cache = tmp_path / "cache"
    build(tmp_path / "out", cache, sources)
    annotations = Path(sources[1])
    st = annotations.stat()
    data = annotations.read_bytes()
    assert b'"iscrowd": 0' in data
    annotations.write_bytes(data.replace(b'"iscrowd": 0', b'"iscrowd": 1', 1))  # same size, another mask kind
    os.utime(annotations, ns=(st.st_atime_ns, st.st_mtime_ns))
    settled_at_once._HASHED.clear()
    _, changed = build(tmp_path / "out", cache, sources)
    assert changed["stats"]["prepared_pools"] == "stored" and len(entries(cache)) == 2


def test_a_damaged_digest_memo_is_ignored_and_rewritten(tmp_path, sources, settled_at_once):
    cache = tmp_path / "cache"
    cold, _ = build(tmp_path / "out", cache, sources)
    memo = cache / prepared.CACHE_FOLDER / prepared.DIGESTS_FILE
    for damage in ("{not json", '{"1:2:3:4:5": "not a hash"}', "[]"):
        memo.write_text(damage)
        settled_at_once._HASHED.clear()
        warm, warm_build = build(tmp_path / "out", cache, sources)
        assert warm_build["stats"]["prepared_pools"] == "reused" and warm == cold
        assert all(len(v) == 64 for v in json.loads(memo.read_text()).values())


def test_only_the_most_recently_used_entries_are_kept(tmp_path, sources, monkeypatch):
    """Each rule set tried is an entry of its own (about a gigabyte at paper scale): storing one removes the least
    recently used beyond $MIRAGE_POOLS_KEEP, and loading an entry makes it recent again."""
    monkeypatch.setenv(prepared.KEEP_VARIABLE, "2")
    cache = tmp_path / "cache"
    first = build(tmp_path / "out", cache, sources)[0]
    (first_entry,) = entries(cache)
    build(tmp_path / "out", cache, sources, "--hard-area", "0.05")
    (second_entry,) = set(entries(cache)) - {first_entry}
    again, reused = build(tmp_path / "out", cache, sources)  # the first entry, used again: now the recent one
    assert reused["stats"]["prepared_pools"] == "reused" and again == first
    _, third = build(tmp_path / "out", cache, sources, "--hard-area", "0.02")
    assert third["stats"]["prepared_pools"] == "stored"
    kept = entries(cache)
    assert len(kept) == 2 and first_entry in kept and second_entry not in kept


@pytest.mark.parametrize("value", ["0", "-1", "three"])
def test_a_bad_keep_count_is_a_one_line_error(tmp_path, sources, monkeypatch, capsys, value):
    monkeypatch.setenv(prepared.KEEP_VARIABLE, value)
    argv = [*sources, "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "cache"), "--no-clip",
            "--no-progress"]
    assert mioh.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert prepared.KEEP_VARIABLE in err and repr(value) in err and len(err.splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_the_code_is_part_of_the_key(tmp_path, sources, monkeypatch):
    config = mioh.MiohConfig(coco_rem=sources[1], coco_images=sources[3], cache_dir=str(tmp_path))
    before = prepared.cache_key(config)
    monkeypatch.setattr(prepared, "code_fingerprint", lambda: "another version")
    assert prepared.cache_key(config) != before


def test_a_broken_entry_is_a_miss_and_is_rewritten(tmp_path, sources):
    cache = tmp_path / "cache"
    cold, _ = build(tmp_path / "out", cache, sources)
    (entry,) = entries(cache)
    table = sorted(entry.glob("*.arrow"))[0]
    size = table.stat().st_size
    table.write_bytes(table.read_bytes()[:100])  # a crash mid-write would leave this, were writes not atomic
    again, rebuilt = build(tmp_path / "out", cache, sources)
    assert rebuilt["stats"]["prepared_pools"] == "stored" and again == cold
    assert table.stat().st_size == size


def test_demo_and_clip_builds_do_not_use_it(tmp_path):
    _, demo = build(tmp_path / "out", tmp_path / "cache", [], "--demo-images", "60")
    assert demo["stats"]["prepared_pools"] == "not cached" and not entries(tmp_path / "cache")


def test_an_entry_is_arrow_tables_opened_mapped(tmp_path, sources):
    """Each table of each source's pools is an Arrow IPC file; a load maps them: the pools' arrays are read-only
    views of the files, not copies (a rerun reads the pages it touches)."""
    import pyarrow as pa

    from builders.mioh.config import MiohConfig

    cache = tmp_path / "cache"
    build(tmp_path / "out", cache, sources)
    (entry,) = entries(cache)
    names = sorted(path.name for path in entry.glob("*.arrow"))
    assert names == sorted(f"{k}-{table}.arrow" for k, tables in enumerate(
        [("counting", "existence", "grid", "images"), ("grid", "images", "position")]) for table in tables)
    assert pa.ipc.open_file(pa.memory_map(str(entry / "0-counting.arrow"))).read_all().num_rows > 0
    config = MiohConfig(coco_rem=sources[1], coco_images=sources[3], svg=sources[5], svg_images=sources[7],
                        cache_dir=str(cache))
    pools, _, _ = prepared.PreparedPools(config).load()
    assert pools["existence"] is pools["counting"]
    for pool in (pools["existence"], pools["position"]):
        for table in pool.tables.values():
            for values in table.values():
                if not isinstance(values, (pa.Array, pa.ChunkedArray)):
                    assert not values.flags.writeable and values.base is not None


def test_a_failed_write_reports_not_cached(tmp_path, sources, monkeypatch):
    def full_disk(path, columns):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(prepared, "_write_table", full_disk)
    _, built = build(tmp_path / "out", tmp_path / "cache", sources)
    assert built["stats"]["prepared_pools"] == "not cached" and entries(tmp_path / "cache") == []
