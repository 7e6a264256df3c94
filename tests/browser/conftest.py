"""One headless Chromium for the browser tests of a process, and a Playwright connection to it
per test.

Playwright's sync API marks its event loop as running in the thread that started it for as long
as it is started: kept open across tests, it would make every asyncio test that follows in the
same worker fail ("cannot be called from a running event loop"). So the browser is a process of
its own, started once, and each test opens Playwright, connects to it over the DevTools
protocol, and closes Playwright when it ends."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import browser_required, chromium_path


def _unavailable(why: str) -> None:
    if browser_required():
        pytest.fail(f"the browser tests must run here: {why}")
    pytest.skip(why)


@pytest.fixture(scope="session")
def chromium() -> Iterator[str]:
    """The DevTools endpoint of a headless Chromium running for the whole session."""
    path = chromium_path()
    if path is None:
        _unavailable("no Chromium found (apt-get install chromium, or set CTXVIEW_CHROMIUM)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _unavailable("playwright is not installed (pip install -e '.[dev]')")
    profile = Path(tempfile.mkdtemp(prefix="ctxview-chromium-"))
    proc = subprocess.Popen(
        [
            str(path),
            "--headless",
            "--no-sandbox",  # CI containers run as root, where the sandbox refuses to start
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            "--no-first-run",
            "--no-default-browser-check",
            "about:blank",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        # Chromium writes the port it chose, and the browser's path, to this file
        active = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (active.exists() and len(active.read_text().split()) >= 2):
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"{path} did not start (exit {proc.poll()})")
            time.sleep(0.05)  # polling for the file: the wait ends when Chromium writes it
        port, where = active.read_text().split()[:2]
        yield f"ws://127.0.0.1:{port}{where}"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def browser(chromium: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.connect_over_cdp(chromium)
        yield b
        b.close()  # the connection: the browser goes on for the next test


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()
