"""SVG snapshot of the Compare screen (C) at 130x40, animations off: the narrowest size that
shows every column of the table (at 120 the dialog is 111 wide and ``evicted`` is off screen).

Update after an intended change with:
pytest tests/tui/test_compare_snapshot.py --snapshot-update
(then look at the SVG in tests/tui/__snapshots__/ before committing it).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.apphelp import make_app
from tests.support.paths import ROOT


@pytest.fixture(autouse=True)
def _no_animation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


async def _open_compare(pilot: Any) -> None:
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.press("C")
    await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    await pilot.pause()
    from textual.widgets import DataTable

    table = pilot.app.screen.query_one(DataTable)
    assert table.max_scroll_x == 0, "the snapshot would hide columns of the table"


def test_compare_screen_agent_loop(snap_compare: Any) -> None:
    app = make_app(str(ROOT / "sample_sessions" / "agent_loop.json"))
    assert snap_compare(app, terminal_size=(130, 40), run_before=_open_compare)
