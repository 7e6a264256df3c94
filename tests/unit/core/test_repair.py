"""The repair engine: one minimal fix per error, never touching an uninvolved message."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview import ConversationContext, check_protocol
from ctxview.core.protocol import ProtocolChecker, errors
from ctxview.core.providers.openai import CHAT_RULES, RESPONSES_RULES
from ctxview.core.providers.openai_wire import canonical_of, wire_items
from ctxview.core.repair import INTERRUPTED, repair
from tests.support.agentgen import agent_events, text, thinking, tool_use
from tests.support.openaigen import chat_conversation, responses_conversation


def result(tid: str, content: str = "ok") -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": content}


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def asst(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def _dump(m: Any) -> str:
    return json.dumps(m, sort_keys=False, ensure_ascii=False)


def _assert_repaired(before: list[dict[str, Any]]) -> Any:
    snapshot = [_dump(m) for m in before]
    r = repair(before)
    assert [_dump(m) for m in before] == snapshot, "the input was modified"
    assert r.valid, r.unfixable
    assert errors(check_protocol(r.messages)) == []
    touched = r.touched
    origins = [o for o in r.origin if o is not None]
    assert origins == sorted(origins), "the order of the messages changed"
    for out, o in zip(r.messages, r.origin, strict=True):
        if o is not None and o not in touched:
            assert out is before[o] and _dump(out) == snapshot[o]
    for o in set(range(len(before))) - set(origins):
        assert o in touched, f"messages.{o} vanished without a fix naming it"
    return r


def test_orphaned_tool_result_is_dropped_with_its_message() -> None:
    msgs = [
        user(text("hi")),
        user(result("toolu_gone")),
        asst(text("done")),
        user(text("next")),
    ]
    r = _assert_repaired(msgs)
    assert [f.to_dict() for f in r.fixes] == [
        {
            "index": 1,
            "code": "orphan_tool_result",
            "action": "drop_message",
            "detail": "drop the orphaned tool_result for toolu_gone (messages.1.content.0); "
            "messages.1 had nothing else and is dropped",
        }
    ]
    assert r.messages == [msgs[0], msgs[2], msgs[3]]


def test_orphan_beside_text_drops_only_the_block() -> None:
    msgs = [user(text("hi")), asst(text("a")), user(result("toolu_x"), text("go on"))]
    r = _assert_repaired(msgs)
    assert r.messages[2] == user(text("go on"))
    assert [f.action for f in r.fixes] == ["drop_block"]


def test_two_orphans_name_their_own_blocks() -> None:
    msgs = [user(text("hi")), user(result("a"), result("b"), text("x"))]
    r = _assert_repaired(msgs)
    assert [(f.index, f.detail.split("(")[1]) for f in r.fixes] == [
        (1, "messages.1.content.1)"),  # applied from the last block up
        (1, "messages.1.content.0)"),
    ]


def test_unanswered_tool_use_gets_an_error_result_in_the_next_user_turn() -> None:
    msgs = [
        user(text("hi")),
        asst(text("calling"), tool_use("toolu_1"), tool_use("toolu_2")),
        user(result("toolu_2")),
        asst(text("done")),
    ]
    r = _assert_repaired(msgs)
    assert r.messages[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": INTERRUPTED,
        "is_error": True,
    }
    assert r.messages[2]["content"][1] == result("toolu_2")
    assert [(f.index, f.code, f.action) for f in r.fixes] == [
        (1, "unanswered_tool_use", "answer_tool_use")
    ]
    assert r.fixes[0].touched == (2,)


def test_unanswered_before_a_plain_user_message_and_string_content() -> None:
    msgs = [user(text("hi")), asst(tool_use("t1")), {"role": "user", "content": "what now?"}]
    r = _assert_repaired(msgs)
    assert r.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "t1", "content": INTERRUPTED, "is_error": True},
        {"type": "text", "text": "what now?"},
    ]


def test_unanswered_before_a_system_message_gets_a_new_user_message() -> None:
    msgs = [
        user(text("hi")),
        asst(tool_use("t1")),
        {"role": "system", "content": "be brief"},
        asst(text("ok")),
    ]
    r = repair(msgs)
    assert r.messages[2] == user(
        {"type": "tool_result", "tool_use_id": "t1", "content": INTERRUPTED, "is_error": True}
    )
    assert r.origin == [0, 1, None, 2, 3]
    assert r.messages[3] is msgs[2]
    assert "new user message" in r.fixes[0].detail
    assert errors(check_protocol(r.messages)) == []


def test_tool_results_move_to_the_front() -> None:
    msgs = [
        user(text("hi")),
        asst(tool_use("a"), tool_use("b")),
        user(result("a"), text("x"), result("b")),
    ]
    r = _assert_repaired(msgs)
    assert r.messages[2] == user(result("a"), result("b"), text("x"))
    assert [f.action for f in r.fixes] == ["move_tool_results"]


def test_tool_results_in_a_later_message_of_the_turn_move_to_its_front() -> None:
    msgs = [user(text("hi")), asst(tool_use("a")), user(text("wait")), user(result("a"))]
    r = _assert_repaired(msgs)
    assert r.messages[2:] == [user(result("a"), text("wait"))]
    assert set(r.fixes[0].touched) == {2, 3}


def test_duplicate_result_is_dropped() -> None:
    msgs = [user(text("hi")), asst(tool_use("a")), user(result("a"), result("a", "again"))]
    r = _assert_repaired(msgs)
    assert r.messages[2] == user(result("a"))
    assert r.fixes[0].code == "duplicate_tool_result"


def test_thinking_order_restored_and_final_thinking_dropped() -> None:
    msgs = [user(text("hi")), asst(text("answer"), thinking("t"))]
    r = _assert_repaired(msgs)
    assert r.messages[1]["content"][0]["type"] == "thinking"
    msgs2 = [user(text("hi")), asst(text("a")), user(text("b")), asst(thinking("only"))]
    r2 = _assert_repaired(msgs2)
    assert [f.code for f in r2.fixes] == ["final_thinking"]


def test_empty_and_whitespace_text_blocks_dropped() -> None:
    msgs = [user(text(""), text("q")), asst(text("  "), text("a")), user(text("ok"))]
    r = _assert_repaired(msgs)
    assert r.messages == [user(text("q")), asst(text("a")), user(text("ok"))]
    assert sorted(f.code for f in r.fixes) == ["empty_text_block", "whitespace_text_block"]


def test_empty_content_and_trailing_whitespace() -> None:
    msgs = [user(text("hi")), {"role": "user", "content": ""}, asst(text("pre "))]
    r = _assert_repaired(msgs)
    assert r.messages == [user(text("hi")), asst(text("pre"))]


def test_no_safe_fix_is_reported() -> None:
    msgs = [user(text("hi")), asst(text("a"), result("x"))]
    r = repair(msgs)
    assert not r.valid
    assert [p.code for p in r.unfixable] == ["tool_result_in_assistant"]
    assert r.messages[1] is msgs[1]
    only = repair([{"role": "user", "content": ""}])
    assert [p.code for p in only.unfixable] == ["empty_content"]


def test_empty_system_block_dropped() -> None:
    sys_blocks = [{"type": "text", "text": ""}, {"type": "text", "text": "be kind"}]
    r = repair([user(text("hi"))], sys_blocks)
    assert r.system == [{"type": "text", "text": "be kind"}]
    assert r.fixes[0].index == -1 and r.valid


# -- the property: any broken agent loop repairs to a valid window, touching only what is named --


def _history(events: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [m for kind, m in events if kind == "msg"]


def _seed_window(history: list[dict[str, Any]], max_: int) -> list[dict[str, Any]]:
    ctx = ConversationContext(max_context_messages=max_, strategy="seed")
    for m in history:
        ctx.add_message(m)
    return ctx.messages


@st.composite
def broken_loops(draw: Any) -> list[dict[str, Any]]:
    history = _history(draw(agent_events(live_changes=False)))
    if draw(st.booleans()):  # truncated by the seed strategy
        msgs = _seed_window(history, draw(st.integers(min_value=2, max_value=12)))
    else:  # a loop cut anywhere
        msgs = history[: draw(st.integers(min_value=1, max_value=len(history)))]
    msgs = json.loads(json.dumps(msgs))
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        i = draw(st.integers(min_value=0, max_value=len(msgs) - 1))
        m = msgs[i]
        op = draw(
            st.sampled_from(
                [
                    "drop_msg",
                    "drop_block",
                    "dup_block",
                    "swap",
                    "empty_text",
                    "ws_text",
                    "text_first",
                ]
            )
        )
        if op == "drop_msg" and len(msgs) > 1:
            del msgs[i]
            continue
        blocks = m["content"]
        if not isinstance(blocks, list) or not blocks:
            continue
        j = draw(st.integers(min_value=0, max_value=len(blocks) - 1))
        if op == "drop_block":
            del blocks[j]
        elif op == "dup_block":
            blocks.insert(j, json.loads(json.dumps(blocks[j])))
        elif op == "swap":
            k = draw(st.integers(min_value=0, max_value=len(blocks) - 1))
            blocks[j], blocks[k] = blocks[k], blocks[j]
        elif op == "text_first" and m["role"] == "user":
            blocks.insert(0, text("interjection"))
        elif op == "empty_text" and blocks[j].get("type") == "text":
            blocks[j]["text"] = ""
        elif op == "ws_text" and blocks[j].get("type") == "text":
            blocks[j]["text"] = " \n"
    return msgs


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(broken_loops())
def test_repair_makes_any_broken_loop_valid_touching_only_named_messages(
    msgs: list[dict[str, Any]],
) -> None:
    r = repair(msgs)
    if not r.valid:
        # only a lone message left that a drop would remove has no safe fix here (the input's
        # only message, or the last one standing after the others' fixes dropped them:
        # [orphaned tool_result], [empty assistant text])
        assert len(r.messages) == 1 and len(r.unfixable) == 1
        return
    _assert_repaired(msgs)
    # with a checker already memoised on the messages' ids (the TUI's), the same repair
    from ctxview.core.protocol import ProtocolChecker

    ids = [10 + 3 * k for k in range(len(msgs))]
    warm = ProtocolChecker()
    warm.check(list(zip(ids, msgs, strict=True)))
    same = repair(msgs, keys=ids, checker=warm)
    assert same.messages == r.messages and same.fixes == r.fixes
    # repairing a repaired window changes nothing
    again = repair(r.messages)
    assert again.fixes == [] and again.messages == r.messages
    # each fix names the message of its problem, and touches only its turn or the next one
    for f in r.fixes:
        assert f.index >= 0
        for t in f.touched:
            assert t >= f.index or msgs[t].get("role") == msgs[f.index].get("role")


def test_block_indices_after_a_compaction_block() -> None:
    """The checker counts the compaction message's blocks from the compaction block on."""
    msgs = [
        user(text("hi")),
        asst(text("old"), {"type": "compaction", "content": "summary"}, text(""), text("new")),
        user(text("next")),
    ]
    r = _assert_repaired(msgs)
    assert r.messages[1]["content"] == [
        text("old"),
        {"type": "compaction", "content": "summary"},
        text("new"),
    ]


