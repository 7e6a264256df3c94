"""Lines of a transcript that could not be used: a notice when the file opens or a followed one
gains some, and ``L`` lists each line with why."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Static

from ctxview.app.screens.skipped import SkippedLinesScreen
from ctxview.live import follow
from tests.support.apphelp import FORBIDDEN, make_app, screen_after, settle, wait_until
from tests.support.transcripts import rec, text


def _notices(app: object) -> list[str]:
    # the notices raised, one by one (the toasts on screen merge those of one moment)
    return [m for m, _, _ in app.notice_log]  # type: ignore[attr-defined]


async def test_opening_a_file_with_bad_lines_says_so_and_L_lists_why(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text(
        rec("user", "u0", None, "q")
        + "{oops\n"
        + rec("assistant", "a0", "u0", text("a"))
        + '{"\\u001b[2J": NaN}\n'
    )
    app = make_app(str(p))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        notes = _notices(app)
        assert any(
            n.startswith("2 lines skipped (line 2: invalid JSON at column 2") and "L lists" in n
            for n in notes
        ), notes
        screen = await screen_after(pilot, "L", SkippedLinesScreen)
        shown = "\n".join(
            w.render_line(y).text for w in screen.query(Static) for y in range(w.size.height)
        )
        assert "2 skipped lines" in shown
        assert "invalid JSON at column 2: Expecting property name" in shown
        assert "␛[2J: NaN is not valid JSON" in shown
        assert not FORBIDDEN & set(shown.replace("\n", ""))
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, SkippedLinesScreen)


async def test_a_followed_file_gaining_a_bad_line_says_so(tmp_path: Path) -> None:
    p = tmp_path / "live.jsonl"
    p.write_text(rec("user", "u0", None, "first") + rec("assistant", "a0", "u0", text("ok")))
    app = make_app(str(p))
    app.follow_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: getattr(app, "_following", None) is not None)
        try:
            with open(p, "a") as fh:
                fh.write(
                    "{cut off\n"
                    + rec("user", "u1", "a0", "more")
                    + rec("assistant", "a1", "u1", text("b"))
                )
            await wait_until(pilot, lambda: len(app.model.transcript) == 4)
            await wait_until(
                pilot,
                lambda: any(
                    n.startswith("1 line skipped while following (line 3: invalid JSON")
                    for n in _notices(app)
                ),
            )
            assert app.model.session.skipped_lines == [3]
            await pilot.press("L")  # (settle would wait for the follow thread)
            await wait_until(pilot, lambda: isinstance(app.screen, SkippedLinesScreen))
        finally:
            app._following.stop()  # the follow thread would outlive the test


async def test_L_without_skipped_lines_says_there_are_none(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text(rec("user", "u0", None, "q") + rec("assistant", "a0", "u0", text("a")))
    app = make_app(str(p))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("L")
        await wait_until(pilot, lambda: "no line of this file was skipped" in _notices(app))


async def test_a_followed_line_over_the_cap_is_told_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow, "MAX_LINE_BYTES", 1000)
    p = tmp_path / "live.jsonl"
    p.write_text(rec("user", "u0", None, "first") + rec("assistant", "a0", "u0", text("ok")))
    app = make_app(str(p))
    app.follow_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: getattr(app, "_following", None) is not None)
        try:
            with open(p, "a") as fh:
                fh.write('{"x": "' + "y" * 5000 + '"}\n')
            await wait_until(pilot, lambda: app.model.session.skipped_lines == [3])
            with open(p, "a") as fh:  # a message after it: the notice is not raised again
                fh.write(rec("user", "u1", "a0", "more") + rec("assistant", "a1", "u1", text("b")))
            await wait_until(pilot, lambda: len(app.model.transcript) == 4)
            told = [n for n in _notices(app) if "line 3" in n]
            assert told == [
                "1 line skipped while following (line 3: longer than 1000 bytes) · L lists "
                "them and why"
            ], told
        finally:
            app._following.stop()
