"""A memo that keeps its most recently used entries, up to a budget of bytes."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Hashable


class RecentEntries:
    """Values by key, each with its size in bytes; the least recently used are dropped once the sizes add up to
    more than ``budget`` (the newest entry is always kept).

    Why: :meth:`builders.mioh.pools.Pools.images` keeps each drawn probe's image lists, four index arrays over
    a source's images. The tens of thousands of scene-graph triples are drawn a few times each, and a paper-scale
    build kept 547 MB of their lists per drawing process (4,696 triples), where the hundreds of attribute and
    object probes, drawn over and over, take 20-32 MB in all."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self.nbytes = 0
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Any | None:
        """The value kept for ``key`` (now the most recently used), or ``None``."""
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: Hashable, value: Any, nbytes: int) -> None:
        """Keep ``value`` (``nbytes`` in size) for ``key``, dropping the least recently used over the budget."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.nbytes -= old[1]
        self._entries[key] = (value, nbytes)
        self.nbytes += nbytes
        while self.nbytes > self.budget and len(self._entries) > 1:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.nbytes -= dropped
