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
            "--out", str(out), "--name", name, "--cache-dir", str(cache), "--no-clip", "--no-progress", *extra]
    assert mioh.main(argv) == 0
    return (out / name / "items.jsonl").read_bytes(), json.loads((out / name / "build.json").read_text())


def entries(cache: Path) -> list[Path]:
    return sorted((cache / prepared.CACHE_FOLDER).glob("*.pkl"))


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


def test_pruning_removes_old_scratch_folders_and_spares_young_ones(tmp_path):
    folder = tmp_path / prepared.CACHE_FOLDER
    old, young = folder / ".preparing-old", folder / ".preparing-young"
    for scratch in (old, young):
        scratch.mkdir(parents=True)
        (scratch / "0.pkl").write_bytes(b"half a child's pools")
    entry = folder / "a.pkl"
    entry.write_bytes(b"entry")
    now = young.stat().st_mtime + 60
    os.utime(old, (now - prepared.STALE_SCRATCH_S - 1,) * 2)
    assert prepared.prune(folder, keep=1, now=now) == [old]
    assert sorted(p.name for p in folder.iterdir()) == [".preparing-young", "a.pkl"]


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
    entry.write_bytes(entry.read_bytes()[:1000])  # a crash mid-write would leave this, were writes not atomic
    again, rebuilt = build(tmp_path / "out", cache, sources)
    assert rebuilt["stats"]["prepared_pools"] == "stored" and again == cold
    assert entry.stat().st_size > 1000


def test_demo_and_clip_builds_do_not_use_it(tmp_path):
    _, demo = build(tmp_path / "out", tmp_path / "cache", [], "--demo-images", "60")
    assert demo["stats"]["prepared_pools"] == "not cached" and not entries(tmp_path / "cache")


def test_polygon_masks_are_not_kept_and_say_so(tmp_path, sources):
    from builders.mioh.config import MiohConfig

    cache = tmp_path / "cache"
    build(tmp_path / "out", cache, sources)
    config = MiohConfig(coco_rem=sources[1], coco_images=sources[3], svg=sources[5], svg_images=sources[7],
                        cache_dir=str(cache))
    pools, _, _ = prepared.PreparedPools(config).load()
    instances = [i for f in pools["existence"].facts for i in f.image.instances]
    polygons = [i for i in instances if isinstance(i.rle, prepared.MaskNotKept)]
    assert polygons, "the COCO fixture has polygon masks"
    with pytest.raises(LookupError, match="not kept"):
        polygons[0].rle["counts"]
    svg = [i for f in pools["position"].facts for i in f.image.instances if i.rle is not None]
    assert all(isinstance(i.rle["counts"], str) for i in svg)  # SVG's RLE strings are kept as they are


def test_the_entry_written_by_a_forked_child_is_the_one_written_inline(tmp_path, sources, monkeypatch):
    """Where fork is affordable the entry is written by a child while questions are drawn; where not, right
    away. Both write the same bytes, and both builds report it stored."""
    if not prepared.fork_affordable():
        pytest.skip("this system cannot fork a writer (not Linux, or too little free memory)")
    forked_cache, inline_cache = tmp_path / "forked", tmp_path / "inline"
    forked, forked_build = build(tmp_path / "out", forked_cache, sources)
    calls: list[bool] = []
    real = prepared.fork_affordable
    monkeypatch.setattr(prepared, "fork_affordable", lambda: calls.append(real()) or False)
    inline, inline_build = build(tmp_path / "out", inline_cache, sources)
    assert calls == [True] and forked == inline
    assert forked_build["stats"]["prepared_pools"] == inline_build["stats"]["prepared_pools"] == "stored"
    (a,), (b,) = entries(forked_cache), entries(inline_cache)
    assert a.name == b.name and a.read_bytes() == b.read_bytes()


def test_a_failed_background_write_reports_not_cached(tmp_path, sources, monkeypatch):
    def full_disk(path, data):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(prepared, "write_atomic", full_disk)
    _, built = build(tmp_path / "out", tmp_path / "cache", sources)
    assert built["stats"]["prepared_pools"] == "not cached" and entries(tmp_path / "cache") == []


def test_a_reused_entry_opens_no_image_to_answer_over_all_images(tmp_path, sources):
    """What is read over every image - probes, image lists, counts, refusals, the image index - comes from the
    tables the entry keeps; an image's facts are unpickled only where a question shows the image (and, for
    positions, where a scene graph annotates the asked relation)."""
    from builders.mioh.config import MiohConfig
    from builders.mioh.refusals import refusal_counts

    cache = tmp_path / "cache"
    build(tmp_path / "out", cache, sources)
    config = MiohConfig(coco_rem=sources[1], coco_images=sources[3], svg=sources[5], svg_images=sources[7],
                        cache_dir=str(cache))
    pools, _, _ = prepared.PreparedPools(config).load()
    for task, pool in pools.items():
        assert isinstance(pool.facts, prepared.PackedFacts) and len(pool.records.images) == len(pool.facts)
        refusal_counts(pool, task)
        for probe in pool.probes(task):
            if task == "counting":
                pool.count_split(probe)
            elif task != "position":
                pool.images(task, probe, "pos"), pool.images(task, probe, "neg")
        assert not pool.facts._opened, task
    for pool in pools.values():
        assert pool.index_of(pool.records.images[-1].id) == len(pool.facts) - 1
        assert pool.facts._opened.keys() == {len(pool.facts) - 1}  # only the record read for its id


def test_packed_facts_rebuild_what_was_packed(tmp_path):
    """An image's facts are packed as rows of field values and rebuilt on reading: records (instances with
    attributes, draw orders, amodal masks, unknown attribute types; relations; federated lists) and geometry
    labels come back equal, and so does everything derived from them, when it is first read."""
    import dataclasses

    from builders.mioh.pools import ImageFacts, PoolConfig, Pools
    from filters.base import FilterStats
    from sources.demo import load_demo
    from sources.records import Instance, Relation

    demo = load_demo(seed=1, n_images=12, cache_dir=tmp_path)
    first = demo.images[0]
    a, b = first.instances[:2]
    federated = dataclasses.replace(  # what PACO and SVG records carry beyond the demo world's
        first, id="federated", coco_id="42", verified_absent=frozenset({"zebra"}),
        not_exhaustive=frozenset({a.category}),
        attributes_verified_absent=frozenset({"kite"}), attributes_not_exhaustive=frozenset({b.category}),
        instances=(dataclasses.replace(a, unknown_attribute_types=frozenset({"colour"}), iscrowd=True), b,
                   Instance("plain", b.category, (1.0, 2.0, 3.0, 4.0), 12.0)),
        relations=(Relation(a.id, "left of", b.id), Relation(b.id, "right of", a.id)))
    records = dataclasses.replace(demo, images=(*demo.images, federated))
    pools = Pools(records, PoolConfig(), FilterStats())
    packed = prepared.PackedFacts.pack(pools.facts)
    assert len(packed) == len(pools.facts) and any(i.z is not None for f in pools.facts for i in f.image.instances)
    for before, after in zip(pools.facts, packed):
        assert after.image == before.image and after.difficulty == before.difficulty
        assert vars(after).keys() == {"image", "difficulty"}  # the rest is derived when first read
        for name in ImageFacts._DERIVED:
            assert getattr(after, name) == getattr(before, name), name
        assert vars(after) == vars(before)
    assert packed[-1].image.relations and packed[-1].image.instances[0].unknown_attribute_types == {"colour"}
