"""The shape of a Messages API request body, written once: the next request of a session
(``export``, the chat, the app's ``x``), a repaired window, a request a log replays (``diff``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the file formats that are one request body each: one request, the body (Anthropic's
#: Messages API, OpenAI's Chat Completions and Responses API, Gemini's ``generateContent``)
REQUEST_BODY_FORMATS = frozenset(("request", "openai-chat", "openai-responses", "gemini"))


def request_body(
    *,
    model: Any,
    messages: list[Any],
    max_tokens: Any = None,
    system: Any = None,
    tools: list[Any] | None = None,
    params: Mapping[str, Any] | None = None,
    context_management: Any = None,
) -> dict[str, Any]:
    """``model``, ``max_tokens`` (when known), every other field of an opened request body
    (``params``: thinking, tool_choice, temperature, metadata, ... verbatim), ``system`` (when
    set), ``messages``, ``context_management`` (when given) and ``tools`` (when any): ready for
    curl or ``client.messages.create(**body)``. The order is the one ``export`` has always
    written, so bodies compare and diff line by line."""
    body: dict[str, Any] = {"model": model}
    if max_tokens is not None:
        body["max_tokens"] = max_tokens
    if params:
        body.update(params)
    if system:
        body["system"] = system
    body["messages"] = messages
    if context_management is not None:
        body["context_management"] = context_management
    if tools:
        body["tools"] = tools
    return body
