"""Repair plans that insert a message (an answer to a tool call nothing answers), under each
API's rules: where the new message goes, what the preview and the price say, and the property
that a plan is repair()'s result, not a copy of its rule."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from ctxview.core.edits import END, applied, edit_cost, preview, repair_plan
from ctxview.core.protocol import ProtocolChecker, RuleSet, errors
from ctxview.core.providers.openai import CHAT_RULES, RESPONSES_RULES
from ctxview.core.repair import INTERRUPTED, NO_SAFE_FIX, repair
from tests.unit.core.test_repair import broken_loops, damaged_openai

CALL = {"type": "tool_use", "id": "call_1", "name": "read_file", "input": {"path": "a.txt"}}
ANSWER = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": "call_1", "content": INTERRUPTED, "is_error": True}
    ],
}


def _entries(*messages: dict[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    # ids as a window holds them after evictions: increasing, not positions
    return [(10 + 3 * k, m) for k, m in enumerate(messages)]


def _checker(rules: RuleSet | None) -> ProtocolChecker:
    return (
        ProtocolChecker(memo=False) if rules is None else ProtocolChecker(memo=False, rules=rules)
    )


def test_a_chat_call_followed_by_a_user_message_gets_its_answer_before_it() -> None:
    entries = _entries(
        {"role": "user", "content": "what is in a.txt?"},
        {"role": "assistant", "content": [CALL]},
        {"role": "user", "content": "never mind"},
        {"role": "assistant", "content": "ok"},
    )
    chk = _checker(CHAT_RULES)
    plan = repair_plan(entries, only=13, checker=chk)
    assert plan.reason == "" and not plan.empty
    assert plan.changes == {} and plan.inserts == {16: [ANSWER]}
    assert [f.code for f in plan.fixes] == ["unanswered_tool_use"]
    pv = preview(entries, plan, checker=chk)
    assert pv.errors_before == 1 and pv.errors_after == []
    assert pv.tokens_after > pv.tokens_before
    assert [m for _, m in applied(entries, plan)] == repair(
        [m for _, m in entries], checker=chk
    ).messages


def test_an_anthropic_call_before_a_system_turn_and_a_responses_call_before_one() -> None:
    for rules in (None, RESPONSES_RULES):
        entries = _entries(
            {"role": "user", "content": "read a.txt"},
            {"role": "assistant", "content": [CALL]},
            {"role": "system", "content": "the tool was interrupted"},
            {"role": "user", "content": "ok"},
        )
        plan = repair_plan(entries, checker=_checker(rules))
        assert plan.inserts == {16: [ANSWER]}, rules
        assert preview(entries, plan, checker=_checker(rules)).errors_after == []


def test_new_messages_and_dropped_ones_in_one_plan_keep_their_places() -> None:
    """A drop after an insert point: the applied window drops the right message."""
    entries = _entries(
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [CALL]},
        {"role": "user", "content": "stop"},
        # a tool message no call asks for: dropped
        {"role": "user", "content": [{**ANSWER["content"][0], "tool_use_id": "call_9"}]},
        {"role": "user", "content": "again"},
    )
    chk = _checker(CHAT_RULES)
    plan = repair_plan(entries, checker=chk)
    assert plan.inserts == {16: [ANSWER]}
    assert plan.changes == {19: None}
    after = [m for _, m in applied(entries, plan)]
    assert after == repair([m for _, m in entries], checker=chk).messages
    assert [m["content"] for m in after][2:] == [ANSWER["content"], "stop", "again"]


def test_the_price_of_an_insert_breaks_the_cache_where_it_goes() -> None:
    words = "word " * 1500  # above the minimum cacheable length
    entries = _entries(
        {"role": "user", "content": words},
        {"role": "assistant", "content": [CALL]},
        {"role": "user", "content": words},
    )
    plan = repair_plan(entries, checker=_checker(CHAT_RULES))
    price = edit_cost(entries, plan, static_tokens=0, model="gpt-4o")
    assert price.position == 2  # the new message goes before window position 2
    assert price.cache_break is not None and price.input_after > price.input_before
    assert price.read_after < price.read_before


def test_an_answer_after_the_window_is_keyed_as_the_end() -> None:
    """repair() puts a message after the last only when its turn has no next one; the plan
    keeps it (END), and applying it appends it."""
    entries = _entries({"role": "user", "content": "go"})
    from ctxview.core.edits import EditPlan

    plan = EditPlan("x", inserts={END: [ANSWER]})
    assert [m for _, m in applied(entries, plan)][-1] == ANSWER


def _plan_is_the_repair(rules: RuleSet | None, msgs: list[dict[str, Any]]) -> None:
    entries = _entries(*msgs)
    chk = _checker(rules)
    plan = repair_plan(entries, checker=chk)
    result = repair(msgs, checker=_checker(rules))
    if plan.empty:
        assert result.fixes == []
        return
    after = applied(entries, plan)
    # the plan is repair()'s result: the same messages in the same order
    assert [m for _, m in after] == result.messages
    # and the window it leaves has no error a fix is known for: only what has no safe fix
    left = errors(_checker(rules).check(after))
    assert all(p.code in NO_SAFE_FIX or len(after) == 1 for p in left), left
    assert preview(entries, plan, checker=chk).errors_after == left


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken_loops())
def test_a_plan_applied_is_the_repaired_window_under_the_messages_api(
    msgs: list[dict[str, Any]],
) -> None:
    _plan_is_the_repair(None, msgs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_openai("chat"))
def test_a_plan_applied_is_the_repaired_window_under_chat_completions(
    msgs: list[dict[str, Any]],
) -> None:
    _plan_is_the_repair(CHAT_RULES, msgs)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_openai("responses"))
def test_a_plan_applied_is_the_repaired_window_under_the_responses_api(
    msgs: list[dict[str, Any]],
) -> None:
    _plan_is_the_repair(RESPONSES_RULES, msgs)
