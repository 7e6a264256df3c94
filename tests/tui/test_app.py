"""Pilot tests of the inspector: open, select, detail, max +/-, evictions, strategies, files,
untrusted text."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from textual.widgets import Input, Static

from ctxview.app.model import GAP
from ctxview.app.screens.modals import HelpScreen
from tests.support.apphelp import make_app, row_texts, settle, wait_until
from tests.support.paths import FIXTURES, ROOT

SAMPLES = ROOT / "sample_sessions"
AGENT = str(SAMPLES / "agent_loop.json")


async def test_open_focuses_timeline_and_shows_status_words() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.focused is app.timeline
        assert "agent_loop.json" in app.title and "offline" in app.sub_title
        assert len(app.model.rows) == 27 + 1  # every message + the gap marker
        await pilot.press("home")
        texts = row_texts(app)
        assert texts[0].rstrip().endswith("pinned") and "⚑" in texts[0]
        assert GAP in app.model.rows and "gap" in texts[1]
        assert texts[2].rstrip().endswith("evicted")
        await pilot.press("end")
        assert row_texts(app)[-1].rstrip().endswith("kept") or any(
            t.rstrip().endswith("kept") for t in row_texts(app)
        )


async def test_new_chat_focuses_chat_input() -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert isinstance(app.focused, Input) and app.focused.id == "chat"


async def test_select_and_detail() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("home", "j", "j")  # pinned, gap, #1
        await pilot.pause(0.2)
        assert app.timeline.selected_id == 1
        text = " ".join(str(w.render()) for w in app.detail.query("Static"))
        assert "#1 assistant" in text and "evicted" in text and "list_directory" in text
        await pilot.press("k")
        await pilot.pause(0.2)
        assert app.timeline.selected_id is None  # on the gap marker


async def test_max_minus_plus_live_and_saved_to_config() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        ctx = app.model.context
        assert ctx.max_context_messages == 14
        before = ctx.window_ids
        await pilot.press("minus")
        await settle(pilot)
        assert ctx.max_context_messages == 13 and len(ctx) == 13
        assert ctx.window_ids == [before[0], *before[2:]]
        assert app.model.status(before[1]) == "evicted"
        # an open file's max is that session's, not the default
        assert not Path(os.environ["CTXVIEW_CONFIG"]).exists()
        # the eviction notice comes after its debounce
        await wait_until(pilot, lambda: any(t == "eviction" for m, t, _ in app.notice_log))
        notes = [m for m, t, _ in app.notice_log]
        assert any(n.startswith(f"evicted #{before[1]}") and "1 message" in n for n in notes)
        await pilot.press("plus", "plus")
        await settle(pilot)
        assert ctx.max_context_messages == 15 and len(ctx) == 13  # raising brings nothing back
        assert any("do not come back" in m for m, t, _ in app.notice_log)


async def test_eviction_flashes_when_animated() -> None:
    # deterministic: the animation runs on a clock the test moves, not on wall time (a cold,
    # loaded machine could spend the whole 0.8 s flash between the key press and the check)
    now = [1000.0]
    app = make_app(AGENT, animation="full")
    async with app.run_test(size=(120, 40)) as pilot:
        app.animation_level = "full"
        app.timeline.clock = lambda: now[0]
        await settle(pilot)
        await pilot.press("minus")
        await pilot.pause()
        assert app.timeline.flashing
        now[0] += 0.5  # half way: still fading
        app.timeline._tick()
        assert app.timeline.flashing
        now[0] += 0.5  # past the 0.8 s flash
        app.timeline._tick()
        assert not app.timeline.flashing


async def test_no_flash_with_animations_off() -> None:
    app = make_app(AGENT, animation="full")
    async with app.run_test(size=(120, 40)) as pilot:
        app.animation_level = "none"
        await settle(pilot)
        await pilot.press("minus")
        await pilot.pause()
        assert not app.timeline.flashing


async def test_strategy_switch_fixes_protocol() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        status = str(app.query_one("#protocol").render())
        assert "✗" in status and "unexpected `tool_use_id`" in status
        app.set_strategy("pair-safe")
        await settle(pilot)
        assert app.model.context.strategy == "pair-safe"
        assert "✓ valid" in str(app.query_one("#protocol").render())
        assert not Path(os.environ["CTXVIEW_CONFIG"]).exists()  # this file's session only
        await pilot.press("s")  # cycles to the next strategy
        await settle(pilot)
        assert app.model.context.strategy == "token-budget"


async def test_next_problem_and_pinned_and_partner_jumps() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("n")
        await pilot.pause()
        bad = app.timeline.selected_id
        assert bad is not None and app.model.problems_for(bad)
        await pilot.press("t")  # tool_result -> its tool_use (evicted)
        await pilot.pause()
        partner = app.timeline.selected_id
        assert partner == bad - 1 and app.model.status(partner) == "evicted"
        await pilot.press("backspace")
        await pilot.pause()
        assert app.timeline.selected_id == bad
        await pilot.press("p")
        await pilot.pause()
        assert app.timeline.selected_id == 0


async def test_toggle_evicted_rows() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("e")
        await pilot.pause()
        assert len(app.model.rows) == 14 + 1
        await pilot.press("home")
        texts = row_texts(app)
        assert "hidden" in texts[1] and not any(t.rstrip().endswith("evicted") for t in texts)
        await pilot.press("e")
        await pilot.pause()
        assert len(app.model.rows) == 28


async def test_save_open_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    shutil.copy(AGENT, path)
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("minus", "minus")
        await settle(pilot)
        window = app.model.context.window_ids
        await pilot.press("ctrl+s")  # a ctxview session saves in place, once allowed to
        await pilot.pause()
        await pilot.press("o")
        await settle(pilot)
        saved = json.loads(path.read_text())
        assert saved["window"]["ids"] == window and saved["settings"]["max_context_messages"] == 12
        app.open_path(str(SAMPLES / "long_chat.json"))
        await settle(pilot)
        assert app.model.name == "long_chat.json" and app.focused is app.timeline
        app.open_path(str(path))
        await settle(pilot)
        assert app.model.context.window_ids == window
        assert [r.evicted_step for r in app.model.transcript.records] == [
            t["evicted_at_step"] for t in saved["transcript"]
        ]


async def test_save_as_for_transcripts(tmp_path: Path) -> None:
    src = tmp_path / "t.jsonl"
    shutil.copy(FIXTURES / "claude_code" / "spotter_short.jsonl", src)
    app = make_app(str(src))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        inp = app.screen.query_one("#path", Input)
        assert inp.value.endswith("t.ctxview.json")
        await pilot.press("enter")
        await settle(pilot)
        assert (tmp_path / "t.ctxview.json").exists()
        assert src.read_text() == (FIXTURES / "claude_code" / "spotter_short.jsonl").read_text()


async def test_bad_file_keeps_session(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [1, }')
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = app.model
        app.open_path(str(bad))
        await settle(pilot)
        assert app.model is before
        msgs = [m for m, t, _ in app.notice_log]
        assert any(str(bad) in m and "line 1, column 18" in m for m in msgs)


async def test_open_dialog(tmp_path: Path) -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        inp = app.screen.query_one("#path", Input)
        inp.value = str(SAMPLES / "tool_errors.json")
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.name == "tool_errors.json"


async def test_open_dialog_stays_open_on_a_path_that_is_not_there(tmp_path: Path) -> None:
    from ctxview.app.screens.files import OpenFileScreen, SessionTree

    app = make_app(AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: isinstance(app.screen, OpenFileScreen))
        dialog = app.screen
        inp = dialog.query_one("#path", Input)
        error = dialog.query_one("#open-error", Static)
        inp.value = str(tmp_path / "typo.json")
        # (not settle: the tree's loader is a worker that lives as long as the dialog)
        await pilot.press("enter")
        await wait_until(pilot, lambda: "typo.json: no such file" in str(error.render()))
        # the path to correct is still there, with why
        assert app.screen is dialog and inp.value.endswith("typo.json")
        # a folder shows in the tree, the dialog open
        inp.value = str(tmp_path)
        await pilot.press("enter")
        await wait_until(pilot, lambda: dialog.query_one(SessionTree).path == tmp_path)
        assert app.screen is dialog and str(error.render()).strip() == ""
        inp.value = str(SAMPLES / "tool_errors.json")
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.name == "tool_errors.json"


async def test_untrusted_text_is_literal() -> None:
    app = make_app(str(SAMPLES / "untrusted_text.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("home")
        await pilot.pause(0.2)
        texts = "\n".join(row_texts(app))
        assert "[@click=app.quit]click" in texts
        assert "\x1b" not in texts and "\x07" not in texts
        detail = " ".join(str(w.render()) for w in app.detail.query("Static"))
        assert "[@click=app.quit]click me[/]" in detail and "[$accent]x[/$accent]" in detail
        await pilot.press("j")
        await pilot.pause(0.2)
        detail = " ".join(str(w.render()) for w in app.detail.query("Static"))
        assert (
            "␛[31mANSI red␛[0m" in detail
            and "␛]0;pwned title␇" in detail
            and "[B]UPPER[/B]" in detail
        )
        assert "\x1b" not in detail
        # every strip the timeline renders: no raw control character reaches the terminal
        for y in range(app.timeline.size.height):
            for seg in app.timeline.render_line(y):
                assert not any(ord(c) < 32 or 0x7F <= ord(c) < 0xA0 for c in seg.text), repr(
                    seg.text
                )
        # a click on the row never runs the [@click] action
        await pilot.click("#timeline", offset=(30, 0))
        await pilot.pause()
        assert app.is_running


async def test_help_and_palette() -> None:
    from ctxview.app.commands import CtxviewCommands

    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        provider = CtxviewCommands(app.screen)
        hits = [h async for h in provider.search("max 7")]
        assert any(h.text == "Set max messages to 7" for h in hits)
        hit = next(h for h in hits if h.text == "Set max messages to 7")
        hit.command()
        await settle(pilot)
        assert app.model.context.max_context_messages == 7
        names = [h.text async for h in provider.discover()]
        for want in (
            "Open file…",
            "Save session",
            "Export request…",
            "Toggle evicted rows",
            "Jump to pinned message",
            "Jump to next problem",
            "Strategy: pair-safe",
        ):
            assert want in names


async def test_export_request(tmp_path: Path) -> None:
    app = make_app(AGENT, strategy="pair-safe")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        await pilot.pause()
        out = tmp_path / "req.json"
        app.screen.query_one("#path", Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot)
        body = json.loads(out.read_text())
        assert (
            body["messages"] == app.model.context.messages and body["model"] == "claude-sonnet-5-5"
        )


async def test_export_never_replaces_the_open_file(tmp_path: Path) -> None:
    """``x`` onto the file that is open (by its name or a symlink to it) is refused: a request
    body would replace the session."""
    opened = tmp_path / "s.json"
    shutil.copy(AGENT, opened)
    (tmp_path / "link.json").symlink_to(opened)
    before = opened.read_bytes()
    app = make_app(str(opened))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        for target in (opened, tmp_path / "link.json"):
            await pilot.press("x")
            await pilot.pause()
            app.screen.query_one("#path", Input).value = str(target)
            await pilot.press("enter")
            await settle(pilot)
            assert opened.read_bytes() == before
            assert any("is the input file" in str(n.message) for n in app._notifications), target
            app._notifications.clear()


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
async def test_narrow_terminal(size: tuple[int, int]) -> None:
    app = make_app(AGENT)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        sidebar = app.query_one("#sidebar")
        assert sidebar.display is (size[0] >= 100)
        await pilot.press("ctrl+b")
        await pilot.pause()
        assert sidebar.display is not (size[0] >= 100)
        assert app.timeline.size.height >= 5


async def test_quit_status_zero() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_cursor_row_keeps_role_visible() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tl = app.timeline
        y = tl.cursor - int(tl.scroll_offset.y)
        segs = list(tl.render_line(y))
        role = next(s for s in segs if s.text.strip() in ("user", "assistant"))
        cursor_style = tl.get_component_rich_style("timeline--cursor", partial=True)
        if cursor_style.color is not None:
            assert role.style is not None and role.style.color == cursor_style.color


async def test_model_input_applies_and_saves() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        inp = app.query_one("#model-input", Input)
        assert inp.value == "claude-sonnet-5-5"
        inp.focus()
        inp.value = "claude-opus-5"
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.model == "claude-opus-5" and "claude-opus-5" in app.sub_title
        assert app.request_body()["model"] == "claude-opus-5"
        assert not Path(os.environ["CTXVIEW_CONFIG"]).exists()  # the file's session only
        app.action_make_default()
        assert 'model = "claude-opus-5"' in Path(os.environ["CTXVIEW_CONFIG"]).read_text()
        await pilot.pause()
        said = [n for n, _, _ in app.notice_log if "saved as your default" in n]
        assert len(said) == 1
        assert "model = claude-opus-5" in said[0]
        assert "— undo: ctxview config set" in said[0]
        assert "ctxview config set model claude-sonnet-5-5" in said[0]


async def test_a_new_chats_settings_never_become_defaults() -> None:
    app = make_app(max_=1, strategy="seed")  # as `ctxview --max 1 --strategy seed`
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("i")
        await pilot.press(*"hello", "enter")
        await settle(pilot, 6)
        app.timeline.focus()
        await pilot.press("plus", "s", "minus")
        await settle(pilot)
        assert app.model.context.strategy != "seed"
        assert not Path(os.environ["CTXVIEW_CONFIG"]).exists()
        told = [n for n, _, _ in app.notice_log if "applies to this chat only" in n]
        assert len(told) == 1 and "Make these settings the default" in told[0]


async def test_edit_system_prompt_modal() -> None:
    from textual.widgets import TextArea

    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+e")
        await pilot.pause()
        area = app.screen.query_one(TextArea)
        assert area.text.startswith("You are a careful coding agent")
        area.text = "Be terse. [bold]not markup[/bold]"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert app.model.context.system_prompt == "Be terse. [bold]not markup[/bold]"
        assert app.request_body()["system"] == "Be terse. [bold]not markup[/bold]"
        assert "[bold]not markup[/bold]" in str(app.query_one("#system").render())


async def test_theme_change_is_saved() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.theme = "nord"
        await settle(pilot)
        assert 'theme = "nord"' in Path(os.environ["CTXVIEW_CONFIG"]).read_text()
        said = [n for n, _, _ in app.notice_log if "saved as your default" in n]
        assert len(said) == 1 and "undo: ctxview config set theme textual-dark" in said[0]
    app2 = make_app(AGENT)
    async with app2.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app2.theme == "nord"


async def test_draft_row_shows_thinking_then_text() -> None:
    from ctxview.app.model import Draft

    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        draft = Draft(thinking="weighing [bold]options[/]")
        app.model.set_draft(draft)
        app.timeline.refresh_rows()
        app.timeline.action_jump_end()
        await pilot.pause()
        assert "thinking ▍" in row_texts(app)[-1] and "[bold]options[/]" in row_texts(app)[-1]
        draft.text = "the answer"
        app.timeline.refresh()
        await pilot.pause()
        assert "streaming ▍" in row_texts(app)[-1] and "the answer" in row_texts(app)[-1]


async def test_opening_a_long_file_from_a_short_one_shows_its_newest_row() -> None:
    """From a session without a scrollbar, opening a long one left the timeline at its top
    while the newest row (selected) was off screen."""
    app = make_app(str(SAMPLES / "untrusted_text.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        tl = app.timeline
        assert tl.max_scroll_y == 0  # the short session fits
        app.open_path(str(SAMPLES / "long_chat.json"))
        await settle(pilot)
        assert app.model.name == "long_chat.json"
        n = len(app.model.rows)
        h = tl.scrollable_content_region.height
        assert n > h and tl.cursor == n - 1
        top = round(tl.scroll_offset.y)
        assert top <= tl.cursor < top + h, (top, tl.cursor, h)


async def test_the_cache_line_says_when_its_window_is_not_the_live_one() -> None:
    """The sidebar's request tokens are the live window's; its cache line replays the session
    from the start under today's settings. After a change of strategy the two windows differ
    (the evicted stay evicted in the live one) and the line must say so (else it reads
    'Request tokens ~435' beside 'uncached ~733' with nothing to explain it)."""
    from tests.support.apphelp import text_of, wait_prediction

    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        pred = app.model.cache_prediction
        assert pred is not None and pred.next_window == app.model.window_ids
        assert "not the live one" not in text_of(app, "#cache")
        for _ in range(4):  # ... low-water, clear-tool-uses: nothing evicted in the replay
            await pilot.press("s")
            await wait_prediction(pilot)
        pred = app.model.cache_prediction
        assert app.model.context.strategy == "clear-tool-uses"
        assert pred is not None and pred.next_window is not None
        assert pred.next_window != app.model.window_ids
        assert len(pred.next_window) > len(app.model.window_ids)
        assert "not the live one" in text_of(app, "#cache")


async def test_notices_cover_neither_the_rows_nor_the_detail_at_80x24() -> None:
    from textual.widgets._toast import Toast, ToastRack

    app = make_app(AGENT)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        for i in range(4):
            app.notify(f"notice {i} " + "word " * 20)
        await pilot.pause(0.3)
        assert list(app.screen.query_one(ToastRack).query(Toast))
        covered = set()
        for pane in (app.timeline.region, app.query_one("#detail").region):
            for y in range(pane.y, pane.bottom):
                for x in range(pane.x, pane.right):
                    widget, _ = app.screen.get_widget_at(x, y)
                    if isinstance(widget, Toast) or any(
                        isinstance(a, Toast) for a in widget.ancestors
                    ):
                        covered.add((x, y))
        assert not covered, sorted(covered)[:5]
        # they are on screen, over the chat input
        chat = app.query_one("#chat").region
        top = app.screen.get_widget_at(chat.right - 4, chat.y + 1)[0]
        assert isinstance(top, Toast) or any(isinstance(a, Toast) for a in top.ancestors)


async def test_settings_stay_with_their_session_until_made_the_default() -> None:
    import os

    from ctxview.config import load_config

    cfg_path = Path(os.environ["CTXVIEW_CONFIG"])
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("minus", "s")
        await settle(pilot)
        assert not cfg_path.exists()  # browsing a sample does not change the next chat
        assert any("Make these settings the default" in m for m, t, _ in app.notice_log)
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
        # the chat's max is the chat's; a theme chosen is the user's default (and says so)
        assert cfg["max_context_messages"] == 20 and cfg["theme"] == "textual-light"


async def test_figures_arriving_while_the_panes_are_torn_down_do_not_crash() -> None:
    """A worker's token or check figures can arrive as the app closes and its widgets go."""
    from ctxview.app.messages import FiguresChanged

    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.timeline.remove()
        app.post_message(FiguresChanged(rows=True))
        await settle(pilot)
        assert app.is_running


