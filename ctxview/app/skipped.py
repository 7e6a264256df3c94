"""Skipped lines in the app: the notice when a file with unusable lines opens or a followed one
gains some, and the list (``L``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxview.app.safe import one_line

if TYPE_CHECKING:
    from textual.app import App

    from ctxview.sessions import LoadedSession


def skipped_note(skipped: list[dict[str, Any]], what: str = "skipped") -> str:
    """``3 lines skipped (line 31: invalid JSON at column 5: …) · L lists them`` ("" if none)."""
    if not skipped:
        return ""
    n = len(skipped)
    first = skipped[0]
    return (
        f"{n:,} line{'' if n == 1 else 's'} {what} (line {first['line']}: "
        f"{one_line(str(first['reason']), 80)}) · L lists them and why"
    )


def show_skipped(app: App[Any], name: str, session: LoadedSession) -> None:
    """``L``: the skipped lines of the open file, or a note that there are none."""
    skipped = session.skipped()
    if not skipped:
        app.notify("no line of this file was skipped", markup=False)
        return
    from ctxview.app.screens.skipped import SkippedLinesScreen

    app.push_screen(SkippedLinesScreen(name, skipped))
