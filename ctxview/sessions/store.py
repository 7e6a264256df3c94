"""Saving in the ctxview session format (see docs/session-format.md): atomic, never a key.

The atomic writer and the output checks are the core's (:mod:`ctxview.core.atomic`), named here
too for the commands and the app that save through this module."""

from __future__ import annotations

import os
from datetime import UTC, datetime
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
from ctxview.core.transcript import Transcript
from ctxview.sessions.readers import SESSION_FORMAT, SESSION_VERSION
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

#: meta keys written as top-level record fields rather than inside "meta"
_RECORD_FIELDS = ("timestamp", "usage")


def record_item(
    id: int,
    message: Any,
    meta: dict[str, Any],
    added_step: int | None,
    evicted_step: int | None,
) -> dict[str, Any]:
    """One transcript record of a saved session: timestamp and usage are fields of their own,
    the rest of the message's metadata goes under ``meta`` (left out when empty)."""
    rest = {k: v for k, v in meta.items() if k not in _RECORD_FIELDS}
    item: dict[str, Any] = {
        "id": id,
        "message": message,
        "timestamp": meta.get("timestamp"),
        "usage": meta.get("usage"),
        "added_at_step": added_step,
        "evicted_at_step": evicted_step,
    }
    if rest:
        item["meta"] = rest
    return item


def document(
    *,
    title: str | None,
    settings: dict[str, Any],
    step: int,
    records: list[dict[str, Any]],
    window: dict[str, Any],
    saved_at: str | None = None,
) -> dict[str, Any]:
    """The ctxview session document (docs/session-format.md) around its parts: every saved
    session, a live one or a proxy recording, has this shape. ``saved_at``: now, to the second,
    unless given."""
    return {
        "format": SESSION_FORMAT,
        "version": SESSION_VERSION,
        "saved_at": saved_at or datetime.now(UTC).isoformat(timespec="seconds"),
        "title": title,
        "settings": settings,
        "step": step,
        "transcript": records,
        "window": window,
    }


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


def save_session(
    path: str | os.PathLike[str], document: dict[str, Any], *, make_parents: bool = True
) -> None:
    data = json_text(document, indent=1).encode("utf-8")
    check_no_api_key(data)
    atomic_write(path, data, make_parents=make_parents)


def save_request(
    path: str | os.PathLike[str], body: dict[str, Any], *, make_parents: bool = False
) -> int:
    """Write a request body (``x``, ``export -o``): JSON with controls escaped, never the API
    key, atomically. Returns the bytes written."""
    data = (json_text(body, indent=2) + "\n").encode("utf-8")
    check_no_api_key(data, "the request body")
    atomic_write(path, data, make_parents=make_parents)
    return len(data)
