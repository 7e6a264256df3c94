"""One headless Chromium for the browser tests of a process (a page per test)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.browser import browser_required, chromium_path


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    path = chromium_path()
    if path is None:
        why = "no Chromium found (apt-get install chromium, or set CTXVIEW_CHROMIUM)"
        if browser_required():
            pytest.fail(f"the browser tests must run here: {why}")
        pytest.skip(why)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if browser_required():
            pytest.fail("the browser tests must run here: playwright is not installed")
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as p:
        # --no-sandbox: CI containers run as root, where Chromium's sandbox refuses to start
        b = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    pg = context.new_page()
    yield pg
    context.close()
