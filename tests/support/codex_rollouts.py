"""Codex rollouts written as Codex writes them (``session_meta``, ``turn_context``,
``response_item``, ``event_msg`` lines), for tests that need a parent and its spawned threads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def line(kind: str, payload: dict[str, Any], ts: str = "2026-03-01T10:00:00.000Z") -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}) + "\n"


def user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def said(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def usage(total: int, last: int, cached: int = 0) -> dict[str, Any]:
    """A ``token_count`` event: the thread's running total and the last request's input."""
    return {
        "type": "token_count",
        "info": {
            "total_token_usage": {"input_tokens": total, "output_tokens": 10},
            "last_token_usage": {
                "input_tokens": last,
                "cached_input_tokens": cached,
                "output_tokens": 10,
            },
        },
    }


def meta(thread: str, spawned_by: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": thread, "cwd": "/repo", "cli_version": "0.80.0"}
    out["base_instructions"] = {"text": "You are Codex."}
    if spawned_by is not None:
        spawn = {"parent_thread_id": spawned_by, "depth": 1}
        out["source"] = {"subagent": {"thread_spawn": spawn}}
    return out


def write_parent(path: Path, thread: str, child: str) -> None:
    """A thread that spawns ``child`` with ``spawn_agent`` and reads its answer."""
    call = {
        "type": "function_call",
        "name": "spawn_agent",
        "arguments": json.dumps({"message": "look at the tests", "agent_type": "explorer"}),
        "call_id": "call_spawn",
    }
    output = {
        "type": "function_call_output",
        "call_id": "call_spawn",
        "output": json.dumps({"agent_id": child}),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        line("session_meta", meta(thread))
        + line("turn_context", {"cwd": "/repo", "model": "gpt-5-codex"})
        + line("response_item", user("fix the tests"))
        + line("response_item", call)
        + line("event_msg", usage(1200, 1200))
        + line("response_item", output)
        + line("response_item", said("the explorer found three failing tests"))
        + line("event_msg", usage(2500, 1300, cached=1024))
    )


def write_child(path: Path, thread: str, parent: str) -> None:
    """A spawned thread whose rollout starts with its parent's items replayed (a fork): the
    parent's meta, a user item and the parent's usage, then the thread's own turn."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        line("session_meta", meta(thread, spawned_by=parent))
        + line("session_meta", meta(parent))
        + line("response_item", user("fix the tests"))
        + line("response_item", said("spawning an explorer"))
        + line("event_msg", usage(1200, 1200))
        + line("turn_context", {"cwd": "/repo", "model": "gpt-5-codex-mini"})
        + line("response_item", user("look at the tests"))
        + line("response_item", said("three tests fail: a, b and c"))
        + line("event_msg", usage(2100, 900))
    )
