"""``ConversationContext.request``: the keyword arguments of ``client.messages.create``, built by
the one body builder, checked first on request."""

from __future__ import annotations

import pytest

from ctxview import ConversationContext, ProtocolError
from ctxview.core.body import request_body

TOOL = {
    "name": "read",
    "description": "read a file",
    "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    "cache_control": {"type": "ephemeral"},
}


def test_request_is_the_body_with_system_blocks_and_tools_kept() -> None:
    system = [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}]
    ctx = ConversationContext(system_prompt=system, tools=[TOOL])
    ctx.add_user_message("hi")
    got = ctx.request(
        model="claude-x", max_tokens=100, temperature=0.2, tool_choice={"type": "auto"}
    )
    assert got == request_body(
        model="claude-x",
        max_tokens=100,
        params={"temperature": 0.2, "tool_choice": {"type": "auto"}},
        system=system,
        messages=[{"role": "user", "content": "hi"}],
        tools=[TOOL],
    )
    assert list(got) == [
        "model",
        "max_tokens",
        "temperature",
        "tool_choice",
        "system",
        "messages",
        "tools",
    ]


def test_request_tools_given_replace_the_contexts() -> None:
    ctx = ConversationContext(tools=[TOOL])
    ctx.add_user_message("hi")
    other = {"name": "w", "input_schema": {"type": "object"}}
    assert ctx.request(model="m", max_tokens=1, tools=[other])["tools"] == [other]
    assert "tools" not in ConversationContext().request(model="m", max_tokens=1)


def test_request_check_raises_with_the_apis_words() -> None:
    ctx = ConversationContext(max_context_messages=3)  # the seed orphans the tool_result
    ctx.add_user_message("go")
    ctx.add_assistant_message([{"type": "tool_use", "id": "toolu_1", "name": "r", "input": {}}])
    ctx.add_tool_results([{"tool_use_id": "toolu_1", "content": "x"}])
    ctx.add_assistant_message("done")
    assert ctx.request(model="m", max_tokens=1)  # unchecked: built as it is
    with pytest.raises(ProtocolError) as err:
        ctx.request(model="m", max_tokens=1, check=True)
    assert err.value.problems
    assert all(p.severity == "error" for p in err.value.problems)
    assert "unexpected `tool_use_id` found in `tool_result` blocks" in str(err.value)


def test_request_check_passes_a_valid_window() -> None:
    ctx = ConversationContext(strategy="pair-safe", max_context_messages=3)
    ctx.add_user_message("go")
    ctx.add_assistant_message([{"type": "tool_use", "id": "toolu_1", "name": "r", "input": {}}])
    ctx.add_tool_results([{"tool_use_id": "toolu_1", "content": "x"}])
    ctx.add_assistant_message("done")
    body = ctx.request(model="m", max_tokens=1, check=True)
    assert body["messages"] == ctx.messages
