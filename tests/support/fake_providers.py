"""Loopback fakes of OpenAI's and Gemini's APIs, served by :class:`~tests.support.fake_api.FakeAPI`.

What each API sends, as its documentation and SDKs describe it: Chat Completions (a
``chat.completion`` body; a stream of ``data:`` chunks with deltas and tool calls in pieces, usage
on the last chunk, ending ``data: [DONE]``), Responses (a ``response`` body; typed events from
``response.created`` to ``response.completed``) and Gemini (a ``GenerateContentResponse``; an
``alt=sse`` stream of whole responses separated by CRLF blank lines, the last with its
``finishReason``). Each builder can cut its stream before the end (the connection closes there).

``FakeAPI(default=reply_for)`` answers every request no test queued a reply for by its path.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from tests.support.fake_api import FakeAPI, Response

CHAT_USAGE = {
    "prompt_tokens": 1300,
    "completion_tokens": 12,
    "total_tokens": 1312,
    "prompt_tokens_details": {"cached_tokens": 1024},
}
RESPONSES_USAGE = {
    "input_tokens": 1300,
    "input_tokens_details": {"cached_tokens": 1152},
    "output_tokens": 12,
    "output_tokens_details": {"reasoning_tokens": 0},
    "total_tokens": 1312,
}
GEMINI_USAGE = {
    "promptTokenCount": 2100,
    "cachedContentTokenCount": 2048,
    "candidatesTokenCount": 12,
    "totalTokenCount": 2112,
}


def data(payload: Any, sep: str = "\n\n") -> bytes:
    return f"data: {payload if isinstance(payload, str) else json.dumps(payload)}{sep}".encode()


def event(name: str, payload: dict[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w + (" " if k < len(words) - 1 else "") for k, w in enumerate(words)]


# -- Chat Completions --------------------------------------------------------------------------
def chat_completion(
    text: str | None, *, call: tuple[str, dict[str, Any]] | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": None}
    if call is not None:
        message["tool_calls"] = [
            {
                "id": "call_fake_1",
                "type": "function",
                "function": {"name": call[0], "arguments": json.dumps(call[1])},
            }
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 1767225600,
        "model": "gpt-fake",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if call else "stop",
                "logprobs": None,
            }
        ],
        "usage": CHAT_USAGE,
    }


def chat_chunks(
    text: str, *, call: tuple[str, dict[str, Any]] | None = None, cut: bool = False
) -> list[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> bytes:
        return data(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1767225600,
                "model": "gpt-fake",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
        )

    out = [chunk({"role": "assistant", "content": ""})]
    out += [chunk({"content": w}) for w in _words(text)]
    if call is not None:
        args = json.dumps(call[1])
        out.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_fake_1",
                            "type": "function",
                            "function": {"name": call[0], "arguments": ""},
                        }
                    ]
                }
            )
        )
        half = len(args) // 2
        for piece in (args[:half], args[half:]):
            out.append(chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}))
    if cut:
        return out
    out.append(chunk({}, "tool_calls" if call else "stop"))
    out.append(
        data(
            {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 1767225600,
                "model": "gpt-fake",
                "choices": [],
                "usage": CHAT_USAGE,
            }
        )
    )
    out.append(data("[DONE]"))
    return out


# -- Responses ---------------------------------------------------------------------------------
def _response(status: str, output: list[dict[str, Any]], usage: Any) -> dict[str, Any]:
    return {
        "id": "resp_fake_1",
        "object": "response",
        "created_at": 1767225600,
        "status": status,
        "error": None,
        "incomplete_details": None,
        "instructions": None,
        "model": "gpt-fake",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": usage,
    }


def _message_item(text: str, status: str = "completed") -> dict[str, Any]:
    return {
        "id": "msg_fake_1",
        "type": "message",
        "status": status,
        "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _call_item(call: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": "fc_fake_1",
        "type": "function_call",
        "status": "completed",
        "call_id": "call_fake_1",
        "name": call[0],
        "arguments": json.dumps(call[1]),
    }


def response_object(text: str, *, call: tuple[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    output = [_message_item(text)] + ([_call_item(call)] if call else [])
    return _response("completed", output, RESPONSES_USAGE)


def responses_events(
    text: str, *, call: tuple[str, dict[str, Any]] | None = None, cut: bool = False
) -> list[bytes]:
    seq = iter(range(1000))

    def ev(name: str, **payload: Any) -> bytes:
        return event(name, {"type": name, "sequence_number": next(seq), **payload})

    out = [
        ev("response.created", response=_response("in_progress", [], None)),
        ev("response.in_progress", response=_response("in_progress", [], None)),
        ev(
            "response.output_item.added",
            output_index=0,
            item={**_message_item("", "in_progress"), "content": []},
        ),
        ev(
            "response.content_part.added",
            item_id="msg_fake_1",
            output_index=0,
            content_index=0,
            part={"type": "output_text", "text": "", "annotations": []},
        ),
    ]
    for w in _words(text):
        out.append(
            ev(
                "response.output_text.delta",
                item_id="msg_fake_1",
                output_index=0,
                content_index=0,
                delta=w,
                logprobs=[],
            )
        )
    if cut:
        return out
    out += [
        ev(
            "response.output_text.done",
            item_id="msg_fake_1",
            output_index=0,
            content_index=0,
            text=text,
            logprobs=[],
        ),
        ev(
            "response.content_part.done",
            item_id="msg_fake_1",
            output_index=0,
            content_index=0,
            part={"type": "output_text", "text": text, "annotations": []},
        ),
        ev("response.output_item.done", output_index=0, item=_message_item(text)),
    ]
    if call is not None:
        item = _call_item(call)
        out += [
            ev(
                "response.output_item.added",
                output_index=1,
                item={**item, "arguments": "", "status": "in_progress"},
            ),
            ev(
                "response.function_call_arguments.delta",
                item_id=item["id"],
                output_index=1,
                delta=item["arguments"],
            ),
            ev(
                "response.function_call_arguments.done",
                item_id=item["id"],
                output_index=1,
                arguments=item["arguments"],
            ),
            ev("response.output_item.done", output_index=1, item=item),
        ]
    out.append(ev("response.completed", response=response_object(text, call=call)))
    return out


# -- Gemini ------------------------------------------------------------------------------------
def gemini_response(
    parts: list[dict[str, Any]], *, finish: str | None = "STOP", usage: Any = None
) -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"parts": parts, "role": "model"}, "index": 0}
    if finish is not None:
        candidate["finishReason"] = finish
    return {
        "candidates": [candidate],
        "usageMetadata": usage or GEMINI_USAGE,
        "modelVersion": "gemini-fake",
        "responseId": "gem_fake_1",
    }


def gemini_chunks(
    text: str, *, call: tuple[str, dict[str, Any]] | None = None, cut: bool = False
) -> list[bytes]:
    words = _words(text)
    out = []
    for k, w in enumerate(words):
        last = k == len(words) - 1 and call is None and not cut
        chunk = gemini_response(
            [{"text": w}],
            finish="STOP" if last else None,
            usage={"promptTokenCount": 2100, "totalTokenCount": 2100 + k},
        )
        if last:
            chunk["usageMetadata"] = GEMINI_USAGE
        out.append(data(chunk, "\r\n\r\n"))
    if call is not None and not cut:
        out.append(
            data(
                gemini_response([{"functionCall": {"name": call[0], "args": call[1]}}]),
                "\r\n\r\n",
            )
        )
    return out


def gemini_error(code: int, status: str, message: str) -> Response:
    return Response(
        "error",
        status=code,
        body={"error": {"code": code, "message": message, "status": status}},
    )


def openai_error(status: int, etype: str, message: str, code: str | None = None) -> Response:
    return Response(
        "error",
        status=status,
        body={"error": {"message": message, "type": etype, "param": None, "code": code}},
    )


# -- the default reply by path -----------------------------------------------------------------
def reply_for(path: str, body: dict[str, Any]) -> Response:
    """Each endpoint's plain reply (streamed when the request asks for a stream)."""
    bare = path.split("?", 1)[0]
    if bare.endswith("/chat/completions"):
        if body.get("stream"):
            return Response("sse", chat_chunks("Hello from the fake chat API."))
        return Response("json", body=chat_completion("Hello from the fake chat API."))
    if bare.endswith("/responses"):
        if body.get("stream"):
            return Response("sse", responses_events("Hello from the fake responses API."))
        return Response("json", body=response_object("Hello from the fake responses API."))
    if bare.endswith(":streamGenerateContent"):
        if "alt=sse" in path:
            return Response("sse", gemini_chunks("Hello from the fake Gemini API."))
        chunks = [gemini_response([{"text": "Hello from the fake Gemini API."}])]
        return Response("raw", raw=json.dumps(chunks).encode())
    if bare.endswith(":generateContent"):
        return Response("json", body=gemini_response([{"text": "Hello from the fake Gemini API."}]))
    return Response("json", status=404, body={"error": {"message": f"no route {bare}"}})


def running() -> Iterator[FakeAPI]:
    api = FakeAPI(default=reply_for).start()
    try:
        yield api
    finally:
        api.stop()
