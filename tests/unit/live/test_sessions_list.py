"""ctxview sessions: Claude Code sessions from head and tail, sub-agents, cache, hostile text."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from pathlib import Path

import pytest

from ctxview.cli import main
from ctxview.live import sessions_list
from ctxview.live.sessions_list import list_sessions, projects_roots
from tests.support.cli import cli


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
    real_read = sessions_list.read_span

    def spy(fd: int, offset: int, count: int) -> bytes:
        data = real_read(fd, offset, count)
        reads.append(len(data))
        return data

    monkeypatch.setattr(sessions_list, "read_span", spy)
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
    monkeypatch.setattr(sessions_list, "summarise_file", lambda p: calls.append(p) or real(p))
    assert list_sessions(projects_roots(), cache_path=cache)[0].first_prompt == "first"
    assert calls == []  # served from the cache
    write_session(proj / "a.jsonl", "changed", "2026-01-02T00:00:00Z", n=6)
    assert list_sessions(projects_roots(), cache_path=cache)[0].first_prompt == "changed"
    assert calls == [proj / "a.jsonl"]


def test_no_sessions(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("no agent sessions found (Claude Code: ")
    # the folders of the other agents it lists, though none exists
    assert "Codex: ~/.codex/sessions (not found)" in out
    assert "Gemini CLI: ~/.gemini/tmp (not found)" in out
    assert main(["sessions", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []


def test_empty_and_binary_files_are_not_listed_but_named_with_why(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    proj = home / ".claude" / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / "bin.jsonl").write_bytes(b"\x00\xff\xfe garbage\n{not json\n")
    (proj / "empty.jsonl").write_bytes(b"")
    (proj / "notes.jsonl").write_text("some notes\n")
    # a transcript of only its title line is a session without messages: it stays listed
    (proj / "titled.jsonl").write_text('{"type": "summary", "summary": "a title"}\n')
    infos = list_sessions(projects_roots(), cache_path=None)
    assert [(i.session_id, i.messages, i.title) for i in infos] == [("titled", 0, "a title")]
    for _ in range(2):  # read, then from the cache
        assert main(["sessions"]) == 0
        out, err = capsys.readouterr()
        assert "titled.jsonl" in out and "bin.jsonl" not in out
        assert err.splitlines() == [
            f"ctxview: skipped {proj / 'bin.jsonl'}: binary data, not JSON: no session in it",
            f"ctxview: skipped {proj / 'empty.jsonl'}: empty file: no session in it",
            f"ctxview: skipped {proj / 'notes.jsonl'}: text that is not JSON: no session in it",
        ]
    assert main(["sessions", "--json"]) == 0
    assert [i["session_id"] for i in json.loads(capsys.readouterr().out)] == ["titled"]


posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX special files")


def _release_fifo(fifo: Path) -> None:
    """Open the FIFO's write end (and close it): a reader blocked in ``open`` goes on."""
    with contextlib.suppress(OSError):
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))


@posix
def test_a_fifo_among_the_sessions_is_skipped_without_waiting(home: Path) -> None:
    proj = home / ".claude" / "projects" / "p"
    write_session(proj / "real.jsonl", "the real one", "2026-01-01T00:00:00Z")
    os.mkfifo(proj / "pipe.jsonl")
    found: list[list[str]] = []
    worker = threading.Thread(
        target=lambda: found.append(
            [i.first_prompt for i in list_sessions(projects_roots(), cache_path=None)]
        ),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=5)
    stuck = worker.is_alive()
    _release_fifo(proj / "pipe.jsonl")
    worker.join(timeout=5)
    assert not stuck, "listing the sessions waited on a FIFO"
    assert found == [["the real one"]]


