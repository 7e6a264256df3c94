"""Codex CLI sessions for ``ctxview sessions``: the rollouts under ``$CODEX_HOME/sessions``
(default ``~/.codex/sessions``), ``YYYY/MM/DD/rollout-*.jsonl``.

A rollout is JSON Lines, ``{timestamp, type, payload}`` each: ``session_meta`` first (``id``,
``cwd``; its instructions can make it tens of kB long), then ``turn_context``, ``response_item``
(one Responses API item each: a message, a function call or its output, reasoning),
``event_msg`` (``user_message`` holds what the user typed; ``token_count`` the usage) and
``compacted`` lines. Summarised from its head and tail, as Claude Code's transcripts are
(:mod:`ctxview.live.sessions_list`): the project (``cwd``), the first prompt the user typed,
the last activity (the newest ``timestamp``) and the size; the number of messages is counted
over the whole file, streamed (:func:`count_messages`), as the reader counts them: a message per
``response_item`` line and per item of a compaction's replacement history. Older rollouts (a
bare meta object first, bare items after) are read too.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ctxview.live.sessions_list import (
    SessionInfo,
    SummaryCache,
    _FileSummary,
    _iso,
    _lines,
    _parse,
    _subagent,
    last_timestamp,
)
from ctxview.sessions.codex import spawned_by
from ctxview.sessions.fileio import open_regular, read_span
from ctxview.textfmt import one_line

#: the session_meta line holds Codex's instructions (often 20-30 kB): a head this long reaches
#: the first prompts after it
HEAD_BYTES = 128 * 1024
TAIL_BYTES = 16 * 1024
#: the messages are counted over the file in chunks of this many bytes
COUNT_CHUNK = 1 << 20
#: of a line, the bytes that tell its kind (an envelope's ``type`` comes after its timestamp)
KIND_BYTES = 512
#: a ``compacted`` line longer than this is not parsed for its replacement history's items
#: (the count is then not exact)
MAX_COMPACTED_BYTES = 64 << 20
#: text Codex puts in user messages itself (not typed by the user)
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions",
    "# AGENTS.md",
    "<user_shell_command>",
    "<turn_aborted>",
)
#: item types of the older rollouts (written bare, without the {type, payload} envelope)
#: a tuple: a record's ``type`` is untrusted JSON (a list cannot be looked up in a set)
_ITEM_TYPES = (
    "message",
    "function_call",
    "function_call_output",
    "custom_tool_call",
    "custom_tool_call_output",
    "local_shell_call",
    "reasoning",
    "web_search_call",
)


def codex_roots() -> list[Path]:
    """``$CODEX_HOME/sessions`` (default ``~/.codex/sessions``), when it exists."""
    home = os.environ.get("CODEX_HOME")
    base = Path(home).expanduser() if home else Path.home() / ".codex"
    root = base / "sessions"
    return [root] if root.is_dir() else []


def _item(rec: dict[str, Any]) -> dict[str, Any] | None:
    """The Responses item a line holds (a ``response_item``'s payload, or an older bare item)."""
    if rec.get("type") == "response_item":
        payload = rec.get("payload")
        return payload if isinstance(payload, dict) else None
    if "payload" not in rec and rec.get("type") in _ITEM_TYPES:
        return rec
    return None


def _typed_prompt(rec: dict[str, Any]) -> str | None:
    """What the user typed: an ``event_msg`` ``user_message``, or a user message item's text
    (not the context Codex injects)."""
    payload = rec.get("payload")
    if rec.get("type") == "event_msg" and isinstance(payload, dict):
        if payload.get("type") == "user_message" and isinstance(payload.get("message"), str):
            text = payload["message"].strip()
            return text if text and not text.startswith(_INJECTED) else None
        return None
    item = _item(rec)
    if item is None or item.get("type") != "message" or item.get("role") != "user":
        return None
    content = item.get("content")
    texts = (
        [str(p.get("text", "")) for p in content if isinstance(p, dict)]
        if isinstance(content, list)
        else [content]
        if isinstance(content, str)
        else []
    )
    text = "\n".join(texts).strip()
    return text if text and not text.startswith(_INJECTED) else None


def _is_item_line(raw: bytes) -> bool:
    """A line holding a Responses item, by its first ``"type"`` (the envelope's, which Codex
    writes before the payload's)."""
    i = raw.find(b'"type":')
    if i < 0:
        return False
    rest = raw[i + 7 : i + 40].lstrip()
    return rest.startswith(b'"response_item"') or any(
        rest.startswith(b'"' + t.encode() + b'"') for t in _ITEM_TYPES
    )


def _line_kind(head: bytes) -> str | None:
    """``"item"`` for a line holding a Responses item, ``"compacted"`` for a compaction, by the
    first ``"type"`` of the line's start (the envelope's, which Codex writes before the
    payload's; an older rollout's bare item's own)."""
    i = head.find(b'"type":')
    if i < 0:
        return None
    rest = head[i + 7 : i + 40].lstrip()
    if rest.startswith(b'"compacted"'):
        return "compacted"
    return "item" if _is_item_line(head) else None


def _compacted_items(line: bytes) -> int:
    """The messages a ``compacted`` line adds: its replacement history's items, else its
    summary (one), as the reader reads it; none for a line that is no such record."""
    rec = _parse(line)
    payload = rec.get("payload") if rec is not None else None
    if not isinstance(payload, dict):
        return 0
    history = payload.get("replacement_history")
    return len(history) if isinstance(history, list) and history else 1


def count_messages(fd: int, size: int) -> tuple[int, bool]:
    """The messages of a rollout as the reader reads it, streamed in :data:`COUNT_CHUNK`
    pieces: each line's kind from its first :data:`KIND_BYTES`, a ``compacted`` line parsed
    (rare). An estimate from the head and tail's line lengths was 65% under to 9% over on the
    repository's 11 long rollouts: the head is mostly the instructions and injected context,
    and a compaction's line holds many messages. Exact unless a compaction's line was too long
    to parse."""
    count, exact = 0, True
    start = b""  # the first KIND_BYTES of the line being read
    pieces: list[bytes] = []  # the line's bytes, kept while it may be a compaction
    held, keep, overflow = 0, True, False
    offset = 0
    while offset < size:
        chunk = read_span(fd, offset, min(COUNT_CHUNK, size - offset))
        if not chunk:
            break
        offset += len(chunk)
        pos, n = 0, len(chunk)
        while pos < n:
            end = chunk.find(b"\n", pos)
            piece = chunk[pos : n if end < 0 else end]
            if len(start) < KIND_BYTES:
                start += piece[: KIND_BYTES - len(start)]
            if keep:
                pieces.append(piece)
                held += len(piece)
                if held > MAX_COMPACTED_BYTES:
                    keep, overflow, pieces = False, True, []
                elif len(start) >= KIND_BYTES and _line_kind(start) != "compacted":
                    keep, pieces = False, []
            if end < 0:
                break
            kind = _line_kind(start)
            if kind == "item":
                count += 1
            elif kind == "compacted":
                if overflow:
                    exact = False
                else:
                    count += _compacted_items(b"".join(pieces))
            start, pieces, held, keep, overflow = b"", [], 0, True, False
            pos = end + 1
    if start.strip() and _line_kind(start) == "item":
        count += 1  # a last line without its newline (being written)
    return count, exact


def summarise_rollout(path: Path) -> _FileSummary:
    """Head and tail of a rollout (a regular file only: :func:`open_regular`)."""
    with open_regular(path, what="Codex rollout") as (fd, st):
        size = st.st_size
        whole = size <= HEAD_BYTES + TAIL_BYTES
        if whole:
            head, tail = read_span(fd, 0, HEAD_BYTES + TAIL_BYTES), b""
        else:
            head = read_span(fd, 0, HEAD_BYTES)
            tail = read_span(fd, size - TAIL_BYTES, TAIL_BYTES)
        messages, exact = count_messages(fd, size)
    head_lines = _lines(head, False, not whole or not head.endswith(b"\n"))
    tail_lines = _lines(tail, True, not tail.endswith(b"\n")) if tail else []
    cwd = session_id = parent_id = None
    prompt = fallback = ""
    for raw in head_lines:
        rec = _parse(raw)
        if rec is None:
            continue
        payload = rec.get("payload")
        meta = (
            payload
            if rec.get("type") == "session_meta" and isinstance(payload, dict)
            else rec
            if "payload" not in rec and "type" not in rec and "id" in rec
            else None
        )
        if meta is not None:
            if cwd is None and isinstance(meta.get("cwd"), str):
                cwd = meta["cwd"]
            if session_id is None and isinstance(meta.get("id"), str):
                session_id = meta["id"]
                parent_id = spawned_by(meta)
        if rec.get("type") == "turn_context" and isinstance(payload, dict) and cwd is None:
            cwd = payload.get("cwd") if isinstance(payload.get("cwd"), str) else None
        if not prompt:
            typed = _typed_prompt(rec)
            if typed and rec.get("type") == "event_msg":
                prompt = typed
            elif typed and not fallback:
                fallback = typed
    last_ts = last_timestamp(tail_lines or head_lines)
    return _FileSummary(
        size=size,
        mtime_ns=st.st_mtime_ns,
        cwd=cwd,
        session_id=session_id,
        first_prompt=one_line(prompt or fallback, 200),
        title=None,
        messages=messages,
        exact=exact,
        last_ts=last_ts,
        parent_id=parent_id,
    )


def list_codex(roots: list[Path], cache: SummaryCache) -> list[SessionInfo]:
    """Every rollout under the roots (``YYYY/MM/DD/rollout-*.jsonl``); a sub-agent's rollout is
    listed under the session that spawned it (as a Claude Code session's sub-agents are), or
    on its own when that session's rollout is not there."""
    out: list[SessionInfo] = []
    children: list[tuple[Path, _FileSummary]] = []
    for root in roots:
        try:
            files = sorted(root.glob("*/*/*/rollout-*.jsonl"))
        except OSError:
            continue
        for f in files:
            s = cache.get(f, summarise_rollout)
            if s is None:
                continue
            if s.parent_id is not None:
                children.append((f, s))
                continue
            out.append(_info(f, s))
    by_id = {info.session_id: info for info in out}
    for f, s in children:
        parent = by_id.get(s.parent_id or "")
        if parent is not None:
            parent.subagents.append(_subagent(f, s))
        else:
            out.append(_info(f, s))
    return out


def _info(f: Path, s: _FileSummary) -> SessionInfo:
    return SessionInfo(
        path=str(f),
        session_id=s.session_id or f.stem,
        project=one_line(s.cwd or "", 200),
        first_prompt=one_line(s.first_prompt, 200),
        title=None,
        messages=s.messages,
        messages_exact=s.exact,
        size=s.size,
        last_activity=_iso(s.last_ts, s.mtime_ns),
        provider="openai",
        format="codex",
    )
