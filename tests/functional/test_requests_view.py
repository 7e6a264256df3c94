"""Pilot tests of the Requests view (r): rows from the request model, enter selects the
request's newest message in the timeline."""

from __future__ import annotations

from apphelp import make_app, settle
from conftest import FIXTURES, ROOT

from ctxview.app.screens.requests import RequestList, RequestsScreen

AGENT = str(ROOT / "sample_sessions" / "agent_loop.json")


async def test_requests_view_lists_requests_and_jumps_to_the_timeline() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RequestsScreen)
        lst = screen.query_one(RequestList)
        reqs = lst.reqlog.requests
        assert len(reqs) == 13  # one per assistant response of the session
        assert lst.cursor == len(reqs) - 1
        line = lst.render_line(lst.cursor - lst.scroll_offset.y).text
        assert line.lstrip().startswith(str(len(reqs) - 1))
        await pilot.press("home")
        assert lst.cursor == 0
        assert "first@0" in lst.render_line(0).text
        await pilot.press("down", "enter")
        await settle(pilot)
        assert not isinstance(app.screen, RequestsScreen)
        assert app.timeline.selected_id == reqs[1].message_ids[-1]


async def test_requests_view_on_a_transcript_shows_recorded_usage() -> None:
    app = make_app(str(FIXTURES / "claude_code" / "spotter_short.jsonl"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RequestsScreen)
        text = str(screen.query_one("#summary").render())
        assert "1 requests" in text and "recorded" in text
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, RequestsScreen)
