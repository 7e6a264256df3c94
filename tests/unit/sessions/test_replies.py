"""How a reply of each provider's endpoints is read: streams assembled as far as they got, JSON
bodies checked, errors in each provider's shape."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.sessions.proxylog import ENDPOINT_PROVIDER, RequestRecord, summarise
from ctxview.sessions.replies import _STREAMS as _ENDPOINTS
from ctxview.sessions.replies import api_error, json_reply, stream_reply
from tests.support.fake_providers import (
    chat_chunks,
    data,
    event,
    gemini_chunks,
    gemini_response,
    responses_events,
)
from tests.support.fake_providers import (
    data as data_line,
)


def test_chat_stream_joins_tool_call_pieces_per_index() -> None:
    def chunk(delta: dict[str, object], finish: str | None = None) -> bytes:
        return data({"id": "c", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    calls = [
        {
            "index": 0,
            "id": "call_a",
            "type": "function",
            "function": {"name": "f", "arguments": ""},
        },
        {
            "index": 1,
            "id": "call_b",
            "type": "function",
            "function": {"name": "g", "arguments": ""},
        },
    ]
    stream = b"".join(
        [
            chunk({"role": "assistant", "content": None, "tool_calls": calls}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": '{"y":'}}]}),
            chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"x": 1}'}}]}),
            chunk({"tool_calls": [{"index": 1, "function": {"arguments": " 2}"}}]}),
            chunk({}, "tool_calls"),
            data("[DONE]"),
        ]
    )
    got, end = stream_reply("chat_completions", stream)
    assert got.complete and end == "[DONE]" and got.stop_reason == "tool_calls"
    message = got.message["choices"][0]["message"]  # type: ignore[index]
    assert message["content"] is None
    assert [(c["id"], json.loads(c["function"]["arguments"])) for c in message["tool_calls"]] == [
        ("call_a", {"x": 1}),
        ("call_b", {"y": 2}),
    ]


def test_chat_stream_error_chunk_and_missing_done() -> None:
    got, _ = stream_reply("chat_completions", b"".join(chat_chunks("a b", cut=True)))
    assert not got.complete and got.message is not None and got.error is None
    assert got.message["choices"][0]["message"]["content"] == "a b"
    err = data({"error": {"message": "server overloaded", "type": "server_error", "code": None}})
    got, _ = stream_reply("chat_completions", b"".join(chat_chunks("a", cut=True)) + err)
    assert got.error == {"type": "server_error", "message": "server overloaded"}


def test_responses_stream_cut_keeps_the_items_that_arrived() -> None:
    got, end = stream_reply("responses", b"".join(responses_events("half a reply", cut=True)))
    assert not got.complete and end == "response.completed" and got.stop_reason is None
    (item,) = got.message["output"]  # type: ignore[index]
    assert item["content"][0]["text"] == "half a reply"


def test_responses_failed_and_incomplete() -> None:
    failed = {"id": "r", "object": "response", "status": "failed", "output": []}
    failed["error"] = {"code": "server_error", "message": "boom"}
    got, _ = stream_reply("responses", event("response.failed", {"response": failed}))
    assert not got.complete and got.error == {"type": "server_error", "message": "boom"}
    cut = {"id": "r", "object": "response", "status": "incomplete", "output": []}
    cut["incomplete_details"] = {"reason": "max_output_tokens"}
    got, _ = stream_reply("responses", event("response.incomplete", {"response": cut}))
    assert got.complete and got.stop_reason == "max_output_tokens"


def test_gemini_stream_joins_text_but_keeps_thoughts_and_calls_apart() -> None:
    chunks = [
        gemini_response([{"text": "let me ", "thought": True}], finish=None),
        gemini_response([{"text": "think", "thought": True}], finish=None),
        gemini_response([{"text": "Hello "}], finish=None),
        gemini_response([{"text": "there", "thoughtSignature": "c2ln"}], finish=None),
        gemini_response([{"functionCall": {"name": "f", "args": {}}}], finish="STOP"),
    ]
    got, _ = stream_reply("stream_generate_content", b"".join(data(c, "\r\n\r\n") for c in chunks))
    assert got.complete and got.stop_reason == "STOP"
    assert got.message["candidates"][0]["content"]["parts"] == [  # type: ignore[index]
        {"text": "let me think", "thought": True},
        {"text": "Hello there", "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "f", "args": {}}},
    ]
    got, end = stream_reply("stream_generate_content", b"".join(gemini_chunks("a b", cut=True)))
    assert not got.complete and end == "a finishReason"


def test_json_bodies_per_endpoint() -> None:
    got, problem = json_reply("stream_generate_content", [gemini_response([{"text": "x"}])], 9)
    assert problem is None and got.stop_reason == "STOP"
    _, problem = json_reply("chat_completions", {"object": "list"}, 9)
    assert problem == "the response is JSON but not a chat completion"
    _, problem = json_reply("generate_content", {"foo": 1}, 9)
    assert problem == "the response is JSON but not a GenerateContentResponse"
    _, problem = json_reply("responses", None, 5)
    assert problem == "the response body is not JSON (5 bytes)"


def test_api_error_shapes() -> None:
    anthropic = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    assert api_error("messages", anthropic) == {"type": "overloaded_error", "message": "Overloaded"}
    oai = {"error": {"message": "bad", "type": None, "param": None, "code": "invalid_value"}}
    assert api_error("responses", oai) == {"type": "invalid_value", "message": "bad"}
    google = [{"error": {"code": 429, "message": "quota", "status": "RESOURCE_EXHAUSTED"}}]
    assert api_error("stream_generate_content", google) == {
        "type": "RESOURCE_EXHAUSTED",
        "message": "quota",
    }


# -- any upstream bytes: assembled without raising ----------------------------------------------
_KEYS = [
    "type", "choices", "delta", "index", "tool_calls", "function", "content", "usage", "error",
    "response", "output", "output_index", "content_index", "item", "part", "candidates", "parts",
    "finishReason", "promptFeedback", "usageMetadata", "message", "arguments", "text", "id",
]  # fmt: skip
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(_KEYS), inner, max_size=4)
    ),
    max_leaves=12,
)
_event_types = st.sampled_from(
    [
        "response.created", "response.output_item.added", "response.content_part.added",
        "response.output_text.delta", "response.function_call_arguments.delta",
        "response.completed", "response.failed", "error", "message_start", "content_block_delta",
    ]
)  # fmt: skip


_payload = st.dictionaries(st.sampled_from(_KEYS), _json, min_size=1, max_size=6)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(_event_types, _payload | _json), max_size=6))
def test_any_stream_is_assembled_without_raising(events: list[Any]) -> None:
    """Whatever an upstream sends (any JSON in any event), each endpoint's assembler, the JSON
    check, the error reader and the summary take it without raising."""
    stream = b"".join(
        event(name, {"type": name, **payload}) if isinstance(payload, dict) else data_line(payload)
        for name, payload in events
    )
    for endpoint in sorted(_ENDPOINTS):
        stream_reply(endpoint, stream)
        for _, payload in events:
            json_reply(endpoint, payload, 1)
            api_error(endpoint, payload)
            rec = RequestRecord(0, "2026-01-01T00:00:00.000+00:00", "POST", "/v1/x", endpoint)
            rec.provider = ENDPOINT_PROVIDER.get(endpoint, "anthropic")
            rec.response, rec.request, rec.complete = payload, payload, True
            summarise(rec)


def test_a_chunk_nested_too_deep_is_kept_as_text() -> None:
    deep = b"data: " + b"[" * 100_000 + b"]" * 100_000 + b"\n\n"
    for endpoint in sorted(_ENDPOINTS):
        got, _ = stream_reply(endpoint, deep + data("[DONE]"))
        assert not got.error