def test_fix_summary_names_every_fixable_code() -> None:
    from ctxview.core.protocol import Problem
    from ctxview.core.repair import NO_SAFE_FIX, fix_summary

    p = Problem(3, "unanswered_tool_use", "error", "m", None, ("toolu_1",))
    assert fix_summary(p).startswith("answer toolu_1 with an error tool_result")
    assert fix_summary(p).endswith("at the front of the next user turn")
    # where results follow their call at once (Chat Completions), the answer goes there
    assert fix_summary(p, follow=True).endswith("right after its message")
    assert fix_summary(Problem(1, "orphan_tool_result", "error", "m", 0, ("x",))).startswith(
        "drop the orphaned tool_result for x (messages.1.content.0)"
    )
    assert fix_summary(Problem(1, "tool_use_in_user", "error", "m", 0)) == (
        "no safe fix: " + NO_SAFE_FIX["tool_use_in_user"]
    )
    assert fix_summary(Problem(1, "consecutive_same_role", "warning", "m")) == ""


def test_a_window_whose_fixes_would_drop_every_message_keeps_one_and_says_so() -> None:
    """[orphaned tool_result], [empty assistant text]: each fix drops a whole message, and the
    last would leave no messages at all: that one is reported as having no safe fix."""
    msgs = [
        user({"type": "tool_result", "tool_use_id": "toolu_0000", "content": "ok"}),
        asst(text("")),
    ]
    r = repair(msgs)
    assert not r.valid
    assert len(r.messages) == 1 and [p.code for p in r.unfixable] == ["orphan_tool_result"]
    assert [f.code for f in r.fixes] == ["empty_text_block"]


