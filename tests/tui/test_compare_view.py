"""Pilot tests of the Compare screen (C, or the palette's "Compare strategies…"): one row per
registered strategy from the request model, enter applies a strategy to the live context, escape
stops the replays."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widgets import DataTable, Static

from ctxview.app.screens.compare import CompareScreen, cell_text
from ctxview.core.context import ConversationContext
from ctxview.core.requests import compare
from ctxview.core.strategies import STRATEGIES
from ctxview.sessions import load_session
from tests.support.apphelp import assert_clean, make_app, screen_after, settle, wait_until
from tests.support.paths import ROOT

AGENT = str(ROOT / "sample_sessions" / "agent_loop.json")


def _row(screen: CompareScreen, name: str) -> Any:
    return next(r["evicted_messages"] for r in screen.rows if r["name"] == name)


def _cells(screen: CompareScreen, row: int) -> list[str]:
    table = screen.query_one(DataTable)
    return [str(c) for c in table.get_row_at(row)]


async def test_compare_lists_every_strategy_and_enter_applies_one() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.context.strategy == "seed"
        assert app.model.verdict()[0] == "bad"  # seed breaks a tool pair in this window
        screen = await screen_after(pilot, "C", CompareScreen)
        assert screen.done
        table = screen.query_one(DataTable)
        assert table.row_count == len(STRATEGIES)
        # the rows are the headless compare's, at the live max
        session = load_session(AGENT)
        expected = compare(
            session,
            max_context_messages=app.model.context.max_context_messages,
            defaults={"model": app.model.model},
        )
        assert [r["name"] for r in screen.rows] == list(STRATEGIES)
        for got, want in zip(screen.rows, expected, strict=True):
            assert got["rejected_requests"] == want["rejected_requests"]
            assert got["evicted_messages"] == want["evicted_messages"]
            assert got["input_tokens"] == want["input_tokens"]
        seed = _cells(screen, 0)
        assert seed[0].startswith("● seed")  # the current strategy, and the cursor starts on it
        assert table.cursor_row == 0
        assert seed[2] == str(screen.rows[0]["rejected_requests"]) != "0"
        assert seed[3] == f"#{screen.rows[0]['first_rejected']}"
        pair = list(STRATEGIES).index("pair-safe")
        assert _cells(screen, pair)[2] == "0" and _cells(screen, pair)[3] == "—"
        # enter on pair-safe: applied to the live context, the window follows at once
        for _ in range(pair):
            await pilot.press("down")
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)
        assert app.model.context.strategy == "pair-safe"
        fresh = ConversationContext(
            max_context_messages=app.model.context.max_context_messages, strategy="pair-safe"
        )
        for rec in app.model.transcript.records:
            fresh.add_message(rec.message)
        assert app.model.window_ids == fresh.window_ids
        assert app.model.verdict()[0] == "ok"


async def test_compare_escape_closes_without_changing_the_strategy() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await screen_after(pilot, "C", CompareScreen)
        assert_clean(app, "compare 80x24")
        await pilot.press("down", "escape")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)
        assert app.model.context.strategy == "seed"


async def test_compare_from_the_palette() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        for ch in "Compare strategies":
            await pilot.press("space" if ch == " " else ch)
        await pilot.pause(0.3)
        await screen_after(pilot, "enter", CompareScreen)


async def test_compare_key_is_inert_while_typing() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await pilot.press("i", "C")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)
        assert app.query_one("#chat").value == "C"  # type: ignore[attr-defined]


async def test_compare_escape_stops_the_replays(monkeypatch: pytest.MonkeyPatch) -> None:
    """Escape while the replays run: the screen closes at once and the worker stops after the
    strategy in progress (each replay here waits for the test's go-ahead)."""
    import threading

    import ctxview.core.requests as requests_mod

    real = requests_mod.iter_compare
    go = threading.Event()
    asked: list[str] = []

    def gated(*args: Any, **kw: Any) -> Any:
        for row in real(*args, **kw):
            asked.append(row["name"])
            if len(asked) > 1:
                assert go.wait(10)
            yield row

    monkeypatch.setattr(requests_mod, "iter_compare", gated)
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await pilot.press("C")
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        for _ in range(100):
            await pilot.pause(0.02)
            if screen.rows:
                break
        assert len(screen.rows) == 1 and not screen.done
        progress = str(screen.query_one("#progress-line").render())
        assert f"(2 of {len(STRATEGIES)})" in progress and "escape stops" in progress
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, CompareScreen)
        go.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        # the worker stopped after the strategy in progress: no more replays were run
        assert len(asked) == 2
        assert len(screen.rows) == 1 and not screen.done
        assert app.model.context.strategy == "seed"


async def test_compare_shows_a_failure_in_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctxview.core.requests as requests_mod

    def broken(*args: Any, **kw: Any) -> Any:
        raise ValueError("unknown strategy 'x\x1b[31m' (known: seed)")
        yield  # pragma: no cover

    monkeypatch.setattr(requests_mod, "iter_compare", broken)
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await screen_after(pilot, "C", CompareScreen)
        text = assert_clean(app, "compare failure")
        assert "cannot compare: unknown strategy" in text
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, CompareScreen)


