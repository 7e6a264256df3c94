"""Cache rules of particular Claude Code versions, read from the recorded usage of real
transcripts: a tools change in a conversation nothing else had cached reads nothing; Remote
Control turned on mid-session changes the tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.core.requests import simulate
from ctxview.core.requests.points import REMOTE_CONTROL, history_resends
from ctxview.sessions import load_session
from ctxview.sessions.model import LoadedSession
from tests.support import claude_code_shapes as shapes


def _first_search(tmp_path: Path, version: str, first_read: int) -> LoadedSession:
    """A tool loop whose first request read ``first_read`` tokens, then the session's first
    tool search (a ``ToolSearch`` result of ``tool_reference`` blocks, written by Claude Code
    ``version``) and the response after it."""
    w = shapes.Writer()
    u = w.user(None, "Track the work in tasks.", version=version)
    body = ("lorem ipsum dolor sit amet " * 400)[:7_880]
    last = w.tool_round(u, 0, (3, first_read, 20_000 - first_read), body)
    last = shapes.grow(w, last, 5, 1, 22_000, 2_000)
    tid = "toolu_search_0"
    a = w.assistant(
        last,
        [{"type": "tool_use", "id": tid, "name": "ToolSearch", "input": {"query": "select:X"}}],
        (3, 32_000, 200),
        "msg_search_0",
    )
    ref = [{"type": "tool_reference", "tool_name": "TaskCreate"}]
    r = w.user(a, [{"type": "tool_result", "tool_use_id": tid, "content": ref}], version=version)
    w.assistant(r, [{"type": "text", "text": "Loaded."}], (3, 0, 32_500), "msg_after")
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_a_cold_conversations_first_tool_search_reads_nothing(tmp_path: Path) -> None:
    """Where the first request read nothing (no other session had cached the tools and
    system), the tools change of the first tool search reads nothing either: the whole prompt
    is written again, as the break the recorded usage shows."""
    s = _first_search(tmp_path, "2.1.119", first_read=0)
    assert list(history_resends(s).values()) == ["tools"]
    for kw in ({}, {"strategy": "seed", "max_context_messages": 8}):
        last = simulate(s, **kw).requests[-1]
        assert last.cache_break is not None and last.cache_break.reason == "tools"
        assert last.cache_read == 0 and last.cache_write == last.input_tokens
        assert simulate(s, _reference=True, **kw).requests[-1] == last
    assert simulate(s).requests[-1].recorded_break


def test_a_warm_conversations_first_tool_search_still_reads_the_head(tmp_path: Path) -> None:
    s = _first_search(tmp_path, "2.1.119", first_read=12_000)
    log = simulate(s)
    last = log.requests[-1]
    assert last.cache_break is not None and last.cache_break.reason == "tools"
    assert 0 < last.cache_read < log.static_tokens


def _remote_control(tmp_path: Path, version: str, how: str) -> LoadedSession:
    """A tool loop, then Remote Control turned on while a tool ran (``how``: a
    ``bridge_status`` line beside the chain, hanging off the call as the result does, or the
    ``/remote-control`` local command's lines on the chain), written by Claude Code ``version``;
    the request after it read the head and wrote the rest."""
    w = shapes.Writer()
    u = w.user(None, "Fix the failing build.", version=version)
    last = shapes.grow(w, u, 6, 0, 20_000, 2_000)
    tid = "toolu_bash_rc"
    call = w.assistant(
        last,
        [{"type": "tool_use", "id": tid, "name": "Bash", "input": {"command": "make"}}],
        (3, 32_000, 200),
        "msg_call",
    )
    parent = call
    if how == "bridge_status":
        line = w.base("system", call, 1)
        line.update(subtype="bridge_status", content="/remote-control is active", version=version)
        w.add(line)
    else:
        cmd = w.base("system", call, 1)
        cmd.update(
            subtype="local_command",
            content="<command-name>/remote-control</command-name>\n"
            "            <command-message>remote-control</command-message>\n"
            "            <command-args></command-args>",
            version=version,
        )
        out = w.base("system", w.add(cmd), 0)
        out.update(
            subtype="local_command",
            content="<local-command-stdout>Remote Control connecting…</local-command-stdout>",
            version=version,
        )
        parent = w.add(out)
    r = w.user(
        parent if how != "bridge_status" else call,
        [{"type": "tool_result", "tool_use_id": tid, "content": "ok"}],
        version=version,
    )
    w.assistant(r, [{"type": "text", "text": "Built."}], (3, 12_000, 20_400), "msg_after")
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


@pytest.mark.parametrize("how", ["bridge_status", "local_command"])
def test_remote_control_turned_on_mid_session_changes_the_tools(tmp_path: Path, how: str) -> None:
    """From Claude Code 2.1.178 the request after Remote Control was turned on is a tools
    change: the reader keeps the line (beside the chain too) and marks the next user message."""
    s = _remote_control(tmp_path, "2.1.217", how)
    last = len(s.messages) - 2
    assert s.metas[last].get(REMOTE_CONTROL) is True
    assert history_resends(s) == {last: "tools"}
    log = simulate(s)
    brk = log.requests[-1].cache_break
    assert brk is not None and (brk.reason, brk.position, brk.api_reason) == (
        "tools",
        0,
        "tools_changed",
    )
    assert all(r.cache_break is None for r in log.requests[1:-1])


def test_an_older_clients_remote_control_keeps_the_cache(tmp_path: Path) -> None:
    """At 2.1.101 the request after it read the whole previous prompt: no break."""
    s = _remote_control(tmp_path, "2.1.101", "bridge_status")
    assert s.metas[-2].get(REMOTE_CONTROL) is True
    assert history_resends(s) == {}


def _first_prompt(tmp_path: Path, version: str) -> LoadedSession:
    """A first prompt (Claude Code ``version``) whose request read 10,000 tokens warm, wrote
    2,000 and billed its messages uncached (as 2.1.159-2.1.205 did), then a tool loop whose
    requests read ~14,000 tokens of tools and system besides the messages (what Claude Code
    adds to later requests)."""
    path = shapes.first_prompt_loop(
        tmp_path / "s.jsonl", version, (6_000, 10_000, 2_000), (3, 12_000, 10_000), 24_000
    )
    return load_session(path)


def test_the_request_after_a_tools_and_system_only_first_reads_what_that_one_cached(
    tmp_path: Path,
) -> None:
    """Claude Code 2.1.159-2.1.205: the second request reads what the first one's usage billed
    as read and written (12,000), not the calibrated tools and system it is below."""
    s = _first_prompt(tmp_path, "2.1.183")
    for kw in ({}, {"strategy": "seed", "max_context_messages": 4}):
        log = simulate(s, **kw)
        second = log.requests[1]
        assert log.static_tokens > 12_000
        assert second.cache_read == 12_000
        assert second.cache_write == second.input_tokens - 12_000
        assert simulate(s, _reference=True, **kw).requests == log.requests
    # a first request that cached its messages too: the next one reads all of its prompt
    other = simulate(_first_prompt(tmp_path, "2.1.209")).requests
    assert other[1].cache_read == other[0].input_tokens
