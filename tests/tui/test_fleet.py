"""The Fleet screen (``ctxview fleet DIR``, ``ctxview/app/screens/fleet.py``): Pilot tests and
one SVG snapshot at 120x36, animations off.

Update the snapshot after an intended change with:
pytest tests/tui/test_fleet.py --snapshot-update (then look at the SVG before committing it).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Static

from ctxview.app.screens.fleet import FleetScreen
from tests.support.apphelp import drawn, make_app, settle, wait_until
from tests.support.fleet import LONG, TOOL_HEAVY, scan_quietly


@pytest.fixture(autouse=True)
def _no_animation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TEXTUAL_ANIMATIONS", "none")


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    files = []
    for src in (TOOL_HEAVY, LONG):
        shutil.copy(src, tmp_path / src.name)
        files.append(str(tmp_path / src.name))
    scan_quietly(files, tmp_path / "ds")
    return tmp_path / "ds"


def _fleet_app(dataset: Path) -> Any:
    app = make_app()
    app.fleet_on_start = str(dataset)
    return app


async def _loaded(pilot: Any) -> FleetScreen:
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, FleetScreen))
    screen = pilot.app.screen
    await wait_until(pilot, lambda: screen.query_one(DataTable).row_count == 2)
    await settle(pilot)
    return screen


async def test_the_sessions_are_ranked_by_cost_then_by_waste(dataset: Path) -> None:
    app = _fleet_app(dataset)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _loaded(pilot)
        by_cost = list(screen.files)
        assert [Path(f).name for f in by_cost] == [LONG.name, TOOL_HEAVY.name]
        title = screen.query_one("#fleet-title", Static)
        assert "2 sessions" in str(title.render()) and "by cost (w)" in str(title.render())
        await pilot.press("w")
        await wait_until(pilot, lambda: "by waste (w)" in str(title.render()))
        await settle(pilot)
        assert screen.query_one(DataTable).row_count == 2


async def test_enter_opens_the_session(dataset: Path) -> None:
    app = _fleet_app(dataset)
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await _loaded(pilot)
        await pilot.press("down", "enter")
        await wait_until(pilot, lambda: not isinstance(app.screen, FleetScreen))
        await wait_until(pilot, lambda: app.model.path == screen.files[1])
        assert app.model.session.path == str(dataset.parent / TOOL_HEAVY.name)


async def test_enter_opens_a_file_whose_name_the_dataset_shows_made_visible(
    tmp_path: Path,
) -> None:
    # the file column holds "␛[2J…": the file opened is the one scanned
    hostile = tmp_path / "run\x1b[2J\u202e.jsonl"
    shutil.copy(TOOL_HEAVY, hostile)
    scan_quietly([str(hostile)], tmp_path / "ds")
    app = _fleet_app(tmp_path / "ds")
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, FleetScreen))
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.query_one(DataTable).row_count == 1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model.path == str(hostile))


async def test_escape_leaves_the_fleet_screen(dataset: Path) -> None:
    app = _fleet_app(dataset)
    async with app.run_test(size=(120, 36)) as pilot:
        await _loaded(pilot)
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, FleetScreen))
        assert app.model.path is None


async def test_at_80_columns_the_ranking_key_shows_and_no_legend_covers_the_chart(
    dataset: Path,
) -> None:
    app = _fleet_app(dataset)
    async with app.run_test(size=(80, 24)) as pilot:
        await _loaded(pilot)
        lines = drawn(app).splitlines()
        assert lines[0].rstrip().endswith("· by cost (w)")
        assert lines[0].startswith(" Fleet · 2 sessions · $12.00 · ")
        # the chart's title says what bars and line are; nothing else in the chart names them
        assert [ln.strip() for ln in lines if "cost $" in ln] == [
            "per day: cost $ (bars, left) · hit rate % (line, right)"
        ]
        await pilot.resize_terminal(120, 36)
        await wait_until(pilot, lambda: "breaks lost $1.52 · hit 97.6%" in drawn(app))


async def test_the_hit_rate_axis_runs_from_0_to_100_percent(dataset: Path) -> None:
    # the two days' rates (90.9 % and 97.7 %) would fill an automatic scale top to bottom
    app = _fleet_app(dataset)
    async with app.run_test(size=(120, 36)) as pilot:
        await _loaded(pilot)
        right_ticks = [ln.rstrip().rsplit("├", 1)[1] for ln in drawn(app).splitlines() if "├" in ln]
        assert right_ticks[0] == "100.0"
        assert right_ticks[-1] == "0.0"


def test_fleet_screen_snapshot(snap_compare: Any, dataset: Path) -> None:
    async def loaded(pilot: Any) -> None:
        await _loaded(pilot)

    assert snap_compare(_fleet_app(dataset), terminal_size=(120, 36), run_before=loaded)


async def test_a_fleet_with_no_priced_request_draws_no_negative_dollars(tmp_path: Path) -> None:
    """The dollar axis of a fleet whose models have no price starts at 0 (plotext centred an
    all-zero axis on 0: -1.00 to 1.00)."""
    from textual_plotext import PlotextPlot

    from tests.support.paths import ACCEPTANCE

    src = ACCEPTANCE / "codex" / "agenthistory_codex_session_with_compaction.jsonl"  # gpt-4.5-turbo
    shutil.copy(src, tmp_path / src.name)
    scan_quietly([str(tmp_path / src.name)], tmp_path / "ds")
    app = _fleet_app(tmp_path / "ds")
    async with app.run_test(size=(100, 36)) as pilot:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, FleetScreen))
        screen = pilot.app.screen
        await wait_until(pilot, lambda: screen.query_one(DataTable).row_count == 1)
        await settle(pilot)
        chart = str(screen.query_one(PlotextPlot).render())
        ticks = [line.split("┤")[0].strip() for line in chart.splitlines() if "┤" in line]
        assert "0.00" in ticks and not [t for t in ticks if t.startswith("-")]
