"""SVG snapshots of the compaction ledger in the timeline (a real Claude Code transcript,
compacted by hand at #276) at 120x40, animations off, dark and light theme.

Update after an intended change with:
pytest tests/tui/test_ledger_snapshot.py --snapshot-update
(then look at the SVGs in tests/tui/__snapshots__/ before committing them).
"""

from __future__ import annotations

from typing import Any

import pytest

from ctxview.app.model import marker_row
from tests.support.apphelp import make_app, wait_prediction, wait_until
from tests.support.paths import ROOT

TRANSCRIPT = (
    ROOT
    / "tests"
    / "acceptance"
    / "claude_code"
    / "spotter_ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
)


@pytest.fixture(autouse=True)
def _no_animation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


def _on_summary(theme: str) -> Any:
    async def run(pilot: Any) -> None:
        app = pilot.app
        app.theme = theme
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        tl = app.timeline
        row = app.model.rows.index(marker_row(276))
        tl.cursor = row + 1  # on the summary: the marker row above shows its own style
        tl.scroll_to(y=row - 6, animate=False)
        # the detail pane follows the selection after a short debounce: wait until it shows it
        await wait_until(
            pilot,
            lambda: app._detail_timer is None and app.detail.mid == tl.selected_id is not None,
        )
        # and the sidebar's cache figures, computed in a worker after their own debounce: those
        # of the simulation under max 1000 (a busy machine can still show the figures of the
        # transcript as sent, which count its compaction request too)
        await wait_prediction(pilot)
        await wait_until(pilot, lambda: _simulated(app.model.cache_prediction), timeout=30)
        await wait_prediction(pilot)
        await pilot.pause()

    return run


def _simulated(pred: Any) -> bool:
    return pred is not None and pred.so_far is not None and pred.so_far.log.as_sent is False


def test_ledger_marker_dark(snap_compare: Any) -> None:
    app = make_app(str(TRANSCRIPT), max_=1000)
    assert snap_compare(app, terminal_size=(120, 40), run_before=_on_summary("textual-dark"))


def test_ledger_marker_light(snap_compare: Any) -> None:
    # (the theme is not saved: no "saved as your default" toast with a temporary path)
    app = make_app(str(TRANSCRIPT), max_=1000, save_config=False)
    assert snap_compare(app, terminal_size=(120, 40), run_before=_on_summary("textual-light"))
