"""The safe strategies keep their invariant on OpenAI sessions: a window of a valid
conversation is valid under the session's own rules (a tool message never loses its
tool_calls partner; a function_call never loses its output), whatever the max."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview import ConversationContext
from ctxview.core.protocol import check_protocol, errors
from ctxview.core.providers import openai
from ctxview.core.providers.openai_wire import chat_message, responses_item, stored_reasoning
from ctxview.core.requests import simulate
from ctxview.sessions import load_session
from tests.support.openaigen import chat_conversation, responses_conversation
from tests.support.paths import ACCEPTANCE

SAFE = ("pair-safe", "token-budget", "low-water")


def _keeps_valid(messages: list[dict[str, Any]], rules: Any, strategy: str, max_: int) -> None:
    """After each message, the window is valid whenever the history so far is (a history
    between two tool messages of one parallel call is not a request yet)."""
    assert not errors(check_protocol(messages, rules=rules))
    ctx = ConversationContext(max_context_messages=max_, strategy=strategy)
    checked = 0
    for k, m in enumerate(messages):
        ctx.add_message(m)
        if errors(check_protocol(messages[: k + 1], rules=rules)):
            continue
        checked += 1
        found = errors(check_protocol(ctx.messages, rules=rules))
        assert found == [], (strategy, max_, k, ctx.window_ids, found)
        # the item after a stored reasoning item keeps it (else: "Item 'fc_…' of type
        # 'function_call' was provided without its required 'reasoning' item", a rule of the
        # stored response no body shows)
        kept = set(ctx.window_ids)
        for x in kept:
            if x > 0 and stored_reasoning(messages[x - 1]) is not None:
                assert x - 1 in kept, (strategy, max_, k, ctx.window_ids)
    assert checked


@settings(max_examples=60, deadline=None)
@given(chat_conversation(), st.sampled_from(SAFE), st.integers(2, 12))
def test_safe_strategies_keep_a_chat_window_valid(
    wire: list[dict[str, Any]], strategy: str, max_: int
) -> None:
    _keeps_valid([chat_message(m) for m in wire], openai.CHAT_RULES, strategy, max_)


@settings(max_examples=60, deadline=None)
@given(responses_conversation(), st.sampled_from(SAFE), st.integers(2, 12))
def test_safe_strategies_keep_a_responses_window_valid(
    items: list[Any], strategy: str, max_: int
) -> None:
    _keeps_valid([responses_item(i) for i in items], openai.RESPONSES_RULES, strategy, max_)


@pytest.mark.parametrize("strategy", SAFE)
def test_a_developer_message_between_a_call_and_its_output_keeps_them_together(
    strategy: str,
) -> None:
    items = [
        {"type": "message", "role": "developer", "content": "rules"},
        {"type": "message", "role": "user", "content": "task"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "message", "role": "developer", "content": "note"},
        {"type": "function_call_output", "call_id": "a", "output": "ok"},
    ]
    _keeps_valid([responses_item(i) for i in items], openai.RESPONSES_RULES, strategy, 2)


_CODEX = ACCEPTANCE / "codex"
#: a real Codex rollout whose developer messages sit between calls and their outputs
_DEVELOPER_BETWEEN = (
    _CODEX / "localpush_rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl"
)


@pytest.mark.parametrize("strategy", SAFE)
def test_the_replay_of_a_real_codex_rollout_keeps_every_window_valid(strategy: str) -> None:
    """Every request of the replay (its range form, the same windows as the context form) is
    accepted: a developer message between a call and its output never starts a window."""
    session = load_session(_DEVELOPER_BETWEEN)
    every = range(len(session.messages) + 1)
    log = simulate(session, strategy=strategy, max_context_messages=12, check=True)
    ref = simulate(
        session,
        strategy=strategy,
        max_context_messages=12,
        check=True,
        keep_windows=every,
        _reference=True,
    )
    assert (
        simulate(
            session, strategy=strategy, max_context_messages=12, check=True, keep_windows=every
        ).windows
        == ref.windows
    )
    assert [r.index for r in log.requests if r.rejected] == []
