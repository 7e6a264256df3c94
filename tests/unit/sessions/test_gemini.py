"""ctxview.sessions.gemini: generateContent bodies and responses as canonical messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.core.protocol import check_protocol, errors
from ctxview.core.providers.gemini import RULES
from ctxview.sessions import load_session
from ctxview.sessions.gemini import Pairing, contents_messages, part_block
from ctxview.sessions.readers import detect


def _blocks(contents: list[Any]) -> list[list[dict[str, Any]]]:
    messages, _ = contents_messages(contents, "contents")
    return [m["content"] for m in messages]


def _open(tmp_path: Path, data: Any) -> Any:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(data))
    return load_session(path)


def test_each_part_kind_becomes_one_block() -> None:
    parts = [
        {"text": "hi"},
        {"text": "let me think", "thought": True, "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "f", "args": {"a": 1}}},
        {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/x.pdf"}},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
        {"thoughtSignature": "only"},
    ]
    blocks = [part_block(p, Pairing(), f"0.{j}", []) for j, p in enumerate(parts)]
    assert [b["type"] for b in blocks] == [
        "text",
        "thinking",
        "tool_use",
        "image",
        "document",
        "server_tool_use",
        "code_execution_tool_result",
        "text",
    ]
    assert blocks[1]["signature"] == "c2ln"
    assert blocks[3]["source"] == {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    assert blocks[4]["source"]["url"] == "gs://b/x.pdf"
    assert blocks[7]["gemini_part"] == {"thoughtSignature": "only"}


def test_a_server_result_pairs_with_its_call_by_id_else_the_latest_one() -> None:
    [blocks] = _blocks(
        [
            {
                "role": "model",
                "parts": [
                    {"executableCode": {"id": "a", "code": "1"}},
                    {"executableCode": {"code": "2"}},
                    {"codeExecutionResult": {"id": "a", "output": "1"}},
                    {"codeExecutionResult": {"output": "2"}},
                ],
            }
        ]
    )
    assert blocks[2]["tool_use_id"] == "a"
    assert blocks[3]["tool_use_id"] == blocks[1]["id"] == "server#0.1"


def test_snake_case_fields_are_read_as_the_api_reads_them() -> None:
    [model, user] = _blocks(
        [
            {"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {}}}]},
        ]
    )
    assert model[0]["type"] == "tool_use"
    assert user[0] == {"type": "tool_result", "tool_use_id": model[0]["id"], "content": "{}"}


def test_responses_pair_with_calls_by_id_when_they_carry_one() -> None:
    [_model, user] = _blocks(
        [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"id": "c1", "name": "f", "args": {}}},
                    {"functionCall": {"id": "c2", "name": "f", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "c2", "name": "f", "response": {}}},
                    {"functionResponse": {"id": "c1", "name": "f", "response": {}}},
                ],
            },
        ]
    )
    assert [b["tool_use_id"] for b in user] == ["c2", "c1"]


def test_responses_without_ids_pair_by_order_and_name() -> None:
    [model, user] = _blocks(
        [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "a", "args": {}}},
                    {"functionCall": {"name": "b", "args": {}}},
                    {"functionCall": {"name": "a", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "b", "response": {"output": "B"}}},
                    {"functionResponse": {"name": "a", "response": {"output": "A1"}}},
                    {"functionResponse": {"name": "a", "response": {"output": "A2"}}},
                ],
            },
        ]
    )
    ids = [b["id"] for b in model]
    assert ids == ["a#0.0", "b#0.1", "a#0.2"]
    assert [b["tool_use_id"] for b in user] == ["b#0.1", "a#0.0", "a#0.2"]
    assert [b["content"] for b in user] == ["B", "A1", "A2"]


def test_a_response_to_no_call_is_reported_in_gemini_words() -> None:
    messages, _ = contents_messages(
        [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ],
        "contents",
    )
    [problem] = errors(check_protocol(messages, None, RULES))
    assert problem.code == "orphan_tool_result"
    assert problem.message.startswith(
        "Please ensure that function response turn comes immediately after a function call turn."
    )


def test_a_call_left_unanswered_is_reported_in_gemini_words() -> None:
    messages, _ = contents_messages(
        [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"text": "never mind"}]},
        ],
        "contents",
    )
    [problem] = errors(check_protocol(messages, None, RULES))
    assert "number of function response parts is equal" in problem.message


def test_turns_gemini_accepts_are_no_errors() -> None:
    # consecutive user turns, empty text parts, a history that starts with a model turn:
    # recorded requests the API answered with 200 hold each
    messages, _ = contents_messages(
        [
            {"role": "model", "parts": [{"text": "hello"}]},
            {"role": "user", "parts": [{"text": ""}]},
            {"role": "user", "parts": [{"text": "again"}]},
        ],
        "contents",
    )
    assert errors(check_protocol(messages, None, RULES)) == []


def test_a_request_body_opens_as_gemini(tmp_path: Path) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]},
        "generationConfig": {"temperature": 0},
    }
    session = _open(tmp_path, body)
    assert (session.format, session.provider) == ("gemini", "gemini")
    assert session.system == [{"type": "text", "text": "be brief"}]
    assert session.metas[0]["wire"] == body["contents"][0]
    assert session.request_params["generationConfig"] == {"temperature": 0}


def test_a_streamed_response_is_one_message_with_the_last_usage(tmp_path: Path) -> None:
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Par"}]}}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "is"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {
                "promptTokenCount": 100,
                "cachedContentTokenCount": 60,
                "candidatesTokenCount": 2,
                "thoughtsTokenCount": 5,
            },
            "modelVersion": "gemini-2.5-flash",
        },
    ]
    session = _open(tmp_path, chunks)
    assert session.messages == [
        {"role": "assistant", "content": [{"type": "text", "text": "Paris"}]}
    ]
    usage = session.metas[0]["usage"]
    assert (
        usage["input_tokens"],
        usage["cache_read_input_tokens"],
        usage["cache_creation_input_tokens"],
        usage["output_tokens"],
    ) == (40, 60, 0, 7)
    assert session.model == "gemini-2.5-flash"


@pytest.mark.parametrize(
    "data",
    [
        {"contents": []},
        {"candidates": []},
        [{"candidates": [], "usageMetadata": {"promptTokenCount": 1}}],
    ],
)
def test_detect_knows_gemini_bodies(data: Any) -> None:
    assert detect("x.json", "", data) == "gemini"


def test_a_bad_content_is_named_by_its_path(tmp_path: Path) -> None:
    from ctxview.sessions.model import SessionError

    with pytest.raises(SessionError, match=r"contents\[1\]\.parts: expected an array"):
        _open(tmp_path, {"contents": [{"parts": []}, {"parts": "x"}]})
