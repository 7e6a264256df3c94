"""Pilot tests of the "as sent" view: a recorded session opens as it was sent (no ctxview
truncation, compaction applied, the gauge and the window-size line from the recorded usage); a
max or a strategy switches to a labelled simulation and ``a`` (or the "as sent" strategy
choice) switches back; the sidebar's cache line is the request model's next request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Select

from ctxview.app.model import AS_SENT
from ctxview.app.screens.requests import RequestsScreen
from ctxview.core.requests import simulate
from ctxview.sessions import load_session, replay
from tests.support.apphelp import (
    assert_clean,
    make_app,
    screen_after,
    settle,
    text_of,
    wait_prediction,
)
from tests.support.paths import ROOT

# a big recorded transcript opened in the app, replayed as sent and simulated
pytestmark = pytest.mark.slow

#: the biggest real transcript kept for acceptance: 315 messages, a compaction at #253, its
#: last request recorded as 76,350 tokens (input + cache read + cache write)
BIG = str(
    ROOT
    / "tests"
    / "acceptance"
    / "claude_code"
    / "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
)
AGENT = str(ROOT / "sample_sessions" / "agent_loop.json")


def test_replay_as_sent_applies_the_compaction() -> None:
    session = load_session(BIG)
    rep = replay(session, as_sent=True)
    assert rep.as_sent == "claude-code" and rep.compacted_before == 253
    assert rep.context.window_ids == list(range(253, 315))  # the summary and what followed
    assert session.metas[253].get("compact_summary") or session.metas[253].get("compact_boundary")
    # the request model's as-sent replay holds the same window for the last request
    log = simulate(session)
    assert log.as_sent and log.windows[len(log.requests) - 1] == list(range(253, 314))
    # --max / --strategy (or no as_sent) is a simulation, as before
    assert replay(session, as_sent=True, max_context_messages=20).as_sent is None
    assert len(replay(session, as_sent=True, strategy="pair-safe").context) <= 21
    assert replay(session).as_sent is None


def test_request_body_opens_as_sent_and_a_message_list_does_not() -> None:
    from ctxview.sessions import LoadedSession

    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(45)]
    body = LoadedSession("b.json", "request", msgs, [{} for _ in msgs])
    rep = replay(body, as_sent=True)
    assert rep.as_sent == "request" and len(rep.context) == 45
    plain = LoadedSession("m.json", "messages", msgs, [{} for _ in msgs])
    rep = replay(plain, as_sent=True, defaults={"max_context_messages": 20})
    assert rep.as_sent is None and len(rep.context) == 20


async def test_real_transcript_opens_as_sent_with_the_recorded_gauge() -> None:
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        model = app.model
        assert model.as_sent == "claude-code"
        assert len(model.context) == 62  # nothing truncated after the compaction
        assert model.status(0) == "compacted" and model.status(252) == "compacted"
        assert model.status(253) in ("pinned", "kept")
        assert "as sent" in text_of(app, "#mode")
        assert "compacted 253" in text_of(app, "#window")
        assert "Request tokens (rec.)" in str(app.query_one("#tokens-label").render())
        tokens = text_of(app, "#tokens")
        assert "76,350 / 1.0M recorded" in tokens and "(7.6%)" in tokens
        assert app.query_one("#gauge").progress == 76_350
        # the window-size line: the recorded input of each request, its peak included
        sizes, last = model.recorded_sizes()
        assert last == (314, 76_350) and max(sizes) > 160_000
        spark = app.query_one("#spark")
        assert max(spark.data) == max(sizes)
        assert "input per request (recorded)" in text_of(app, "#spark-caption")
        assert app.query_one("#strategy-select", Select).value == AS_SENT
        assert app.query_one("#max-input").value == ""
        # the cache line: the request model's next request and the session so far
        pred = model.cache_prediction
        log = simulate(model.session)
        totals = log.totals()
        assert pred.requests == totals["requests"]
        assert abs(pred.hit_rate - totals["hit_rate"]) < 1e-3
        assert abs(pred.cost_so_far - totals["cost_usd"]) < 1e-3
        assert pred.read + pred.write + pred.uncached == pred.input_tokens
        assert pred.read > 0.9 * pred.input_tokens  # the last request's prefix is still cached
        cache = text_of(app, "#cache")
        assert f"{pred.requests:,} requests: hit {100 * pred.hit_rate:.1f}%" in cache
        assert "cost so far $" in cache and "next request $" in cache
        assert len(text_of(app, "#hit-spark").strip()) > 10
        assert "next ~" in text_of(app, "#tokens")  # the calibrated estimate beside it
        assert "as sent · window 62" in text_of(app, "#verdict")


async def test_a_max_switches_to_a_labelled_simulation_and_a_goes_back() -> None:
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        as_sent_hit = app.model.cache_prediction.hit_rate
        await pilot.press("minus")
        await wait_prediction(pilot)
        model = app.model
        assert model.as_sent is None and len(model.context) == 20
        assert model.mode_label() == "simulated: seed, max 20"
        assert text_of(app, "#mode") == "simulated: seed, max 20"
        assert "simulated: seed, max 20" in text_of(app, "#verdict")
        assert "Request tokens (est.)" in str(app.query_one("#tokens-label").render())
        assert app.query_one("#max-input").value == "20"
        assert app.query_one("#strategy-select", Select).value == "seed"
        assert model.cache_prediction.hit_rate != as_sent_hit  # the simulation's own figures
        await screen_after(pilot, "R", RequestsScreen)
        assert "Requests · simulated: seed, max 20" in text_of(app.screen, "#title")
        await pilot.press("escape")
        await settle(pilot)
        # within the simulation, + and - are live again
        await pilot.press("minus")
        await settle(pilot)
        assert app.model.mode_label() == "simulated: seed, max 19"
        await pilot.press("a")
        await wait_prediction(pilot)
        assert app.model.as_sent == "claude-code" and len(app.model.context) == 62
        assert "76,350 / 1.0M recorded" in text_of(app, "#tokens")
        await pilot.press("R")
        await settle(pilot)
        assert "Requests · as sent" in text_of(app.screen, "#title")


async def test_a_strategy_simulates_and_the_as_sent_choice_comes_back() -> None:
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        app.set_strategy("pair-safe")  # the palette's "Strategy: pair-safe", the sidebar's Select
        await settle(pilot)
        assert app.model.mode_label() == "simulated: pair-safe, max 20"
        assert app.query_one("#strategy-select", Select).value == "pair-safe"
        app.query_one("#strategy-select", Select).value = AS_SENT
        await settle(pilot)
        assert app.model.as_sent == "claude-code"
        await pilot.press("s")  # s from as sent: the first strategy, simulated
        await settle(pilot)
        assert app.model.mode_label() == "simulated: seed, max 20"
        for _ in range(20):  # ... and on through the strategies back to as sent
            if app.model.as_sent is not None:
                break
            await pilot.press("s")
            await settle(pilot)
        assert app.model.as_sent == "claude-code"


async def test_a_session_saved_as_sent_reopens_as_sent(tmp_path: Path) -> None:
    app = make_app(BIG, as_sent=True)
    out = tmp_path / "saved.ctxview.json"
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        window = app.model.context.window_ids
        assert app.save_to(str(out))
    doc = json.loads(out.read_text())
    assert doc["settings"]["as_sent"] == "claude-code"
    again = make_app(str(out), as_sent=True)
    async with again.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        model = again.model
        assert model.as_sent == "claude-code" and model.context.window_ids == window
        assert model.status(0) == "compacted"
        assert "76,350 / 1.0M recorded" in text_of(again, "#tokens")
        await pilot.press("R")
        await settle(pilot)
        assert "Requests · as sent" in text_of(again.screen, "#title")
    # a simulation saved is a simulation reopened
    sim = make_app(BIG, as_sent=True, max_=20)
    async with sim.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert sim.model.mode_label() == "simulated: seed, max 20"
        assert sim.save_to(str(out))
    assert "as_sent" not in json.loads(out.read_text())["settings"]


async def test_a_session_that_is_not_recorded_is_not_labelled_simulated() -> None:
    app = make_app(AGENT, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        assert app.model.as_sent is None and app.model.mode_label() == "seed, max 14"
        assert not app.query_one("#mode").display
        options = [v for _, v in app.query_one("#strategy-select", Select)._options]
        assert AS_SENT not in options
        await pilot.press("a")
        await settle(pilot)
        assert app.model.as_sent is None  # a notice says why, nothing changes
        assert "requests: hit" in text_of(app, "#cache")


async def test_chat_on_an_as_sent_session_is_never_truncated() -> None:
    from ctxview.sessions import LoadedSession

    msgs = [{"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(45)]
    body = LoadedSession("b.json", "request", msgs, [{} for _ in msgs])
    from ctxview.app.model import SessionModel

    app = make_app(AGENT)
    app.model = SessionModel(replay(body, as_sent=True), "b.json", "claude-sonnet-4-5")
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        ctx = app.model.context
        for k in range(5):
            ctx.add_user_message(f"more {k}")
            app.context_changed()
        await settle(pilot)
        assert len(ctx) == 50 and app.model.evicted_count() == 0


async def test_hostile_model_name_in_the_cache_line() -> None:
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        app.set_model_name("evil\x1b]0;owned\x07\u202e[red]x[/red]")
        await wait_prediction(pilot)
        cache = text_of(app, "#cache")
        assert "no price for evil" in cache and "[red]x[/red]" in cache
        assert_clean(app, "cache line with a hostile model name")


def test_a_bad_as_sent_setting_is_one_clear_error(tmp_path: Path) -> None:
    import pytest

    from ctxview.sessions import SessionError

    doc = {
        "format": "ctxview.session",
        "version": 1,
        "settings": {"as_sent": "\x1b[31mbogus"},
        "transcript": [{"id": 0, "message": {"role": "user", "content": "hi"}}],
    }
    path = tmp_path / "bad.ctxview.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionError) as err:
        load_session(str(path))
    assert str(path) in str(err.value) and "settings.as_sent" in str(err.value)


async def test_a_big_window_is_checked_in_a_worker() -> None:
    """A 6,000-message request body as sent: the first check runs off the UI thread, then the
    verdict and the timeline show its result (an orphaned tool_result at #1)."""
    from ctxview.app.model import CHECK_SYNC_LIMIT, SessionModel
    from ctxview.sessions import LoadedSession

    n = CHECK_SYNC_LIMIT + 1000
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    msgs.append({"role": "assistant", "content": "ok"})
    msgs.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_gone", "content": "x"}],
        }
    )
    while len(msgs) < n:
        msgs.append({"role": "assistant" if len(msgs) % 2 else "user", "content": "m"})
    if msgs[-1]["role"] != "user":
        msgs.append({"role": "user", "content": "last"})
    body = LoadedSession("big.request.json", "request", msgs, [{} for _ in msgs])
    rep = replay(body, as_sent=True)
    model = SessionModel(rep, "big.request.json", "claude-sonnet-4-5")
    assert model.problems_pending and model.verdict(wait=False)[0] == "checking"
    app = make_app(AGENT)
    app.model = model
    async with app.run_test(size=(140, 45)) as pilot:
        for _ in range(100):
            await settle(pilot)
            if not model.problems_pending:
                break
            await pilot.pause(0.05)
        assert not model.problems_pending and app.model is model
        assert model.verdict()[0] == "bad" and model.error_ids() == [2]
        assert "✗ 1 problem" in text_of(app, "#protocol")