async def test_compare_on_hostile_text_and_file_name(tmp_path: Any) -> None:
    import shutil

    hostile = tmp_path / "evil\x1b]0;pwned\x07\u202e[red]x[bold].json"
    shutil.copy(ROOT / "sample_sessions" / "untrusted_text.json", hostile)
    app = make_app(str(hostile))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await screen_after(pilot, "C", CompareScreen)
        text = assert_clean(app, "compare hostile")
        assert "[red]x[bold]" in text  # the name is shown as text, never parsed as markup


async def test_compare_moves_with_j_and_k_and_its_progress_never_counts_past_the_total() -> None:
    """j is not a table key: pressed to reach pair-safe, then enter, it re-applied seed; the table binds
    only the arrows. And with every row in but the worker not ended, the line read
    "replaying  (7 of 6)…"."""
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "C", CompareScreen)
        table = screen.query_one(DataTable)
        assert table.cursor_row == 0
        await pilot.press("j", "j")
        assert table.cursor_row == 2
        await pilot.press("k")
        assert table.cursor_row == 1
        # the moment between the last row and the worker's end
        screen.done = False
        total = len(screen.strategies)
        assert len(screen.rows) == total
        assert screen._progress_text() == f"{total} of {total} replayed…"
        screen.done = True
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.context.strategy == list(STRATEGIES)[1]


async def test_compare_in_a_narrow_terminal_scrolls_sideways_to_the_cost() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "C", CompareScreen)
        await wait_until(pilot, lambda: screen.done)
        table = screen.query_one(DataTable)
        assert table.max_scroll_x > 0  # the cost is past the edge
        await pilot.press("l", "right")
        assert table.scroll_offset.x == min(20, table.max_scroll_x)
        await pilot.press("h")
        assert table.scroll_offset.x == min(20, table.max_scroll_x) - 10
        # the hint says how to reach them, as the Requests view's does
        hint = str(screen.query_one(".hint", Static).render())
        assert "←/→ (h/l)" in hint
        # scrolled to the end, each row still names its strategy
        table.scroll_to(x=table.max_scroll_x, animate=False)
        await pilot.pause()
        shown = [table.render_line(y).text for y in range(table.size.height)]
        for name in ("seed", "pair-safe", "clear-thinking"):
            line = next(t for t in shown if name in t)
            assert line.rstrip().endswith(cell_text("evicted_messages", _row(screen, name)))


def test_money_is_written_alike_everywhere() -> None:
    from ctxview.app.screens.compare import cell_text
    from ctxview.cli.requests import _money
    from ctxview.textfmt import fmt_usd

    assert fmt_usd(15606.0019) == "$15,606.00" == cell_text("cost_usd", 15606.0019)
    assert fmt_usd(0.0225) == "$0.0225" == _money(0.0225)
    assert fmt_usd(None) == "—" and fmt_usd(None, "n/a") == "n/a"


async def test_applying_a_row_gives_the_window_its_replay_ends_with() -> None:
    """tool_errors.json (pair-safe at max 14, 4 evicted): low-water's row counts 8 evicted; enter
    on it left the live context at "14 / 14 · evicted 4" (the strategy switched in place)."""
    app = make_app(str(ROOT / "sample_sessions" / "tool_errors.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.evicted_count() == 4
        screen = await screen_after(pilot, "C", CompareScreen)
        row = next(r for r in screen.rows if r["name"] == "low-water")
        assert row["evicted_messages"] == 8
        hint = str(screen.query_one(".hint", Static).render())
        assert "mean win: over its requests" in hint and "evicted: the whole replay" in hint
        screen.query_one(DataTable).move_cursor(row=screen.rows.index(row))
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model.context.strategy == "low-water")
        await settle(pilot)
        assert app.model.evicted_count() == row["evicted_messages"]
        fresh = ConversationContext(max_context_messages=14, strategy="low-water")
        for rec in app.model.transcript.records:
            fresh.add_message(rec.message)
        assert app.model.window_ids == fresh.window_ids


async def test_a_recorded_session_has_an_as_sent_baseline_row() -> None:
    from ctxview.core.requests import simulate

    path = str(ROOT / "tests" / "fixtures" / "claude_code" / "spotter_short.jsonl")
    app = make_app(path, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        screen = await screen_after(pilot, "C", CompareScreen)
        assert [r["name"] for r in screen.rows] == ["as sent", *STRATEGIES]
        assert _cells(screen, 0)[0].startswith("● as sent")  # shown as sent now
        sent = simulate(load_session(path))  # as the file recorded it
        assert screen.rows[0]["requests"] == len(sent.requests)
        assert screen.rows[0]["input_tokens"] == sent.totals()["input_tokens"]
        await pilot.press("down", "enter")  # the first strategy: a simulation
        await wait_until(pilot, lambda: app.model.as_sent is None)
        await pilot.press("C")
        await wait_until(pilot, lambda: isinstance(app.screen, CompareScreen))
        await wait_until(pilot, lambda: app.screen.done)
        app.screen.query_one(DataTable).move_cursor(row=0)
        await pilot.press("enter")  # back to as sent
        await wait_until(pilot, lambda: app.model.as_sent is not None)
