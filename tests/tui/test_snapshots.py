"""SVG snapshots of the main screen at 120x40, animations off.

Update after an intended change with: pytest tests/tui/test_snapshots.py --snapshot-update
(then look at the SVGs in tests/tui/__snapshots__/ before committing them).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.apphelp import make_app, wait_prediction, wait_until
from tests.support.paths import ROOT

SAMPLES = ROOT / "sample_sessions"


@pytest.fixture(autouse=True)
def _no_animation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


async def _settle(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


def _select(*keys: str) -> Any:
    """Settle, press ``keys``, and wait until the detail pane (debounced) shows the selection."""

    async def run(pilot: Any) -> None:
        app = pilot.app
        await _settle(pilot)
        await pilot.press(*keys)
        await wait_until(
            pilot,
            lambda: app._detail_timer is None and app.detail.mid == app.timeline.selected_id,
        )
        await _settle(pilot)

    return run


def test_agent_loop_main_screen(snap_compare: Any) -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_settle)


def test_agent_loop_top_pinned_and_gap(snap_compare: Any) -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_select("home", "j", "j"))


def test_long_chat_main_screen(snap_compare: Any) -> None:
    app = make_app(str(SAMPLES / "long_chat.json"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_settle)


def test_thinking_image_detail(snap_compare: Any) -> None:
    app = make_app(str(SAMPLES / "thinking_image.json"))
    assert snap_compare(app, terminal_size=(120, 40), run_before=_select("home", "j", "j", "j"))


def test_narrow_80x24(snap_compare: Any) -> None:
    app = make_app(str(SAMPLES / "tool_errors.json"))
    assert snap_compare(app, terminal_size=(80, 24), run_before=_settle)


def test_agent_loop_light_theme(snap_compare: Any) -> None:
    """Evicted rows dimmed, not glaring, on a light theme."""

    async def light(pilot: Any) -> None:
        pilot.app.theme = "textual-light"
        await _select("home", "j", "j")(pilot)

    # (the theme is not saved: no "saved as your default" toast with a temporary path)
    app = make_app(str(SAMPLES / "agent_loop.json"), save_config=False)
    assert snap_compare(app, terminal_size=(120, 40), run_before=light)


def test_agent_loop_100x30(snap_compare: Any) -> None:
    """The sidebar narrows before the preview column does."""
    app = make_app(str(SAMPLES / "agent_loop.json"))
    assert snap_compare(app, terminal_size=(100, 30), run_before=_settle)


def test_real_transcript_as_sent(snap_compare: Any) -> None:
    """A recorded session as it was sent: the recorded gauge, the window-size line across
    requests, compacted rows, and the cache line of the request model."""

    async def ready(pilot: Any) -> None:
        await wait_prediction(pilot)
        await pilot.press("home")
        await _settle(pilot)

    app = make_app(
        str(
            ROOT
            / "tests"
            / "acceptance"
            / "claude_code"
            / "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
        ),
        as_sent=True,
    )
    assert snap_compare(app, terminal_size=(120, 40), run_before=ready)