async def test_compare_as_sent_compares_at_the_configs_max_and_enter_simulates() -> None:
    from textual.widgets import DataTable

    from ctxview.app.screens.compare import CompareScreen

    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.as_sent == "claude-code"
        screen = await screen_after(pilot, "C", CompareScreen)
        for _ in range(100):
            if screen.done:
                break
            await pilot.pause(0.1)
        assert screen.done and screen.max_context_messages == 20
        assert "max 20 (the config's; shown as sent)" in screen.label
        table = screen.query_one(DataTable)
        cells = [str(c) for c in table.get_row_at(0)]
        assert cells[0].startswith("● as sent")  # the baseline row: the current view
        assert not str(table.get_row_at(1)[0]).startswith("●")
        seed = screen.rows[1]
        assert seed["name"] == "seed" and seed["evicted_messages"] > 0  # a real max, not len + 1
        table.move_cursor(row=1)
        await pilot.press("enter")  # seed: leaves as sent for a simulation under it
        await settle(pilot)
        assert app.model.as_sent is None
        assert app.model.mode_label() == "simulated: seed, max 20"


async def test_pins_stay_pinned_across_the_switch_to_a_simulation_and_back() -> None:
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        ctx = app.model.context
        target = ctx.window_ids[5]
        pinned = app.model.context.pin(target)
        assert pinned
        app.set_max(6)  # a simulation under max 6: the pinned messages are kept
        await settle(pilot)
        assert app.model.as_sent is None and app.model.context.max_context_messages == 6
        assert set(pinned) <= set(app.model.context.pinned_ids)
        assert set(pinned) <= set(app.model.context.window_ids)
        await pilot.press("a")
        await settle(pilot)
        assert app.model.as_sent == "claude-code"
        assert set(pinned) <= set(app.model.context.pinned_ids)


