from __future__ import annotations

import itertools
from typing import Any

import pytest

from ctxview import ConversationContext, check_protocol
from ctxview.core.protocol import errors
from ctxview.core.strategies import STRATEGIES, register_strategy
from ctxview.core.window import Window
from tests.support.agentgen import agent_loop

ALL = ["seed", "pair-safe", "token-budget", "low-water"]


def replay(msgs: list[dict[str, Any]], max_: int, strategy: str, **kw: Any) -> ConversationContext:
    ctx = ConversationContext(max_context_messages=max_, strategy=strategy, **kw)
    for m in msgs:
        ctx.add_message(m)
    return ctx


def test_all_registered() -> None:
    assert set(ALL) <= set(STRATEGIES)


# A fixed scenario: 1 instruction, 4 tool rounds, final text = 10 messages.
SCENARIO = agent_loop([[1, 1, 1, 1]])


@pytest.mark.parametrize(
    "strategy, max_, window",
    [
        ("seed", 5, [0, 6, 7, 8, 9]),  # 6 is a tool_result whose tool_use (5) was evicted
        ("pair-safe", 5, [0, 7, 8, 9]),
        ("low-water", 5, [0, 9]),  # crosses 5 at id 5 -> trims to 2 -> [0, 5]? then pair-safe
        ("seed", 1, [0]),
        ("pair-safe", 1, [0, 9]),  # the newest message is never evicted (max+1)
        ("seed", 10, list(range(10))),
        ("pair-safe", 10, list(range(10))),
        ("low-water", 10, list(range(10))),
    ],
)
def test_fixed_scenario(strategy: str, max_: int, window: list[int]) -> None:
    ctx = replay(SCENARIO, max_, strategy)
    assert ctx.window_ids == window


def test_seed_orphans_and_others_do_not() -> None:
    seed = replay(SCENARIO, 5, "seed")
    probs = errors(check_protocol(seed.messages))
    assert [p.code for p in probs] == ["orphan_tool_result"]
    for name in ("pair-safe", "token-budget", "low-water"):
        assert errors(check_protocol(replay(SCENARIO, 5, name).messages)) == []


def test_low_water_trims_in_one_go_and_then_grows() -> None:
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(30)]
    ctx = ConversationContext(max_context_messages=10, strategy="low-water")
    sizes = []
    for m in msgs:
        ctx.add_message(m)
        sizes.append(len(ctx))
    # grows to 10, then on the 11th add drops to 5 (then pair-safe: tail must start with assistant)
    assert max(sizes) == 10
    drops = [b for a, b in itertools.pairwise(sizes) if b < a]
    assert drops and all(d <= 5 for d in drops)
    # between drops it grows by one per add, so the prefix is stable for several turns
    assert sizes[10:16] == [5, 6, 7, 8, 9, 10] or sizes[10:16] == [4, 5, 6, 7, 8, 9]


def test_low_water_fraction_configurable() -> None:
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(11)]
    ctx = replay(msgs, 10, "low-water", low_water_fraction=0.8)
    assert len(ctx) <= 8 and len(ctx) >= 7


def test_token_budget_fits_budget_and_cap() -> None:
    msgs = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "w" * 400} for i in range(40)
    ]
    # each message ~ 100 + 4 tokens; system ~ 25
    ctx = replay(msgs, 30, "token-budget", max_context_tokens=600, system_prompt="s" * 100)
    assert ctx.estimated_tokens <= 600
    assert len(ctx) >= 2
    ctx2 = replay(msgs, 3, "token-budget", max_context_tokens=100_000)
    assert len(ctx2) <= 3


def test_token_budget_tiny_budget_keeps_first_and_newest_and_flags_it() -> None:
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": "w" * 400} for i in range(6)]
    ctx = replay(msgs, 30, "token-budget", max_context_tokens=10)
    assert ctx.window_ids == [0, 5]  # the newest message is never evicted for tokens
    assert [p.code for p in ctx.window_notes()] == ["over_token_budget"]


def test_system_prompt_change_applies_to_token_budget() -> None:
    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": "w" * 400} for i in range(6)]
    ctx = replay(msgs, 30, "token-budget", max_context_tokens=700)
    n = len(ctx)
    ctx.system_prompt = "s" * 1600
    assert len(ctx) < n
    assert ctx.estimated_tokens <= 700


def test_new_strategy_plugs_in_without_touching_context() -> None:
    class KeepFirstOnly:
        name = "first-only-test"
        description = "test"

        def truncate(self, window: Window) -> None:
            while window.tail:
                window.evict_oldest()

    register_strategy(KeepFirstOnly())
    try:
        ctx = replay(SCENARIO, 5, "first-only-test")
        assert ctx.window_ids == [0]
    finally:
        del STRATEGIES["first-only-test"]


def test_both_window_sources_call_one_rule_per_built_in_strategy() -> None:
    """A Window's truncation and the range replay run the same function for each built-in
    strategy (``tests/test_request_window_sources.py`` holds their windows equal per request)."""
    from ctxview.core.requests.range_form import _RULES, strategy_kind

    for name in ALL:
        kind = strategy_kind(name)
        assert kind is not None
        assert _RULES[kind] is type(STRATEGIES[name]).rule  # type: ignore[attr-defined]


def test_token_budget_rule_keeps_a_pinned_messages_tokens() -> None:
    """A pinned message the eviction front passes joins ``held``: it counts as leaving the tail
    but its tokens stay in the window, so the budget needs one more message evicted."""
    from ctxview.core.strategies import token_budget_evictions

    tok = [10, 10, 10, 10, 10]
    flags = [False] * 5
    args = (0, 5, False, 50, 0.5, 35)  # lo, hi, cut, max, fraction, budget
    # 5 tail messages (50 tokens) + 5 of system and first: two leave to reach 35, the budget
    assert token_budget_evictions(*args, flags, flags, None, 55, tok) == 2
    pinned = [False, True, False, False, False]
    assert token_budget_evictions(*args, flags, flags, pinned, 55, tok) == 3
