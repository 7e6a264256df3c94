"""A simulation of a Claude Code transcript starts again at each compaction, in the TUI's
replay (``ConversationContext.start_again``) as in the request model (``segment_starts``): the
window the timeline shows before each request is the window ``requests`` prices."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.core.context import ConversationContext
from ctxview.core.requests import request_points, simulate, window_of
from ctxview.core.strategies import STRATEGIES
from ctxview.core.transcript import Transcript
from ctxview.sessions import LoadedSession, load_session, replay
from tests.support.compactions import COMPACTED_TRANSCRIPTS, constructed_compactions

EVICTING = [s for s in STRATEGIES if not s.startswith("clear-")]


def _windows_agree(session: LoadedSession, max_: int, strategy: str) -> None:
    """Before every request, the TUI's replay of the messages so far holds the request's
    window (the request model's), pinned first included."""
    log = simulate(session, max_context_messages=max_, strategy=strategy)
    points = request_points(session)
    assert len(points) == len(log.requests)
    for k, p in enumerate(points):
        if p.off is not None:
            continue
        part = dataclasses.replace(
            session, messages=session.messages[: p.n], metas=session.metas[: p.n]
        )
        rep = replay(part, max_context_messages=max_, strategy=strategy)
        assert rep.context.window_ids == window_of(session, log, k), (k, p.n)


def _constructed_session() -> LoadedSession:
    """``test_ledger``'s two Claude Code compactions (without its compaction block, which the
    request model starts a segment at while the TUI keeps what precedes it in the window)."""
    msgs, metas = constructed_compactions()
    return LoadedSession("constructed.jsonl", "claude-code", msgs[:12], metas[:12])


@pytest.mark.parametrize("strategy", EVICTING)
@pytest.mark.parametrize("max_", [2, 3, 5])
def test_constructed_compactions(max_: int, strategy: str) -> None:
    _windows_agree(_constructed_session(), max_, strategy)


@pytest.mark.parametrize("path", COMPACTED_TRANSCRIPTS[:2], ids=lambda p: p.name)
def test_real_transcripts_with_compactions(path: Any) -> None:
    session = load_session(path)
    assert any(m.get("compact_boundary") is not None for m in session.metas)
    for strategy in ("seed", "pair-safe"):
        log = simulate(session, max_context_messages=8, strategy=strategy)
        rep = replay(session, max_context_messages=8, strategy=strategy)
        # the last request's window is the end of the TUI's window (whose newest messages came
        # after that request: the final response, and nothing that evicts)
        last = window_of(session, log, len(log.requests) - 1)
        win = rep.context.window_ids
        assert win[0] == last[0]  # the same pinned first: the last compaction's summary
        assert set(last) - set(win) <= set(range(last[-1] + 1)) - set(win)


def test_start_again_evicts_the_window_as_compacted() -> None:
    ctx = ConversationContext(max_context_messages=4)
    tr = Transcript(ctx)
    for k in range(3):
        ctx.add_user_message(f"u{k}") if k % 2 == 0 else ctx.add_assistant_message([])
    ctx.pin(1)
    events: list[Any] = []
    ctx.subscribe(events.append)
    mid = ctx.start_again({"role": "user", "content": "summary"})
    assert [e.kind for e in events] == ["evicted", "added"]
    assert events[0].reason == "compaction" and events[0].ids == (0, 1, 2)
    assert events[0].step == events[1].step == ctx.step
    assert ctx.window_ids == [mid] and ctx.pinned_id == mid and ctx.pinned_ids == []
    assert tr.pinned_id == mid and tr.status(mid) == "pinned"
    assert [tr.status(i) for i in range(3)] == ["evicted"] * 3
    ctx.add_assistant_message([{"type": "text", "text": "a"}])
    assert ctx.window_ids == [mid, mid + 1]


_turns = st.lists(
    st.tuples(st.booleans(), st.integers(min_value=1, max_value=3)), min_size=1, max_size=12
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_turns, st.integers(min_value=1, max_value=6), st.sampled_from(EVICTING))
def test_generated_compactions(turns: list[tuple[bool, int]], max_: int, strategy: str) -> None:
    """Sessions of user turns (some of them a compaction's summary) and tool loops."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    n = 0
    for compact, loops in turns:
        summary = compact and bool(msgs)
        msgs.append({"role": "user", "content": "summary" if summary else "ask"})
        metas.append({"compact_boundary": {}, "compact_summary": True} if summary else {})
        for _ in range(loops - 1):
            n += 1
            tid = f"t{n}"
            msgs.append(
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": tid, "name": "x", "input": {}}],
                }
            )
            metas.append({"model": "claude-sonnet-4-5"})
            msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid}]})
            metas.append({})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
        metas.append({"model": "claude-sonnet-4-5"})
    _windows_agree(LoadedSession("g.jsonl", "claude-code", msgs, metas), max_, strategy)


def test_timeline_statuses_of_a_simulated_compaction() -> None:
    """What a compaction replaced is ``compacted``; what the strategy had evicted before it
    stays ``evicted``; the summary is the pinned first."""
    from ctxview.app.model import SessionModel

    session = _constructed_session()
    model = SessionModel(replay(session, max_context_messages=3, strategy="seed"), "c", None)
    status = [model.status(i) for i in range(len(session.messages))]
    # seed, max 3: each segment keeps its first and the newest two; at each compaction (4, 8)
    # the window of the time is replaced
    assert status == [
        "compacted", "evicted", "compacted", "compacted",  # 1 evicted at 3
        "compacted", "evicted", "compacted", "compacted",  # 5 evicted at 7
        "pinned", "evicted", "kept", "kept",  # 9 evicted at 11
    ]  # fmt: skip