async def test_edit_preview_prices_the_next_request_as_the_cache_line_does() -> None:
    """On a recorded transcript (no system or tools in it) the preview of an edit uses the
    request model's calibrated estimates: its next request is the cache line's, not a third of it."""
    from ctxview.app.editing import EditPreviewScreen

    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        pred = app.model.cache_prediction
        app.timeline.select_id(313)
        await settle(pilot)
        await screen_after(pilot, "c", EditPreviewScreen)
        price = app.screen.price
        assert abs(price.input_before - pred.input_tokens) <= 0.02 * pred.input_tokens, (
            price.input_before,
            pred.input_tokens,
        )
        assert price.cost_before is not None and pred.cost_usd is not None
        assert abs(price.cost_before - pred.cost_usd) <= 0.05 * pred.cost_usd
        await pilot.press("escape")


async def test_s_pressed_faster_than_the_replay_still_steps_once_per_press() -> None:
    """Each s moves one step (as sent → seed → pair-safe → ...) even when pressed again before
    the previous switch's replay is installed; only the last one is installed."""
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.as_sent is not None
        # three presses of s before the first replay is installed (a big session in a real
        # terminal): the key's action three times with no pause for the worker in between
        for _ in range(3):
            app.action_cycle_strategy()
        await settle(pilot)
        assert app.model.as_sent is None
        assert app.model.context.strategy == "token-budget"
        for _ in range(4):  # low-water, clear-tool-uses, clear-thinking, as sent
            app.action_cycle_strategy()
        await settle(pilot)
        assert app.model.as_sent is not None
        app.action_cycle_strategy()
        app.action_cycle_strategy()
        await settle(pilot)
        assert app.model.as_sent is None and app.model.context.strategy == "pair-safe"
        await pilot.press("s")  # the key itself, once settled
        await settle(pilot)
        assert app.model.context.strategy == "token-budget"


async def test_request_model_line_says_calibrated_only_when_it_is() -> None:
    """A request body with no recorded usage: the request model's estimate is not calibrated,
    and the sidebar does not say it is; a transcript with usage says so."""
    from tests.support.paths import FIXTURES

    path = FIXTURES / "anthropic_requests" / "anthropic_test_anthropic_tool_with_thinking_req2.json"
    app = make_app(str(path), as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        assert not app.model.cache_prediction.rates.calibrated
        tokens = text_of(app, "#tokens")
        assert "request model: ~" in tokens and "calibrated" not in tokens
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        assert "(calibrated)" in text_of(app, "#tokens")


async def test_plus_pressed_faster_than_the_replay_still_counts_every_press() -> None:
    app = make_app(BIG, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        for _ in range(3):  # the first starts the simulation at the config's max, then +1, +1
            app.action_max_delta(1)
        await settle(pilot)
        assert app.model.as_sent is None
        assert app.model.context.max_context_messages == 22
        await pilot.press("minus")
        await settle(pilot)
        assert app.model.context.max_context_messages == 21
