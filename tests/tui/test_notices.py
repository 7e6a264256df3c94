"""Notices (toasts): one per event, short-lived, at the bottom right where they cover neither
the timeline's rows nor a dialog's summary line."""

from __future__ import annotations

from textual.widgets._toast import Toast

from tests.support.apphelp import make_app, settle, wait_prediction, wait_until
from tests.support.paths import SAMPLES

AGENT = str(SAMPLES / "agent_loop.json")


async def test_one_key_one_toast_clear_of_the_timeline() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_prediction(pilot)
        app.NOTICE_SECONDS = {"information": 60, "warning": 60, "error": 60}
        await pilot.press("minus")  # evicts a message, and says the max is this file's only
        await wait_until(pilot, lambda: len(app.notice_log) >= 2)
        await settle(pilot)
        toasts = list(app.screen.query(Toast))
        assert len(toasts) == 1
        text = str(toasts[0].render())
        assert "applies to agent_loop.json only" in text and "evicted #14" in text
        assert not toasts[0].region.overlaps(app.timeline.region)


async def test_a_new_toast_replaces_the_last() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45), notifications=True) as pilot:
        await settle(pilot)
        # (none times out while a loaded machine settles)
        app.NOTICE_SECONDS = {"information": 60, "warning": 60, "error": 60}
        app.notify("first")
        await settle(pilot)
        app.SAME_EVENT_SECONDS = 0  # the next one is another event
        app.notify("second")
        await settle(pilot)
        assert [n.message for n in app._notifications] == ["second"]
        app.notify("broken", severity="error")
        await settle(pilot)
        app.notify("a later note")  # an error is replaced too: it is stale by now
        await settle(pilot)
        assert [n.message for n in app._notifications] == ["a later note"]
        app.SAME_EVENT_SECONDS = 10  # the same event: said together, at its gravest
        app.notify("failed", severity="error")
        await settle(pilot)
        assert [(n.message, n.severity) for n in app._notifications] == [
            ("a later note\nfailed", "error")
        ]
        await settle(pilot)
        assert [str(t.render()) for t in app.screen.query(Toast)] == ["a later note\nfailed"]


async def test_notices_are_short_lived() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        app.notify("a note", timeout=12)
        await settle(pilot)
        assert [(n.message, n.timeout) for n in app._notifications] == [("a note", 3)]
        app.SAME_EVENT_SECONDS = 0
        app.notify("a failure", severity="error", timeout=30)
        await settle(pilot)
        assert [(n.message, n.timeout) for n in app._notifications] == [("a failure", 8)]


async def test_a_toast_leaves_the_requests_summary_visible() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await wait_prediction(pilot)
        await pilot.press("R")
        await settle(pilot)
        app.NOTICE_SECONDS = {"information": 60, "warning": 60, "error": 60}
        app.notify("a notice while the Requests view is open, long enough to wrap a line or two")
        await settle(pilot)
        toasts = list(app.screen.query(Toast))
        assert len(toasts) == 1
        summary = app.screen.query_one("#summary")
        assert "requests" in str(summary.render())
        assert not toasts[0].region.overlaps(summary.region)
