"""Saving in the ctxview session format (see docs/session-format.md): atomic, never a key."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxview.core.context import ConversationContext
from ctxview.core.transcript import Transcript
from ctxview.sessions.readers import SESSION_FORMAT, SESSION_VERSION

#: meta keys written as top-level record fields rather than inside "meta"
_RECORD_FIELDS = ("timestamp", "usage")


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
) -> dict[str, Any]:
    """The JSON document of a session (settings, full transcript, live window)."""
    records = []
    for rec in transcript.records:
        meta = {k: v for k, v in rec.meta.items() if k not in _RECORD_FIELDS}
        item: dict[str, Any] = {
            "id": rec.id,
            "message": rec.message,
            "timestamp": rec.meta.get("timestamp"),
            "usage": rec.meta.get("usage"),
            "added_at_step": rec.added_step,
            "evicted_at_step": rec.evicted_step,
        }
        if meta:
            item["meta"] = meta
        records.append(item)
    return {
        "format": SESSION_FORMAT,
        "version": SESSION_VERSION,
        "saved_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "title": title,
        "settings": {
            "model": model,
            "max_tokens": max_tokens,
            "max_context_messages": context.max_context_messages,
            "strategy": context.strategy,
            "max_context_tokens": context.max_context_tokens,
            "low_water_fraction": context.low_water_fraction,
            "system_prompt": system if system is not None else context.system_prompt,
            "tools": tools or [],
            "request_params": request_params or {},
        },
        "step": context.step,
        "transcript": records,
        "window": {"ids": context.window_ids, "cut": context._window.cut},
    }


def atomic_write(path: str | os.PathLike[str], data: bytes) -> None:
    """Write via a temp file in the same folder + fsync + rename: a crash leaves old or new."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        try:
            mode = os.stat(target).st_mode & 0o777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):
        dfd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def save_session(path: str | os.PathLike[str], document: dict[str, Any]) -> None:
    data = json.dumps(document, ensure_ascii=False, indent=1).encode("utf-8")
    key = os.environ.get("ANTHROPIC_API_KEY")
    if key and len(key) >= 8 and key.encode() in data:
        raise ValueError("refusing to save: the session text contains the ANTHROPIC_API_KEY value")
    atomic_write(path, data)
