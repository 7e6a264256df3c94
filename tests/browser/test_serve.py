"""``ctxview serve``: the app in a real browser (headless Chromium), as a user reaches it.

The terminal is drawn on a canvas, so what the app shows is read from what it sends: the
websocket's frames are the terminal's output, read here with the escape sequences taken out."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from tests.support.browser import screenshot_path
from tests.support.paths import ROOT, SAMPLES

pytestmark = pytest.mark.slow

_ESCAPES = re.compile(r"\x1b(\[[0-9;?$]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served() -> Iterator[str]:
    """``ctxview serve`` on the sample session, on a free loopback port: its URL."""
    port = _free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctxview",
            "serve",
            str(SAMPLES / "agent_loop.json"),
            "--port",
            str(port),
        ],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the server and the app it starts, stopped together
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(
                        proc.stderr.read().decode() if proc.stderr else ""
                    ) from None
                time.sleep(0.05)  # polling for the port: the wait ends when it answers
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class Screen:
    """What the served app has drawn so far (its websocket frames as text)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.frames: list[str] = []
        page.on("websocket", lambda ws: ws.on("framereceived", self._received))

    def _received(self, payload: str | bytes) -> None:
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
        self.frames.append(_ESCAPES.sub("", text))

    def since(self, start: int) -> str:
        return "".join(self.frames[start:])

    def wait_for(self, start: int, found: Callable[[str], bool], what: str) -> None:
        """Pump the page's events until the frames since ``start`` show ``what``."""
        deadline = time.monotonic() + 30
        while not found(self.since(start)):
            if time.monotonic() > deadline:
                raise AssertionError(f"the served app never showed {what}")
            self.page.wait_for_timeout(50)


def test_the_served_app_shows_the_session_and_answers_its_keys(served: str, page: Any) -> None:
    elsewhere: list[str] = []

    def only_loopback(route: Any) -> None:
        if urlsplit(route.request.url).hostname == "127.0.0.1":
            route.continue_()
        else:  # the page asks nothing of another host (textual-serve's own asks for a font)
            elsewhere.append(route.request.url)
            route.abort()

    page.route("**/*", only_loopback)
    screen = Screen(page)
    page.goto(served)
    screen.wait_for(
        0,
        lambda t: "agent_loop.json" in t and "tool_result" in t and "#26 user" in t,
        "the sample session's timeline with its last message selected",
    )
    page.screenshot(path=screenshot_path("serve-timeline"))

    page.focus(".xterm-helper-textarea")  # keys to the terminal, as a click would (no row hit)
    start = len(screen.frames)
    page.keyboard.press("k")
    screen.wait_for(start, lambda t: "#25 assistant" in t, "the message above selected (k)")
    start = len(screen.frames)
    page.keyboard.press("g")
    screen.wait_for(start, lambda t: "#0 user" in t, "the first message selected (g)")

    start = len(screen.frames)
    page.keyboard.press("R")
    screen.wait_for(start, lambda t: "Requests · " in t, "the Requests view (R)")
    page.screenshot(path=screenshot_path("serve-requests"))
    assert elsewhere == []
