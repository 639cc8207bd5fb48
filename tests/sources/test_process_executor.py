"""The process executor runs its workers with the cyclic collector off, pauses it in the process that waits for
their results, and gives that one back as it was, also when a worker fails."""

from __future__ import annotations

import gc

import pytest

from sources.executors import ProcessExecutor
from tests.conftest import skip_or_fail


def _collector_on(_: int) -> bool:
    return gc.isenabled()


def _fails(k: int) -> int:
    if k == 2:
        raise ValueError("item 2")
    return k


@pytest.fixture
def executor() -> ProcessExecutor:
    executor = ProcessExecutor(2)
    if not executor.inherits:
        skip_or_fail("workers are spawned here, not forked: they start with their own collector")
    return executor


def test_workers_run_without_the_collector_and_the_caller_gets_its_back(executor):
    assert gc.isenabled()
    assert executor.map(_collector_on, [1, 2, 3]) == [False, False, False]
    assert gc.isenabled()
    gc.disable()
    try:
        assert executor.map(_collector_on, [1, 2]) == [False, False]
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_a_failing_worker_leaves_the_collector_as_it_was(executor):
    with pytest.raises(ValueError, match="item 2"):
        executor.map(_fails, [1, 2, 3])
    assert gc.isenabled()