def test_a_tool_use_repeated_in_its_message_is_dropped() -> None:
    msgs = [
        user(text("go")),
        asst(tool_use("toolu_1"), tool_use("toolu_1")),
        user(result("toolu_1")),
    ]
    r = _assert_repaired(msgs)
    assert [(f.index, f.code, f.action) for f in r.fixes] == [
        (1, "duplicate_tool_use_id", "drop_block")
    ]
    assert r.messages[1]["content"] == [tool_use("toolu_1")]


def test_a_final_string_content_loses_its_trailing_whitespace() -> None:
    r = _assert_repaired([user(text("go")), {"role": "assistant", "content": "the answer is \n"}])
    assert [f.code for f in r.fixes] == ["final_assistant_trailing_whitespace"]
    assert r.messages[1]["content"] == [{"type": "text", "text": "the answer is"}]


def test_shape_errors_have_no_safe_fix() -> None:
    msgs: list[Any] = [
        user(text("go")),
        {"role": "assistant", "content": [tool_use("a")], "id": "x"},
    ]
    r = repair(msgs)
    assert not r.valid and [p.code for p in r.unfixable] == ["invalid_message_key"]


# -- repair under another API's rule set -------------------------------------------------------


@st.composite
def damaged_openai(draw: st.DrawFn, kind: str) -> list[dict[str, Any]]:
    """A valid Chat Completions conversation or Responses input with items deleted, moved or
    repeated, as canonical messages."""
    wire = draw(chat_conversation() if kind == "chat" else responses_conversation())
    for _ in range(draw(st.integers(1, 4))):
        if not wire:
            break
        i = draw(st.integers(0, len(wire) - 1))
        how = draw(st.sampled_from(["drop", "move", "repeat"]))
        item = wire.pop(i) if how != "repeat" else wire[i]
        if how != "drop":
            wire.insert(draw(st.integers(0, len(wire))), item)
    # a system prompt first, that no fix drops: a fix never leaves a request without messages
    return [{"role": "system", "content": "rules"}, *(canonical_of(kind, w) for w in wire)]


