"""What Claude Code sends after a compaction besides the transcript's messages, estimated from
what the transcript shows before it.

After compacting, Claude Code re-attaches the files the conversation touched last: the five most
recently read or written files (``Read``, ``Edit``, ``Write``, ``MultiEdit``, ``NotebookEdit``),
each cut at 5,000 tokens, at most 50,000 tokens in all, counted as it counts them (4 characters
a token). Its constants (``POST_COMPACT_MAX_FILES_TO_RESTORE``, ``POST_COMPACT_TOKEN_BUDGET``,
``POST_COMPACT_MAX_TOKENS_PER_FILE`` in ``services/compact/compact.ts``) are quoted alike by
several public ports of it. The attachments are not in the transcript; a file's size is taken
from what the transcript last showed of it (a ``Read`` result, a ``Write``'s content).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: Claude Code's post-compaction file restore (see the module docstring)
MAX_FILES = 5
MAX_CHARS_PER_FILE = 5_000 * 4
BUDGET_CHARS = 50_000 * 4
#: the tools whose file Claude Code counts as recently used, and the input naming it
FILE_TOOLS = {
    "Read": "file_path",
    "Edit": "file_path",
    "Write": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
}


def reattached_chars(messages: Sequence[Mapping[str, Any]], start: int, since: int = 0) -> int:
    """Characters of the files Claude Code re-attaches after the compaction whose summary is
    message ``start``, from messages ``since`` to ``start`` (the segment before it)."""
    order: dict[str, None] = {}  # paths, least recent first
    size: dict[str, int] = {}
    calls: dict[str, str] = {}  # Read tool_use id -> its path
    for i in range(since, start):
        content = messages[i].get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind == "tool_use" and b.get("name") in FILE_TOOLS:
                inp = b.get("input")
                path = inp.get(FILE_TOOLS[b["name"]]) if isinstance(inp, dict) else None
                if not isinstance(path, str):
                    continue
                order.pop(path, None)
                order[path] = None
                if b["name"] == "Read" and isinstance(b.get("id"), str):
                    calls[b["id"]] = path
                elif b["name"] == "Write" and isinstance(inp, dict):
                    text = inp.get("content")
                    if isinstance(text, str):
                        size[path] = len(text)
            elif kind == "tool_result" and b.get("tool_use_id") in calls:
                size[calls[b["tool_use_id"]]] = _text_len(b.get("content"))
    total = 0
    for path in list(reversed(order))[:MAX_FILES]:
        n = min(MAX_CHARS_PER_FILE, size.get(path, 0))
        if total + n <= BUDGET_CHARS:
            total += n
    return total


def _text_len(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(
            len(b["text"])
            for b in content
            if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
    return 0
