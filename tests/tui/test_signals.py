"""The real TUI in a pseudo-terminal: SIGTERM / SIGHUP autosave, restore the terminal and exit
143 / 129; a crash exits 1 with one line naming a log file that holds the traceback."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.paths import ROOT

pytestmark = [
    pytest.mark.slow,  # the real TUI in a pseudo-terminal, in a subprocess
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and ptys"),
]


class Tty:
    """A process on a pty (120x40); ``out`` collects what it writes to the terminal."""

    def __init__(self, code: str, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        import fcntl
        import struct
        import termios

        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdin=slave,
            stdout=slave,
            stderr=slave,  # Textual draws on stderr
            env={**os.environ, "TERM": "xterm-256color", "TEXTUAL_ANIMATIONS": "none", **env},
            cwd=ROOT,
            start_new_session=True,
        )
        os.close(slave)
        self.out = b""

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            r, _, _ = select.select([self.master], [], [], 0.05)
            if r:
                try:
                    self.out += os.read(self.master, 65536)
                except OSError:
                    return

    def wait_for(self, needle: bytes, timeout: float = 30) -> None:
        end = time.monotonic() + timeout
        while needle not in self.out:
            assert time.monotonic() < end, f"{needle!r} never shown; got {self.out[-500:]!r}"
            assert self.proc.poll() is None, self.out[-2000:]
            self.pump(0.1)

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def finish(self, timeout: float = 20) -> tuple[int, str]:
        """(exit status, what was written after the terminal was restored)"""
        end = time.monotonic() + timeout
        while self.proc.poll() is None and time.monotonic() < end:
            self.pump(0.1)
        if self.proc.poll() is None:
            self.proc.kill()
            pytest.fail("the app did not exit")
        self.pump(0.3)
        os.close(self.master)
        after = self.out.rpartition(b"\x1b[?1049l")[2].decode(errors="replace")
        # the terminal-mode resets Textual writes on its way out, then what ctxview printed
        after = re.sub(r"\x1b\[\??[0-9;]*[A-Za-z]", "", after).replace("\r", "")
        return self.proc.returncode, after


RUN = "import sys; from ctxview.cli import main; sys.exit(main(sys.argv[1:] or {args!r}))"


@pytest.mark.parametrize("sig, code", [(signal.SIGTERM, 143), (signal.SIGHUP, 129)])
def test_signal_autosaves_restores_terminal_and_exits(
    tmp_path: Path, sig: signal.Signals, code: int
) -> None:
    state = tmp_path / "state"
    tty = Tty(
        RUN.format(args=["--offline"]),
        {"CTXVIEW_STATE_DIR": str(state), "CTXVIEW_CONFIG": str(tmp_path / "c.toml")},
    )
    tty.wait_for(b"offline")
    tty.pump(1.5)  # the panes mount after the first paint
    tty.type("calculate 6*7\r")
    tty.wait_for(b"42")
    tty.pump(0.5)
    before = tty.out
    tty.proc.send_signal(sig)
    rc, err = tty.finish()
    assert rc == code, err
    assert "Traceback" not in err and not err.strip()
    tail = tty.out[len(before) :]
    assert b"\x1b[?1049l" in tail  # left the alternate screen
    assert b"\x1b[?25h" in tail  # cursor shown again
    saved = list((state / "sessions").glob("*.ctxview.json"))
    assert len(saved) == 1
    doc = json.loads(saved[0].read_text())
    texts = json.dumps(doc["transcript"])
    assert "calculate 6*7" in texts and "42" in texts


def test_crash_exits_1_with_one_line_and_a_log(tmp_path: Path) -> None:
    state = tmp_path / "state"
    code = (
        "import sys\n"
        "from ctxview.app.app import CtxviewApp\n"
        "def boom(self): raise RuntimeError('boom \\x1b[2J in a handler')\n"
        "CtxviewApp.action_help = boom\n"
        "from ctxview.cli import main\n"
        "sys.exit(main(['sample_sessions/agent_loop.json']))\n"
    )
    tty = Tty(code, {"CTXVIEW_STATE_DIR": str(state), "CTXVIEW_CONFIG": str(tmp_path / "c.toml")})
    tty.wait_for(b"agent_loop")
    tty.pump(1.0)
    tty.type("?")
    rc, err = tty.finish()
    assert rc == 1
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "crashed (RuntimeError: boom" in lines[0] and "\x1b" not in lines[0]
    logs = list((state / "logs").glob("crash-*.log"))
    assert len(logs) == 1 and str(logs[0]) in lines[0]
    log = logs[0].read_text()
    assert "Traceback" in log and "RuntimeError: boom" in log and "def boom" not in err
    assert b"\x1b[?1049l" in tty.out  # the terminal was restored


def test_proxy_app_on_sigterm_records_the_cut_request_and_restores_the_terminal(
    tmp_path: Path,
) -> None:
    import socket
    import threading
    import urllib.request

    from tests.support.fake_api import FakeAPI, Response

    api = FakeAPI().start()
    api.queue(Response("hang"))  # the upstream never answers: the request is in flight
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rec = tmp_path / "rec.jsonl"
    args = ["proxy", "--port", str(port), "--upstream", api.url, "--record", str(rec)]
    tty = Tty(RUN.format(args=args), {"CTXVIEW_CONFIG": str(tmp_path / "c.toml")})
    try:
        tty.wait_for(b"ANTHROPIC_BASE_URL")

        def send() -> None:
            req = urllib.request.Request(
                f"http://127.0.0.1:{port}/v1/messages",
                data=b'{"model": "m", "max_tokens": 5, "messages": [{"role": "user", "content": "hi"}]}',
                headers={"content-type": "application/json"},
            )
            with contextlib.suppress(OSError):
                urllib.request.urlopen(req, timeout=20).read()

        client = threading.Thread(target=send, daemon=True)
        client.start()
        end = time.monotonic() + 10
        while not api.requests and time.monotonic() < end:
            tty.pump(0.05)
        assert api.requests, "the request never reached the upstream"
        before = tty.out
        tty.proc.send_signal(signal.SIGTERM)
        rc, err = tty.finish()
    finally:
        api.stop()
    assert rc == 143, err
    assert "Traceback" not in err
    tail = tty.out[len(before) :]
    assert b"\x1b[?1049l" in tail and b"\x1b[?25h" in tail  # the terminal restored
    lines = [json.loads(x) for x in rec.read_text().splitlines()]
    assert lines[0]["format"] == "ctxview.proxy-log"
    (cut,) = lines[1:]
    assert cut["complete"] is False and cut["incomplete"] == "the proxy stopped mid-request"


# A test that runs the app under Pilot, then waits far longer than the runner below allows it
HANGING_PILOT_TEST = """
import asyncio
from pathlib import Path

from tests.support.apphelp import make_app


async def test_app_then_long_wait() -> None:
    app = make_app("sample_sessions/agent_loop.json")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        Path({ready!r}).write_text("ready")
        await asyncio.sleep(120)
"""


def test_sigterm_stops_a_test_run_with_an_app_under_pilot(tmp_path: Path) -> None:
    """`timeout N pytest` must stop the run: a headless app leaves SIGTERM to its host process."""
    ready = tmp_path / "ready"
    test_file = tmp_path / "test_hanging_pilot.py"
    test_file.write_text(HANGING_PILOT_TEST.format(ready=str(ready)))
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "CTXVIEW_CONFIG": str(tmp_path / "c.toml"),
        "CTXVIEW_STATE_DIR": str(tmp_path / "state"),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "0",
            "-o",
            "asyncio_mode=auto",
            "--rootdir",
            str(tmp_path),
            str(test_file),
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        end = time.monotonic() + 60
        while not ready.exists():
            assert proc.poll() is None, proc.communicate()[0].decode(errors="replace")[-2000:]
            assert time.monotonic() < end, "the app under Pilot never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        try:
            rc = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pytest.fail("pytest went on after SIGTERM: something in the app swallowed it")
        assert rc == -signal.SIGTERM
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
