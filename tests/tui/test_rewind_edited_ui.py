"""The break reasons ``rewind`` and ``edited`` in the TUI's Requests view (R): a rewound Claude
Code transcript shows its abandoned requests (⎇) and the rewind; a message stubbed in the TUI
and a chat turn after it show ``edited``."""

from __future__ import annotations

from pathlib import Path

from ctxview.app.screens.requests import RequestList, RequestsScreen
from tests.support.apphelp import assert_clean, make_app, screen_after, settle
from tests.support.paths import ROOT
from tests.support.rewind import rewound, write

AGENT = ROOT / "sample_sessions" / "agent_loop.json"


def _rows(screen: RequestsScreen) -> list[str]:
    lst = screen.query_one(RequestList)
    lst.scroll_to(y=0, animate=False)
    return [lst.render_line(y).text for y in range(len(lst.reqlog.requests))]


async def test_requests_view_shows_the_rewind(tmp_path: Path) -> None:
    path = write(tmp_path / "rewound.jsonl", rewound())
    app = make_app(str(path))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "R", RequestsScreen)
        rows = _rows(screen)
        assert len(rows) == 6
        assert "⎇" in rows[2] and "⎇" in rows[3]  # sent on the abandoned branch
        assert "⎇" not in rows[4] and "rewind@4" in rows[4]
        summary = str(screen.query_one("#summary").render())
        assert "rewind 1" in summary
        assert_clean(app, "requests rewind")


async def test_an_edit_then_a_chat_turn_shows_edited(tmp_path: Path) -> None:
    # a long system prompt: the requests are above the minimum cacheable length
    app = make_app(str(AGENT), max_=100, system="You are a careful agent. " * 300)
    # the offline model answers as the session's model (its own name would break the cache
    # with the reason "model", which comes first)
    app.chat.backend.model = app.model.model
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        m = app.model
        before = len(m.transcript)
        # stub the first tool result (inside the prefix every request shared)
        target = next(
            r.id
            for r in m.transcript.records
            if isinstance(r.message.get("content"), list)
            and any(b.get("type") == "tool_result" for b in r.message["content"])
        )
        app.timeline.select_id(target)
        await settle(pilot)
        await pilot.press("c")  # stub, with a preview
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert m.status(target) == "edited"
        await pilot.press("i")
        for ch in "hello":
            await pilot.press(ch)
        await pilot.press("enter")
        await settle(pilot, 6)
        assert len(m.transcript) >= before + 2  # the question and the offline model's answer
        app.timeline.focus()
        screen = await screen_after(pilot, "R", RequestsScreen)
        reqs = screen.query_one(RequestList).reqlog.requests
        last = reqs[-1]
        assert last.cache_break is not None and last.cache_break.reason == "edited"
        assert last.cache_break.position == m.window_ids.index(target)
        assert all(r.cache_break is None or r.cache_break.reason != "edited" for r in reqs[:-1])
        assert f"edited@{last.cache_break.position}" in _rows(screen)[-1]
