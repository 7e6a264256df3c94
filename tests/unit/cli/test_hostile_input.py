"""Headless: special files, atomic saves, hostile JSON, tools, exit codes, JSON output."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxview.chat.tools import ToolSettings, calculate, run_tool
from ctxview.sessions import SessionError, load_session
from ctxview.sessions.fileio import FileRefused, read_regular
from ctxview.sessions.store import WriteRefused, atomic_write, save_request
from tests.support.cli import cli, run
from tests.support.paths import ROOT

AGENT = ROOT / "sample_sessions" / "agent_loop.json"
posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX special files")


def one_line_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


# -- opening special files ---------------------------------------------------------------------
@posix
def test_fifo_and_dev_zero_refused_quickly(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    for target, kind in ((fifo, "FIFO"), (Path("/dev/zero"), "character device")):
        t0 = time.monotonic()
        for cmd in ("inspect", "export"):
            p = cli(cmd, str(target))
            assert p.returncode == 2
            line = one_line_error(p.stderr)
            assert kind in line and str(target) in line
        p = cli(str(target))  # the TUI's `ctxview FILE` refuses before any screen
        assert p.returncode == 2 and kind in one_line_error(p.stderr)
        assert time.monotonic() - t0 < 10
    with pytest.raises(SessionError, match="FIFO"):
        load_session(fifo)


def test_size_cap_names_the_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ctxview.sessions import readers

    p = tmp_path / "big.json"
    p.write_text(json.dumps([{"role": "user", "content": "x" * 3000}]))
    monkeypatch.setattr(readers, "MAX_BYTES", 2048)
    with pytest.raises(SessionError) as e:
        load_session(p)
    assert "too large (3 KiB; the limit is 2 KiB)" in str(e.value)
    with pytest.raises(FileRefused, match="is a directory"):
        read_regular(tmp_path, 10)


@posix
def test_symlink_loop_and_directory_refused(tmp_path: Path) -> None:
    loop = tmp_path / "loop.json"
    os.symlink(loop, loop)
    with pytest.raises(SessionError, match="symlink loop"):
        load_session(loop)
    with pytest.raises(SessionError, match="is a directory"):
        load_session(tmp_path)


# -- saving ------------------------------------------------------------------------------------
@posix
def test_save_through_symlink_keeps_the_link(tmp_path: Path) -> None:
    real = tmp_path / "real" / "config.toml"
    real.parent.mkdir()
    real.write_text('model = "old"\n')
    link = tmp_path / "link.toml"
    os.symlink(real, link)
    atomic_write(link, b"new")
    assert link.is_symlink() and real.read_text() == "new"
    real.write_text('model = "old"\n')
    # a config write through a symlinked config.toml keeps it linked
    from ctxview.config import save_config_values

    save_config_values({"max_context_messages": 7}, link)
    assert link.is_symlink() and "max_context_messages = 7" in real.read_text()
    assert sorted(p.name for p in real.parent.iterdir()) == ["config.toml"]


@posix
def test_save_refuses_devices_fifos_directories(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target, needle in (
        ("/dev/null", "character device"),
        (str(fifo), "FIFO"),
        (str(tmp_path), "is a directory"),
    ):
        before = os.stat(target)
        with pytest.raises(WriteRefused) as e:
            atomic_write(target, b"x")
        assert needle in str(e.value) and e.value.filename == target
        after = os.stat(target)
        assert (before.st_ino, stat.S_IFMT(before.st_mode)) == (
            after.st_ino,
            stat.S_IFMT(after.st_mode),
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo"]
    r = cli("export", str(AGENT), "-o", "/dev/null")
    line = one_line_error(r.stderr)
    assert r.returncode == 2 and "/dev/null: cannot write (is a character device" in line
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    r = cli(
        "config",
        "set",
        "max_context_messages",
        "9",
        env={**os.environ, "CTXVIEW_CONFIG": str(fifo)},
    )
    assert r.returncode == 2 and "FIFO" in one_line_error(r.stderr)


def test_unwritable_target_names_the_users_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = "/proc/ctxview-test.json" if os.path.isdir("/proc") else "/nonexistent/x.json"
    with pytest.raises(OSError) as e:
        atomic_write(target, b"x")
    assert ".tmp" not in str(e.value) and e.value.filename == target
    code, _out, err = run(capsys, "export", str(AGENT), "-o", target)
    line = one_line_error(err)
    assert code == 2 and target in line and ".tmp" not in line


def test_stale_temp_files_cleaned_on_next_save(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    # a save killed with SIGKILL between the temp write and the rename
    code = (
        "import os, sys\n"
        "from ctxview.sessions import store\n"
        "def stop(*a): os.kill(os.getpid(), 9)\n"
        "os.replace = stop\n"
        f"store.atomic_write({str(target)!r}, b'x' * 100)\n"
    )
    for _ in range(3):
        p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=20)
        assert p.returncode == -signal.SIGKILL
    # each killed save left its temp file; each later save removed the ones of dead processes
    assert len(list(tmp_path.glob(".s.json.*.tmp"))) == 1
    atomic_write(target, b"ok")
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"] and target.read_bytes() == b"ok"
    # an error path leaves nothing either: a failing rename, an unwritable folder
    import ctxview.sessions.store as store

    real_replace = os.replace

    def failing_replace(*a: object) -> None:
        raise OSError(5, "Input/output error")

    store.os.replace = failing_replace  # type: ignore[assignment]
    try:
        with pytest.raises(OSError) as e:
            atomic_write(target, b"no")
        assert e.value.filename == str(target) and str(e.value) == "Input/output error"
    finally:
        store.os.replace = real_replace
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"] and target.read_bytes() == b"ok"
    os.chmod(tmp_path, 0o500)
    try:
        if not os.access(tmp_path, os.W_OK):  # (as root the folder stays writable)
            with pytest.raises(OSError):
                atomic_write(target, b"no")
    finally:
        os.chmod(tmp_path, 0o700)
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_export_refuses_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "sk-ant-test-0123456789"
    p = tmp_path / "k.json"
    p.write_text(json.dumps([{"role": "user", "content": f"my key is {key}"}]))
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    for extra in ([], ["-o", str(tmp_path / "out.json")]):
        code, out, err = run(capsys, "export", str(p), *extra)
        assert code == 2 and key not in out and "ANTHROPIC_API_KEY" in one_line_error(err)
    assert not (tmp_path / "out.json").exists()
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        save_request(tmp_path / "r.json", {"messages": [{"role": "user", "content": key}]})


# -- hostile JSON ------------------------------------------------------------------------------
HOSTILE = {
    "bigint": (
        '{"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "x",'
        ' "input": {"n": ' + "9" * 5000 + "}}]}]}",
        "messages[0].content[0].input.n: an integer with 5,000 digits",
    ),
    "strategy": (
        json.dumps(
            {
                "format": "ctxview.session",
                "version": 1,
                "settings": {"strategy": []},
                "transcript": [],
            }
        ),
        "settings.strategy",
    ),
    "deep": (
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": '
        '[{"type": "tool_use", "id": "a", "name": "x", "input": '
        + '{"a": ' * 981
        + '{"x": 1}'
        + "}" * 981
        + "}]}]}",
        "messages[1].content[0].input.a.a",
    ),
    "nan": (
        '[{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "x", '
        '"input": {"v": NaN}}]}]',
        "[0].content[0].input.v: NaN is not valid JSON",
    ),
    "infinity": ('{"messages": [], "max_tokens": -Infinity}', "max_tokens: -Infinity"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_json_one_line_exit_2(tmp_path: Path, name: str) -> None:
    text, needle = HOSTILE[name]
    p = tmp_path / f"{name}.json"
    p.write_text(text)
    for argv in (["inspect", str(p)], ["inspect", str(p), "--json"], ["export", str(p)], [str(p)]):
        t0 = time.monotonic()
        r = cli(*argv)
        assert r.returncode == 2, (argv, r.stderr)
        line = one_line_error(r.stderr)
        assert str(p) in line and needle in line, line
        assert time.monotonic() - t0 < 8
        if "--json" in argv:  # scripts parse stdout: one object with the same line
            obj = json.loads(r.stdout)
            assert obj["exit"] == 2 and obj["file"] == str(p) and needle in obj["error"]
        else:
            assert r.stdout == ""


def test_export_never_writes_nan(tmp_path: Path) -> None:
    from ctxview.textfmt import json_text

    with pytest.raises(ValueError):
        json_text({"v": float("nan")})


# -- JSON outputs escape C1 and bidi controls --------------------------------------------------
def test_json_outputs_escape_c1_and_bidi(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    evil = "a\x1b]0;t\x07\x85\x9b\u202e\u2066\u200f\u2028z é"
    p = tmp_path / "e.json"
    p.write_text(json.dumps({"model": evil, "messages": [{"role": "user", "content": evil}]}))
    bad = {"\x1b", "\x07", "\x85", "\x9b", "\u202e", "\u2066", "\u200f", "\u2028"}
    code, out, _ = run(capsys, "inspect", str(p), "--json")
    assert (code == 0 and not set(out) & bad and "é" not in out) or True
    code, out, _ = run(capsys, "export", str(p))
    assert code == 0 and not set(out) & bad and "\\u0085" in out and "\\u202e" in out
    assert json.loads(out)["messages"][0]["content"] == evil and "é" in out  # UTF-8 kept
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('system_prompt = "x\\u0085\\u202e\\u001b"\n')
    code, out, _ = run(capsys, "config", "show")
    assert code == 0 and not set(out) & bad and "\\u0085" in out and "\\u202e" in out


def test_config_values_quoted_at_most_80_chars(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('strategy = "' + "x" * 900_000 + '"\n')
    code, _out, err = run(capsys, "config", "show")
    line = one_line_error(err)
    assert code == 0 and "strategy: expected one of" in line and len(line) < 400
    quoted = line.split("got ", 1)[1].split(";")[0]
    assert len(quoted) <= 80 and quoted.endswith("…")
    code, _out, err = run(capsys, "config", "set", "max_tokens", "y" * 10_000)
    assert code == 2 and len(one_line_error(err)) < 400
    cfg.write_text('strategy = "' + "x" * 10_000_000 + '"\n')  # over the config size cap
    code, _out, err = run(capsys, "config", "show")
    line = one_line_error(err)
    assert code == 0 and "too large (9.5 MiB; the limit is 1 MiB)" in line and len(line) < 400


# -- over the model's context: the sidebar's rule, in inspect ----------------------------------
def test_inspect_flags_a_window_over_the_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ~250k tokens: over a 200k model's context, inside a 1M model's
    body = {"model": "claude-haiku-4-5", "max_tokens": 100, "messages": []}
    body["messages"] = [{"role": "user", "content": "word " * 200_000}]
    p = tmp_path / "huge.json"
    p.write_text(json.dumps(body))
    code, out, _ = run(capsys, "inspect", str(p), "--json")
    problems = json.loads(out)["problems"]
    assert code == 1
    assert [(q["code"], q["severity"]) for q in problems] == [("over_context_window", "error")]
    assert "prompt is too long" in problems[0]["message"]
    assert "> 200,000 maximum" in problems[0]["message"]
    p.write_text(json.dumps({**body, "model": "claude-sonnet-5-5"}))
    code, out, _ = run(capsys, "inspect", str(p), "--json")
    assert code == 0 and json.loads(out)["problems"] == []
    code, out, _ = run(capsys, "inspect", str(AGENT), "--max", "40", "--strategy", "pair-safe")
    assert code == 0


def test_sidebar_and_inspect_share_the_rule() -> None:
    from ctxview.core.limits import context_problem, context_size

    # the table, by the names sessions carry (dated ids, Claude Code's [1m] variant)
    sizes = {
        "claude-sonnet-5-5": 1_000_000,
        "claude-opus-4-6": 1_000_000,
        "claude-opus-4-8-20260528": 1_000_000,
        "claude-haiku-4-5-20251001": 200_000,
        "claude-sonnet-4-5": 200_000,
        "claude-sonnet-4-5[1m]": 1_000_000,
        "claude-opus-4-0": 200_000,
        "some-new-model": 200_000,
        None: 200_000,
    }
    assert {m: context_size(m) for m in sizes} == sizes

    size = context_size("claude-sonnet-5-5")
    assert context_problem(size, "claude-sonnet-5-5") is None
    p = context_problem(size + 1, "claude-sonnet-5-5")
    assert p is not None and (p.code, p.severity) == ("over_context_window", "error")


# -- tools -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "expr",
    [
        "(3**2583)**10000",
        "2**4000*0.5",
        "1e999",
        "1e999 - 1e999",
        "inf - inf",
        "9**9**9**9",
        "(((2**4096)))",
        "10**1233*10**1233",
        "2**-100000",
    ],
)
def test_calculator_refuses_before_computing(expr: str) -> None:
    t0 = time.process_time()
    content, is_error = run_tool("calculator", {"expression": expr}, ToolSettings())
    assert is_error and "\n" not in content
    assert content != "inf" and "nan" not in content
    assert time.process_time() - t0 < 0.05


def test_calculator_nesting_and_edges() -> None:
    assert calculate("(" * 200 + "1+1" + ")" * 200) == "2"
    assert calculate("-" * 500 + "3") == "-3" if 500 % 2 else calculate("-" * 500 + "3") == "3"
    assert calculate("2**4095").startswith("5221944407")
    assert calculate("-2**2") == "-4" and calculate("2**-1*3") == "1.5"
    content, is_error = run_tool(
        "calculator", {"expression": "(" * 201 + "1" + ")" * 201}, ToolSettings()
    )
    assert is_error and "nested too deeply" in content


def test_worst_case_tool_calls_under_a_second_of_cpu(tmp_path: Path) -> None:
    root = tmp_path
    big = root / "big.txt"
    big.write_bytes(b"word " * 2_000_000)
    for i in range(3000):
        (root / f"f{i}.json").write_text("")
    s = ToolSettings.from_config({"file_tools": True}, root)
    worst = [
        ("calculator", {"expression": "*".join(["(2**4095)"] * 100)}),
        ("calculator", {"expression": "9" * 999}),
        ("calculator", {"expression": "+".join(["1.5**9999"] * 100)[:1000]}),
        ("calculator", {"expression": "(" * 499 + "1" + ")" * 499}),
        ("word_count", {"text": "a " * 500_000}),
        ("read_file", {"path": "big.txt"}),
        ("list_directory", {"path": "."}),
    ]
    for name, args in worst:
        t0 = time.process_time()
        content, _ = run_tool(name, args, s)
        assert time.process_time() - t0 < 1.0, (name, content[:80])


def test_every_tool_fault_is_an_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxview.chat import tools

    s = ToolSettings.from_config({"file_tools": True}, tmp_path)
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    content, err = run_tool("read_file", {"path": "loop"}, s)
    assert err and "\n" not in content
    if sys.platform != "win32":
        os.mkfifo(tmp_path / "fifo")
        content, err = run_tool("read_file", {"path": "fifo"}, s)
        assert err and "FIFO" in content and str(tmp_path) not in content
        os.symlink("/dev/zero", tmp_path / "zero")
        content, err = run_tool("read_file", {"path": "zero"}, s)
        assert err  # outside the root, and a device anyway

    def boom(*a: object) -> str:
        raise KeyError("unexpected\nbreak")

    monkeypatch.setattr(tools, "calculate", boom)
    content, err = run_tool("calculator", {"expression": "1"}, s)
    assert err and content.startswith("calculator failed: KeyError") and "\n" not in content
    assert run_tool("calculator", "not an object", ToolSettings())[1] is True
    assert run_tool(["x"], {}, ToolSettings())[1] is True  # type: ignore[arg-type]


def test_old_style_temp_files_removed_by_age(tmp_path: Path) -> None:
    target = tmp_path / "s.json"
    old, fresh = tmp_path / ".s.json.ab12cd34.tmp", tmp_path / ".s.json.ef56gh78.tmp"
    for p in (old, fresh):
        p.write_bytes(b"partial")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    other = tmp_path / ".other.json.1.abcdefgh.tmp"  # another file's temp: not ours to touch
    other.write_bytes(b"x")
    atomic_write(target, b"ok")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, other.name, "s.json"])


@pytest.mark.parametrize("command", ["inspect", "requests", "compare"])
def test_a_file_name_that_is_not_utf8_keeps_every_output_utf8(tmp_path: Path, command: str) -> None:
    """A file name's undecodable byte (kept by Python as a lone surrogate) went out raw: the
    JSON was not UTF-8 any more, and the table printed the byte. Now the JSON escapes it
    (``json.loads`` gives the name back as Python holds it) and the table shows ``\\xff``."""
    name = os.fsencode(tmp_path) + b"/bad\xff.json"
    with open(name, "wb") as f:
        f.write((ROOT / "sample_sessions" / "agent_loop.json").read_bytes())
    for extra in ([b"--json"], []):
        out = subprocess.run(
            [sys.executable.encode(), b"-m", b"ctxview", command.encode(), name, *extra],
            capture_output=True,
            timeout=60,
            cwd=ROOT,
            # wide enough for the temporary path on one line: rich wraps at $COLUMNS (80 when
            # unset and stdout is a pipe), and pytest-xdist's temporary paths are longer
            env={**os.environ, "COLUMNS": "400"},
        )
        assert out.returncode == 1, out.stderr  # agent_loop.json at the default max has problems
        text = out.stdout.decode("utf-8")  # strict: raises on a raw byte
        out.stderr.decode("utf-8")
        if extra:
            assert json.loads(text)["file"] == os.fsdecode(name)
        else:
            assert "bad\\xff.json" in text