def _repaired_by(rules: Any, kind: str, messages: list[dict[str, Any]]) -> None:
    checker = ProtocolChecker(memo=False, rules=rules)
    once = repair(messages, checker=checker)
    # what is left is only what has no safe fix, and repairing again changes nothing
    # every error of these rule sets has a fix
    assert once.unfixable == []
    assert errors(checker.check(list(enumerate(once.messages)))) == []
    twice = repair(once.messages, checker=checker)
    assert twice.fixes == [] and twice.messages == once.messages
    # and the body written from it reads back as valid under the same rules
    wire = wire_items(kind, once.messages, [])
    back = [canonical_of(kind, w) for w in wire]
    assert errors(checker.check(list(enumerate(back)))) == []


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_openai("chat"))
def test_a_chat_completions_body_is_repaired_by_its_own_rules_in_one_go(
    messages: list[dict[str, Any]],
) -> None:
    _repaired_by(CHAT_RULES, "chat", messages)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(damaged_openai("responses"))
def test_a_responses_input_is_repaired_by_its_own_rules_in_one_go(
    messages: list[dict[str, Any]],
) -> None:
    _repaired_by(RESPONSES_RULES, "responses", messages)


def test_a_chat_call_is_answered_right_after_its_message() -> None:
    # Chat Completions wants the tool messages at once after the call: not after the next
    # assistant message, nor merged into the user message that follows
    call = {"type": "tool_use", "id": "call_1", "name": "get", "input": {}}
    msgs = [user(text("go")), asst(call), asst(text("hmm")), user(text("bye"))]
    r = repair(msgs, checker=ProtocolChecker(rules=CHAT_RULES))
    assert r.messages[2] == user(
        {"type": "tool_result", "tool_use_id": "call_1", "content": INTERRUPTED, "is_error": True}
    )
    assert r.messages[3] is msgs[2] and r.origin == [0, 1, None, 2, 3]
