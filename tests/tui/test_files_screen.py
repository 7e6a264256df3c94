"""Opening and saving in the TUI: the open dialog (ctrl+o) with the sub-agents of a Claude Code
session; ctrl+s that asks before overwriting a file ctxview did not create; save as."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

from textual.widgets import OptionList

from tests.support.apphelp import make_app, settle
from tests.support.paths import FIXTURES, SAMPLES

CC = FIXTURES / "claude_code"
AGENT = str(SAMPLES / "agent_loop.json")


async def test_subagents_are_offered_in_the_open_dialog(tmp_path: Path) -> None:
    session = tmp_path / "6c2214d7.jsonl"
    shutil.copy(CC / "spotter_short.jsonl", session)
    folder = tmp_path / "6c2214d7" / "subagents"
    folder.mkdir(parents=True)
    shutil.copy(
        CC / "spotter_6c2214d7_subagent_agent-afc096d.jsonl", folder / "agent-afc096d.jsonl"
    )
    app = make_app(str(session))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        options = app.screen.query_one("#subagents", OptionList)
        assert options.option_count == 1
        options.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.name == "agent-afc096d.jsonl"
        assert len(app.model.transcript) > 10


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


async def test_save_as_onto_a_folder_saves_inside_it(tmp_path: Path) -> None:
    from ctxview.app.screens.files import SavePathScreen

    folder = tmp_path / "out"
    folder.mkdir()
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("S")
        await pilot.pause()
        assert isinstance(app.screen, SavePathScreen)
        hint = " ".join(str(w.render()) for w in app.screen.query(".hint"))
        assert "a folder: the file goes inside it" in hint
        app.screen.query_one("#path").value = str(folder)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await settle(pilot)
        assert len(app.screen_stack) == 1  # nothing to overwrite: no question
        inside = folder / "agent_loop.json"  # the session's own name
        assert '"format": "ctxview.session"' in inside.read_text()
        assert not (tmp_path / "out.ctxview.json").exists()
        assert app.model.path == str(inside)
        # the session wrote that file: saving into the folder again saves over it
        await pilot.press("minus")
        app.files.save_checked(str(folder))
        await settle(pilot)
        assert app.model.path == str(inside) and len(app.screen_stack) == 1
        assert '"max_context_messages": 13' in inside.read_text()


async def test_export_onto_a_folder_writes_inside_it(tmp_path: Path) -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.files.export_to(str(tmp_path))
        await settle(pilot)
        assert '"messages"' in (tmp_path / "agent_loop.request.json").read_text()


async def test_export_of_a_gemini_or_responses_session_writes_its_body_and_says_so(
    tmp_path: Path,
) -> None:
    """A Gemini body holds ``contents`` and a Responses body ``input``: the export's notice
    counts the window's messages (it read ``body["messages"]`` and crashed the app)."""
    from tests.support.paths import ACCEPTANCE

    for src, key in (
        (ACCEPTANCE / "gemini" / "llmgemini_tools_req3.json", "contents"),
        (next((ACCEPTANCE / "openai_responses").glob("*.json")), "input"),
    ):
        app = make_app(str(src))
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            out = tmp_path / f"{key}.json"
            app.files.export_to(str(out))
            await settle(pilot)
            assert f'"{key}"' in out.read_text()
            n = len(app.model.replay.window_messages())
            assert any(m.startswith(f"wrote {out}: {n} message") for m, _, _ in app.notice_log)


async def test_save_proposes_a_real_name_safe_to_show(tmp_path: Path) -> None:
    """A file named with an escape sequence and a byte that is not UTF-8: the save dialog
    proposes a name of its own with those characters replaced, shown as it is, and enter saves
    under exactly that name (the dialog showed the name made visible, ``␛[31m``, and saved a
    file of that made-up name)."""
    import os

    from ctxview.app.screens.files import SavePathScreen

    hostile = os.path.join(str(tmp_path), os.fsdecode(b"run\x1b[31m\xff.jsonl"))
    shutil.copy(CC / "spotter_short.jsonl", os.fsencode(hostile))
    app = make_app(hostile)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert isinstance(app.screen, SavePathScreen)
        proposed = app.screen.query_one("#path").value  # type: ignore[attr-defined]
        assert proposed == str(tmp_path / "run_[31m_.ctxview.json")
        await pilot.press("enter")
        await settle(pilot)
        assert '"format": "ctxview.session"' in Path(proposed).read_text()
        assert app.model.path == proposed
        assert sorted(os.listdir(tmp_path)) == sorted(
            [os.path.basename(hostile), "run_[31m_.ctxview.json"]
        )


async def test_saving_onto_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    """A FIFO is never saved over: the save says so at once, instead of first asking whether
    to overwrite the 'file' and refusing once the user said yes."""
    import os

    from ctxview.app.screens.files import OverwriteScreen

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.files.save_checked(str(fifo))
        await settle(pilot)
        assert not isinstance(app.screen, OverwriteScreen)
        assert len(app.screen_stack) == 1
        notice = [m for m, t, _ in app.notice_log][-1]
        assert "not saved" in notice and "FIFO" in notice
        assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # left as it was
