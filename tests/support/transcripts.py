"""Claude Code transcript lines, as Claude Code writes them, for tests that grow a transcript."""

from __future__ import annotations

import json
from typing import Any


def rec(kind: str, uuid: str, parent: str | None, content: Any, **extra: Any) -> str:
    msg: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        msg.update(id=extra.pop("mid", f"msg_{uuid}"), type="message", model="claude-x")
    return (
        json.dumps(
            {
                "type": kind,
                "uuid": uuid,
                "parentUuid": parent,
                "sessionId": "s",
                "timestamp": "2026-01-01T00:00:00Z",
                "message": msg,
                **extra,
            }
        )
        + "\n"
    )


def text(t: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": t}]
