"""The first screen never waits for the anthropic SDK (it takes over a second to import)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.support.paths import ROOT

# the real TUI in a subprocess, until 1.5 s after its first paint
pytestmark = pytest.mark.slow

PROBE = """
import sys
import ctxview.app.app as appmod
import ctxview.app.widgets.timeline as tlmod
from ctxview.app.launch import launch
from ctxview.cli import build_app_parser

seen = {}
orig = tlmod.Timeline.render_line
def render_line(self, y):
    strip = orig(self, y)
    if "painted" not in seen and strip.text.strip():
        seen["painted"] = "anthropic" in sys.modules
        self.app.set_timer(1.5, lambda: self.app.exit(0))
    return strip
tlmod.Timeline.render_line = render_line
orig_run = appmod.CtxviewApp.run
appmod.CtxviewApp.run = lambda self, **kw: orig_run(self, headless=True, size=(120, 40))
rc = launch(build_app_parser().parse_args([sys.argv[1]]))
print("SDK_AT_FIRST_PAINT", seen.get("painted"))
print("SDK_LATER", "anthropic" in sys.modules)
sys.exit(rc)
"""


def _run(api_key: str | None) -> str:
    """Run the app headless on a sample until 1.5 s after its first paint; its stdout."""
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["TEXTUAL_ANIMATIONS"] = "none"
    if api_key is not None:
        env["ANTHROPIC_API_KEY"] = api_key
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT / "sample_sessions" / "long_chat.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def test_sdk_loaded_after_first_paint_when_online() -> None:
    out = _run("sk-test-not-real")
    assert "SDK_AT_FIRST_PAINT False" in out  # not before the first screen
    assert "SDK_LATER True" in out  # warmed in the background afterwards


def test_sdk_never_loaded_offline() -> None:
    out = _run(None)
    assert "SDK_AT_FIRST_PAINT False" in out and "SDK_LATER False" in out
