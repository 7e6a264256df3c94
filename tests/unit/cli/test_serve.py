"""``ctxview serve``'s arguments: the command each browser connection runs, and the warning an
address other than the loopback one gives (the server itself is driven in tests/browser)."""

from __future__ import annotations

import errno
import os
import shlex
import sys
from typing import Any, ClassVar

import pytest

from tests.support.cli import run
from tests.support.paths import SAMPLES


class _Server:
    """Stands in for textual-serve's Server: what ``serve`` would run, and where."""

    started: ClassVar[dict[str, Any]] = {}

    def __init__(self, command: str, **kw: Any) -> None:
        _Server.started = {"command": command, **kw}

    def serve(self) -> None:
        pass


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> type[_Server]:
    from ctxview.cli import serve

    monkeypatch.setattr(serve, "local_server", lambda: _Server)
    _Server.started = {}
    return _Server


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("127.0.0.2", True),
        ("0.0.0.0", False),
        ("192.168.1.4", False),
        ("::", False),
        ("example.org", False),
    ],
)
def test_only_loopback_addresses_count_as_this_machine(host: str, loopback: bool) -> None:
    from ctxview.cli.serve import is_loopback

    assert is_loopback(host) is loopback


def test_each_connection_runs_this_python_on_the_file_quoted_for_the_shell(
    tmp_path: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    server: type[_Server],
) -> None:
    hostile = tmp_path / "-s; touch pwned $(id).json"
    hostile.write_text((SAMPLES / "agent_loop.json").read_text())
    monkeypatch.chdir(tmp_path)
    code, _, err = run(
        capsys, "serve", hostile.name, "--max", "5", "--strategy", "seed", "--port", "8123"
    )
    assert (code, err) == (0, "")
    argv = shlex.split(server.started["command"])
    assert argv == [
        sys.executable,
        "-m",
        "ctxview",
        str(hostile),
        "--max",
        "5",
        "--strategy",
        "seed",
    ]
    assert (server.started["host"], server.started["port"]) == ("127.0.0.1", 8123)
    assert server.started["public_url"] == "http://127.0.0.1:8123"


def test_another_address_is_served_after_a_warning(
    capsys: pytest.CaptureFixture[str], server: type[_Server]
) -> None:
    code, _, err = run(capsys, "serve", str(SAMPLES / "agent_loop.json"), "--host", "0.0.0.0")
    assert code == 0
    assert err.startswith("ctxview: serving on 0.0.0.0: anyone who can reach port 8000")
    assert server.started["host"] == "0.0.0.0"


def test_a_missing_file_is_an_error_before_anything_listens(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], server: type[_Server]
) -> None:
    code, _, err = run(capsys, "serve", str(tmp_path / "none.json"))
    assert code == 2
    assert err == f"ctxview: {tmp_path / 'none.json'}: no such file\n"
    assert server.started == {}


def test_a_fifo_is_refused_with_what_it_is(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], server: type[_Server]
) -> None:
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    code, _, err = run(capsys, "serve", str(fifo))
    assert (code, server.started) == (2, {})
    assert err.startswith(f"ctxview: {fifo}: is a FIFO (named pipe)")


def test_a_port_out_of_range_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        run(capsys, "serve", "--port", "99999")
    assert exited.value.code == 2
    assert "expected a port number 1-65535, got 99999" in capsys.readouterr().err


def test_a_port_that_cannot_be_listened_on_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    class Taken(_Server):
        def serve(self) -> None:
            raise OSError(errno.EADDRINUSE, "address already in use")

    from ctxview.cli import serve

    monkeypatch.setattr(serve, "local_server", lambda: Taken)
    code, _, err = run(capsys, "serve", "--port", "8123")
    assert (code, err) == (2, "ctxview: cannot listen on 127.0.0.1:8123 (address already in use)\n")


@pytest.mark.parametrize(
    ("content", "why"),
    [("", "file is empty"), ('{"messages": [', "")],
)
def test_a_file_the_app_would_not_open_is_refused_before_anything_listens(
    tmp_path: Any, capsys: pytest.CaptureFixture[str], server: type[_Server], content: str, why: str
) -> None:
    bad = tmp_path / "session.json"
    bad.write_text(content)
    code, _, err = run(capsys, "serve", str(bad))
    assert (code, server.started) == (2, {})
    assert err.startswith(f"ctxview: {bad}: {why}")
    assert err.count("\n") == 1


def test_the_banner_prints_the_command_and_url_as_plain_text() -> None:
    """A file name is no markup in the banner (``[/bold]`` stopped the server with a
    MarkupError) and no escape sequence reaches the terminal."""
    import asyncio
    import io

    from aiohttp import web
    from rich.console import Console

    from ctxview.cli.serve import local_server

    command = "python -m ctxview '/tmp/[/bold]x [red]y\x1b]0;pwn\x07.json'"
    server = local_server()(
        command, host="127.0.0.1", port=8000, title="t", public_url="http://h/[b]\x1b[2J"
    )
    out = io.StringIO()
    server.console = Console(file=out, width=500, color_system=None)
    asyncio.run(server.on_startup(web.Application()))
    printed = out.getvalue()
    assert "Serving python -m ctxview '/tmp/[/bold]x [red]y␛]0;pwn␇.json' on http://h/[b]␛[2J" in (
        printed
    )
    assert "\x1b" not in printed
