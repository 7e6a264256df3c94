"""Unsaved changes: the title marks them, and quitting or opening another file asks first
(save / discard / cancel, by key)."""

from __future__ import annotations

import shutil
from pathlib import Path

from ctxview.app.editing import EditPreviewScreen
from ctxview.app.screens.modals import UnsavedScreen
from tests.support.apphelp import make_app, settle
from tests.support.paths import SAMPLES

AGENT = SAMPLES / "agent_loop.json"


async def _pinned(app: object, pilot: object) -> None:
    """Pin the selected message (after its preview)."""
    await pilot.press("j", "j", "P")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]
    assert isinstance(app.screen, EditPreviewScreen)  # type: ignore[attr-defined]
    await pilot.press("y")  # type: ignore[attr-defined]
    await settle(pilot)  # type: ignore[arg-type]


async def test_an_edit_marks_the_title_and_a_save_clears_it(tmp_path: Path) -> None:
    path = tmp_path / "s.ctxview.json"
    shutil.copy(AGENT, path)
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "unsaved" not in app.title
        await _pinned(app, pilot)
        assert app.title == "ctxview · s.ctxview.json · ● unsaved"
        app.files.owned.add(str(path))  # (this session's file: saved without a question)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.title == "ctxview · s.ctxview.json" and not app.model.unsaved


async def test_quit_asks_cancel_stays_discard_quits() -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("minus")
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.press("ctrl+q")  # again: still one question
        await pilot.pause()
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert len(app.screen_stack) == 1 and app.is_running
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("d")
        await pilot.pause()
    assert app.return_code == 0


async def test_quit_save_saves_then_quits(tmp_path: Path) -> None:
    path = tmp_path / "s.ctxview.json"
    shutil.copy(AGENT, path)
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("minus")
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        await pilot.press("s")  # the file was not made by this session: ctrl+s's question
        await pilot.pause()
        await pilot.press("o")  # overwrite
        await settle(pilot)
    assert app.return_code == 0
    assert '"max_context_messages": 13' in path.read_text()


async def test_opening_another_file_asks_and_cancel_keeps_the_edits() -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _pinned(app, pilot)
        pinned = list(app.model.context.pinned_ids)
        app.open_path(str(SAMPLES / "long_chat.json"))
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        await pilot.press("escape")
        await settle(pilot)
        assert app.model.name == "agent_loop.json" and app.model.context.pinned_ids == pinned
        app.open_path(str(SAMPLES / "long_chat.json"))
        await pilot.pause()
        await pilot.press("d")
        await settle(pilot)
        assert app.model.name == "long_chat.json" and "unsaved" not in app.title


async def test_the_question_stays_until_it_is_answered() -> None:
    """Keys other than its own (a shell command typed into the wrong window) neither answer nor
    cancel it, and do not reach the session underneath."""
    app = make_app(str(AGENT))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _pinned(app, pilot)
        app.open_path(str(SAMPLES / "long_chat.json"))
        await pilot.pause()
        assert isinstance(app.screen, UnsavedScreen)
        for key in ("c", "x", "l", "y", "1"):
            await pilot.press(key)
            await pilot.pause()
            assert isinstance(app.screen, UnsavedScreen), key
        assert len(app.screen_stack) == 2 and app.model.name == "agent_loop.json"
        await pilot.press("escape")
        await settle(pilot)
        assert app.model.name == "agent_loop.json"


async def test_an_untouched_session_quits_without_a_question() -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("j", "k", "e", "e")  # moving and showing change nothing saved
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert app.return_code == 0 and not app.is_running


async def test_undoing_every_edit_leaves_nothing_unsaved_and_quit_does_not_ask() -> None:
    """Undo back to the state opened (or saved) clears the marker; a setting changed since an
    edit keeps it after the edit's undo (the session differs from the saved one)."""
    app = make_app(str(AGENT))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _pinned(app, pilot)
        assert app.model.unsaved
        await pilot.press("u")
        await settle(pilot)
        assert not app.model.unsaved and "unsaved" not in app.title
        await _pinned(app, pilot)
        await pilot.press("minus")  # a setting changed after the edit
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert app.model.unsaved
        await pilot.press("plus")  # (not an undo: the session stays unsaved)
        await settle(pilot)
    app = make_app(str(AGENT))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _pinned(app, pilot)
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("ctrl+q")  # nothing to save: quits without asking
        await pilot.pause()
        assert not isinstance(app.screen, UnsavedScreen)
    assert app.return_code == 0
