"""Search in the timeline: / opens the bar, matches are marked and counted as they are found,
n / N step through them, escape clears; a bad qualifier says what it takes."""

from __future__ import annotations

from typing import Any

from tests.support.apphelp import make_app, row_texts, settle, wait_until
from tests.support.paths import SAMPLES


def _count(app: Any) -> str:
    from textual.widgets import Static

    return str(app.query_one("#search-count", Static).render())


async def _search(pilot: Any, text: str) -> None:
    await pilot.press("slash")
    await wait_until(pilot, lambda: getattr(pilot.app.focused, "id", None) == "search-input")
    for ch in text:
        await pilot.press(ch)
    search = pilot.app.search
    await wait_until(pilot, lambda: search.done and getattr(search.query, "text", None) == text)


async def test_search_marks_counts_steps_and_clears() -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        tl = app.timeline
        tl.action_jump_home()
        await _search(pilot, "tool:read*")
        matches = app.search.matches
        assert matches == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17, 18, 25, 26]
        # the first match from where / was pressed is selected, as in an editor
        await wait_until(pilot, lambda: _count(app) == "1/16 · n/N")
        assert tl.selected_id == 3
        await pilot.press("enter")  # keeps the search, back in the timeline
        assert app.focused is tl
        await pilot.press("n", "n")
        assert tl.selected_id == 5 and _count(app) == "3/16 · n/N"
        await pilot.press("N", "N", "N")
        assert tl.selected_id == 26 and _count(app) == "16/16 · n/N"  # round the top
        tl.action_jump_home()
        await pilot.pause()
        assert _count(app) == "–/16 · n/N"  # the cursor between matches
        rows = [r for r in row_texts(app) if r[1:7].strip().isdigit()]
        marked = {int(r[1:7]) for r in rows if r.startswith(("›", "!"))}
        shown = {int(r[1:7]) for r in rows}
        assert marked - set(app.model.error_ids()) == shown & set(matches) - set(
            app.model.error_ids()
        )
        await pilot.press("escape")
        await pilot.pause()
        assert not app.search.active and not tl.search_matches
        assert not app.query_one("#search").has_class("-shown")
        assert not any(r.startswith("›") for r in row_texts(app))
        # without a search, n is the next protocol problem again
        await pilot.press("n")
        assert tl.selected_id in app.model.error_ids()


async def test_escape_in_the_bar_goes_back_to_where_search_began() -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        start = app.timeline.selected_id
        await _search(pilot, "changelog")
        assert app.timeline.selected_id != start
        await pilot.press("escape")
        await pilot.pause()
        assert app.timeline.selected_id == start and app.focused is app.timeline


async def test_a_bad_qualifier_is_shown_in_the_bar_and_matches_nothing() -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("slash")
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "search-input")
        for ch in "role:[b]x":
            await pilot.press(ch)
        # shown literally, never as markup
        await wait_until(pilot, lambda: _count(app) == "role:[b]x: role:user or role:assistant")
        assert not app.timeline.search_matches


async def test_no_match_says_so_and_the_query_as_read() -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await _search(pilot, "zzzq is:error")
        await wait_until(pilot, lambda: _count(app) == "no match · zzzq · errors")


async def test_matches_follow_new_messages() -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _search(pilot, "calculate")
        assert app.search.matches == []
        await pilot.press("enter")
        app.timeline.select_id(3)
        chat = app.query_one("#chat")
        chat.focus()
        chat.value = "calculate 6*7"
        await pilot.press("enter")
        await settle(pilot)
        n = len(app.model.transcript)
        await wait_until(pilot, lambda: app.search.done and app.search.matches)
        assert app.search.matches[0] >= 27 and app.search.matches[-1] < n
        assert all(i in app.timeline.search_matches for i in app.search.matches)


async def test_a_second_slash_before_the_bar_is_built_does_not_crash() -> None:
    """``/`` mounts the bar and focuses it after a refresh; a second ``/`` typed before that
    (a path typed fast: ``/tmp/…``, its first keys still going to the timeline) found the bar
    without its input and the app crashed (NoMatches '#search-input')."""
    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.search.open()
        app.search.open()  # before the bar's children are mounted
        await wait_until(pilot, lambda: getattr(app.focused, "id", None) == "search-input")
        assert app.search.bar is not None and app.search.bar.has_class("-shown")
