"""The first screen never waits for the anthropic SDK (it takes over a second to import)."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import ROOT

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


def test_sdk_loaded_after_first_paint_when_online() -> None:
    env = dict(os.environ, ANTHROPIC_API_KEY="sk-test-not-real", TEXTUAL_ANIMATIONS="none")
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT / "sample_sessions" / "long_chat.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "SDK_AT_FIRST_PAINT False" in out.stdout  # not before the first screen
    assert "SDK_LATER True" in out.stdout  # warmed in the background afterwards


def test_sdk_never_loaded_offline() -> None:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["TEXTUAL_ANIMATIONS"] = "none"
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(ROOT / "sample_sessions" / "long_chat.json")],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "SDK_AT_FIRST_PAINT False" in out.stdout and "SDK_LATER False" in out.stdout
