"""The bounded memo behind the probes' image lists (``builders.mioh.recent``)."""

from __future__ import annotations

from builders.mioh.recent import RecentEntries


def test_the_least_recently_used_go_first_once_over_budget():
    memo = RecentEntries(budget=100)
    memo.put("a", "A", 40)
    memo.put("b", "B", 40)
    assert memo.get("a") == "A"  # now the most recently used: "b" goes first
    memo.put("c", "C", 40)
    assert (memo.get("b"), memo.get("a"), memo.get("c")) == (None, "A", "C")
    assert memo.nbytes == 80 and len(memo) == 2


def test_an_entry_over_the_budget_is_not_kept_and_a_new_value_replaces_the_old():
    memo = RecentEntries(budget=10)
    memo.put("a", "A", 5)
    memo.put("big", "BIG", 50)
    assert (memo.get("a"), memo.get("big"), len(memo), memo.nbytes) == ("A", None, 1, 5)
    memo.put("a", "SMALL", 3)
    assert (memo.get("a"), memo.nbytes) == ("SMALL", 3)


def test_a_build_that_keeps_no_image_lists_draws_the_same_items(tmp_path, monkeypatch):
    """Dropping a probe's lists only costs their recomputation: with a budget of 0 bytes (no list kept, every
    one made again at each use) the demo build's items are byte-identical."""
    import builders.mioh.pools as pools_module
    from builders import mioh

    def build(name: str) -> bytes:
        argv = ["--n-images", "4", "--n-questions", "3", "--out", str(tmp_path / name), "--no-progress",
                "--cache-dir", str(tmp_path / f"cache-{name}")]
        assert mioh.main(argv) == 0
        return (tmp_path / name / "n4-seed0" / "items.jsonl").read_bytes()

    kept = build("kept")
    monkeypatch.setattr(pools_module, "SPLIT_MEMO_BYTES", 0)
    assert build("dropped") == kept
