"""Sessions with compactions: the recorded Claude Code transcripts that hold one, and a
constructed session with two Claude Code compactions and a server-side compaction block."""

from __future__ import annotations

from typing import Any

from tests.support.paths import ACCEPTANCE

ACCEPT = ACCEPTANCE / "claude_code"

COMPACTED_TRANSCRIPTS = sorted(
    p
    for p in ACCEPT.glob("spotter_*.jsonl")
    if "subagent" not in p.name and "compact" in p.read_text()
)


def usage(inp: int, read: int = 0, write: int = 0) -> dict[str, Any]:
    return {
        "usage": {
            "input_tokens": inp,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
            "output_tokens": 5,
        }
    }


def constructed_compactions() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two Claude Code compactions, then a server-side compaction block."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []

    def add(role: str, content: Any, meta: dict[str, Any] | None = None) -> None:
        msgs.append({"role": role, "content": content})
        metas.append(meta or {})

    add("user", "hi")
    add("assistant", "hello", usage(10, 0, 900))
    add("user", "more")
    add("assistant", "sure", usage(1, 900, 300))
    add(
        "user",
        "This session is being continued… summary one",
        {"compact_boundary": {"trigger": "auto", "preTokens": 1200}, "compact_summary": True},
    )
    add("assistant", "ok", usage(2, 100, 200))  # 302 after the first compaction
    add("user", "go on")
    add("assistant", "done", usage(3, 300, 50))
    add(
        "user",
        "summary two",
        {"compact_boundary": {"trigger": "manual"}, "compact_summary": True},
    )
    add("user", "next question")
    add("assistant", "answer")  # no usage recorded: tokens after stay unknown
    add("user", "q")
    add(
        "assistant",
        [{"type": "compaction", "content": "server summary"}, {"type": "text", "text": "a"}],
        usage(5000, 0, 0),
    )
    add("user", "after the block")
    add("assistant", "b", usage(40, 0, 0))
    return msgs, metas
