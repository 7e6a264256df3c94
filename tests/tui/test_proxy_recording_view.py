"""A proxy recording opened in the app: as sent, and its Requests view steps through each
answered request and says what all of its recorded requests came to."""

from __future__ import annotations

from ctxview.app.screens.requests import RequestList, RequestsScreen
from tests.support.apphelp import assert_clean, make_app, screen_after, settle, text_of, wait_until
from tests.support.paths import ROOT

RECORDING = str(ROOT / "tests" / "fixtures" / "proxy_log.jsonl")


async def test_a_recording_opens_as_sent_and_its_requests_step_by_step() -> None:
    app = make_app(RECORDING, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.as_sent == "proxy"
        assert len(app.model.context) == len(app.model.transcript) == 6
        screen = await screen_after(pilot, "R", RequestsScreen)
        await wait_until(pilot, lambda: screen.reqlog is not None)
        summary = text_of(screen, "#summary")
        assert "3 requests" in summary
        assert (
            "recorded in conversation #1: 7 requests (2 failed, 1 incomplete, 1 count_tokens)"
            in summary
        )
        log = screen.reqlog
        assert log is not None and [r.window_size for r in log.requests] == [1, 3, 5]
        assert all(r.recorded and r.timestamp for r in log.requests)
        rows = screen.query_one(RequestList)
        await wait_until(pilot, lambda: rows.cursor == 2)
        await pilot.press("k")
        await wait_until(pilot, lambda: rows.cursor == 1)
        assert_clean(app, "requests view of a recording")
