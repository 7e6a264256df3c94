"""A generated ``LoadedSession`` for hypothesis: an agent loop damaged here and there, with the
metadata (timestamps, models, usage, compactions) the request model reads."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st

from ctxview.sessions.model import LoadedSession
from tests.support.agentgen import agent_events, damaged_loops

LONG = "the same long tool output, read again and again " * 4
MODELS = ["claude-sonnet-4-5", "claude-opus-4-5", "claude-haiku-4-5", "mystery-model", None]


def _ts(seconds: int) -> str:
    h, rest = divmod(seconds, 3600)
    return f"2026-01-01T{10 + h:02d}:{rest // 60:02d}:{rest % 60:02d}.000Z"


@st.composite
def sessions(draw: Any, damaged: bool = False) -> LoadedSession:
    """A generated agent loop, damaged here and there (empty texts, orphaned results, doubled
    turns, system messages, compactions), with timestamps, models and usage on its responses.
    ``damaged``: broken further by ``agentgen.damaged_loops`` (every rule of the protocol
    check, thinking and server blocks, system messages)."""
    if damaged:
        msgs = draw(damaged_loops(invalid_roles=False))  # (a context refuses those)
    else:
        msgs = [m for kind, m in draw(agent_events(live_changes=False)) if kind == "msg"]
        msgs = [json.loads(json.dumps(m)) for m in msgs]
    n_tools = 0
    for k in range(len(msgs)):
        roll = draw(st.integers(0, 11))
        m = msgs[k]
        if roll == 0:
            m["content"] = [{"type": "text", "text": ""}]
        elif roll == 1:
            m["content"] = LONG + ("!" if draw(st.booleans()) else "")
        elif roll == 2 and m["role"] == "user":
            n_tools += 1
            m["content"] = [
                {"type": "tool_result", "tool_use_id": f"gone_{n_tools}", "content": LONG}
            ]
        elif roll == 3:
            msgs[k] = {"role": "system", "content": "be brief"}
        elif roll == 4 and m["role"] == "assistant":
            m["content"] = [{"type": "compaction", "content": "summary so far"}]
        elif roll == 5:
            m["content"] = "x" * draw(st.integers(0, 3000))
        elif damaged and roll in (6, 7) and isinstance(m["content"], list):
            for b in m["content"]:  # long tool results and inputs: worth clearing and caching
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    b["content"] = LONG * 4
                elif isinstance(b, dict) and b.get("type") == "tool_use":
                    b["input"] = {"path": LONG}
    if draw(st.booleans()) and msgs:
        del msgs[draw(st.integers(0, len(msgs) - 1))]
    if not msgs:
        msgs = [{"role": "user", "content": "hi"}]
    metas: list[dict[str, Any]] = []
    t = 0
    for m in msgs:
        meta: dict[str, Any] = {}
        t += draw(st.sampled_from([1, 30, 200, 400, 4000]))
        if draw(st.integers(0, 3)):
            meta["timestamp"] = _ts(t)
        if m["role"] == "assistant":
            model = draw(st.sampled_from(MODELS))
            if model is not None:
                meta["model"] = model
            if draw(st.booleans()):
                h = draw(st.integers(0, 3000))
                meta["usage"] = {
                    "input_tokens": draw(st.integers(0, 50)),
                    "cache_read_input_tokens": draw(st.integers(0, 40_000)),
                    "cache_creation_input_tokens": draw(st.integers(0, 40_000)),
                    "output_tokens": draw(st.integers(0, 500)),
                    "cache_creation": {
                        "ephemeral_1h_input_tokens": h,
                        "ephemeral_5m_input_tokens": draw(st.integers(0, 3000)),
                    },
                }
            roll = draw(st.integers(0, 11))
            if roll == 0:
                meta["model"] = "<synthetic>"
            elif roll == 1:
                meta["system"] = "another system prompt"
            elif roll == 2:
                meta["tools"] = [{"name": "t", "input_schema": {"type": "object"}}]
        elif draw(st.integers(0, 14)) == 0:
            meta["compact_boundary"] = {"trigger": "auto"}
        metas.append(meta)
    fmt = draw(st.sampled_from(["claude-code", "messages", "ctxview", "request"]))
    system: Any = draw(
        st.sampled_from(["", "You are terse. " * 30, [{"type": "text", "text": ""}]])
    )
    return LoadedSession(
        "gen.json",
        fmt,
        msgs,
        metas,
        system=system,
        tools=draw(st.sampled_from([[], [{"name": "read_file", "input_schema": {}}]])),
        model=draw(st.sampled_from(MODELS)),
        max_context_messages=draw(st.sampled_from([None, 3, 50])),
    )
