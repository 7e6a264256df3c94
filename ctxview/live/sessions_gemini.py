"""Gemini CLI sessions for ``ctxview sessions``: ``~/.gemini/tmp/<project_hash>/chats/session-*.json``
and ``session-*.jsonl`` (``$GEMINI_CLI_HOME`` replaces the home folder, as Gemini CLI reads it).

A ``.json`` session is one JSON object, rewritten whole as the session goes: ``sessionId``,
``projectHash`` (the SHA-256 of the project's folder), ``startTime``, ``lastUpdated``, then
``messages`` (``{id, timestamp, type: user | gemini | info | error | warning, content, …}``) and,
once written, ``summary``. A ``.jsonl`` session (newer versions) is a log: the same metadata on
its first line, then one line per message record, ``{"$set": …}`` updates and ``$rewindTo``
lines (replayed by the reader's own rule, :mod:`ctxview.sessions.gemini_cli`). A file up to
WHOLE_BYTES is read whole (exact count of user and model records); a bigger one is summarised
from its head (the metadata, the first prompt) and tail (the newest time, the density of message
records for an estimate). The project is the folder whose
hash names the session's folder when another session (Claude Code's, Codex's) or the current
folder has it; else the hash.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ctxview.live.sessions_list import SessionInfo, SummaryCache, _FileSummary, _iso, _lines, _parse
from ctxview.sessions.fileio import open_regular, read_span
from ctxview.sessions.gemini_cli import _records_of_log
from ctxview.sessions.readers import jsonl_objects
from ctxview.textfmt import one_line

#: a file up to this size is read whole, for exact figures: Gemini CLI rewrites a ``.json``
#: session whole on every message, so they stay a few MB (its records vary from a word to a
#: whole file read, so a sampled density misjudges the count by half or more)
WHOLE_BYTES = 16 * 1024**2
HEAD_BYTES = 32 * 1024
TAIL_BYTES = 16 * 1024
#: the message types that are conversation turns (the others are the CLI's own notes)
_TURNS = ("user", "gemini")
_TURN = re.compile(rb'"type"\s*:\s*"(?:user|gemini)"')
_KEY = re.compile(rb'"(sessionId|startTime|lastUpdated)"\s*:\s*"([^"\\]{0,200})"')
_FIRST_USER = re.compile(rb'"type"\s*:\s*"user"')
_CONTENT = re.compile(rb'"content"\s*:\s*')


def gemini_roots() -> list[Path]:
    """``~/.gemini/tmp`` (``$GEMINI_CLI_HOME/.gemini/tmp`` when set), when it exists."""
    home = os.environ.get("GEMINI_CLI_HOME")
    base = Path(home).expanduser() if home else Path.home()
    root = base / ".gemini" / "tmp"
    return [root] if root.is_dir() else []


def _text(content: Any) -> str:
    """A message's text: a string, or the text of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) for p in content if isinstance(p, dict) and "text" in p
        )
    if isinstance(content, dict):
        return _text([content])
    return ""


def _whole(data: bytes, size: int, mtime_ns: int) -> _FileSummary:
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        return _FileSummary(size, mtime_ns, None, None, "", None, 0, True, None)
    messages = doc.get("messages")
    if not isinstance(messages, list):
        messages = []
    turns = [m for m in messages if isinstance(m, dict) and m.get("type") in _TURNS]
    prompt = next((_text(m.get("content")) for m in turns if m.get("type") == "user"), "")
    summary = doc.get("summary")
    last = doc.get("lastUpdated")
    return _FileSummary(
        size=size,
        mtime_ns=mtime_ns,
        cwd=None,
        session_id=doc.get("sessionId") if isinstance(doc.get("sessionId"), str) else None,
        first_prompt=one_line(prompt.strip(), 200),
        title=one_line(summary, 200) if isinstance(summary, str) and summary else None,
        messages=len(turns),
        exact=True,
        last_ts=last if isinstance(last, str) else None,
    )


def _first_prompt(head: bytes) -> str:
    """The content of the first user message in a head, decoded as far as it is whole."""
    at = _FIRST_USER.search(head)
    if at is None:
        return ""
    content = _CONTENT.search(head, at.end())  # (Gemini CLI writes content after type)
    if content is None:
        return ""
    text = head[content.end() :].decode("utf-8", "replace")
    try:
        value, _ = json.JSONDecoder().raw_decode(text)
    except ValueError:
        return ""
    return _text(value).strip()


def summarise_chat(path: Path) -> _FileSummary:
    """A session file's summary (a regular file only: :func:`open_regular`)."""
    with open_regular(path, what="Gemini CLI session") as (fd, st):
        size = st.st_size
        if size <= WHOLE_BYTES:
            return _whole(read_span(fd, 0, size), size, st.st_mtime_ns)
        head = read_span(fd, 0, HEAD_BYTES)
        tail = read_span(fd, size - TAIL_BYTES, TAIL_BYTES)
    keys = {m.group(1).decode(): m.group(2).decode("utf-8", "replace") for m in _KEY.finditer(head)}
    hits = len(_TURN.findall(head)) + len(_TURN.findall(tail))
    return _FileSummary(
        size=size,
        mtime_ns=st.st_mtime_ns,
        cwd=None,
        session_id=keys.get("sessionId"),
        first_prompt=one_line(_first_prompt(head), 200),
        title=None,
        messages=round(size * hits / (len(head) + len(tail))),
        exact=False,
        last_ts=keys.get("lastUpdated") or keys.get("startTime"),
    )