async def test_under_a_dialog_the_footer_offers_only_keys_that_work_there() -> None:
    # a key under a modal dialog reaches the dialog alone (but priority keys): ctrl+o and
    # ctrl+s were offered on the Requests view and did nothing
    app = make_app(str(ROOT / "sample_sessions" / "agent_loop.json"))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)

        def offered() -> set[str]:
            shown = app.screen_stack[0].active_bindings.values()
            return {b.binding.action for b in shown if b.binding.show}

        assert {"open", "save", "quit"} <= offered()
        await pilot.press("question_mark")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        assert offered() == {"quit"}
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, HelpScreen))
        assert {"open", "save"} <= offered()


async def test_help_says_how_to_close_it_and_that_f_follows_a_codex_rollout() -> None:
    """At 80x24 the help shows a dozen keys: its text says how to scroll and close it. ``f``
    follows a Codex rollout as well as a Claude Code transcript (``FOLLOWABLE``)."""
    from ctxview.app.follow import FOLLOWABLE
    from ctxview.app.keys import KEYS_HELP

    assert FOLLOWABLE == ("claude-code", "codex")
    follow = dict(KEYS_HELP)["f"]
    assert "Claude Code" in follow and "Codex" in follow
    app = make_app(AGENT)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "escape (or ?) closes this help" in text


def test_the_palettes_entries_name_every_agent_they_cover() -> None:
    """The palette said Open reads a 'Claude Code transcript' and f follows one, and that the
    sessions list holds ~/.claude/projects' sessions: each covers Codex (and more) too."""
    from ctxview.app.commands import ACTIONS

    helps = {action: help_text for _, help_text, action in ACTIONS}
    assert "an agent's transcript or a trace" in helps["open"]
    assert "Codex" in helps["follow"]
    assert "~/.claude/projects" not in helps["sessions"]
