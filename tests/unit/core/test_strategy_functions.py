"""Strategies as plain functions, their registration (built-ins never replaced silently) and
``safe_cut``, from where a user looks: the ``ctxview`` package."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import ctxview
from ctxview import Budget, ConversationContext, Window, register_strategy, safe_cut
from ctxview.core.strategies import STRATEGIES, FunctionStrategy, SeedStrategy


@pytest.fixture
def registry() -> Iterator[None]:
    saved = dict(STRATEGIES)
    yield
    STRATEGIES.clear()
    STRATEGIES.update(saved)


def keep_last_3(messages: list[dict[str, Any]], budget: Budget) -> int:
    """the first message and the newest 3"""
    return max(0, len(messages) - 4)


def _tool_loop(ctx: ConversationContext, turns: int) -> None:
    ctx.add_user_message("go")
    for n in range(turns):
        tid = f"toolu_{n}"
        ctx.add_assistant_message([{"type": "tool_use", "id": tid, "name": "r", "input": {}}])
        ctx.add_tool_results([{"tool_use_id": tid, "content": str(n)}])


def test_a_function_returning_how_many_to_drop() -> None:
    ctx = ConversationContext(strategy=keep_last_3)
    for n in range(8):
        ctx.add_user_message(f"m{n}")
    assert ctx.window_ids == [0, 5, 6, 7]
    assert ctx.strategy == "keep_last_3"


def test_a_function_returning_the_kept_list() -> None:
    def newest_two(messages: list[dict[str, Any]], budget: Budget) -> list[dict[str, Any]]:
        return messages[:1] + messages[-2:]

    def newest_two_without_first(messages: list[dict[str, Any]], budget: Budget) -> Any:
        return [dict(m) for m in messages[-2:]]  # copies: matched by equality

    for fn in (newest_two, newest_two_without_first):
        ctx = ConversationContext(strategy=fn)
        for n in range(6):
            ctx.add_user_message(f"m{n}")
        assert ctx.window_ids == [0, 4, 5]


@pytest.mark.parametrize(
    "result, error",
    [
        (99, "asked to drop 99"),
        (-1, "asked to drop -1"),
        ("x", "return how many to drop"),
        (None, "return how many to drop"),
        ([{"role": "user", "content": "never added"}], "not the newest"),
    ],
)
def test_a_function_returning_nonsense_is_told_so(result: Any, error: str) -> None:
    ctx = ConversationContext(strategy=lambda messages, budget: result)
    with pytest.raises((ValueError, TypeError), match=error):
        ctx.add_user_message("a")
        ctx.add_user_message("b")


def test_the_budget_holds_limits_and_counts() -> None:
    seen: list[Budget] = []

    def spy(messages: list[dict[str, Any]], budget: Budget) -> int:
        seen.append(budget)
        return 0

    tool = {"name": "t", "input_schema": {"type": "object", "properties": {}}}
    ctx = ConversationContext(5, "sys", spy, max_context_tokens=900, tools=[tool])
    ctx.add_user_message("hello there")
    b = seen[-1]
    assert (b.max_messages, b.max_tokens, b.low_water_fraction) == (5, 900, 0.5)
    assert b.tokens == ctx.estimated_tokens
    assert b.count({"role": "user", "content": "hello there"}) == ctx.estimated_tokens - (
        ConversationContext(5, "sys", tools=[tool]).estimated_tokens
    )


def test_safe_cut_keeps_tool_pairs_whole() -> None:
    ctx = ConversationContext(max_context_messages=1000)
    _tool_loop(ctx, 3)  # user, (assistant tool_use, user tool_result) x 3
    msgs = ctx.messages
    assert [safe_cut(msgs, n) for n in range(7)] == [0, 2, 2, 4, 4, 4, 4]
    assert safe_cut(msgs[:1], 3) == 0


def test_safe_cut_moves_a_cut_past_a_leading_tool_result() -> None:
    ctx = ConversationContext(max_context_messages=1000)
    _tool_loop(ctx, 3)
    msgs = ctx.messages
    # dropping the first tool_use alone would leave its tool_result first: it goes too
    assert msgs[1]["role"] == "assistant" and safe_cut(msgs, 1) == 2


def test_a_safe_function_strategy_never_orphans_a_result() -> None:
    def keep_4(messages: list[dict[str, Any]], budget: Budget) -> int:
        return safe_cut(messages, len(messages) - 4)

    ctx = ConversationContext(strategy=keep_4)
    _tool_loop(ctx, 6)
    assert ctx.check() == []


def test_register_a_function_by_name(registry: None) -> None:
    made = register_strategy("keep-last-3", keep_last_3)
    assert isinstance(made, FunctionStrategy)
    assert made.description == "the first message and the newest 3"
    assert register_strategy("keep-last-3", keep_last_3) is made  # again: nothing changes
    ctx = ConversationContext(strategy="keep-last-3")
    assert ctx.strategy == "keep-last-3"
    ctx.strategy = keep_last_3  # the function itself: its registered name
    assert ctx.strategy == "keep-last-3"


def test_built_in_names_are_not_replaced_silently(registry: None) -> None:
    seed = STRATEGIES["seed"]
    with pytest.raises(ValueError, match=r"built-in strategy named 'seed'.*replace=True"):
        register_strategy("seed", keep_last_3)

    class Other(SeedStrategy):
        pass

    with pytest.raises(ValueError, match="replace=True"):
        register_strategy(Other())
    assert STRATEGIES["seed"] is seed
    register_strategy("seed", keep_last_3, replace=True)
    assert isinstance(STRATEGIES["seed"], FunctionStrategy)


def test_a_custom_name_taken_is_not_replaced_silently(registry: None) -> None:
    register_strategy("mine", keep_last_3)
    with pytest.raises(ValueError, match="a strategy named 'mine'"):
        register_strategy("mine", lambda messages, budget: 0)


def test_register_refuses_what_is_not_a_strategy(registry: None) -> None:
    with pytest.raises(TypeError, match="not a strategy"):
        register_strategy(object())  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="function is missing"):
        register_strategy("x")  # type: ignore[call-overload]


def test_a_class_strategy_on_the_exported_window(registry: None) -> None:
    class EveryOther:
        name = "every-other"
        description = "evicts the oldest two when over max"

        def truncate(self, window: Window) -> None:
            if window.counted > window.max_messages:
                window.evict(2)

    register_strategy(EveryOther())
    ctx = ConversationContext(max_context_messages=3, strategy="every-other")
    for n in range(4):
        ctx.add_user_message(str(n))
    assert ctx.window_ids == [0, 3]


def test_the_names_a_strategy_author_needs_are_exported() -> None:
    for name in ("Strategy", "Window", "safe_cut", "register_strategy", "Budget"):
        assert name in ctxview.__all__
        assert getattr(ctxview, name) is not None


def test_unknown_strategy_says_how_to_register() -> None:
    with pytest.raises(ValueError, match=r"register_strategy\('nope', function\)"):
        ConversationContext(strategy="nope")
