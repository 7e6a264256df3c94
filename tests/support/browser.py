"""Headless Chromium for the browser tests: the system's browser (Debian's ``chromium``),
driven by Playwright through its executable path (no browser download).

When no Chromium is found the browser tests skip, and say so; where they must run (CI: ``.ci/run``
sets ``CTXVIEW_REQUIRE_BROWSER=1``, or ``CI`` is set) they fail instead, so a missing browser
never passes as a green run."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from tests.support.paths import ROOT

#: where the browser tests keep their screenshots (gitignored), for a person or CI to look at
ARTIFACTS = Path(os.environ.get("CTXVIEW_TEST_ARTIFACTS", ROOT / "test-artifacts")) / "browser"


def chromium_path() -> str | None:
    """The Chromium to drive: ``$CTXVIEW_CHROMIUM``, else ``chromium`` (Debian) or
    ``chromium-browser`` on the PATH."""
    given = os.environ.get("CTXVIEW_CHROMIUM")
    if given:
        return given
    return shutil.which("chromium") or shutil.which("chromium-browser")


def browser_required() -> bool:
    """Must the browser tests run here (CI), rather than skip without a browser?"""
    return bool(os.environ.get("CTXVIEW_REQUIRE_BROWSER") or os.environ.get("CI"))


def screenshot_path(name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    return ARTIFACTS / f"{name}.png"
