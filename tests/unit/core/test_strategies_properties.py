"""Property tests of the strategies' invariants on generated agent loops.

For every strategy, after every add and every live change of max or strategy: the first message is
pinned; the window holds at most max messages (max+1 only when a tool pair is kept at max <= 2,
and the window says so); the message just added is in the window (``seed`` at max 1 aside, the Java
semantics, reported by ``window_notes``); the safe strategies send no error-severity protocol
problem; ``seed`` equals a literal port of the Java; the window is an in-order subsequence of the
history and an evicted message never returns.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview import ConversationContext, check_protocol
from ctxview.core.protocol import errors
from ctxview.core.strategies import min_keep
from tests.support.agentgen import agent_events
from tests.support.invariants import assert_window_basics
from tests.support.java_context import LiteralJavaContext

ALL = ["seed", "pair-safe", "token-budget", "low-water"]
SAFE = ["pair-safe", "token-budget", "low-water"]


def _check_invariants(
    ctx: ConversationContext,
    history: list[dict[str, Any]],
    gone: set[int],
    added: int | None,
    protocol: bool = True,
) -> None:
    assert_window_basics(ctx, history, gone, protocol=protocol)
    ids = ctx.window_ids
    max_ = ctx.max_context_messages
    notes = {p.code: p for p in ctx.window_notes()}
    # pinned messages the eviction front passed (the answers of a first message's tool_use)
    # are kept on top of max, uncounted
    counted = len(ids) - len(ctx._window.held)
    if counted > max_:
        assert ctx.strategy != "seed"
        assert "over_max" in notes and notes["over_max"].message.startswith(f"max+{counted - max_}")
        # only ever the newest message, with its tool_use partner, beyond max
        assert counted <= max(max_, 2) + 1
    if added is not None:
        if ctx.strategy == "seed" and max_ == 1:
            assert ids == [0]
            if added != 0:
                assert "newest_not_in_window" in notes
        else:
            assert added in ids, f"the message just added (#{added}) was evicted"
            assert "newest_not_in_window" not in notes
    if ctx.strategy == "token-budget":
        over = ctx.estimated_tokens > ctx._window.max_context_tokens
        assert over == ("over_token_budget" in notes)
        if over:  # only the newest message (and its tool pair) stay beyond the budget
            assert len(ctx._window.tail) == min_keep(ctx._window)


def _run(
    events: list[tuple[str, Any]], strategy: str, max_: int, budget: int, fraction: float
) -> None:
    ctx = ConversationContext(
        max_context_messages=max_,
        strategy=strategy,
        max_context_tokens=budget,
        low_water_fraction=fraction,
    )
    java = LiteralJavaContext(max_)
    history: list[dict[str, Any]] = []
    gone: set[int] = set()
    ctx.subscribe(lambda e: gone.update(e.ids) if e.kind == "evicted" else None)
    pure_seed = strategy == "seed"
    # the messages answering an opening tool call (the history may open with one)
    opening = {1} if events[0][1].get("role") == "assistant" else set()
    answer_kept = True
    for kind, value in events:
        added = None
        if kind == "msg":
            added = ctx.add_message(value)
            history.append(value)
            java.add_message(value)
        elif kind == "max":
            ctx.max_context_messages = value
            java.max_context_messages = value
            java._truncate_if_needed()
        else:
            ctx.strategy = value
            pure_seed = pure_seed and value == "seed"
        if answer_kept and opening & gone:
            # only seed drops the answer of the first message's tool_use: the others pin it
            assert ctx.strategy == "seed", "a safe strategy evicted the opening call's answer"
            answer_kept = False
        _check_invariants(ctx, history, gone, added, protocol=answer_kept)
        if pure_seed:
            assert ctx.messages == java.messages, "seed is the Java class"


@settings(max_examples=300, deadline=None)
@given(
    events=agent_events(live_changes=False, opening_call=True),
    strategy=st.sampled_from(ALL),
    max_=st.integers(min_value=1, max_value=12),
    budget=st.integers(min_value=20, max_value=3000),
    fraction=st.floats(min_value=0.05, max_value=1.0),
)
def test_strategy_invariants_fixed_settings(
    events: list[tuple[str, Any]], strategy: str, max_: int, budget: int, fraction: float
) -> None:
    _run(events, strategy, max_, budget, fraction)


@settings(max_examples=200, deadline=None)
@given(
    events=agent_events(live_changes=True, opening_call=True),
    strategy=st.sampled_from(ALL),
    max_=st.integers(min_value=1, max_value=12),
    budget=st.integers(min_value=20, max_value=3000),
)
def test_strategy_invariants_live_changes(
    events: list[tuple[str, Any]], strategy: str, max_: int, budget: int
) -> None:
    # seed is compared with the Java port only while the strategy is still seed (see _run)
    _run(events, strategy, max_, budget, 0.5)


def test_issue_example_pair_safe_keeps_the_question_just_typed() -> None:
    """user, assistant, user, user + a new user message at --max 4 with pair-safe."""
    ctx = ConversationContext(max_context_messages=4, strategy="pair-safe")
    for role, text in [("user", "a"), ("assistant", "b"), ("user", "c"), ("user", "d")]:
        ctx.add_message({"role": role, "content": text})
    new = ctx.add_user_message("the question just typed")
    assert new in ctx.window_ids
    assert ctx.window_ids == [0, 2, 3, 4]


def test_max_two_keeps_the_tool_pair_and_says_so() -> None:
    for strategy in SAFE:
        ctx = ConversationContext(max_context_messages=2, strategy=strategy)
        ctx.add_user_message("go")
        ctx.add_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        ctx.add_user_message("more")
        ctx.add_message(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
            }
        )
        rid = ctx.add_tool_results([{"tool_use_id": "t1", "content": "r"}])
        assert ctx.window_ids == [0, 3, rid], strategy
        assert [p.message for p in ctx.window_notes()] == ["max+1: kept a tool pair"]
        assert errors(check_protocol(ctx.messages)) == []


def test_low_water_target_and_tool_use_just_added() -> None:
    # low-water at max 3 used to trim to floor(3/2)=1: the tool_use just added left the window
    ctx = ConversationContext(max_context_messages=3, strategy="low-water")
    ctx.add_user_message("go")
    ctx.add_message({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    ctx.add_user_message("more")
    mid = ctx.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
        }
    )
    assert mid in ctx.window_ids and len(ctx) == 2  # max(2, floor(3 * 0.5)) = 2


def test_token_budget_never_evicts_tool_results_just_added() -> None:
    ctx = ConversationContext(
        max_context_messages=50, strategy="token-budget", max_context_tokens=30
    )
    ctx.add_user_message("go")
    ctx.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}],
        }
    )
    rid = ctx.add_tool_results([{"tool_use_id": "t1", "content": "r" * 2000}])
    assert ctx.window_ids == [0, 1, rid]
    assert "over_token_budget" in {p.code for p in ctx.window_notes()}
    assert errors(check_protocol(ctx.messages)) == []
