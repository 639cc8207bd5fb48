"""A memo that keeps its most recently used entries, up to a budget of bytes (``cachetools.LRUCache``)."""

from __future__ import annotations

from typing import Any, Hashable

from cachetools import LRUCache


class RecentEntries:
    """Values by key, each with its size in bytes; the least recently used are dropped once the sizes add up to
    more than ``budget``. A value larger than the whole budget is not kept (its caller recomputes it).

    Why: :meth:`builders.mioh.pools.Pools.images` keeps each drawn probe's image lists, four index arrays over
    a source's images. The tens of thousands of scene-graph triples are drawn a few times each, and a paper-scale
    build kept 547 MB of their lists per drawing process (4,696 triples), where the hundreds of attribute and
    object probes, drawn over and over, take 20-32 MB in all."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._entries: LRUCache[Hashable, tuple[Any, int]] = LRUCache(maxsize=budget, getsizeof=lambda v: v[1])

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def nbytes(self) -> int:
        """The sizes of the values kept, added up."""
        return int(self._entries.currsize)

    def get(self, key: Hashable) -> Any | None:
        """The value kept for ``key`` (now the most recently used), or ``None``."""
        found = self._entries.get(key)
        return None if found is None else found[0]

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        """Keep ``value`` (``nbytes`` in size) for ``key``, dropping the least recently used over the budget."""
        self._entries.pop(key, None)
        if nbytes <= self.budget:
            self._entries[key] = (value, nbytes)