@posix
def test_special_files_listed_as_a_user(home: Path) -> None:
    """``ctxview sessions`` beside a FIFO and a symlink to /dev/zero (memory capped at 1 GiB: a
    read of the device to its end would fail there): exit 0 at once, the real session listed."""
    proj = home / ".claude" / "projects" / "p"
    write_session(proj / "real.jsonl", "the real one", "2026-01-01T00:00:00Z")
    os.mkfifo(proj / "pipe.jsonl")
    (proj / "zero.jsonl").symlink_to("/dev/zero")
    (proj / "dir.jsonl").mkdir()

    def cap_memory() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    env = {**os.environ, "HOME": str(home), "CTXVIEW_STATE_DIR": str(home / "state")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    try:
        r = cli("sessions", "--json", timeout=20, env=env, preexec_fn=cap_memory)
    finally:
        _release_fifo(proj / "pipe.jsonl")
    assert r.returncode == 0, r.stderr
    assert [d["first_prompt"] for d in json.loads(r.stdout)] == ["the real one"]


def test_an_edited_cache_is_checked_and_shown_safely(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cache is a file anyone can edit: text from it passes the sanitising boundary in the
    table and the JSON, an entry of the wrong shape is dropped and its transcript read again."""
    monkeypatch.setenv("CTXVIEW_STATE_DIR", str(home / "state"))
    proj = home / ".claude" / "projects" / "p"
    write_session(proj / "a.jsonl", "first a", "2026-01-01T00:00:00Z")
    write_session(proj / "b.jsonl", "first b", "2026-01-02T00:00:00Z")
    assert main(["sessions"]) == 0
    capsys.readouterr()
    cache = home / "state" / "sessions-list.json"
    data = json.loads(cache.read_text())
    entries = data["entries"]
    hostile = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\u202e"
    entries[str(proj / "a.jsonl")].update(first_prompt=hostile, title=hostile, cwd=hostile)
    entries[str(proj / "b.jsonl")]["messages"] = "notint"
    cache.write_text(json.dumps(data))

    assert main(["sessions"]) == 0
    out = capsys.readouterr().out
    assert "␛]0;PWNED␇␛[2J" in out
    assert not any(c in out for c in "\x1b\x07\x9b\u202e")
    assert main(["sessions", "--json"]) == 0
    raw = capsys.readouterr().out
    assert not any(c in raw for c in "\x1b\x07\x9b\u202e")
    infos = {d["session_id"]: d for d in json.loads(raw)}
    assert infos["a"]["first_prompt"] == "␛]0;PWNED␇␛[2J\\x9b31m⟨U+202E⟩"
    assert infos["b"]["first_prompt"] == "first b" and infos["b"]["messages"] == 7

    for bad in ("notint", True, -3, 10**9, None, 1.5):
        entries[str(proj / "b.jsonl")]["messages"] = bad
        cache.write_text(json.dumps(data))
        (b,) = [i for i in list_sessions(projects_roots()) if i.session_id == "b"]
        assert b.messages == 7, bad
    entries[str(proj / "b.jsonl")] = {"size": "x"}
    del entries[str(proj / "a.jsonl")]["exact"]
    cache.write_text(json.dumps(data))
    assert [i.messages for i in list_sessions(projects_roots())] == [7, 7]


def test_a_timestamp_past_year_9999_in_utc(home: Path) -> None:
    proj = home / ".claude" / "projects" / "p"
    write_session(proj / "far.jsonl", "far", "9999-12-31T23:59:59-23:59")
    (info,) = list_sessions(projects_roots(), cache_path=None)
    assert info.first_prompt == "far" and info.last_activity.startswith("20")  # the mtime


@posix
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_a_cache_that_is_no_regular_file(home: Path, kind: str) -> None:
    """The cache path replaced by a FIFO or a symlink to /dev/zero: the list is made from the
    transcripts at once (memory capped at 1 GiB, as above)."""
    proj = home / ".claude" / "projects" / "p"
    write_session(proj / "real.jsonl", "the real one", "2026-01-01T00:00:00Z")
    cache = home / "state" / "sessions-list.json"
    cache.parent.mkdir()
    if kind == "fifo":
        os.mkfifo(cache)
    else:
        cache.symlink_to("/dev/zero")

    def cap_memory() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    env = {**os.environ, "HOME": str(home), "CTXVIEW_STATE_DIR": str(home / "state")}
    env.pop("CLAUDE_CONFIG_DIR", None)
    try:
        r = cli("sessions", "--json", timeout=20, env=env, preexec_fn=cap_memory)
    finally:
        if kind == "fifo":
            _release_fifo(cache)
    assert r.returncode == 0, r.stderr
    assert [d["first_prompt"] for d in json.loads(r.stdout)] == ["the real one"]


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


def test_a_long_project_path_is_cut_from_the_left_with_a_mark(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cwd = "/home/user/projects/spotter-worktrees/spotter-gqc"
    proj = home / ".claude" / "projects" / "-home-user-projects-spotter-worktrees-spotter-gqc"
    proj.mkdir(parents=True)
    (proj / "s.jsonl").write_text(line("user", "hello", "2026-03-01T10:00:00Z", cwd=cwd))
    assert main(["sessions"]) == 0
    row = capsys.readouterr().out.splitlines()[1]
    shown = next(w for w in row.split() if w.endswith("spotter-gqc"))
    assert shown.startswith("…") and cwd.endswith(shown[1:]) and len(shown) == 28


@pytest.mark.skipif(sys.platform == "darwin", reason="macOS refuses file names not UTF-8")
def test_hostile_file_names_are_listed_as_paste_able_shell_words(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file name with spaces, quotes, an escape sequence or bytes that are not UTF-8 is
    listed (the cache written and read back) as one word that reopens the file, and never
    drives the terminal."""
    import shlex

    monkeypatch.setenv("CTXVIEW_STATE_DIR", str(home / "state"))
    proj = home / ".claude" / "projects" / "-work-proj"
    names = {
        "my session.jsonl": "2026-01-01T10:00:00Z",
        "it's $HOME.jsonl": "2026-01-02T10:00:00Z",
        "esc\x1b[31m.jsonl": "2026-01-03T10:00:00Z",
        os.fsdecode(b"bad\xff\xfe.jsonl"): "2026-01-04T10:00:00Z",
    }
    for name, ts in names.items():
        write_session(proj / name, name, ts)
    for _ in range(2):  # read, then from the cache
        assert main(["sessions"]) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out
        paths = [ln[4:] for ln in out.splitlines() if ln.startswith("    ")]
        assert paths[0] == f"$'{proj}/bad\\xff\\xfe.jsonl'"
        assert paths[1] == f"$'{proj}/esc\\x1b[31m.jsonl'"
        assert shlex.split(paths[2]) == [str(proj / "it's $HOME.jsonl")]
        assert shlex.split(paths[3]) == [str(proj / "my session.jsonl")]
        assert main(["sessions", "--json"]) == 0
        listed = [i["path"] for i in json.loads(capsys.readouterr().out)]
        assert sorted(listed) == sorted(str(proj / n) for n in names)
