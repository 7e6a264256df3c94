"""The tools + system + context after a compaction the file recorded no request of, when the
first segment's prompts @-mentioned files (``ctxview/core/requests/restart.py``)."""

from __future__ import annotations

import math
from typing import Any

from ctxview.core.calibrate import POST_COMPACTION_GROWTH
from ctxview.core.requests import simulate
from ctxview.core.requests.points import calibrate
from ctxview.core.requests.restart import (
    cached_head,
    head_read,
    mentions_files,
)
from ctxview.sessions.model import LoadedSession
from tests.unit.core.test_requests import ts


def _user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": text}]}


def _response(stamp: str, total: int, read: int) -> dict[str, Any]:
    """A response's meta whose request was ``total`` tokens, ``read`` of them from the cache and
    the rest but 3 written."""
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": total - 3 - read,
    }
    return {"timestamp": stamp, "model": "claude-sonnet-4-5", "usage": usage}


def test_a_prompt_mentions_a_file_by_a_path_or_a_name_with_an_extension() -> None:
    assert mentions_files([_user("@src/a/ARCH.md review it")], 1)
    assert mentions_files([{"role": "user", "content": "look at @README.md"}], 1)
    assert not mentions_files([_user("@moduledoc and a@b.com")], 1)
    assert not mentions_files([_user("<system-reminder>@src/x.py</system-reminder>")], 1)
    assert not mentions_files([{"role": "assistant", "content": "@src/x.py"}], 1)
    assert not mentions_files([_user("x"), _user("@src/x.py")], 1)  # past the end


def test_the_head_is_a_read_below_the_static_that_two_requests_made() -> None:
    assert head_read([0, 23_254, 50_989, 23_254, 19_778, 23_254], 51_000) == 23_254
    assert head_read([0, 19_778, 50_989], 51_000) is None  # once is not a pattern
    assert head_read([60_000, 60_000], 51_000) is None  # not below the static


def _transcript(mention: bool, head_reads: bool) -> LoadedSession:
    """A first segment whose static is 40,000 tokens (a 20,000-token head plus what the first
    prompt attached), a compaction, a segment after it; usage recorded on the first segment only
    (what a fit on the first half sees)."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    t = 0.0
    chars = 0
    prompt = ("@docs/PLAN.md " if mention else "") + "review the plan"
    for k in range(8):
        msgs.append(_user(prompt if k == 0 else f"q{k} " + "word " * 300))
        metas.append({"timestamp": ts(t)})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        chars += len(str(msgs[-2]["content"])) + 2
        total = 40_000 + chars // 4 + 8 * (k + 1)
        read = 20_000 if head_reads and k in (3, 5) else 0
        metas.append(_response(ts(t + 5), total, read))
        t += 10
    msgs.append({"role": "user", "content": "summary " * 50})
    metas.append({"timestamp": ts(t), "compact_summary": True, "compact_boundary": {}})
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    metas.append({"timestamp": ts(t + 5), "model": "claude-sonnet-4-5"})
    return LoadedSession("t.jsonl", "claude-code", msgs, metas, model="claude-sonnet-4-5")


def test_after_a_compaction_that_dropped_a_mentioned_file_the_static_starts_from_the_head() -> None:
    cal = calibrate(_transcript(mention=True, head_reads=True))
    assert cal.statics is not None
    first, after = cal.statics[(0, "claude-sonnet-4-5")], cal.statics[(16, "claude-sonnet-4-5")]
    assert abs(first - 40_000) < 500
    assert after == 20_000  # the head; no file was read to restore
    # without the mention, or without reads showing the head: the first segment's, grown
    for mention, reads in ((False, True), (True, False)):
        cal = calibrate(_transcript(mention=mention, head_reads=reads))
        assert cal.statics is not None
        grown = cal.statics[(16, "claude-sonnet-4-5")]
        # (the static the first segment started with: its first requests' residual, within a
        # few tokens of its median here)
        want = math.ceil(cal.statics[(0, "claude-sonnet-4-5")] * (1 + POST_COMPACTION_GROWTH))
        assert abs(grown - want) <= 5


def test_the_cached_head_is_the_most_frequent_repeated_prefix_read_within_the_static() -> None:
    # (read, static of its segment) of the requests that read only a prefix
    assert cached_head([(16_496, 40_000), (16_496, 41_000), (28_023, 46_000)]) == 16_496
    tie = [(18_591, 40_000), (16_496, 40_000), (16_496, 40_000), (18_591, 40_000)]
    assert cached_head(tie) == 18_591  # a tie: the latest
    assert cached_head([(16_496, 40_000), (18_591, 40_000)]) is None  # once is not a pattern
    # a read past the static kept messages too (a microcompaction's prefix): not the head
    assert cached_head([(118_873, 40_000), (118_873, 40_000)]) is None
    assert cached_head([]) is None


def _compacted(head: int, after_static: int) -> LoadedSession:
    """A first segment (static 40,000) whose first request read ``head`` (cached by other
    sessions) and whose request 4 broke the cache and read only it, a compaction, and a segment after it that sends ``after_static`` besides its messages (what
    Claude Code restores with the summary): usage recorded throughout."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    t = 0.0
    chars = 0
    prev = 0

    def turn(text: str, static: int, read_of: int | None, meta: dict[str, Any]) -> None:
        nonlocal t, chars, prev
        msgs.append(_user(text))
        metas.append({"timestamp": ts(t), **meta})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        chars += len(text) + 2
        total = static + chars // 4 + 8 * len(msgs) // 2
        read = prev if read_of is None else read_of
        metas.append(_response(ts(t + 5), total, read))
        prev = total - 3
        t += 10

    for k in range(8):
        turn(f"q{k} " + "word " * 300, 40_000, head if k in (0, 4) else None, {})
    chars = 0
    turn("summary " * 400, after_static, head, {"compact_summary": True, "compact_boundary": {}})
    for k in range(5):
        turn(f"r{k} " + "word " * 300, after_static, None, {})
    return LoadedSession("t.jsonl", "claude-code", msgs, metas, model="claude-sonnet-4-5")


def test_the_first_request_after_a_compaction_reads_only_the_cached_head() -> None:
    session = _compacted(head=20_000, after_static=45_000)
    assert calibrate(session).head == 20_000
    log = simulate(session)
    first_after = log.requests[8]
    assert first_after.cache_break is not None
    assert first_after.cache_break.reason == "compaction"
    # not the segment's whole static (45,000): what Claude Code sends with the summary besides
    # the tools and system is written again
    assert first_after.cache_read == 20_000
    assert first_after.predicted_break == first_after.recorded_break is True
    # the next request reads it all again
    assert log.requests[9].cache_read == first_after.input_tokens
