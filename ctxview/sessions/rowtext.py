"""What a timeline row says of a message: its role, a summary of its blocks, a one-line preview
and whether it holds an error result. The terminal's timeline and the HTML report show the
same words (headless: no Textual here)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctxview.textfmt import one_line


def _block_summary(block: Any) -> str:
    if not isinstance(block, Mapping):
        return "?"
    t = block.get("type")
    if t == "tool_use":
        return f"tool_use {block.get('name', '?')}"
    if t == "tool_result":
        return "tool_result ✗ error" if block.get("is_error") else "tool_result"
    if t in ("text", "thinking", "redacted_thinking", "image", "document", "compaction"):
        return str(t)
    return str(t or "?")


def summarise(message: Mapping[str, Any]) -> tuple[str, str, bool]:
    """(block summary, one-line preview, has an error result) of a message."""
    content = message.get("content")
    if isinstance(content, str):
        return "text", one_line(content), False
    if not isinstance(content, list) or not content:
        return "(empty)", "", False
    kinds: list[str] = []
    for b in content:
        s = _block_summary(b)
        if s not in kinds:
            kinds.append(s)
    # the informative kinds first: a tool call says more than the text around it
    order = (
        "tool_result",
        "tool_use",
        "compaction",
        "image",
        "document",
        "thinking",
        "redacted_thinking",
        "text",
    )
    kinds.sort(key=lambda k: next((n for n, o in enumerate(order) if k.startswith(o)), len(order)))
    error = any(isinstance(b, Mapping) and b.get("is_error") for b in content)
    summary = (
        kinds[0] if len(kinds) == 1 else " + ".join(kinds[:3]) + (" …" if len(kinds) > 3 else "")
    )
    if len(content) > 1 and len(kinds) == 1:
        summary = f"{summary} ×{len(content)}"
    preview = ""
    for b in content:
        if not isinstance(b, Mapping):
            continue
        t = b.get("type")
        if t == "text" and b.get("text"):
            preview = str(b["text"])
        elif t == "tool_use":
            preview = f"{b.get('name')}({json.dumps(b.get('input', {}), ensure_ascii=False)[:150]})"
        elif t == "tool_result":
            c = b.get("content")
            if isinstance(c, list):
                c = " ".join(str(x.get("text", "")) for x in c if isinstance(x, Mapping))
            preview = str(c)
        elif t == "thinking":
            preview = str(b.get("thinking", ""))
        elif t == "compaction":
            preview = str(b.get("content", ""))
        if preview:
            break
    return summary, one_line(preview), error


def row_text(message: Mapping[str, Any], meta: Mapping[str, Any]) -> tuple[str, str, str, bool]:
    """(role, block summary, preview, has an error result) of a message as a row shows it: one
    visible line each (the text comes from the session: tool names, unknown block types), the
    summary marking a Claude Code compaction and its summary, meta messages, the history a
    forked Codex thread replays from its parent, and a message a repair added."""
    summary, preview, error = summarise(message)
    if meta.get("compact_summary"):
        summary = "compaction summary"
    elif meta.get("compact_boundary") is not None:
        summary = "compaction · " + summary
    if meta.get("is_meta"):
        summary = "meta · " + summary
    if meta.get("forked_history"):
        summary = "forked · " + summary
    if meta.get("inserted_by"):
        summary = "added · " + summary  # not recorded: a repair inserted it
    return one_line(str(message.get("role", "?")), 40), one_line(summary, 120), preview, error
