"""ctxview sessions: Claude Code sessions from head and tail, sub-agents, cache, hostile text."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxview.cli import main
from ctxview.live import sessions_list
from ctxview.live.sessions_list import list_sessions, projects_roots


def line(kind: str, content: object, ts: str, **extra: object) -> str:
    rec = {
        "type": kind,
        "timestamp": ts,
        "cwd": "/work/proj",
        "sessionId": extra.pop("sid", "s1"),
        "message": {"role": kind, "content": content},
        **extra,
    }
    return json.dumps(rec) + "\n"


def write_session(path: Path, prompt: str, ts: str, n: int = 4, pad: int = 0) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fh.write(line("user", "<command-name>/clear</command-name>", ts, isMeta=False))
        fh.write(line("user", "caveat", ts, isMeta=True))
        fh.write(line("user", prompt, ts))
        for k in range(n):
            kind = "assistant" if k % 2 == 0 else "user"
            content = [{"type": "text", "text": f"m{k} " + "x" * pad}]
            fh.write(line(kind, content, ts))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return tmp_path


def test_lists_newest_first_with_subagents(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = home / ".claude" / "projects" / "-work-proj"
    write_session(proj / "old.jsonl", "the old one", "2026-01-01T10:00:00Z")
    write_session(proj / "new.jsonl", "fix \x1b[31mthe\x1b[0m bug\nplease", "2026-03-01T10:00:00Z")
    write_session(proj / "new" / "subagents" / "agent-a1.jsonl", "sub task", "2026-03-01T10:01:00Z")
    # an older-style sub-agent file beside the sessions, naming its parent by sessionId
    (proj / "agent-zz.jsonl").write_text(
        line("user", "loose sub task", "2026-03-01T10:02:00Z", sid="new")
    )
    infos = list_sessions(projects_roots(), cache_path=None)
    assert [i.session_id for i in infos] == ["new", "old"]
    new = infos[0]
    assert new.project == "/work/proj"
    assert new.first_prompt == "fix ␛[31mthe␛[0m bug⏎please"  # sanitised, one line, meta skipped
    assert new.messages == 7 and new.messages_exact
    assert sorted(os.path.basename(a.path) for a in new.subagents) == [
        "agent-a1.jsonl",
        "agent-zz.jsonl",
    ]
    assert new.last_activity == "2026-03-01T10:00:00+00:00"
    assert main(["sessions", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["subagent_count"] == 2 and data[1]["first_prompt"] == "the old one"
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "fix ␛[31mthe" in out and "└ agent-a1.jsonl" in out


def test_limit(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proj = home / ".claude" / "projects" / "-work-proj"
    write_session(proj / "old.jsonl", "the old one", "2026-01-01T10:00:00Z")
    write_session(proj / "new.jsonl", "the new one", "2026-03-01T10:00:00Z")
    assert main(["sessions", "--json", "--limit", "1"]) == 0
    assert [d["first_prompt"] for d in json.loads(capsys.readouterr().out)] == ["the new one"]
    for bad in ("0", "-1", "x"):
        with pytest.raises(SystemExit) as e:
            main(["sessions", "--limit", bad])
        assert e.value.code == 2
        assert "expected an integer >= 1" in capsys.readouterr().err


def test_claude_config_dir(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "cfg"
    write_session(
        other / "projects" / "p" / "x.jsonl", "from the config dir", "2026-01-01T00:00:00Z"
    )
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    infos = list_sessions(projects_roots(), cache_path=None)
    assert [i.first_prompt for i in infos] == ["from the config dir"]


def test_big_file_reads_head_and_tail_only(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = home / ".claude" / "projects" / "p"
    write_session(proj / "big.jsonl", "big one", "2026-01-01T00:00:00Z", n=2000, pad=300)
    size = (proj / "big.jsonl").stat().st_size
    assert size > 4 * sessions_list.HEAD_BYTES
    reads: list[int] = []
    real_open = open

    class Spy:
        def __init__(self, fh):  # type: ignore[no-untyped-def]
            self.fh = fh

        def __enter__(self):  # type: ignore[no-untyped-def]
            return self

        def __exit__(self, *a):  # type: ignore[no-untyped-def]
            self.fh.close()

        def read(self, n: int = -1) -> bytes:
            data = self.fh.read(n)
            reads.append(len(data))
            return data

        def seek(self, n: int) -> None:
            self.fh.seek(n)

    monkeypatch.setattr(sessions_list, "open", lambda p, m: Spy(real_open(p, m)), raising=False)
    (info,) = list_sessions(projects_roots(), cache_path=None)
    assert sum(reads) <= sessions_list.HEAD_BYTES + sessions_list.TAIL_BYTES
    assert not info.messages_exact
    assert abs(info.messages - 2001) / 2001 < 0.1  # estimated from the samples' line density


def test_cache_by_mtime(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    proj = home / ".claude" / "projects" / "p"
    write_session(proj / "a.jsonl", "first", "2026-01-01T00:00:00Z")
    cache = tmp_path / "cache.json"
    assert list_sessions(projects_roots(), cache_path=cache)[0].first_prompt == "first"
    calls: list[Path] = []
    real = sessions_list.summarise_file
    monkeypatch.setattr(
        sessions_list, "summarise_file", lambda p, st: calls.append(p) or real(p, st)
    )
    assert list_sessions(projects_roots(), cache_path=cache)[0].first_prompt == "first"
    assert calls == []  # served from the cache
    write_session(proj / "a.jsonl", "changed", "2026-01-02T00:00:00Z", n=6)
    assert list_sessions(projects_roots(), cache_path=cache)[0].first_prompt == "changed"
    assert calls == [proj / "a.jsonl"]


def test_no_sessions(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions"]) == 0
    assert "no Claude Code sessions" in capsys.readouterr().out
    assert main(["sessions", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_garbage_files_do_not_break_the_list(home: Path) -> None:
    proj = home / ".claude" / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / "bin.jsonl").write_bytes(b"\x00\xff\xfe garbage\n{not json\n")
    (proj / "empty.jsonl").write_bytes(b"")
    infos = list_sessions(projects_roots(), cache_path=None)
    assert sorted(i.session_id for i in infos) == ["bin", "empty"]
    assert all(i.messages == 0 and i.first_prompt == "" for i in infos)


def test_a_long_project_name_is_cut_with_an_ellipsis(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    proj = home / ".claude" / "projects" / "-deep"
    path = proj / "s.jsonl"
    write_session(path, "hello", "2026-03-01T10:00:00Z")
    long_cwd = "/home/someone/work/clients/acme/very-long-project-name"
    path.write_text(path.read_text().replace('"/work/proj"', json.dumps(long_cwd)))
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert "…" + long_cwd[-27:] in out and long_cwd[-28:] not in out
