"""``token_counter=`` and ``tools=``: what a context counts, and what token-budget evicts for."""

from __future__ import annotations

from typing import Any

import pytest

from ctxview import Budget, ConversationContext
from ctxview.core.calibrate import Rates
from ctxview.core.tokens import estimate_tools, estimate_window

TOOLS = [
    {
        "name": f"tool_{n}",
        "description": "does a thing " * 40,
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    for n in range(3)
]


def test_estimated_tokens_include_the_tools() -> None:
    bare = ConversationContext()
    ctx = ConversationContext(tools=TOOLS)
    for c in (bare, ctx):
        c.add_user_message("hello")
    assert ctx.estimated_tokens == bare.estimated_tokens + estimate_tools(TOOLS)
    assert ctx.estimated_tokens == estimate_window(ctx.messages, "", TOOLS)


def test_token_budget_counts_the_tool_schemas() -> None:
    budget = 800
    with_tools = ConversationContext(
        100, strategy="token-budget", max_context_tokens=budget, tools=TOOLS
    )
    without = ConversationContext(100, strategy="token-budget", max_context_tokens=budget)
    for c in (with_tools, without):
        for n in range(30):
            c.add_user_message(f"message {n} " + "x" * 60)
    assert len(with_tools) < len(without)
    assert with_tools.estimated_tokens <= budget


def test_setting_tools_applies_at_once() -> None:
    ctx = ConversationContext(100, strategy="token-budget", max_context_tokens=800)
    for n in range(30):
        ctx.add_user_message(f"message {n} " + "x" * 60)
    n_before = len(ctx)
    ctx.tools = TOOLS
    assert len(ctx) < n_before
    assert ctx.tools == TOOLS
    assert ctx.request(model="m", max_tokens=1)["tools"] == TOOLS


def test_calibrated_rates_count_the_window() -> None:
    rates = Rates(per_char=(0.5, 0.5, 0.5, 0.5, 0.5), overhead=4.0)
    ctx = ConversationContext(token_counter=rates)
    ctx.add_user_message("x" * 400)
    assert ctx.estimated_tokens == 204
    assert ConversationContext(token_counter="estimate").estimated_tokens == 0


def test_a_request_callback_counts_the_whole_request() -> None:
    asked: list[dict[str, Any]] = []

    def count_tokens(request: dict[str, Any]) -> int:
        asked.append(request)
        return 1000 * len(request["messages"])

    ctx = ConversationContext(system_prompt="sys", tools=TOOLS, token_counter=count_tokens)
    ctx.add_user_message("hi")
    assert ctx.estimated_tokens == 1000
    assert ctx.estimated_tokens == 1000
    assert len(asked) == 1  # cached until the window changes
    assert asked[0] == {
        "system": "sys",
        "messages": [{"role": "user", "content": "hi"}],
        "tools": TOOLS,
    }


def test_token_budget_evicts_by_the_callbacks_count() -> None:
    def count_tokens(request: dict[str, Any]) -> int:
        return 100 * len(request["messages"])

    ctx = ConversationContext(
        100, strategy="token-budget", max_context_tokens=450, token_counter=count_tokens
    )
    for n in range(10):
        ctx.add_user_message(f"m{n}")
    assert len(ctx) == 4
    assert ctx.estimated_tokens == 400


def test_a_callback_returning_nonsense_is_refused() -> None:
    ctx = ConversationContext(token_counter=lambda request: "many")  # type: ignore[arg-type,return-value]
    ctx.add_user_message("x")
    with pytest.raises(ValueError, match="not a number of tokens"):
        _ = ctx.estimated_tokens


def test_an_unknown_counter_is_refused() -> None:
    with pytest.raises(ValueError, match="token_counter must be"):
        ConversationContext(token_counter=3)  # type: ignore[arg-type]


def test_a_strategy_functions_budget_holds_the_callbacks_count() -> None:
    seen: list[int] = []

    def spy(messages: list[dict[str, Any]], budget: Budget) -> int:
        seen.append(budget.tokens)
        return 0

    ctx = ConversationContext(strategy=spy, token_counter=lambda r: 7 * len(r["messages"]))
    ctx.add_user_message("a")
    ctx.add_user_message("b")
    assert seen == [7, 14]
