"""Pilot tests of the Requests view (r): rows from the request model, enter selects the
request's newest message in the timeline."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.app.screens.requests import RequestList, RequestsScreen, request_row
from tests.support.apphelp import make_app, screen_after, settle
from tests.support.paths import ACCEPTANCE, FIXTURES, ROOT

AGENT = str(ROOT / "sample_sessions" / "agent_loop.json")


async def test_requests_view_lists_requests_and_jumps_to_the_timeline() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "R", RequestsScreen)
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
        screen = await screen_after(pilot, "R", RequestsScreen)
        text = str(screen.query_one("#summary").render())
        assert "1 request ·" in text and "recorded" in text
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, RequestsScreen)


async def test_space_marks_two_requests_and_shows_their_diff() -> None:
    """The diff of two requests in the Requests view is ``ctxview diff``'s: checked against
    windows rebuilt independently (the messages before each request's response, replayed)."""
    from textual.widgets import Static

    from ctxview import ConversationContext
    from ctxview.app.screens.requests import RequestDiffScreen
    from ctxview.core.diff import diff_requests
    from ctxview.sessions.diffio import render
    from ctxview.sessions.readers import load_session

    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "R", RequestsScreen)
        lst = screen.query_one(RequestList)
        reqs = lst.reqlog.requests
        last = len(reqs) - 1
        await pilot.press("space")  # mark the last request
        await settle(pilot)
        assert (
            lst.marked == last and lst.render_line(lst.cursor - lst.scroll_offset.y).text[0] == "●"
        )
        await pilot.press("up", "up", "up", "up", "up")  # five requests back: evictions between
        await pilot.press("space")
        await settle(pilot, 6)
        assert isinstance(app.screen, RequestDiffScreen)
        shown = [str(w.render()) for w in app.screen.query("#diff-lines Static")]
        assert lst.marked is None

        session = load_session(AGENT)

        def body(index: int) -> dict[str, object]:
            ctx = ConversationContext(
                max_context_messages=app.model.context.max_context_messages,
                strategy=app.model.context.strategy,
            )
            resp = reqs[index].response_id
            assert resp is not None
            for m in session.messages[:resp]:
                ctx.add_message(m)
            out: dict[str, object] = {"model": reqs[index].model or session.model}
            if session.system:
                out["system"] = session.system
            if session.tools:
                out["tools"] = session.tools
            out["messages"] = ctx.messages
            return out

        diff = diff_requests(body(last - 5), body(last))
        assert shown == render(diff)
        assert any(line.startswith("- A messages[") for line in shown)  # evicted between them
        assert shown[-1].startswith("prompt cache: the prefixes part at messages[")
        title = str(app.screen.query_one(".title", Static).render())
        assert f"#{last - 5} (A)" in title and f"#{last} (B)" in title
        await screen_after(pilot, "escape", RequestsScreen)


async def test_requests_view_takes_the_cache_lines_requests_when_they_are_current() -> None:
    """The sidebar's cache line computed the same requests: R shows them at once; after a
    change it has not caught up with yet, R replays the session itself (same rows as a
    replay of the view alone)."""
    from ctxview.app.cacheline import session_view
    from ctxview.core.requests import simulate

    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        for _ in range(200):  # the cache line runs after a quiet spell, in a worker
            await app.workers.wait_for_complete()
            await settle(pilot)
            pred = app.model.cache_prediction
            if pred is not None and pred.so_far is not None:
                break
            await pilot.pause(0.05)
        assert pred is not None and pred.so_far is not None
        screen = await screen_after(pilot, "R", RequestsScreen)
        assert screen.reqlog is pred.so_far.log
        assert len(screen.reqlog.requests) == 13
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("minus")  # the cache line recomputes after a quiet spell
        await pilot.press("R")
        await app.workers.wait_for_complete()
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RequestsScreen) and screen.reqlog is not None
        # the old log is never shown for the new max (replayed by the screen's own worker, or
        # the cache line's new log if it caught up first on a loaded machine)
        assert screen.reqlog is not pred.so_far.log
        found = session_view(app.model)
        assert found is not None
        view, cfg = found
        assert screen.reqlog.requests == simulate(view, **cfg).requests
        assert screen.reqlog.max_context_messages == app.model.context.max_context_messages


