"""Where the commands that write (``export``, ``repair``, ``chat --no-tui``) put their output:
checked before any work, never the input file (by name, symlink or hard link) unless
``--force``, never a directory or FIFO, never in a folder that does not exist."""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from ctxview.cli import common
from tests.support.cli import one_line_error, run
from tests.support.paths import ROOT

AGENT = ROOT / "sample_sessions" / "agent_loop.json"

#: each writing command, as argv before ``-o OUT`` for an input file
COMMANDS: dict[str, Callable[[str], list[str]]] = {
    "export": lambda f: ["export", f],
    "repair": lambda f: ["repair", f],
    "chat": lambda f: ["chat", "--no-tui", "--offline", "hello", f],
}


@pytest.fixture
def session(tmp_path: Path) -> Path:
    p = tmp_path / "in.json"
    shutil.copy(AGENT, p)
    return p


def _same_as_input(tmp_path: Path, session: Path, how: str) -> Path:
    if how == "name":
        return session
    if how == "relative":
        return tmp_path / "." / session.name
    out = tmp_path / f"{how}.json"
    if how == "symlink":
        out.symlink_to(session.name)
    else:
        os.link(session, out)
    return out


@pytest.mark.parametrize("how", ["name", "relative", "symlink", "hardlink"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_the_input_is_never_replaced(
    tmp_path: Path,
    session: Path,
    capsys: pytest.CaptureFixture[str],
    command: str,
    how: str,
) -> None:
    before = session.read_bytes()
    out = _same_as_input(tmp_path, session, how)
    code, _, err = run(capsys, *COMMANDS[command](str(session)), "-o", str(out))
    assert code == 2
    line = one_line_error(err)
    assert "is the input file" in line and "--force" in line and str(out) in line
    assert session.read_bytes() == before


@pytest.mark.parametrize("command", list(COMMANDS))
def test_force_writes_over_the_input(
    session: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    before = session.read_bytes()
    code, _, err = run(capsys, *COMMANDS[command](str(session)), "-o", str(session), "--force")
    assert code in (0, 1), err
    assert session.read_bytes() != before
    json.loads(session.read_text())


def test_repair_with_nothing_to_fix_leaves_the_input_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = tmp_path / "ok.json"
    p.write_text(json.dumps([{"role": "user", "content": "hi"}]))
    before = p.read_bytes()
    mtime = p.stat().st_mtime_ns
    code, _, err = run(capsys, "repair", str(p), "-o", str(p), "--force")
    assert code == 0
    assert "nothing to repair" in err and "left as it is" in err
    assert p.read_bytes() == before and p.stat().st_mtime_ns == mtime


@pytest.mark.parametrize("command", list(COMMANDS))
def test_no_folder_is_created(
    tmp_path: Path, session: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    out = tmp_path / "no" / "such" / "out.json"
    code, _, err = run(capsys, *COMMANDS[command](str(session)), "-o", str(out))
    assert code == 2 and "no such folder" in one_line_error(err)
    assert not (tmp_path / "no").exists()


posix = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs")


@posix
@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_directory_or_fifo_output_is_refused_before_any_work(
    tmp_path: Path,
    session: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
) -> None:
    """The output is checked first: nothing is read, replayed or sent for an output that cannot
    be written."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    loaded: list[str] = []
    real = common.load_file

    def spy(args):  # type: ignore[no-untyped-def]
        loaded.append(args.file)
        return real(args)

    monkeypatch.setattr(common, "load_file", spy)
    from ctxview.chat import autosave

    real_open_chat = autosave.open_chat
    monkeypatch.setattr(
        autosave, "open_chat", lambda *a, **k: loaded.append(a[0]) or real_open_chat(*a, **k)
    )
    for out, kind in ((tmp_path, "is a directory"), (fifo, "is a FIFO")):
        code, _, err = run(capsys, *COMMANDS[command](str(session)), "-o", str(out))
        assert code == 2 and kind in one_line_error(err)
    assert loaded == []


def test_repair_json_names_a_refused_output(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "repair", str(session), "-o", str(session), "--json")
    obj = json.loads(out)
    assert code == 2 and obj["exit"] == 2 and "is the input file" in obj["error"]


@pytest.fixture
def unwritable(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A folder this process cannot write in: read-only by mode, and immutable too when the
    process is root (whom a mode does not stop)."""
    import subprocess

    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    immutable = False
    if os.access(folder, os.W_OK):
        immutable = (
            subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0
        )
    if os.access(folder, os.W_OK):
        pytest.skip("no way to make a folder unwritable for this user here")
    yield folder
    if immutable:
        subprocess.run(["chattr", "-i", str(folder)], check=True)
    folder.chmod(0o755)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_folder_that_cannot_be_written_in_is_refused_before_any_work(
    session: Path, unwritable: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    """Found before the work (for ``chat``: before the reply is paid for), not after it."""
    code, out, err = run(capsys, *COMMANDS[command](str(session)), "-o", str(unwritable / "o.json"))
    assert code == 2 and f"cannot write (folder not writable: {unwritable})" in one_line_error(err)
    assert out == ""  # nothing done: no reply, no body


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_an_output_linked_to_a_pipe_is_named_a_fifo(
    session: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """/dev/stdout on a pipe: its link resolves to ``pipe:[N]``, a name that exists nowhere, so
    the refusal said "No such file or directory"; it is the pipe the link opens."""
    r, w = os.pipe()
    try:
        code, _, err = run(capsys, "export", str(session), "-o", f"/proc/self/fd/{w}")
    finally:
        os.close(r)
        os.close(w)
    assert code == 2 and "is a FIFO (named pipe)" in one_line_error(err)
