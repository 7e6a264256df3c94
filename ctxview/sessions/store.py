"""Saving in the ctxview session format (see docs/session-format.md): atomic, never a key.

The atomic writer and the output checks are the core's (:mod:`ctxview.core.atomic`), named here
too for the commands and the app that save through this module."""

from __future__ import annotations

import os
from typing import Any

from ctxview.core.atomic import (
    WriteRefused,
    atomic_write,
    check_no_api_key,
    check_output,
    same_file,
)
from ctxview.core.context import ConversationContext
from ctxview.core.session_file import document, record_item
from ctxview.core.session_file import write_session_file as save_session
from ctxview.core.transcript import Transcript
from ctxview.textfmt import json_text

__all__ = [
    "WriteRefused",
    "atomic_write",
    "check_no_api_key",
    "check_output",
    "document",
    "record_item",
    "same_file",
    "save_request",
    "save_session",
    "session_document",
]


def session_document(
    context: ConversationContext,
    transcript: Transcript,
    *,
    model: str | None = None,
    max_tokens: int | None = None,
    system: Any = None,
    tools: list[Any] | None = None,
    title: str | None = None,
    request_params: dict[str, Any] | None = None,
    as_sent: str | None = None,
    provider: str = "anthropic",
    wire_format: str | None = None,
    system_wire: list[Any] | None = None,
    route: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON document of a session (settings, full transcript, live window):
    :meth:`ConversationContext.session_document <ctxview.core.context.ConversationContext.session_document>`.

    ``as_sent``: the recorded format when the session is shown as it was sent (reopened so).
    ``provider``, ``wire_format``, ``system_wire``: a session of another API than Anthropic's
    (``ctxview.core.providers``), the body format it was read from and its system prompt's wire
    messages: it reopens under its provider's rules and exports its body. ``route``: where a
    Gemini session's requests went (``{"api", "streamed"}``), kept for its token estimate."""
    return context.session_document(
        transcript,
        model=model,
        max_tokens=max_tokens,
        system=system,
        tools=tools,
        title=title,
        request_params=request_params,
        as_sent=as_sent,
        provider=provider,
        wire_format=wire_format,
        system_wire=system_wire,
        route=route,
    )


def save_request(
    path: str | os.PathLike[str], body: dict[str, Any], *, make_parents: bool = False
) -> int:
    """Write a request body (``x``, ``export -o``): JSON with controls escaped, never the API
    key, atomically. Returns the bytes written."""
    data = (json_text(body, indent=2) + "\n").encode("utf-8")
    check_no_api_key(data, "the request body")
    atomic_write(path, data, make_parents=make_parents)
    return len(data)
