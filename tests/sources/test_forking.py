"""Forked worker pools (sources/forking.py): results in order from any callable, at the niceness asked for."""

from __future__ import annotations

import os

import pytest

from sources.forking import fork_affordable, forked_imap

pytestmark = pytest.mark.skipif(not fork_affordable(2), reason="this system cannot fork (not Linux, or too little "
                                                                "free memory)")


def test_results_come_in_order_from_a_closure():
    offset = 10
    assert list(forked_imap(lambda x: x + offset, range(20), 2)) == list(range(10, 30))


def test_workers_run_at_the_niceness_asked_for():
    """Questions drawn while sources are still prepared run at the lowest priority (builders/mioh/source_workers)."""
    here = os.nice(0)
    assert set(forked_imap(lambda _: os.nice(0), range(4), 2)) == {here}
    assert set(forked_imap(lambda _: os.nice(0), range(4), 2, niceness=5)) == {min(here + 5, 19)}
