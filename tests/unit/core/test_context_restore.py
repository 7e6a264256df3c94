"""Opening a recorded session as sent takes its messages at once (``Transcript.restore`` and
``ConversationContext.restore``); the state must be the one adding them one by one leaves, and
behave the same afterwards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.core.context import ConversationContext
from ctxview.core.transcript import Transcript
from ctxview.sessions import LoadedSession, load_session, replay
from tests.support.agentgen import agent_events
from tests.support.paths import ACCEPTANCE, FIXTURES

ACCEPT = ACCEPTANCE / "claude_code"


def _one_by_one(session: LoadedSession, ctx_like: ConversationContext) -> Any:
    ctx = ConversationContext(
        max_context_messages=len(session.messages) + 1,
        system_prompt=ctx_like.system_prompt,
        strategy="seed",
        max_context_tokens=ctx_like.max_context_tokens,
        low_water_fraction=ctx_like.low_water_fraction,
    )
    transcript = Transcript()
    transcript.attach(ctx)
    for msg, meta in zip(session.messages, session.metas, strict=True):
        ctx.add_message(msg, meta=meta, copy=False)
    return ctx, transcript


def _state(ctx: ConversationContext, transcript: Transcript) -> Any:
    return (
        ctx.window_ids,
        ctx.step,
        ctx.pinned_ids,
        ctx.compacted_ids,
        ctx._window.cut,
        [(r.id, r.message, r.added_step, r.evicted_step, r.meta) for r in transcript.records],
        [transcript.status(r.id) for r in transcript.records],
        transcript.pinned_id,
    )


def _same(session: LoadedSession) -> None:
    rep = replay(session, as_sent=True)
    if rep.compacted_before:
        return  # a Claude Code compaction: restored from its summary on (another path)
    ref_ctx, ref_tr = _one_by_one(session, rep.context)
    assert _state(rep.context, rep.transcript) == _state(ref_ctx, ref_tr)
    assert all(
        a.message is b.message for a, b in zip(rep.transcript.records, ref_tr.records, strict=True)
    )
    # and they go on alike: a new message, a smaller max
    for ctx in (rep.context, ref_ctx):
        ctx.add_message({"role": "user", "content": "and then?"})
        ctx.set_max_context_messages(max(1, len(session.messages) // 3))
    assert _state(rep.context, rep.transcript) == _state(ref_ctx, ref_tr)


@pytest.mark.parametrize(
    "path",
    sorted(ACCEPT.glob("*.jsonl"))[:6] + sorted((FIXTURES / "claude_code").glob("*.jsonl")),
    ids=lambda p: p.name[:40],
)
def test_recorded_transcripts_open_as_if_added_one_by_one(path: Path) -> None:
    _same(load_session(str(path)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=agent_events(live_changes=False), compaction=st.booleans())
def test_generated_request_bodies_open_as_if_added_one_by_one(
    events: list[Any], compaction: bool
) -> None:
    msgs = [json.loads(json.dumps(m)) for kind, m in events if kind == "msg"]
    if not msgs:
        return
    if compaction and len(msgs) > 2 and msgs[1]["role"] == "assistant":
        msgs[1]["content"] = [{"type": "compaction", "content": "so far"}]
    metas = [{"note": k} for k in range(len(msgs))]
    _same(LoadedSession("b.json", "request", msgs, metas))
