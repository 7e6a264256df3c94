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
from ctxview.core.clearing import DEFAULT_EDITING
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
) -> dict[str, Any]:
    """The JSON document of a session (settings, full transcript, live window).

    ``as_sent``: the recorded format when the session is shown as it was sent (reopened so)."""
    records = [
        record_item(rec.id, rec.message, rec.meta, rec.added_step, rec.evicted_step)
        for rec in transcript.records
    ]
    settings: dict[str, Any] = {
        "model": model,
        "max_tokens": max_tokens,
        "max_context_messages": context.max_context_messages,
        "strategy": context.strategy,
        "max_context_tokens": context.max_context_tokens,
        "low_water_fraction": context.low_water_fraction,
        "system_prompt": system if system is not None else context.system_prompt,
        "tools": tools or [],
        "request_params": request_params or {},
    }
    if as_sent:
        settings["as_sent"] = as_sent
    if context.edits_messages or context.context_editing != DEFAULT_EDITING:
        settings["context_editing"] = context.context_editing.to_dict()
    return document(
        title=title,
        settings=settings,
        step=context.step,
        records=records,
        window={
            "ids": context.window_ids,
            "cut": context._window.cut,
            **({"pinned": context.pinned_ids} if context.pinned_ids else {}),
        },
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
