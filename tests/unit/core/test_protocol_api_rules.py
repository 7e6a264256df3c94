"""The protocol rules as the API enforces them today (docs/protocol.md).

Requests the real API answered with HTTP 200 must pass; each rule that rejects has the API's
wording.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview import ConversationContext, check_protocol
from ctxview.core.protocol import ProtocolChecker, errors
from ctxview.core.tokens import estimate_window
from tests.support.agentgen import agent_events
from tests.support.paths import FIXTURES

REQ = FIXTURES / "anthropic_requests"
ACCEPTED = sorted(REQ.glob("*.json"))


def tu(tid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "f", "input": {}}


def tr(tid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": "x"}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def user(*blocks: Any) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def asst(*blocks: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def codes(msgs: list[dict[str, Any]]) -> list[str]:
    return [p.code for p in errors(check_protocol(msgs))]


@pytest.mark.parametrize("path", ACCEPTED, ids=lambda p: p.name)
def test_every_accepted_request_passes(path: Path) -> None:
    body = json.loads(path.read_text())
    assert errors(check_protocol(body["messages"], body.get("system"))) == []


def test_consecutive_assistant_tool_uses_answered_together() -> None:
    body = json.loads((REQ / "pai_consecutive_assistant_tool_use_req.json").read_text())
    problems = check_protocol(body["messages"])
    assert [p.code for p in problems] == ["consecutive_same_role"]  # a warning, not an error
    # and the pattern itself, minimal
    assert codes([user(text("go")), asst(tu("a")), asst(tu("b")), user(tr("a"), tr("b"))]) == []


def test_first_message_assistant_is_a_warning() -> None:
    [p] = check_protocol([asst(text("hi")), user(text("go"))])
    assert p.code == "first_not_user" and p.severity == "warning"


def test_whitespace_text_beside_tool_use_is_accepted_but_not_elsewhere() -> None:
    assert codes([user(text("go")), asst(text(" "), tu("a")), user(tr("a"))]) == []
    assert codes([user(text("go")), asst(text(" ")), user(text("x"))]) == ["whitespace_text_block"]


def test_mid_conversation_system_messages() -> None:
    body = json.loads((REQ / "pai_mid_conversation_system_role_req.json").read_text())
    assert check_protocol(body["messages"]) == []
    sysmsg = {"role": "system", "content": [text("be brief")]}
    assert [p.code for p in check_protocol([sysmsg, asst(text("go"))])][:1] == [
        "system_message_first"
    ]
    placement = check_protocol([user(text("a")), asst(text("b")), sysmsg, user(text("c"))])
    assert [p.code for p in placement] == ["system_message_placement"] * 2
    assert all(p.severity == "warning" for p in placement)  # no recorded rejection: warnings
    # last, after a user turn: fine
    assert check_protocol([user(text("a")), sysmsg]) == []


def test_server_tool_results_pair_inside_the_assistant_message() -> None:
    body = json.loads((REQ / "pai_web_search_server_tool_req.json").read_text())
    assert errors(check_protocol(body["messages"])) == []
    stu = {"type": "server_tool_use", "id": "srv_1", "name": "advisor", "input": {}}
    res = {"type": "advisor_tool_result", "tool_use_id": "srv_1", "content": []}
    assert codes([user(text("q")), asst(stu, res, text("ok"))]) == []
    [p] = errors(check_protocol([user(text("q")), asst(res, stu, text("ok"))]))
    assert p.code == "orphan_server_tool_result"
    assert p.message == (
        "messages.1.content.0: unexpected `tool_use_id` found in `advisor_tool_result` blocks: "
        "srv_1. Each `advisor_tool_result` block must have a corresponding `server_tool_use` "
        "block before it."
    )
    mcp_use = {"type": "mcp_tool_use", "id": "m1", "name": "x", "server_name": "s", "input": {}}
    mcp_res = {"type": "mcp_tool_result", "tool_use_id": "m1", "content": []}
    assert codes([user(text("q")), asst(mcp_use, mcp_res)]) == []
    assert codes([user(text("q")), asst(stu, mcp_res)]) == ["orphan_server_tool_result"]


def test_thinking_rules() -> None:
    think = {"type": "thinking", "thinking": "hm", "signature": "s"}
    [p] = errors(check_protocol([user(text("q")), asst(text("a"), think, text("b"))]))
    assert p.code == "thinking_not_first" and p.message == (
        "messages.1.content.0: If an assistant message contains any thinking blocks, the first "
        "block must be thinking or redacted_thinking. Found text."
    )
    [p] = errors(check_protocol([user(text("q")), asst(think), user(text("x"))]))
    assert p.code == "final_thinking"
    assert p.message == "messages.1: The final block in an assistant message cannot be `thinking`."
    redacted = {"type": "redacted_thinking", "data": "abc"}
    assert codes([user(text("q")), asst(redacted, text("a"))]) == []


def test_duplicate_and_misplaced_tool_results() -> None:
    [p] = errors(check_protocol([user(text("q")), asst(tu("a")), user(tr("a"), tr("a"))]))
    assert p.code == "duplicate_tool_result" and p.block == 1
    # [tool_result, text, tool_result] used to pass
    probs = codes([user(text("q")), asst(tu("a"), tu("b")), user(tr("a"), text("t"), tr("b"))])
    assert probs == ["tool_result_not_first"]
    # results split over consecutive user messages (merged by the API) are fine
    assert codes([user(text("q")), asst(tu("a"), tu("b")), user(tr("a")), user(tr("b"))]) == []


def test_compaction_ignores_what_came_before() -> None:
    body = json.loads(
        (REQ / "anthropic_test_anthropic_compaction_round_trip_req1.json").read_text()
    )
    assert check_protocol(body["messages"]) == []
    huge = "x" * 200_000
    msgs = [
        user(text(huge)),
        asst(tu("gone")),  # unanswered, but before the compaction: ignored by the API
        user(text("q")),
        asst({"type": "compaction", "content": "summary"}, text("ok")),
        user(text("next")),
    ]
    assert codes(msgs) == []
    assert estimate_window(msgs) < 100  # the 50k-token message before the compaction is not billed
    ctx = ConversationContext(max_context_messages=50)
    for m in msgs:
        ctx.add_message(m)
    assert ctx.estimated_tokens == estimate_window(msgs)
    assert ctx.compacted_ids == [0, 1, 2]


def test_unknown_block_type_is_a_warning_naming_it() -> None:
    [p] = check_protocol([user({"type": "hologram", "data": 1})])
    assert p.severity == "warning" and "'hologram'" in p.message


@settings(max_examples=120, deadline=None)
@given(
    events=agent_events(live_changes=True),
    strategy=st.sampled_from(["seed", "pair-safe", "low-water"]),
    max_=st.integers(1, 10),
)
def test_memoised_checker_equals_check_protocol_on_agent_loops(
    events: list[tuple[str, Any]], strategy: str, max_: int
) -> None:
    checker = ProtocolChecker()
    ctx = ConversationContext(max_context_messages=max_, strategy=strategy)
    for kind, value in events:
        if kind == "msg":
            ctx.add_message(value)
        elif kind == "max":
            ctx.max_context_messages = value
        else:
            ctx.strategy = value
        assert checker.check(ctx.entries(), "sys") == check_protocol(ctx.messages, "sys")
