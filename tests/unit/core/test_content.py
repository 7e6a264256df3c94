"""What a caller hands a context: kept whole, refused at add time when it is not JSON, with the
path of the bad value; the SDK's objects taken as the SDK would send them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import Message, TextBlock, ToolUseBlock, Usage
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview import ConversationContext
from ctxview.core.content import ContentError


@pytest.mark.parametrize("bad", [None, 3, b"bytes", {"type": "text", "text": "a"}])
def test_user_content_must_be_a_string_or_a_block_list(bad: Any) -> None:
    ctx = ConversationContext()
    with pytest.raises(ValueError, match="content must be a string or a list of content blocks"):
        ctx.add_user_message(bad)
    assert ctx.next_id == 0


@pytest.mark.parametrize(
    "content, path",
    [
        ([object()], "content[0]"),
        ([{"type": "text", "text": "a", "x": {"when": object()}}], "content[0].x.when"),
        ([{"type": "text", "text": float("nan")}], "content[0].text"),
        ([{"type": "image", "source": {1: "a"}}], "content[0].source"),
        ([{"type": "text", "text": "a", "tags": {"a", "b"}}], "content[0].tags"),
    ],
)
def test_content_that_is_not_json_is_refused_with_its_path(content: Any, path: str) -> None:
    ctx = ConversationContext()
    with pytest.raises(ContentError) as err:
        ctx.add_user_message(content)
    assert err.value.path == path
    assert str(err.value).startswith(f"{path}: ")
    assert ctx.next_id == 0


def test_add_message_refuses_what_is_not_json() -> None:
    ctx = ConversationContext()
    with pytest.raises(ContentError, match=r"^message\.content: "):
        ctx.add_message({"role": "user", "content": object()})
    with pytest.raises(ContentError, match=r"^message\.content\[0\]\.input\.f: "):
        ctx.add_message(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {"f": print}}],
            }
        )
    assert ctx.next_id == 0


def test_every_key_of_a_block_and_a_message_is_kept() -> None:
    ctx = ConversationContext()
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
        "cache_control": {"type": "ephemeral", "ttl": "1h"},
        "x_custom": [1, 2.5, True, None],
    }
    ctx.add_user_message([{"type": "text", "text": "look"}, image])
    ctx.add_message({"role": "assistant", "content": "ok", "extra": {"k": 1}})
    assert ctx.messages[0]["content"][1] == image
    assert ctx.messages[1] == {"role": "assistant", "content": "ok", "extra": {"k": 1}}
    json.dumps(ctx.messages)


def test_tool_results_keep_cache_control_and_extra_keys() -> None:
    ctx = ConversationContext()
    ctx.add_tool_results(
        [
            {
                "type": "tool_result",
                "tool_use_id": "toolu_1",
                "content": [{"type": "text", "text": "42"}],
                "cache_control": {"type": "ephemeral"},
                "vendor_note": "kept",
            }
        ]
    )
    (block,) = ctx.messages[0]["content"]
    assert block == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": [{"type": "text", "text": "42"}],
        "is_error": False,
        "cache_control": {"type": "ephemeral"},
        "vendor_note": "kept",
    }


def test_tool_results_refuse_another_block_type() -> None:
    with pytest.raises(ValueError, match="not tool_result"):
        ConversationContext().add_tool_results([{"type": "text", "tool_use_id": "t"}])


def _response() -> Message:
    return Message(
        id="msg_01",
        type="message",
        role="assistant",
        model="claude-sonnet-4-5",
        content=[
            TextBlock(type="text", text="Let me look."),
            ToolUseBlock(type="tool_use", id="toolu_9", name="read", input={"path": "a.py"}),
        ],
        stop_reason="tool_use",
        stop_sequence=None,
        usage=Usage(input_tokens=120, output_tokens=30, cache_read_input_tokens=100),
    )


def test_add_response_takes_content_usage_id_and_stop_reason() -> None:
    ctx = ConversationContext()
    seen: list[Any] = []
    ctx.subscribe(seen.append)
    ctx.add_user_message("hi")
    mid = ctx.add_response(_response(), meta={"timestamp": "t"})
    assert ctx.messages[1] == {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "toolu_9", "name": "read", "input": {"path": "a.py"}},
        ],
    }
    meta = seen[-1].meta
    assert seen[-1].ids == (mid,)
    assert meta["id"] == "msg_01" and meta["stop_reason"] == "tool_use"
    assert meta["model"] == "claude-sonnet-4-5" and meta["timestamp"] == "t"
    assert meta["usage"]["input_tokens"] == 120 and meta["usage"]["cache_read_input_tokens"] == 100


def test_add_response_takes_the_dict_form_too() -> None:
    ctx = ConversationContext()
    ctx.add_response(_response().model_dump())
    assert ctx.messages[0]["content"][1]["id"] == "toolu_9"


def test_add_assistant_message_given_the_whole_response_says_add_response() -> None:
    ctx = ConversationContext()
    with pytest.raises(ValueError, match="use add_response"):
        ctx.add_assistant_message(_response())
    assert ctx.next_id == 0


def test_assistant_content_may_be_a_string() -> None:
    ctx = ConversationContext()
    ctx.add_assistant_message("plain")
    assert ctx.messages == [{"role": "assistant", "content": "plain"}]


def test_system_prompt_blocks_both_ways() -> None:
    blocks = [
        {"type": "text", "text": "You are terse."},
        {"type": "text", "text": "Big doc", "cache_control": {"type": "ephemeral"}},
    ]
    ctx = ConversationContext(system_prompt=blocks)
    assert ctx.system_prompt == blocks
    assert ctx.system_text == "You are terse.\n\nBig doc"
    ctx.system_prompt = "plain"
    assert ctx.system_prompt == "plain"
    ctx.system_prompt = blocks[1:]
    assert ctx.system_prompt == blocks[1:]
    assert ctx.request(model="m", max_tokens=10)["system"] == blocks[1:]


@pytest.mark.parametrize("bad", [3, [{"type": "image", "source": {}}], ["text"]])
def test_system_prompt_refuses_what_the_api_refuses(bad: Any) -> None:
    with pytest.raises(ValueError, match="system_prompt"):
        ConversationContext(system_prompt=bad)
    ctx = ConversationContext(system_prompt="kept")
    with pytest.raises(ValueError, match="system_prompt"):
        ctx.system_prompt = bad
    assert ctx.system_prompt == "kept"


_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)
_BLOCK = st.dictionaries(st.text(max_size=6), _JSON.filter(lambda v: v is not None), max_size=5)


@settings(max_examples=60, deadline=None)
@given(blocks=st.lists(_BLOCK, max_size=4), extra=st.dictionaries(st.text(max_size=6), _JSON))
def test_json_content_comes_back_exactly(
    blocks: list[dict[str, Any]], extra: dict[str, Any]
) -> None:
    ctx = ConversationContext()
    ctx.add_user_message(blocks)
    ctx.add_tool_results([{**extra, "type": "tool_result", "tool_use_id": "t", "content": blocks}])
    ctx.add_message({**extra, "role": "assistant", "content": blocks})
    user, results, assistant = ctx.messages
    assert user["content"] == blocks
    assert results["content"][0] == {
        **extra,
        "type": "tool_result",
        "tool_use_id": "t",
        "content": blocks,
        "is_error": bool(extra.get("is_error", False)),
    }
    assert assistant == {**extra, "role": "assistant", "content": blocks}
