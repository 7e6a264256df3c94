"""The sidebar: its verdict on the window about to be sent, the token total and gauge, the
sparkline, the max field, and its place on narrow and resized terminals."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from textual.widgets import Input

from tests.support.apphelp import make_app, row_texts, settle, text_of, wait_prediction, wait_until
from tests.support.paths import SAMPLES

AGENT = str(SAMPLES / "agent_loop.json")


@pytest.mark.parametrize("model", ["claude-haiku-4-5"])  # a 200k model (4.6+ have 1M)
async def test_sidebar_verdict_flags_a_window_over_the_context(tmp_path: Path, model: str) -> None:
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 4000} for i in range(301)
    ]
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"model": model, "max_tokens": 10, "messages": messages}))
    app = make_app(str(p))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        state, short, first = app.model.verdict()
        assert state == "bad" and "prompt is too long" in first, (short, first)


async def test_one_token_total_everywhere_and_gauge_without_rounding(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import json

    from textual.widgets import ProgressBar, Static

    from ctxview.cli import main

    assert main(["inspect", AGENT, "--json"]) == 1
    window = json.loads(capsys.readouterr().out)["window"]
    breakdown = window["token_breakdown"]
    assert set(breakdown) == {"system", "tools", "messages"} and breakdown["tools"] > 0
    assert window["estimated_tokens"] == sum(breakdown.values())
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.model.window_tokens == window["estimated_tokens"]
        assert app.model.token_breakdown() == breakdown
        text = str(app.query_one("#tokens", Static).render())
        # 466 tokens of a 1M context: not rounded down to 0.0%
        assert f"~{window['estimated_tokens']}" in text and "(<0.1%)" in text
        assert f"tools {breakdown['tools']}" in text and f"messages {breakdown['messages']}" in text
        assert not app.query_one("#gauge", ProgressBar).show_percentage


async def test_sparkline_is_right_at_startup() -> None:
    from textual.widgets import Sparkline

    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        spark = app.query_one("#spark", Sparkline)
        at_start = list(spark.data or [])
        width = spark.size.width
        assert width > 20
        assert at_start == app.model.token_series(width)
        assert len(at_start) == len(app.model.context)  # 14 window messages: one value each
        await pilot.press("plus")  # the window does not change (nothing comes back) ...
        await settle(pilot)
        assert list(spark.data or []) == at_start  # ... nor does the sparkline


async def test_resize_under_a_dialog_keeps_the_sidebar() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        sidebar = app.query_one("#sidebar")
        assert not sidebar.display
        await pilot.press("question_mark")
        await pilot.pause()
        assert len(app.screen_stack) == 2
        await pilot.resize_terminal(130, 40)
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
        assert sidebar.display and sidebar.size.width > 0
        assert not app.screen_stack[1:] and not app.screen.has_class("-hide-sidebar")


def _verdict_text(app: object) -> str:
    return str(app.query_one("#verdict").render())  # type: ignore[attr-defined]


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (100, 30), (120, 40), (140, 45)])
async def test_narrow_terminals_keep_the_verdict_and_status_words(size: tuple[int, int]) -> None:
    from textual.widgets import Static

    from ctxview.app.app import sidebar_width

    app = make_app(AGENT)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        sidebar = app.query_one("#sidebar")
        verdict = app.query_one("#verdict")
        # the verdict is on screen: in the sidebar, or in the line above the timeline
        if sidebar.display:
            assert "✗ 2 problems" in str(app.query_one("#protocol", Static).render())
            assert not verdict.display
            assert sidebar.region.width == sidebar_width(size[0])
        else:
            assert verdict.display and verdict.region.width > 0
            assert _verdict_text(app).startswith("✗ 2 problems")
        await pilot.press("home")
        await settle(pilot)
        for line in row_texts(app):
            if line.strip() and "gap" not in line:
                assert line.rstrip().split()[-1] in ("pinned", "kept", "evicted"), line
        # the sidebar gives way before the preview column does
        if size[0] >= 100:
            from ctxview.app.widgets.timeline import column_header

            head = column_header(app.timeline.scrollable_content_region.width)
            preview = head[head.index("preview") : head.index("tokens")]
            assert len(preview) >= 20, head


async def test_empty_chat_shows_no_problem() -> None:
    from textual.widgets import Static

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        protocol = app.query_one("#protocol", Static)
        assert "no messages yet" in str(protocol.render())
        assert not protocol.has_class("-bad") and "problem" not in str(protocol.render())
        assert "gap" not in str(app.query_one("#detail").query_one(Static).render())
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        assert _verdict_text(app).startswith("no messages yet")
        await pilot.press(*"hi", "enter")
        await settle(pilot)
        assert _verdict_text(app).startswith("✓ valid")


async def test_max_field_restored_after_invalid_entry() -> None:
    from textual.widgets import Input

    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        field = app.query_one("#max-input", Input)
        field.focus()
        await pilot.pause()
        field.value = "0"
        await pilot.press("enter")
        await settle(pilot)
        assert field.value == "14" and app.model.context.max_context_messages == 14
        field.value = "lots"
        await pilot.press("tab")  # leaving the field applies it too
        await settle(pilot)
        assert field.value == "14"


async def test_max_input_in_sidebar() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        inp = app.query_one("#max-input", Input)
        inp.focus()
        inp.value = "5"
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.context.max_context_messages == 5 and len(app.model.context) == 5
        # + typed in the input is text, not the +max key
        await pilot.press("plus")
        assert app.model.context.max_context_messages == 5


async def test_mounting_the_sidebar_keeps_the_session_strategy() -> None:
    """Regression: the strategy Select used to start on 'seed' and switch the session to it."""
    app = make_app(str(SAMPLES / "tool_errors.json"))  # saved with pair-safe
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.pause(0.3)
        assert app.model.context.strategy == "pair-safe"
        assert not any(m.startswith("strategy:") for m, t, _ in app.notice_log)
        assert 'strategy = "seed"' not in (
            Path(os.environ["CTXVIEW_CONFIG"]).read_text()
            if Path(os.environ["CTXVIEW_CONFIG"]).exists()
            else ""
        )


@pytest.mark.parametrize(
    "keys",
    [("A",), ("r",), ("c",), ("delete",)],
    ids=["repair-all", "repair", "stub", "drop"],
)
async def test_the_cache_line_follows_an_edit(keys: tuple[str, ...]) -> None:
    """After an edit the cache line's next request is the edited window (its tokens the
    sidebar's), with no note that it is another window."""
    from ctxview.app.editing import EditPreviewScreen

    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        before = app.model.window_tokens
        app.timeline.select_id(14 if keys in (("A",), ("r",)) else 20)  # a problem / a reply
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)
        if isinstance(app.screen, EditPreviewScreen):
            await pilot.press("enter")
            await settle(pilot)
        assert app.model.window_tokens != before  # the edit changed the window

        def follows() -> bool:
            pred = app.model.cache_prediction
            # (the window's ids can settle a moment before its token count: wait for both)
            return (
                pred is not None
                and pred.next_window == app.model.window_ids
                and pred.input_tokens == app.model.window_tokens
            )

        await wait_until(pilot, follows)
        pred = app.model.cache_prediction
        assert pred.input_tokens == app.model.window_tokens
        assert "is not the live one" not in text_of(app, "#cache")
