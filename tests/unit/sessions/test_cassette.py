"""VCR cassettes open as recordings: what a reply that is not a whole JSON answer gives, and a
file that is not a cassette's YAML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ctxview.sessions import SessionError, load_session


def _interaction(messages: list[dict[str, object]], reply: object, code: int = 200) -> dict:
    body = {"model": "gpt-4o", "messages": messages}
    response: dict[str, object] = {"status": {"code": code, "message": "OK"}, "headers": {}}
    response["body"] = {"string": reply if isinstance(reply, str) else json.dumps(reply)}
    return {
        "request": {
            "method": "POST",
            "uri": "https://api.openai.com/v1/chat/completions",
            "body": json.dumps(body),
            "headers": {"authorization": ["Bearer sk-not-read"]},
        },
        "response": response,
    }


def _completion(text: str, prompt: int) -> dict[str, object]:
    return {
        "object": "chat.completion",
        "model": "gpt-4o-2024-08-06",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 3},
    }


def test_a_streamed_reply_is_its_turn_and_a_cut_or_failed_one_adds_none(tmp_path: Path) -> None:
    hi = {"role": "user", "content": "hi"}
    sse = (
        'data: {"object": "chat.completion.chunk", "model": "gpt-4o",'
        ' "choices": [{"index": 0, "delta": {"role": "assistant", "content": "y"}}]}\n\n'
        'data: {"object": "chat.completion.chunk", "model": "gpt-4o",'
        ' "choices": [{"index": 0, "delta": {"content": "o"}, "finish_reason": "stop"}]}\n\n'
        'data: {"object": "chat.completion.chunk", "model": "gpt-4o", "choices": [],'
        ' "usage": {"prompt_tokens": 21, "completion_tokens": 1}}\n\n'
        "data: [DONE]\n\n"
    )
    yo = {"role": "assistant", "content": "yo"}
    cut = sse.removesuffix("data: [DONE]\n\n")
    cassette = {
        "interactions": [
            _interaction([hi], _completion("hello", 9)),
            _interaction([hi, {"role": "assistant", "content": "hello"}, hi], sse),
            _interaction([hi, {"role": "assistant", "content": "hello"}, hi, yo, hi], cut),
            _interaction([hi], {"error": {"message": "busy"}}, code=500),
        ],
        "version": 1,
    }
    path = tmp_path / "chat.yaml"
    path.write_text(yaml.safe_dump(cassette))
    s = load_session(path)
    # the streamed reply is the turn it carries, as a JSON one is; the cut one adds none
    assert [m["content"] for m in s.messages] == ["hi", "hello", "hi", "yo", "hi"]
    assert s.metas[1]["usage"]["input_tokens"] == 9
    assert s.metas[3]["usage"]["input_tokens"] == 21 and "usage" not in s.metas[4]
    assert "sk-not-read" not in json.dumps(s.exchanges)


def test_gemini_and_messages_api_streams_are_their_turns_too(tmp_path: Path) -> None:
    hi = {"role": "user", "parts": [{"text": "hi"}]}
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "yo"}]}}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "!"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {"promptTokenCount": 4, "candidatesTokenCount": 2},
        },
    ]
    gemini = {
        "request": {
            "method": "POST",
            "uri": "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent",
            "body": json.dumps({"contents": [hi]}),
        },
        "response": {"status": {"code": 200}, "body": {"string": json.dumps(chunks)}},
    }
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "m",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [],
                    "usage": {"input_tokens": 7},
                },
            },
        ),
        (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        (
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "hey"},
            },
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    sse = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events)
    messages = {
        "request": {
            "method": "POST",
            "uri": "https://api.anthropic.com/v1/messages",
            "body": json.dumps(
                {
                    "model": "claude-sonnet-4-5",
                    "max_tokens": 9,
                    "messages": [{"role": "user", "content": "hi"}],
                }
            ),
        },
        "response": {"status": {"code": 200}, "body": {"string": sse}},
    }
    for name, interaction, turn, prompt in (("g", gemini, "yo!", 4), ("a", messages, "hey", 7)):
        path = tmp_path / f"{name}.yaml"
        path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
        s = load_session(path)
        assert len(s.messages) == 2 and s.messages[1]["role"] == "assistant"
        assert turn in json.dumps(s.messages[1]["content"])
        assert s.metas[1]["usage"]["input_tokens"] == prompt
        assert [x["streamed"] for x in s.exchanges] == [True]


def test_a_cassette_that_is_not_yaml_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("interactions:\n- request: {method: POST\n")
    with pytest.raises(SessionError, match=r"broken\.yaml: not a readable VCR cassette \(line "):
        load_session(path)
    path.write_text("interactions:\n  nope: 1\n")
    with pytest.raises(SessionError, match="without a list of interactions"):
        load_session(path)
