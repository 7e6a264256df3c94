"""The TUI's everyday behaviour: dimmed rows, keys from the chat box, overwrites, narrow
terminals, the pre-send check, notices, and where settings are kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.color import Color

from ctxview.app.colours import MIN_DIM_CONTRAST, contrast_ratio
from tests.support.apphelp import make_app, row_texts, settle, wait_until
from tests.support.paths import ROOT

SAMPLES = ROOT / "sample_sessions"
AGENT = str(SAMPLES / "agent_loop.json")


def _fg_bg(segment: object) -> tuple[Color, Color]:
    style = segment.style  # type: ignore[attr-defined]
    return Color.from_rich_color(style.color), Color.from_rich_color(style.bgcolor)


@pytest.mark.slow
async def test_evicted_rows_dim_in_every_theme() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        model = app.model
        kept_row = model.row_of(20)
        evicted_row = model.row_of(5)
        assert kept_row is not None and evicted_row is not None
        assert model.status(20) == "kept" and model.status(5) == "evicted"
        app.timeline.cursor = 0  # the cursor on neither row
        failures = []
        for name in app.available_themes:
            app.theme = name
            await pilot.pause()
            tl = app.timeline
            tl.scroll_to(y=0, animate=False)
            await pilot.pause()
            kept = list(tl.render_line(kept_row - int(tl.scroll_offset.y)))
            evicted = list(tl.render_line(evicted_row - int(tl.scroll_offset.y)))
            assert "kept" in "".join(s.text for s in kept)
            assert "evicted" in "".join(s.text for s in evicted)
            # the preview column (plain text) and every other column
            k_fg, k_bg = _fg_bg(kept[4])
            kept_contrast = contrast_ratio(k_fg, k_bg)
            for seg in evicted:
                fg, bg = _fg_bg(seg)
                if fg.ansi is not None:  # ansi-* themes: the terminal's colours, asked to be faint
                    assert seg.style.dim and not kept[4].style.dim, name
                    continue
                ratio = contrast_ratio(fg, bg)
                if not (MIN_DIM_CONTRAST <= ratio < kept_contrast):
                    failures.append(
                        f"{name}: {seg.text!r} {fg.hex} on {bg.hex} = {ratio:.2f}"
                        f" (kept {kept_contrast:.2f})"
                    )
        assert not failures, failures


async def test_ctrl_k_and_ctrl_e_work_from_the_chat_box() -> None:
    from ctxview.app.screens.modals import SystemPromptScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chat = app.query_one("#chat")
        assert app.focused is chat
        await pilot.press(*"hello")
        await pilot.press("home")
        await pilot.press("ctrl+k")  # the input's kill-to-end would empty the draft
        await settle(pilot)
        assert chat.value == "hello"  # type: ignore[attr-defined]
        assert any("count_tokens" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert isinstance(app.screen, SystemPromptScreen)
        await pilot.press("ctrl+e")  # inside the dialog: the text area's own key, no second dialog
        await pilot.pause()
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert chat.value == "hello"  # type: ignore[attr-defined]


async def test_ctrl_s_asks_before_overwriting_a_file_it_did_not_create(tmp_path: Path) -> None:
    from ctxview.app.screens.files import OverwriteScreen

    path = tmp_path / "agent_loop.json"
    path.write_bytes(Path(AGENT).read_bytes())
    original = path.read_bytes()
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("minus")
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, OverwriteScreen)
        assert app.screen.suggestion == str(tmp_path / "agent_loop.ctxview.json")
        await pilot.press("n")
        await settle(pilot)
        new = tmp_path / "agent_loop.ctxview.json"
        assert new.exists() and path.read_bytes() == original
        assert app.model.path == str(new)
        # the session created that file: ctrl+s saves over it without asking
        await pilot.press("minus", "ctrl+s")
        await settle(pilot)
        assert len(app.screen_stack) == 1
        assert '"max_context_messages": 12' in new.read_text()
        # escape leaves everything alone
        app.open_path(str(path))
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        await pilot.press("escape")
        await settle(pilot)
        assert path.read_bytes() == original and len(app.screen_stack) == 1


async def test_save_as_key_and_palette_command(tmp_path: Path) -> None:
    from ctxview.app.screens.files import OverwriteScreen, SavePathScreen

    path = tmp_path / "s.json"
    path.write_bytes(Path(AGENT).read_bytes())
    taken = tmp_path / "s.ctxview.json"
    taken.write_text("mine")
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, SavePathScreen)
        inp = app.screen.query_one("#path")
        assert inp.value == str(tmp_path / "s-2.ctxview.json")  # type: ignore[attr-defined]
        await pilot.press("escape")
        await pilot.pause()
        # typing the name of a file that exists asks first
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Save session as")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, SavePathScreen)
        app.screen.query_one("#path").value = str(taken)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, OverwriteScreen)
        await pilot.press("o")
        await settle(pilot)
        assert taken.read_text() != "mine" and '"format": "ctxview.session"' in taken.read_text()


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


def test_share_never_rounds_something_to_nothing() -> None:
    from ctxview.app.widgets.sidebar import share

    assert [share(n, 1_000_000) for n in (0, 1, 466, 499, 500, 76_350)] == [
        "0.0%",
        "<0.1%",
        "<0.1%",
        "<0.1%",
        "0.1%",
        "7.6%",
    ]
    assert share(5, 0) == "0.0%"


def test_plurals() -> None:
    from ctxview.chat.tools import ToolSettings, run_tool
    from ctxview.textfmt import plural, tokens_text

    assert tokens_text(1) == "~1 token" and tokens_text(2) == "~2 tokens"
    assert tokens_text(1234) == "~1.2k tokens" and plural(1, "line") == "1 line"
    out, err = run_tool("word_count", {"text": "one"}, ToolSettings.from_config({}))
    assert not err and "1 word, 1 line, 3 characters" in out


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


async def test_toggling_evicted_twice_keeps_the_selected_row_on_screen() -> None:
    app = make_app(str(SAMPLES / "long_chat.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        tl = app.timeline  # the app opens on the last message
        selected = tl.selected_id
        for _ in range(2):
            await pilot.press("e")
            await settle(pilot)
            assert tl.selected_id == selected
            top = int(tl.scroll_offset.y)
            assert top <= tl.cursor < top + tl.scrollable_content_region.height, (top, tl.cursor)
        assert app.model.show_evicted


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


def test_not_in_window_is_a_pure_check() -> None:
    from ctxview.chat.presend import not_in_window, raised_max

    assert not_in_window([0, 3, 4], 4, 3) is None
    text = not_in_window([0], 4, 1)
    assert text is not None and "not in the window" in text and "#4" in text
    assert raised_max(1, 1) == 3


async def test_message_evicted_before_sending_is_warned() -> None:
    from textual.widgets import Static

    from ctxview.app.screens.modals import ConfirmSendScreen

    app = make_app(max_=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello", "enter")  # the first message is pinned: sent
        await settle(pilot, 6)
        assert len(app.chat.requests) == 1  # type: ignore[union-attr]
        await pilot.press(*"again", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmSendScreen)
        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "not in the window" in shown and "s: send anyway" in shown
        assert "m: raise max to 3" in shown
        assert len(app.chat.requests) == 1  # type: ignore[union-attr]  # nothing sent yet
        await pilot.press("m")
        await settle(pilot, 6)
        while isinstance(app.screen, ConfirmSendScreen):  # a protocol warning may follow
            await pilot.press("s")
            await settle(pilot, 6)
        assert app.model.context.max_context_messages == 3
        sent = app.chat.requests[-1]["messages"]  # type: ignore[union-attr]
        assert any(m["role"] == "user" and m["content"] == "again" for m in sent)


async def test_send_anyway_sends_without_the_message() -> None:
    from ctxview.app.screens.modals import ConfirmSendScreen

    app = make_app(max_=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello", "enter")
        await settle(pilot, 6)
        await pilot.press(*"again", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmSendScreen)
        await pilot.press("s")
        await settle(pilot, 6)
        assert len(app.chat.requests) == 2  # type: ignore[union-attr]
        assert app.model.context.max_context_messages == 1


async def test_one_eviction_notice_per_turn() -> None:
    app = make_app(max_=3)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello", "enter")  # fills the window: the next turn evicts
        await settle(pilot, 6)
        # a turn longer than the notice's 0.3 s debounce: it evicts at the tool call and again
        # after streaming the answer (4 words at 0.15 s), more than 0.3 s later
        app.chat.backend.delay = 0.15  # type: ignore[union-attr]
        await pilot.press(*"calculate 6*7", "enter")
        await settle(pilot, 6)
        await wait_until(pilot, lambda: app._evict_timer is None)
        notices = [n for n in app._notifications if n.title == "eviction"]
        assert len(notices) == 1, [n.message for n in notices]
        assert app.model.evicted_count() >= 2


async def test_notices_do_not_cover_the_detail_at_80x24() -> None:
    from textual.widgets._toast import Toast, ToastRack

    app = make_app(AGENT)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        for i in range(4):
            app.notify(f"notice {i} " + "word " * 20)
        await pilot.pause(0.3)
        detail = app.query_one("#detail").region
        assert list(app.screen.query_one(ToastRack).query(Toast))
        covered = set()
        for y in range(detail.y, detail.bottom):
            for x in range(detail.x, detail.right):
                widget, _ = app.screen.get_widget_at(x, y)
                if isinstance(widget, Toast) or any(isinstance(a, Toast) for a in widget.ancestors):
                    covered.add((x, y))
        assert not covered, sorted(covered)[:5]
        # they are on screen, above the detail pane
        top = app.screen.get_widget_at(70, 3)[0]
        assert isinstance(top, Toast) or any(isinstance(a, Toast) for a in top.ancestors)


async def test_file_settings_stay_with_the_file_new_chat_settings_become_defaults() -> None:
    import os

    from ctxview.config import load_config

    cfg_path = Path(os.environ["CTXVIEW_CONFIG"])
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("minus", "s")
        await settle(pilot)
        assert not cfg_path.exists()  # browsing a sample does not change the next chat
        assert any("Make these settings the default" in str(n.message) for n in app._notifications)
        # the session document carries them
        doc = app.session_document()
        assert doc["settings"]["max_context_messages"] == 13
        assert doc["settings"]["strategy"] == "pair-safe"
        # the palette command makes them the defaults
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Make these settings the default")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        cfg = load_config()
        assert cfg["max_context_messages"] == 13 and cfg["strategy"] == "pair-safe"
    cfg_path.unlink()
    chat = make_app()
    async with chat.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chat.set_max(7)
        chat.theme = "textual-light"
        await settle(pilot)
        cfg = load_config()
        assert cfg["max_context_messages"] == 7 and cfg["theme"] == "textual-light"


@pytest.mark.slow
async def test_coloured_words_are_legible_in_every_theme() -> None:
    """Roles, status words, the gap marker and error marks reach 3:1 on their row, whatever
    the theme's accent colours (textual-light's green `kept` was 1.6:1, atom-one-light's 1.1:1)."""
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("home")
        await settle(pilot)
        tl = app.timeline
        tl.cursor = len(app.model.rows) - 1  # the cursor off the rows checked
        rows = [0, 1, app.model.row_of(14), app.model.row_of(15)]  # pinned, gap, kept (error)
        failures = []
        for name in app.available_themes:
            if name.startswith("ansi"):
                continue
            app.theme = name
            await pilot.pause()
            for row in rows:
                assert row is not None
                for seg in tl.render_line(row):
                    if not seg.text.strip():
                        continue
                    fg, bg = _fg_bg(seg)
                    ratio = contrast_ratio(fg, bg)
                    if ratio < 2.95:
                        failures.append(f"{name} row {row} {seg.text.strip()!r}: {ratio:.2f}")
        assert not failures, failures
