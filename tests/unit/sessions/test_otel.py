"""ctxview.sessions.otel: OTLP JSON GenAI traces as canonical messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.sessions import load_session
from ctxview.sessions.model import SessionError
from ctxview.sessions.otel import any_value, provider_of


def _attr(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if not isinstance(value, str):
        value = json.dumps(value)
    return {"key": key, "value": {"stringValue": value}}


def _span(
    trace: str, sid: str, start: int, attrs: dict[str, Any], events: Any = ()
) -> dict[str, Any]:
    return {
        "traceId": trace,
        "spanId": sid,
        "name": "chat",
        "startTimeUnixNano": str(start),
        "attributes": [_attr(k, v) for k, v in attrs.items()],
        "events": list(events),
    }


def _doc(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": list(spans)}]}]
    }


USER = {"role": "user", "parts": [{"type": "text", "content": "weather in Paris?"}]}
CALL = {
    "role": "assistant",
    "parts": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Paris"}}],
}
ANSWER = {
    "role": "tool",
    "parts": [{"type": "tool_call_response", "id": "c1", "response": "sunny"}],
}
DONE = {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}


def _two_calls(provider: str = "openai") -> list[dict[str, Any]]:
    return [
        _span(
            "t1",
            "a",
            1,
            {
                "gen_ai.provider.name": provider,
                "gen_ai.input.messages": [USER],
                "gen_ai.output.messages": [CALL],
                "gen_ai.system_instructions": [{"type": "text", "content": "be brief"}],
                "gen_ai.usage.input_tokens": 50,
                "gen_ai.usage.cache_read.input_tokens": 20,
                "gen_ai.usage.output_tokens": 7,
            },
        ),
        _span(
            "t1",
            "b",
            2,
            {
                "gen_ai.provider.name": provider,
                "gen_ai.input.messages": [USER, CALL, ANSWER],
                "gen_ai.output.messages": [DONE],
                "gen_ai.usage.input_tokens": 70,
            },
        ),
    ]


def _write(tmp_path: Path, data: Any, name: str = "trace.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_calls_of_a_trace_are_one_conversation_with_each_calls_usage(tmp_path: Path) -> None:
    session = load_session(_write(tmp_path, _doc(*_two_calls("gcp.gemini"))))
    assert (session.format, session.provider) == ("otel", "gemini")
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.messages[2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "sunny"}
    ]
    assert session.system == [{"type": "text", "text": "be brief"}]
    first = session.metas[1]["usage"]
    # the conventions count cached tokens inside input_tokens
    assert (first["input_tokens"], first["cache_read_input_tokens"], first["output_tokens"]) == (
        30,
        20,
        7,
    )
    assert session.metas[3]["usage"]["input_tokens"] == 70
    assert session.metas[0]["otel"] == USER


def test_a_jsonl_of_documents_is_read_line_by_line(tmp_path: Path) -> None:
    first, second = _two_calls("anthropic")
    text = json.dumps(_doc(first)) + "\n{broken\n" + json.dumps(_doc(second)) + "\n"
    session = load_session(_write(tmp_path, text, "traces.jsonl"))
    assert session.format == "otel" and session.provider == "anthropic"
    assert len(session.messages) == 4
    assert session.skipped_lines == [2]


def test_the_older_event_form_is_read(tmp_path: Path) -> None:
    events = [
        {"name": "gen_ai.system.message", "attributes": [_attr("content", "be brief")]},
        {"name": "gen_ai.user.message", "attributes": [_attr("content", "hi")]},
        {
            "name": "gen_ai.choice",
            "attributes": [
                _attr(
                    "message",
                    {
                        "role": "assistant",
                        "content": "hello",
                        "tool_calls": [
                            {
                                "id": "x",
                                "type": "function",
                                "function": {"name": "f", "arguments": '{"a": 1}'},
                            }
                        ],
                    },
                )
            ],
        },
    ]
    span = _span("t", "s", 1, {"gen_ai.system": "openai", "gen_ai.usage.input_tokens": 9}, events)
    session = load_session(_write(tmp_path, _doc(span)))
    assert session.system == [{"type": "text", "text": "be brief"}]
    assert session.messages[1]["content"] == [
        {"type": "text", "text": "hello"},
        {"type": "tool_use", "id": "x", "name": "f", "input": {"a": 1}},
    ]


def test_only_the_first_trace_is_opened_and_the_others_are_said(tmp_path: Path) -> None:
    a, b = _two_calls()
    b = {**b, "traceId": "t2"}
    session = load_session(_write(tmp_path, _doc(a, b)))
    assert len(session.messages) == 2
    assert "2 traces in the file: the first (t1) is shown" in session.warnings[-1]


def test_a_trace_without_content_says_what_is_missing(tmp_path: Path) -> None:
    span = _span("t", "s", 1, {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 3})
    with pytest.raises(SessionError, match="was content capture on"):
        load_session(_write(tmp_path, _doc(span)))


def test_a_messages_attribute_cut_short_is_named_with_its_span(tmp_path: Path) -> None:
    # a collector's attribute length limit cuts the JSON text: the trace holds messages, and
    # the error says which attribute could not be read, not that capture was off
    cut = json.dumps([USER])[:20]
    span = _span("t", "s9", 1, {"gen_ai.operation.name": "chat", "gen_ai.input.messages": cut})
    with pytest.raises(SessionError, match=r"span s9: gen_ai\.input\.messages is not a JSON array"):
        load_session(_write(tmp_path, _doc(span)))


@pytest.mark.parametrize(
    ("name", "provider"),
    [
        ("gcp.gemini", "gemini"),
        ("gcp.vertex_ai", "gemini"),
        ("azure.ai.openai", "openai"),
        ("anthropic", "anthropic"),
        (None, "anthropic"),
    ],
)
def test_the_provider_comes_from_the_conventions_names(name: str | None, provider: str) -> None:
    assert provider_of(name) == provider


def test_otlp_values_become_json() -> None:
    value = {
        "kvlistValue": {
            "values": [
                {"key": "n", "value": {"intValue": "3"}},
                {
                    "key": "xs",
                    "value": {
                        "arrayValue": {"values": [{"boolValue": True}, {"doubleValue": 1.5}]}
                    },
                },
            ]
        }
    }
    assert any_value(value) == {"n": 3, "xs": [True, 1.5]}


def test_a_resent_gemini_call_without_its_thought_signature_is_the_same_message() -> None:
    # the Google GenAI instrumentation's log records: each response's calls carry their
    # thoughtSignature, the next call's record of its input holds none; 5 calls, 10 messages
    from tests.support.paths import ACCEPTANCE

    session = load_session(ACCEPTANCE / "otel" / "genai_events_tool_loop_3_calls.json")
    assert len(session.messages) == 10
    assert [m["role"] for m in session.messages[:3]] == ["user", "assistant", "user"]
