"""ctxview sessions beside Claude Code's: Codex CLI rollouts and Gemini CLI session files, each
with its provider, summarised from head and tail as Claude Code's are."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ctxview.cli import main
from ctxview.live import sessions_codex, sessions_gemini
from ctxview.live.sessions_all import list_all, session_roots
from ctxview.sessions import load_session

CWD = "/work/proj"


def codex_line(kind: str, payload: dict[str, Any], ts: str) -> str:
    return json.dumps({"timestamp": ts, "type": kind, "payload": payload}) + "\n"


def user_item(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def write_rollout(path: Path, prompt: str, ts: str, turns: int = 2, pad: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {"id": "019a-codex", "timestamp": ts, "cwd": CWD, "cli_version": "0.46.0"}
    meta["base_instructions"] = {"text": "You are Codex. " + "i" * 30_000}  # a long first line
    lines = [
        codex_line("session_meta", meta, ts),
        codex_line(
            "response_item", user_item("<environment_context>cwd</environment_context>"), ts
        ),
        codex_line("response_item", user_item(prompt), ts),
        codex_line("event_msg", {"type": "user_message", "message": prompt, "kind": "plain"}, ts),
        codex_line("turn_context", {"cwd": CWD, "model": "gpt-5-codex"}, ts),
    ]
    for k in range(turns):
        call = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": f"c{k}"}
        out = {"type": "function_call_output", "call_id": f"c{k}", "output": "x" * pad}
        lines += [codex_line("response_item", call, ts), codex_line("response_item", out, ts)]
    path.write_text("".join(lines))


def write_gemini(path: Path, prompt: str, updated: str, turns: int = 2, pad: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    messages: list[dict[str, Any]] = [
        {"id": "m0", "timestamp": updated, "type": "user", "content": prompt},
        {"id": "i0", "timestamp": updated, "type": "info", "content": "note"},
    ]
    for k in range(turns):
        kind = "gemini" if k % 2 == 0 else "user"
        messages.append(
            {"id": f"m{k + 1}", "timestamp": updated, "type": kind, "content": "y" * pad}
        )
    doc = {
        "sessionId": "gem-session-1",
        "projectHash": path.parent.parent.name,
        "startTime": "2026-01-01T00:00:00.000Z",
        "lastUpdated": updated,
        "messages": messages,
    }
    path.write_text(json.dumps(doc, indent=2))  # as Gemini CLI writes it


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return tmp_path


def test_codex_and_gemini_sessions_are_listed_with_their_provider(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_rollout(
        home / ".codex/sessions/2026/03/01/rollout-2026-03-01T10-00-00-019a.jsonl",
        "make the tests \x1b[31mpass\x1b[0m",
        "2026-03-01T10:00:00.000Z",
    )
    project_hash = hashlib.sha256(CWD.encode()).hexdigest()
    write_gemini(
        home / f".gemini/tmp/{project_hash}/chats/session-2026-02-01T09-00-gem1.json",
        "explain this repo",
        "2026-02-01T09:00:00.000Z",
    )
    write_gemini(
        home / ".gemini/tmp/unknownhash/chats/session-2026-01-01T09-00-gem2.json",
        "another",
        "2026-01-01T09:00:00.000Z",
    )
    codex, gemini, other = list_all(session_roots(), cache_path=None)
    assert (codex.provider, codex.format) == ("openai", "codex")
    assert codex.project == CWD and codex.session_id == "019a-codex"
    # what the user typed, not the context Codex injected; made safe for the terminal
    assert codex.first_prompt == "make the tests ␛[31mpass␛[0m"
    assert codex.messages == 6 and codex.messages_exact  # the response items
    assert codex.last_activity == "2026-03-01T10:00:00+00:00"
    assert (gemini.provider, gemini.format) == ("gemini", "gemini-cli")
    # the project hash names the folder a Codex session was run in
    assert gemini.project == CWD and gemini.first_prompt == "explain this repo"
    assert gemini.messages == 3 and gemini.messages_exact  # user and gemini turns only
    assert other.project == "unknownhash"
    assert main(["sessions", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(d["provider"], d["format"]) for d in listed] == [
        ("openai", "codex"),
        ("gemini", "gemini-cli"),
        ("gemini", "gemini-cli"),
    ]
    assert main(["sessions"]) == 0
    table = capsys.readouterr().out
    assert "provider" in table.splitlines()[0] and "openai" in table and "gemini" in table


def test_big_files_are_summarised_from_head_and_tail(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rollout = home / ".codex/sessions/2026/03/01/rollout-big.jsonl"
    write_rollout(rollout, "the big one", "2026-03-01T10:00:00.000Z", turns=400, pad=2000)
    chat = home / ".gemini/tmp/h/chats/session-big.json"
    write_gemini(chat, "a big chat", "2026-02-01T09:00:00.000Z", turns=400, pad=2000)
    read: dict[str, list[int]] = {"codex": [], "gemini": []}
    real = sessions_codex.read_span

    def counting(which: str) -> Callable[[int, int, int], bytes]:
        def read_span(fd: int, offset: int, count: int) -> bytes:
            read[which].append(count)
            return real(fd, offset, count)

        return read_span

    monkeypatch.setattr(sessions_codex, "read_span", counting("codex"))
    monkeypatch.setattr(sessions_codex, "COUNT_CHUNK", 64 * 1024)
    monkeypatch.setattr(sessions_gemini, "read_span", counting("gemini"))
    monkeypatch.setattr(sessions_gemini, "WHOLE_BYTES", 48 * 1024)
    codex, gemini = list_all(session_roots(), cache_path=None)
    # a rollout's messages are counted over the whole file, streamed in bounded pieces
    size = rollout.stat().st_size
    assert max(read["codex"]) <= sessions_codex.HEAD_BYTES
    assert sum(read["codex"]) <= sessions_codex.HEAD_BYTES + 16 * 1024 + size
    assert len(read["codex"]) >= size // (64 * 1024)
    assert sum(read["gemini"]) <= sessions_gemini.HEAD_BYTES + 16 * 1024
    assert codex.first_prompt == "the big one" and codex.project == CWD
    assert codex.messages_exact and codex.messages == len(load_session(rollout).messages)
    assert gemini.first_prompt == "a big chat" and gemini.session_id == "gem-session-1"
    assert gemini.last_activity == "2026-02-01T09:00:00+00:00"
    assert not gemini.messages_exact and 401 * 0.8 < gemini.messages < 401 * 1.2


def test_homes_come_from_their_variables(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    codex_home, gemini_home = tmp_path / "ch", tmp_path / "gh"
    write_rollout(codex_home / "sessions/2026/01/02/rollout-x.jsonl", "p", "2026-01-02T00:00:00Z")
    write_gemini(gemini_home / ".gemini/tmp/h/chats/session-x.json", "q", "2026-01-01T00:00:00Z")
    monkeypatch.setenv("CODEX_HOME", str(codex_home))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(gemini_home))
    roots = session_roots()
    assert roots.codex == [codex_home / "sessions"]
    assert roots.gemini == [gemini_home / ".gemini" / "tmp"]
    assert [i.first_prompt for i in list_all(roots, cache_path=None)] == ["p", "q"]


def test_unreadable_and_hostile_files_are_skipped_or_shown_safely(home: Path) -> None:
    import os

    chats = home / ".gemini/tmp/h/chats"
    chats.mkdir(parents=True)
    (chats / "session-broken.json").write_text('{"sessionId": "x", "messages": [')
    os.mkfifo(chats / "session-fifo.json")
    rollouts = home / ".codex/sessions/2026/01/01"
    rollouts.mkdir(parents=True)
    (rollouts / "rollout-garbage.jsonl").write_text("not json\n{}\n")
    (rollouts / "rollout-empty.jsonl").write_text("")
    unreadable: dict[str, str] = {}
    infos = list_all(session_roots(), cache_path=None, unreadable=unreadable)
    # a cut JSON document may be a session being written; no JSON at all is none
    assert [(i.format, i.messages, i.first_prompt) for i in infos] == [("gemini-cli", 0, "")]
    assert unreadable == {
        str(rollouts / "rollout-empty.jsonl"): "empty file",
        str(rollouts / "rollout-garbage.jsonl"): "text that is not JSON",
    }


def write_gemini_log(path: Path, prompt: str, turns: int, pad: int = 0) -> None:
    """The JSONL form: metadata, records, a record written again, $set and $rewindTo lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    head = {"sessionId": "gem-log-1", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z"}
    lines: list[dict[str, Any]] = [head]
    lines.append(
        {
            "id": "u0",
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "user",
            "content": [{"text": prompt}],
        }
    )
    for k in range(turns):
        kind = "gemini" if k % 2 == 0 else "user"
        rec = {
            "id": f"m{k}",
            "timestamp": f"2026-01-01T00:{k // 60 % 60:02d}:{k % 60:02d}Z",
            "type": kind,
            "content": "z" * pad,
        }
        lines.append(rec)
    lines.append({**lines[-1], "content": "rewritten"})  # the same record again: replaces it
    lines.append(
        {"id": "gone", "timestamp": "2026-01-01T01:00:00Z", "type": "user", "content": "x"}
    )
    lines.append({"$rewindTo": "gone"})
    lines.append({"$set": {"lastUpdated": "2026-01-02T03:04:05Z"}})
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_gemini_jsonl_logs_are_replayed_by_the_readers_rule(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chats = home / ".gemini/tmp/h/chats"
    write_gemini_log(chats / "session-small.jsonl", "a logged session", turns=4)
    write_gemini_log(chats / "session-big.jsonl", "a big log", turns=600, pad=300)
    monkeypatch.setattr(sessions_gemini, "WHOLE_BYTES", 48 * 1024)
    big, small = list_all(session_roots(), cache_path=None)
    # the rewritten record counted once, the rewound one not at all
    assert (small.messages, small.messages_exact) == (5, True)
    assert small.first_prompt == "a logged session" and small.session_id == "gem-log-1"
    assert small.last_activity == big.last_activity == "2026-01-02T03:04:05+00:00"
    assert big.first_prompt == "a big log" and not big.messages_exact
    assert 601 * 0.8 < big.messages < 601 * 1.2


def test_real_gemini_cli_sessions(home: Path) -> None:
    """The public Gemini CLI sessions of tests/acceptance/gemini_cli, as Gemini CLI keeps them:
    every user and model record counted exactly, the first prompt, the session's own times."""
    from tests.support.paths import ROOT

    real = sorted((ROOT / "tests/acceptance/gemini_cli").glob("*.json"))
    chats = home / ".gemini/tmp/0123abcd/chats"
    chats.mkdir(parents=True)
    expected = {}
    for f in real:
        doc = json.loads(f.read_bytes())
        (chats / f"session-{f.stem}.json").write_bytes(f.read_bytes())
        turns = [m for m in doc["messages"] if m["type"] in ("user", "gemini")]
        first = next(m for m in turns if m["type"] == "user")["content"]
        text = first if isinstance(first, str) else "".join(p.get("text", "") for p in first)
        expected[doc["sessionId"]] = (len(turns), text.strip()[:50], doc["lastUpdated"][:19])
    infos = list_all(session_roots(), cache_path=None)
    assert len(infos) == len(real) >= 7
    got = {
        i.session_id: (i.messages, i.first_prompt[:50], i.last_activity[:19])
        for i in infos
        if i.messages_exact
    }
    assert got == expected


def test_real_codex_rollouts(home: Path) -> None:
    """The public rollouts of tests/acceptance/codex where Codex keeps them: their messages
    counted exactly as the reader reads them (a response item each, and each item of a
    compaction's replacement history), the prompt the user typed, the cwd, the newest time."""
    from tests.support.paths import ROOT

    real = sorted((ROOT / "tests/acceptance/codex").glob("*.jsonl"))
    day = home / ".codex/sessions/2026/02/23"
    day.mkdir(parents=True)
    truth = {}
    for f in real:
        dst = day / f"rollout-{f.stem}.jsonl"
        dst.write_bytes(f.read_bytes())
        records = [json.loads(x) for x in f.read_text().splitlines() if x.strip()]
        items = len(load_session(f).messages)
        stamps = [r["timestamp"] for r in records if isinstance(r.get("timestamp"), str)]
        truth[str(dst)] = (items, stamps[-1][:19])
    infos = list_all(session_roots(), cache_path=None)
    assert len(infos) == len(real) >= 10
    for info in infos:
        items, last = truth[info.path]
        assert info.last_activity[:19] == last
        assert info.provider == "openai" and info.project and info.first_prompt
        assert info.messages_exact and info.messages == items


def test_a_codex_sub_agent_is_listed_under_the_session_that_spawned_it(home: Path) -> None:
    """Codex writes a spawned agent's thread as a rollout of its own, its session_meta naming
    the parent thread (``source.subagent.thread_spawn.parent_thread_id``)."""
    day = home / ".codex/sessions/2026/03/01"
    write_rollout(day / "rollout-2026-03-01T10-00-00-parent.jsonl", "do it", "2026-03-01T10:00Z")
    child = day / "rollout-2026-03-01T10-01-00-child.jsonl"
    write_rollout(child, "look at the tests", "2026-03-01T10:01:00.000Z")
    spawn = {"thread_spawn": {"parent_thread_id": "019a-codex", "depth": 1}}
    lines = child.read_text().splitlines(keepends=True)
    meta = json.loads(lines[0])
    meta["payload"] |= {"id": "019a-child", "source": {"subagent": spawn}}
    child.write_text(json.dumps(meta) + "\n" + "".join(lines[1:]))
    orphan = day / "rollout-2026-03-01T11-00-00-orphan.jsonl"
    orphan.write_text(child.read_text().replace("019a-codex", "gone-thread"))
    infos = list_all(session_roots(), cache_path=None)
    assert sorted(i.session_id for i in infos) == ["019a-child", "019a-codex"]
    parent = next(i for i in infos if i.session_id == "019a-codex")
    assert [(Path(a.path).name, a.first_prompt) for a in parent.subagents] == [
        (child.name, "look at the tests")
    ]
    # a sub-agent whose parent's rollout is gone is listed on its own
    assert next(i for i in infos if i.session_id == "019a-child").path == str(orphan)


def test_a_rollouts_messages_are_counted_as_the_reader_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A response item each (its envelope's type, not a payload's that quotes one), each item
    of a compaction's replacement history; lines cut across the streamed pieces; a compaction
    too long to parse leaves the count inexact."""

    def line(kind: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": "2026-07-01T00:00:00Z", "type": kind, "payload": payload})

    quoting = {"type": "function_call_output", "call_id": "a", "output": '"type":"compacted"'}
    history = [{"type": "message", "role": "user", "content": "x" * 300}] * 3
    lines = [
        line("session_meta", {"id": "s", "cwd": CWD, "base_instructions": {"text": "i" * 900}}),
        line("response_item", {"type": "message", "role": "user", "content": "go"}),
        line("response_item", quoting),
        line("event_msg", {"type": "token_count", "info": None}),
        line("compacted", {"message": "", "replacement_history": history}),
        line("compacted", {"message": "a summary"}),
        line("response_item", {"type": "message", "role": "assistant", "content": "done"}),
    ]
    path = tmp_path / "rollout-count.jsonl"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(sessions_codex, "COUNT_CHUNK", 7)
    s = sessions_codex.summarise_rollout(path)
    assert (s.messages, s.exact) == (len(load_session(path).messages), True) == (7, True)
    monkeypatch.setattr(sessions_codex, "MAX_COMPACTED_BYTES", 200)
    s = sessions_codex.summarise_rollout(path)
    assert (s.messages, s.exact) == (4, False)
