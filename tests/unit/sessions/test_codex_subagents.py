"""A Codex thread's spawned sub-agents (``ctxview/sessions/subagents.py`` and
``ctxview/sessions/codex.py``): found by their rollouts' ``session_meta``, linked to the
``spawn_agent`` call by the thread id Codex answers it with, and a forked thread's replay of its
parent's history sent but not requested again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ctxview.sessions import load_session
from ctxview.sessions.rowtext import row_text
from ctxview.sessions.subagents import subagent_files, subagents_of
from tests.support.codex_rollouts import write_child, write_parent


@pytest.fixture
def spawned(tmp_path: Path) -> tuple[Path, Path]:
    """A parent started just before midnight and the thread it spawned, filed under the next
    day (Codex files a rollout under the day it started)."""
    root = tmp_path / ".codex/sessions"
    parent = root / "2026/03/01/rollout-2026-03-01T23-59-00-019a-parent.jsonl"
    child = root / "2026/03/02/rollout-2026-03-02T00-00-10-019a-child.jsonl"
    write_parent(parent, "019a-parent", "019a-child")
    write_child(child, "019a-child", "019a-parent")
    # a thread another session spawned, and an earlier rollout of the same day: neither is its
    write_child(root / "2026/03/02/rollout-2026-03-02T00-00-20-other.jsonl", "other", "elsewhere")
    write_child(root / "2026/03/01/rollout-2026-03-01T08-00-00-early.jsonl", "early", "x")
    return parent, child


def test_a_spawned_thread_is_linked_to_the_spawn_agent_call_that_answered_its_id(
    spawned: tuple[Path, Path],
) -> None:
    parent, child = spawned
    session = load_session(str(parent))
    assert session.subagent_links == {"019a-child": "call_spawn"}
    agents = subagents_of(session)
    assert [(a.agent_id, a.path, a.label) for a in agents] == [
        ("019a-child", str(child), "explorer")
    ]
    call = agents[0].call
    assert call is not None and call.prompt == "look at the tests"
    assert session.messages[call.message_id]["content"][0]["name"] == "spawn_agent"
    assert subagent_files(session) == [str(child)]


def test_a_forked_thread_sends_its_parents_history_but_does_not_request_it_again(
    spawned: tuple[Path, Path],
) -> None:
    _, child = spawned
    session = load_session(str(child))
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    # the replayed response's usage was the parent's request
    assert [("usage" in meta) for meta in session.metas] == [False, False, False, True]
    out = subprocess.run(
        [sys.executable, "-m", "ctxview", "requests", str(child), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    requests = json.loads(out.stdout)["requests"]
    assert [(r["index"], r["recorded"]["input_tokens"]) for r in requests] == [(0, 900)]


def test_a_forked_threads_replayed_history_is_marked_in_its_rows(
    spawned: tuple[Path, Path],
) -> None:
    _, child = spawned
    session = load_session(str(child))
    summaries = [
        row_text(m, meta)[1] for m, meta in zip(session.messages, session.metas, strict=True)
    ]
    assert [s.startswith("forked · ") for s in summaries] == [True, True, False, False]


def test_requests_and_inspect_count_the_spawned_thread_with_its_parent(
    spawned: tuple[Path, Path],
) -> None:
    parent, child = spawned

    def run(*args: str) -> dict[str, object]:
        cmd = [sys.executable, "-m", "ctxview", *args, str(parent), "--json"]
        return json.loads(subprocess.run(cmd, capture_output=True, text=True).stdout)

    requests = run("requests")
    agents = requests["agents"]
    assert isinstance(agents, list)
    assert [(a["agent"], a["requests"], a.get("tool_use_id")) for a in agents] == [
        ("main", 2, None),
        ("019a-child", 1, "call_spawn"),
    ]
    rows = requests["requests"]
    assert isinstance(rows, list)
    assert [r["agent"] for r in rows] == ["main", "main", "019a-child"]
    totals = requests["totals"]
    assert isinstance(totals, dict) and totals["requests"] == 3
    assert run("inspect")["subagents"] == [str(child)]