def _log_summary(data: bytes, size: int, mtime_ns: int) -> _FileSummary:
    """A whole ``.jsonl`` log, replayed as the reader replays it."""
    meta, records, _ = _records_of_log(data.decode("utf-8", "replace"), jsonl_objects)
    turns = [r for r in records if isinstance(r, dict) and r.get("type") in _TURNS]
    prompt = next((_text(r.get("content")) for r in turns if r.get("type") == "user"), "")
    last = meta.get("lastUpdated")
    if not isinstance(last, str) and turns and isinstance(turns[-1].get("timestamp"), str):
        last = turns[-1]["timestamp"]
    summary = meta.get("summary")
    return _FileSummary(
        size=size,
        mtime_ns=mtime_ns,
        cwd=None,
        session_id=meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else None,
        first_prompt=one_line(prompt.strip(), 200),
        title=one_line(summary, 200) if isinstance(summary, str) and summary else None,
        messages=len(turns),
        exact=True,
        last_ts=last if isinstance(last, str) else None,
    )


def summarise_log(path: Path) -> _FileSummary:
    """A ``.jsonl`` session's summary (a regular file only: :func:`open_regular`)."""
    with open_regular(path, what="Gemini CLI session") as (fd, st):
        size = st.st_size
        if size <= WHOLE_BYTES:
            return _log_summary(read_span(fd, 0, size), size, st.st_mtime_ns)
        head = read_span(fd, 0, HEAD_BYTES)
        tail = read_span(fd, size - TAIL_BYTES, TAIL_BYTES)
    head_lines = _lines(head, False, True)
    tail_lines = _lines(tail, True, not tail.endswith(b"\n"))
    session_id = last_ts = None
    prompt = ""
    for raw in head_lines:
        rec = _parse(raw)
        if rec is None:
            continue
        if session_id is None and isinstance(rec.get("sessionId"), str):
            session_id = rec["sessionId"]
            last_ts = rec.get("lastUpdated") if isinstance(rec.get("lastUpdated"), str) else None
        if not prompt and rec.get("type") == "user":
            prompt = _text(rec.get("content")).strip()
    for raw in reversed(tail_lines):
        rec = _parse(raw)
        if rec is None:
            continue
        update = rec.get("$set")
        ts = update.get("lastUpdated") if isinstance(update, dict) else rec.get("timestamp")
        if isinstance(ts, str) and ts:
            last_ts = ts
            break
    sampled = [*head_lines, *tail_lines]
    hits = sum(1 for ln in sampled if _TURN.search(ln[:200]))
    nbytes = sum(len(ln) + 1 for ln in sampled)
    return _FileSummary(
        size=size,
        mtime_ns=st.st_mtime_ns,
        cwd=None,
        session_id=session_id,
        first_prompt=one_line(prompt, 200),
        title=None,
        messages=round(size * hits / max(1, nbytes)),
        exact=False,
        last_ts=last_ts,
    )


def project_names(folders: Iterable[str]) -> dict[str, str]:
    """SHA-256 hex of each folder (Gemini CLI's project hash) -> the folder."""
    return {hashlib.sha256(f.encode("utf-8", "surrogatepass")).hexdigest(): f for f in folders}


def list_gemini(
    roots: list[Path], cache: SummaryCache, known_folders: Iterable[str] = ()
) -> list[SessionInfo]:
    """Every session file under the roots (``<project>/chats/session-*.json`` and ``.jsonl``)."""
    folders = set(known_folders)
    with contextlib.suppress(OSError):  # (the current folder may have been removed)
        folders.add(os.getcwd())
    names = project_names(folders)
    out: list[SessionInfo] = []
    for root in roots:
        try:
            files = sorted(
                f for f in root.glob("*/chats/session-*.json*") if f.suffix in (".json", ".jsonl")
            )
        except OSError:
            continue
        for f in files:
            s = cache.get(f, summarise_log if f.suffix == ".jsonl" else summarise_chat)
            if s is None:
                continue
            folder = f.parent.parent.name
            out.append(
                SessionInfo(
                    path=str(f),
                    session_id=s.session_id or f.stem,
                    project=one_line(names.get(folder, folder), 200),
                    first_prompt=one_line(s.first_prompt, 200),
                    title=one_line(s.title, 200) if s.title else None,
                    messages=s.messages,
                    messages_exact=s.exact,
                    size=s.size,
                    last_activity=_iso(s.last_ts, s.mtime_ns),
                    provider="gemini",
                    format="gemini-cli",
                )
            )
    return out
