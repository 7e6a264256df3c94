"""Claude Code transcript lines, as Claude Code writes them, for tests that grow a transcript."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.support.paths import ACCEPTANCE


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


def session_folder(folder: Path, name: str) -> Path:
    """A recorded session of ``tests/acceptance/claude_code`` (``<name>.jsonl`` and its
    ``<name>__subagent_agent-*.jsonl`` files) laid out in ``folder`` as Claude Code writes it:
    ``<session>.jsonl`` beside ``<session>/subagents/agent-*.jsonl``; the main file's path."""
    acc = ACCEPTANCE / "claude_code"
    main = folder / f"{name.split('_', 1)[1]}.jsonl"
    shutil.copy(acc / f"{name}.jsonl", main)
    sub = folder / main.stem / "subagents"
    sub.mkdir(parents=True, exist_ok=True)
    for f in acc.glob(f"{name}__subagent_agent-*.jsonl"):
        shutil.copy(f, sub / f.name.split("__subagent_")[1])
    return main
