"""Opening (sessions.fileio) and saving (sessions.store.atomic_write) files: FIFOs, devices,
directories, symlink loops and oversize files are refused at once with one line naming the file,
wherever a path comes in (a session, a config's prompt file); saves are atomic, keep symlinks,
and leave no temporary file behind."""

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

from ctxview.sessions import SessionError, load_session
from ctxview.sessions.fileio import FileRefused, read_regular
from ctxview.sessions.store import WriteRefused, atomic_write
from tests.support.cli import cli, one_line_error, run
from tests.support.paths import ROOT

AGENT = ROOT / "sample_sessions" / "agent_loop.json"
posix = pytest.mark.skipif(sys.platform == "win32", reason="POSIX special files")


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


def test_config_set_refuses_a_fifo_system_prompt_file_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "prompt.txt"
    os.mkfifo(fifo)
    env = {"CTXVIEW_CONFIG": str(tmp_path / "c.toml")}
    r = cli(
        "config", "set", "system_prompt_file", str(fifo), timeout=20, env={**os.environ, **env}
    )  # used to hang
    assert r.returncode == 2 and "FIFO" in r.stderr and r.stderr.count("\n") == 1
