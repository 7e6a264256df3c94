"""The cached head (tools + system prompt) of a Claude Code transcript whose recorded reads do
not show it: a share of the first segment's static (``restart.assumed_head``), read by a request
that shares no message with the cache (the first after a compaction) instead of the whole
static."""

from __future__ import annotations

from ctxview.core.requests import simulate
from ctxview.core.requests.points import calibrate
from ctxview.core.requests.restart import HEAD_SHARE, assumed_head
from tests.unit.core.test_compaction_restart import _compacted


def test_the_assumed_head_is_a_share_of_the_first_static() -> None:
    assert assumed_head(40_000) == round(40_000 * HEAD_SHARE)
    assert assumed_head(0) is None
    assert 0.6 < HEAD_SHARE < 0.9


def test_without_a_read_of_the_head_the_first_request_after_a_compaction_reads_the_assumed_one() -> (
    None
):
    # no request read a prefix below the static (each first-segment break read nothing)
    session = _compacted(head=0, after_static=45_000)
    cal = calibrate(session)
    assert cal.head is not None and cal.head < 40_000
    first_after = simulate(session).requests[8]
    assert first_after.cache_break is not None and first_after.cache_break.reason == "compaction"
    assert first_after.cache_read == cal.head  # not the segment's whole static (45,000)


def test_a_head_the_reads_show_wins() -> None:
    assert calibrate(_compacted(head=20_000, after_static=45_000)).head == 20_000


def test_only_a_head_the_reads_show_names_an_unexplained_break() -> None:
    """An assumed head is a share of the static: a read that happens to match it is not called
    a read of the head."""
    session = _compacted(head=0, after_static=45_000)
    cal = calibrate(session)
    assert cal.head is not None and cal.head_seen is False
    assert calibrate(_compacted(head=20_000, after_static=45_000)).head_seen is True
    # request 6 reads exactly the assumed head: an unexplained break, no note of a head read
    usage = session.metas[13]["usage"]
    total = sum(usage.values())
    usage.update(cache_read_input_tokens=cal.head, cache_creation_input_tokens=total - 3 - cal.head)
    miss = simulate(session).requests[6].recorded_miss
    assert miss is not None and miss.reason == "unexplained" and miss.read == cal.head
    assert miss.note is None
