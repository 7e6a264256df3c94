"""Pin / unpin in the TUI: P previews and pins a message with its tool pair, the
timeline marks it, the strategy never evicts it, u undoes, p visits it, the pin is saved and
reopened, and the palette offers it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from textual.widgets import Static

from ctxview.app.editing import EditPreviewScreen
from tests.support.apphelp import make_app, row_texts, screen_after, settle
from tests.support.paths import ROOT

AGENT = ROOT / "sample_sessions" / "agent_loop.json"


def _row(app: object, mid: int) -> str:
    return next(r for r in row_texts(app) if r[1:8].strip() == str(mid))  # type: ignore[arg-type]


def _shown(app: object) -> str:
    return "\n".join(str(w.render()) for w in app.screen.query(Static))  # type: ignore[attr-defined]


async def test_pin_keeps_a_tool_pair_through_evictions_and_u_undoes(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    shutil.copy(AGENT, path)
    app = make_app(str(path))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        ctx = app.model.context
        app.timeline.select_id(18)  # a tool_result: its tool_use (#17) is pinned with it
        await settle(pilot)
        await screen_after(pilot, "P", EditPreviewScreen)
        shown = _shown(app)
        assert "Edit: pin #17, #18" in shown
        assert "the window does not change now" in shown
        assert "pinned tokens stay" in shown
        await pilot.press("escape")  # cancelled: nothing pinned
        await settle(pilot)
        assert ctx.pinned_ids == []
        await pilot.press("P")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert ctx.pinned_ids == [17, 18]
        assert app.model.status(17) == "pinned" and app.model.status(18) == "pinned"
        assert "pinned" in _row(app, 17) and "⚑" in _row(app, 18)
        for _ in range(10):  # max 14 -> 4: the seed strategy evicts all but the pins
            await pilot.press("minus")
        await settle(pilot)
        assert ctx.max_context_messages == 4
        assert ctx.window_ids == [0, 17, 18, 24, 25, 26]
        assert "6 / 4 messages · 2 pinned" in str(app.query_one("#window", Static).render())
        # p visits the first message, then each pinned one
        await pilot.press("home")
        await settle(pilot)
        assert app.timeline.selected_id == 0
        for expected in (17, 18, 0):
            await pilot.press("p")
            await settle(pilot)
            assert app.timeline.selected_id == expected
        # saved and reopened: still pinned
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("o")
        await settle(pilot)
        saved = json.loads(path.read_text())
        assert saved["window"]["pinned"] == [17, 18]
        await pilot.press("u")  # undo the pin: the next eviction may take them
        await settle(pilot)
        assert ctx.pinned_ids == [] and app.model.status(17) == "kept"
        await pilot.press("minus")
        await settle(pilot)
        assert 17 not in ctx.window_ids and 18 not in ctx.window_ids
        app.open_path(str(path))  # the undo and the eviction are not saved: discard them
        await pilot.pause()
        await pilot.press("d")
        await settle(pilot)
        assert app.model.context.pinned_ids == [17, 18]
        assert app.model.status(18) == "pinned"


async def test_unpin_previews_and_the_first_message_needs_no_pin(tmp_path: Path) -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        ctx = app.model.context
        app.timeline.select_id(0)
        await settle(pilot)
        await pilot.press("P")  # the first message is always kept: a notice, no preview
        await settle(pilot)
        assert not isinstance(app.screen, EditPreviewScreen) and ctx.pinned_ids == []
        app.timeline.select_id(21)  # an assistant reply: the user turn after it comes along
        await settle(pilot)
        await pilot.press("P")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert ctx.pinned_ids == [21, 22]
        app.timeline.select_id(22)
        await settle(pilot)
        await screen_after(pilot, "P", EditPreviewScreen)
        assert "unpin #21, #22" in _shown(app)
        assert "until the strategy evicts them at the next add" in _shown(app)
        await pilot.press("enter")
        await settle(pilot)
        assert ctx.pinned_ids == []
        await pilot.press("u")  # undo the unpin
        await settle(pilot)
        assert ctx.pinned_ids == [21, 22]
        # unpin again, and let the strategy evict them before the undo: it says so
        await pilot.press("P")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        for _ in range(12):
            await pilot.press("minus")
        await settle(pilot)
        assert 21 not in ctx.window_ids
        await pilot.press("u")
        await settle(pilot)
        assert ctx.pinned_ids == []
        assert any("undone in part" in m for m, t, _ in app.notice_log)


async def test_the_palette_offers_pin(tmp_path: Path) -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        app.timeline.select_id(16)
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Pin / unpin")
        await settle(pilot)
        await screen_after(pilot, "enter", EditPreviewScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.context.pinned_ids == [16]
