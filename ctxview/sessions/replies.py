"""What came back for a request, per endpoint: a stream assembled, or a JSON body checked.

One place says, for every endpoint the proxy knows, how its reply is read: which assembler a
stream goes through and what ends a whole one (Anthropic's ``message_stop``, Chat Completions'
``[DONE]``, Responses' ``response.completed``, Gemini's ``finishReason``), what a whole JSON
answer looks like, and where its usage and stop reason are. Usage is kept as the API wrote it
(each provider counts differently; the readers make sense of it).

Headless (no Textual, no aiohttp).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxview.sessions.proxy_record import COUNT_ENDPOINTS, counted_tokens
from ctxview.sessions.sse import Assembled, assemble
from ctxview.sessions.sse_gemini import assemble_chunks, assemble_gemini, gemini_error
from ctxview.sessions.sse_openai import (
    assemble_chat,
    assemble_responses,
    openai_error,
    responses_stop,
)

#: each streaming endpoint: its assembler, and what a whole stream ends with (``other``: an
#: SSE response of any other path is read as the Messages API's)
_STREAMS: dict[str, tuple[Callable[[bytes], Assembled], str]] = {
    "messages": (assemble, "message_stop"),
    "chat_completions": (assemble_chat, "[DONE]"),
    "responses": (assemble_responses, "response.completed"),
    "generate_content": (assemble_gemini, "a finishReason"),
    "stream_generate_content": (assemble_gemini, "a finishReason"),
}


def stream_reply(endpoint: str, data: bytes) -> tuple[Assembled, str]:
    """(what a stream of this endpoint built, the event a whole one ends with)."""
    assembler, end = _STREAMS.get(endpoint, _STREAMS["messages"])
    return assembler(data), end


def api_error(endpoint: str, body: Any) -> dict[str, Any] | None:
    """``{type, message}`` of an error body (each provider's shape), or None."""
    if not isinstance(body, dict):
        if isinstance(body, list) and body and isinstance(body[0], dict):
            return api_error(endpoint, body[0])  # Gemini's JSON stream: an array of one error
        return None
    err = body.get("error")
    if not isinstance(err, dict):
        return None
    if "status" in err or _int(err.get("code")):
        return gemini_error(err)
    return openai_error(err)  # OpenAI's and Anthropic's: {type, message, …}


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def json_reply(endpoint: str, parsed: Any, size: int) -> tuple[Assembled, str | None]:
    """(the usage and stop reason of a 2xx JSON body, why it is not a whole answer of its
    endpoint or None). ``message`` is the reply to record (a Gemini JSON stream's chunks joined
    into one response; else the body itself)."""
    got = Assembled(message=parsed if isinstance(parsed, dict) else None)
    if parsed is None:
        return got, f"the response body is not JSON ({size} bytes)"
    d = parsed if isinstance(parsed, dict) else {}
    problem: str | None = None
    if endpoint == "messages":
        if d.get("type") == "message" and isinstance(d.get("content"), list):
            got.usage = dict(d["usage"]) if isinstance(d.get("usage"), dict) else {}
            got.stop_reason = (
                d.get("stop_reason") if isinstance(d.get("stop_reason"), str) else None
            )
        else:
            problem = "the response is JSON but not a message"
    elif endpoint in COUNT_ENDPOINTS:
        if counted_tokens(endpoint, d) is None:
            problem = "the response is JSON but not a token count"
    elif endpoint == "chat_completions":
        if d.get("object") == "chat.completion" and isinstance(d.get("choices"), list):
            got.usage = dict(d["usage"]) if isinstance(d.get("usage"), dict) else {}
            first = d["choices"][0] if d["choices"] else None
            reason = first.get("finish_reason") if isinstance(first, dict) else None
            got.stop_reason = reason if isinstance(reason, str) else None
        else:
            problem = "the response is JSON but not a chat completion"
    elif endpoint == "responses":
        if d.get("object") == "response" and isinstance(d.get("output"), list):
            got.usage = dict(d["usage"]) if isinstance(d.get("usage"), dict) else {}
            got.stop_reason = responses_stop(d)
            if d.get("status") == "failed":
                problem = "the response failed"
        else:
            problem = "the response is JSON but not a response"
    elif endpoint in ("generate_content", "stream_generate_content"):
        if isinstance(parsed, list):  # streamGenerateContent without alt=sse: all its chunks
            joined = assemble_chunks(parsed)
            return joined, None if joined.complete else "stream ended before a finishReason"
        if "candidates" in d or "promptFeedback" in d:
            joined = assemble_chunks([d])
            joined.message = d
            return joined, None
        problem = "the response is JSON but not a GenerateContentResponse"
    return got, problem