async def test_the_header_stays_one_line_and_scrolls_with_the_rows_at_80x24() -> None:
    from textual.widgets import Static

    from ctxview.app.screens.requests import header_row

    app = make_app(AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "R", RequestsScreen)
        head = screen.query_one(".head", Static)
        assert head.size.height == 1  # cropped, never wrapped onto a second line
        lst = screen.query_one(RequestList)
        assert lst.virtual_size.width > lst.size.width  # the cost and the bars are off-screen
        await pilot.press("right")  # ten columns a press
        await settle(pilot)
        x = round(lst.scroll_offset.x)
        assert x == 10
        assert str(head.render()).startswith(header_row()[x : x + 20])
        row = lst.render_line(lst.cursor - lst.scroll_offset.y).text
        # the "input" column is under its title
        col = header_row().index("input") - x
        assert row[col : col + 8].strip() and head.render().plain[col : col + 5] == "input"


async def test_rows_take_the_themes_colours_in_a_light_theme() -> None:
    """Rows are drawn in the theme's colours, not the terminal's defaults (a dark terminal's
    background showed through the light panel)."""
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        app.theme = "textual-light"
        await settle(pilot)
        await pilot.press("R")
        await settle(pilot)
        lst = app.screen.query_one(RequestList)
        bg = lst.rich_style.bgcolor
        assert bg is not None
        for y in (0, lst.cursor - lst.scroll_offset.y, lst.size.height - 1):
            segs = list(lst.render_line(y))
            assert segs and all(s.style is not None and s.style.bgcolor for s in segs), y
        assert lst.render_line(0).cell_length == lst.size.width
        # the bars take the theme's colours, legible on its background (a plain yellow on a
        # light panel hardly showed): at least 3:1 wherever a bar is drawn
        from textual.color import Color

        from ctxview.app.colours import contrast_ratio

        seen = set()
        for y in range(lst.size.height):
            if lst.scroll_offset.y + y == lst.cursor:
                continue  # the cursor row is drawn reversed
            for seg in lst.render_line(y):
                if "█" in seg.text and seg.style is not None and seg.style.color is not None:
                    fg = Color.from_rich_color(seg.style.color)
                    back = Color.from_rich_color(seg.style.bgcolor or bg)
                    assert contrast_ratio(fg, back) >= 3.0, (y, fg, back)
                    seen.add(seg.style.color)
        assert seen
        parts = {lst.bar_style(p, lst.rich_style).color for p in ("read", "write", "uncached")}
        assert len(parts) == 3  # three colours, each legible
        for c in parts:
            assert c is not None
            back = Color.from_rich_color(bg)
            assert contrast_ratio(Color.from_rich_color(c), back) >= 3.0


async def test_the_newest_request_is_in_view_under_the_horizontal_scrollbar_at_80x24() -> None:
    """At 80 columns the rows are wider than the view: a horizontal scrollbar takes the last
    row of the list, and the newest request (where the cursor starts) sat under it, with G and
    PgDn unable to bring it up."""
    app = make_app(AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "R", RequestsScreen)
        lst = screen.query_one(RequestList)
        n = len(lst.reqlog.requests)
        assert lst.virtual_size.width > lst.size.width  # so there is a horizontal scrollbar
        assert lst.rows_shown < lst.size.height and lst.rows_shown < n  # not all in view
        for keys in ((), ("g", "G"), ("g", "pagedown", "pagedown")):
            await pilot.press(*keys)
            await settle(pilot)
            assert lst.cursor == n - 1
            row = lst.cursor - round(lst.scroll_offset.y)
            assert 0 <= row < lst.rows_shown, keys
            assert lst.render_line(row).text.lstrip().startswith(str(n - 1))


