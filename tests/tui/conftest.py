"""What the Pilot tests share."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

#: Pilot tests between two full collections (each frees what the apps before it left)
COLLECT_EVERY = 8
_since_collect = 0


@pytest.fixture(autouse=True)
def _fewer_collections() -> Iterator[None]:
    """A Pilot test builds an app of some 100,000 container objects (widgets, styles, strips)
    that live through the test: at CPython's default thresholds (700, 10, 10) the cyclic GC
    walks them again and again while the test runs, and its full collections (0.3 s each) took
    a third of a Pilot file's time. Here the youngest generation's threshold is 10,000, and
    the garbage of the finished apps is freed by one full collection every few tests (without
    it a process's memory grew fourfold). The app is not changed; the thresholds go back to the
    defaults for the tests that follow (the headless ones measure what they keep alive)."""
    global _since_collect
    old = gc.get_threshold()
    gc.set_threshold(10_000, *old[1:])
    yield
    gc.set_threshold(*old)
    _since_collect += 1
    if _since_collect >= COLLECT_EVERY:
        _since_collect = 0
        gc.collect()