async def test_requests_view_names_a_recorded_break_ctxview_did_not_predict(
    tmp_path: Path,
) -> None:
    """A transcript where the API read only the tools and system in the middle of a tool loop
    (nothing in the file explains it): the row says so beside the prediction, and so does the
    summary."""
    from ctxview.core.requests import simulate
    from ctxview.sessions import load_session
    from tests.support import claude_code_shapes as shapes

    w = shapes.Writer()
    last = shapes.grow(w, w.user(None, "Fix the build."), 8, 0, 20_000, 2_000)
    shapes.grow(w, last, 1, 8, 2_000, 34_000)  # read 2,000, the rest written again
    session = load_session(shapes.write(tmp_path / "s.jsonl", w.records))
    log = simulate(session)
    missed = [r for r in log.requests if r.recorded_miss and r.recorded_miss.reason == "unexplained"]  # fmt: skip
    assert len(missed) == 1 and missed[0].cache_break is None
    assert "rec:unexplained" in request_row(missed[0], 1)
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await app.push_screen(RequestsScreen(session, {}, "as sent", log))
        await settle(pilot)
        summary = str(app.screen.query_one("#summary").render())
        assert "recorded, not predicted: 1" in summary


async def test_a_compactions_own_request_has_its_row_before_the_request_it_preceded() -> None:
    """The totals count the request that wrote a compaction's summary: so do the rows."""
    from tests.support.paths import ACCEPTANCE

    path = ACCEPTANCE / "claude_code" / "spotter_4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
    app = make_app(str(path), as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "R", RequestsScreen)
        lst = screen.query_one(RequestList)
        (comp,) = lst.reqlog.compactions
        assert len(lst.rows) == len(lst.reqlog.requests) + 1
        at = lst.rows.index(comp)
        assert lst.rows[at + 1].index == comp.index and lst.rows[at - 1].index == comp.index - 1
        text = str(screen.query_one("#summary").render())
        assert f"{len(lst.rows):,} requests ·" in text
        lst.cursor = at
        await settle(pilot)
        assert "compaction request" in lst.render_line(at - lst.scroll_offset.y).text
        await pilot.press("space")
        await settle(pilot)
        assert lst.marked is None
        assert any("not compared" in n.message for n in app._notifications)


async def test_an_otel_trace_of_gemini_calls_shows_the_requests_ctxview_requests_prints() -> None:
    """An OpenTelemetry trace's format names no provider: the view of the open session carries
    the file's (Gemini), so the Requests view counts, caches and prices its requests as the
    command line does (they were counted as Anthropic's: 470 tokens for the first request, not
    389, and a different cost)."""
    from ctxview.core.requests import simulate

    trace = ROOT / "tests" / "acceptance" / "otel" / "genai_semconv_tool_loop_3_calls.json"
    app = make_app(str(trace), as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.session.provider == "gemini" and app.model.as_sent == "otel"
        screen = await screen_after(pilot, "R", RequestsScreen)
        for _ in range(200):
            await app.workers.wait_for_complete()
            await settle(pilot)
            if screen.reqlog is not None:
                break
            await pilot.pause(0.05)
        assert screen.reqlog is not None
        command_line = simulate(app.model.session, prices=screen.settings["prices"])
        shown = [(r.input_tokens, r.cache_read, r.cost_usd) for r in screen.reqlog.requests]
        assert shown == [(r.input_tokens, r.cache_read, r.cost_usd) for r in command_line.requests]
        assert screen.reqlog.notes == command_line.notes


async def test_requests_view_says_when_a_gemini_vocabulary_could_not_be_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxview.core.providers import gemini_vocabulary

    monkeypatch.setenv(gemini_vocabulary.ENV, str(tmp_path / "gone.json"))
    gemini_vocabulary.reset()
    body = sorted((ACCEPTANCE / "unseen6" / "gemini").glob("*_req1.json"))[0]
    app = make_app(str(body))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "R", RequestsScreen)
        text = str(screen.query_one("#summary").render())
        assert "tokens: Gemini's vocabulary not used" in text and "gone.json" in text
