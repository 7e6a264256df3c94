"""A hostile session rendered in every pane, dialog and notification: no ESC, no other control
character, no C1 control and no bidi override reaches what is drawn on the terminal.

What is checked is the text of every segment the compositor renders for the active screen (the
base screen with its toasts, or the modal on top); the driver adds only its own styling codes
around those segments."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from textual.widgets import Input

from ctxview.app.screens.files import OpenFileScreen
from ctxview.app.screens.modals import ConfirmSendScreen, SystemPromptScreen
from tests.support.apphelp import (
    FORBIDDEN,
    assert_clean,
    drawn,
    make_app,
    screen_after,
    settle,
    wait_until,
)
from tests.support.fake_api import FakeAPI, error
from tests.support.paths import SAMPLES

#: OSC title, CSI clear screen, OSC 52 clipboard, C1 CSI and NEL, RLO, LRI, RLM
BAD = "\x1b]0;pwned\x07\x1b[2J\x9b31m\x85\u202e\u2066\u200f"
CLIP = "\x1b]52;c;aGVsbG8=\x07"


def toml_escape(s: str) -> str:
    return "".join(c if 0x20 <= ord(c) < 0x7F and c not in '"\\' else f"\\u{ord(c):04x}" for c in s)


def hostile_request() -> dict[str, Any]:
    return {
        "model": "claude" + BAD,
        "system": "be nice" + BAD,
        "messages": [
            {"role": "user", "content": "hello" + BAD},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "calling" + BAD},
                    {"type": "tool_use", "id": "toolu_1" + BAD, "name": "ls" + BAD,
                     "input": {"k" + BAD: BAD}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1" + BAD, "content": BAD,
                     "is_error": True}
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "weird" + BAD, "x": BAD},
                    {"type": "thinking", "thinking": BAD, "signature": "sig" + BAD},
                    {"type": "tool_use", "id": "toolu_" + CLIP, "name": "rm" + BAD, "input": {}},
                ],
            },
        ],
    }  # fmt: skip


async def test_hostile_session_in_every_pane_dialog_and_notification(tmp_path: Path) -> None:
    # the config names a hostile key and a hostile theme: two notifications on start
    Path(os.environ["CTXVIEW_CONFIG"]).write_text(
        f'"{toml_escape("key" + BAD)}" = 1\ntheme = "{toml_escape("t" + BAD)}"\n'
    )
    folder = tmp_path / "sessions"
    folder.mkdir()
    name = "evil\x1b]0;t\x07\u202e\x9b.json"
    path = folder / name
    path.write_text(json.dumps(hostile_request()))
    (folder / "keys.json").write_text(json.dumps({"\x1b[2Jkey\u202e\x85": 1}))
    (folder / ("other\x1b[31m\u2066.json")).write_text(json.dumps(hostile_request()["messages"]))

    app = make_app(str(path))
    async with app.run_test(size=(140, 45), notifications=True, tooltips=True) as pilot:
        await settle(pilot)
        text = assert_clean(app, "main screen")
        assert "␛]0;" in text or "␛[2J" in text  # the sequences are shown, made visible
        notes = " ".join(m for m, t, _ in app.notice_log)
        assert "unknown key" in notes and "unknown theme" in notes
        # every row selected in turn: timeline, detail pane, sidebar
        for _ in range(len(app.model.rows)):
            await pilot.press("j")
            await pilot.pause(0.1)
            assert_clean(app, f"row {app.timeline.cursor}")
        blocks = drawn(app)
        assert "rm␛[2J" in blocks or "rm␛]0;" in blocks  # the tool name, visible
        assert "weird" in blocks
        model_input = app.query_one("#model-input", Input)
        assert not set(model_input.value) & FORBIDDEN
        # the system prompt editor
        await pilot.press("ctrl+e")
        await wait_until(pilot, lambda: isinstance(app.screen, SystemPromptScreen))
        assert_clean(app, "system prompt editor")
        await pilot.press("escape")
        await pilot.pause()
        # send: the window ends with an unanswered tool_use whose id holds OSC 52 -> reject dialog
        app.query_one("#chat", Input).value = "next"
        app.query_one("#chat", Input).focus()
        await screen_after(pilot, "enter", ConfirmSendScreen)
        dialog = assert_clean(app, "reject dialog")
        assert "␛]52;c;aGVsbG8=␇" in dialog
        await pilot.press("escape")
        await settle(pilot)
        assert_clean(app, "after the reject dialog")
        # the open dialog lists hostile file names
        app.timeline.focus()
        await pilot.press("ctrl+o")
        # the tree loads in a worker that lives as long as the dialog: wait for its rows
        await wait_until(
            pilot,
            lambda: isinstance(app.screen, OpenFileScreen) and "other␛[31m" in drawn(app),
        )
        listing = assert_clean(app, "open dialog")
        assert "evil␛]0;t␇" in listing and "other␛[31m" in listing
        # an open error quoting hostile JSON keys
        app.screen.query_one("#path", Input).value = str(folder / "keys.json")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("␛[2Jkey" in m for m, _, _ in app.notice_log))
        await settle(pilot)
        # whatever is drawn now (the toast, when the dialog's dismissal has not raced it off the
        # screen: it is not always there under two workers) carries no escape
        assert_clean(app, "open error notification")
        assert any("␛[2Jkey" in m for m, t, _ in app.notice_log)
        # "opened <file name>"
        app.open_path(str(folder / "other\x1b[31m\u2066.json"))
        # the file is read in a worker: wait for its notice, not a fixed time
        await wait_until(
            pilot, lambda: any(m.startswith("opened other") for m, _, _ in app.notice_log)
        )
        await settle(pilot)
        text = assert_clean(app, "opened notification")
        assert any(m.startswith("opened other␛[31m") for m, t, _ in app.notice_log)
        assert "ctxview · other␛[31m" in text  # the title names it, as visible text


async def test_hostile_api_error_text(fake_api: FakeAPI) -> None:
    fake_api.queue(error(400, "invalid_request_error", "bad" + BAD + CLIP))
    app = make_app(None, api_url=fake_api.url)
    async with app.run_test(size=(140, 45), notifications=True, tooltips=True) as pilot:
        await settle(pilot)
        app.query_one("#chat", Input).value = "hi"
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("400" in m for m, _, _ in app.notice_log))
        await settle(pilot)
        text = assert_clean(app, "API error notification")
        assert "bad␛]0;pwned" in text.replace("\n", "")
        assert any("400" in m for m, t, _ in app.notice_log)


async def test_tool_faults_answer_and_the_chat_goes_on(monkeypatch: Any) -> None:
    """A calculator bomb, a tool that raises: each tool_use gets an is_error tool_result, the app
    stays responsive and the next send is accepted."""
    import time

    from ctxview.chat import tools

    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        t0 = time.monotonic()
        for text in ("calculate (3**2583)**10000", "calculate 2**4000*0.5", "calculate 1e999"):
            app.query_one("#chat", Input).value = text
            await pilot.press("enter")
            await settle(pilot)
        # a bomb the calculator evaluated would take minutes (a 12-million-digit power, then
        # its decimal text): the bound catches that, with room for a loaded machine
        assert time.monotonic() - t0 < 60
        msgs = app.model.context.messages
        results = [
            b
            for m in msgs
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        assert len(results) == 3 and all(r["is_error"] for r in results)
        assert all("\n" not in r["content"] for r in results)

        def crash(expression: str) -> str:
            raise RecursionError("deep")

        monkeypatch.setattr(tools, "calculate", crash)
        app.query_one("#chat", Input).value = "calculate 1+1"
        await pilot.press("enter")
        await settle(pilot)
        last_result = app.model.context.messages[-2]["content"][0]
        assert last_result["is_error"] and "nested too deeply" in last_result["content"]
        monkeypatch.undo()
        app.query_one("#chat", Input).value = "calculate 6*7"
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.context.messages[-2]["content"][0]["content"] == "42"
        assert not app.chat.failed and app.is_running


async def test_bad_files_in_the_tui_refused_without_spinning(tmp_path: Path) -> None:
    """ctrl+o on a FIFO, a device, 982-deep JSON, a 5,000-digit integer, NaN, a bad strategy: a
    notification naming the file, the open session stays, the app answers at once."""
    import time

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    deep = tmp_path / "deep.json"
    deep.write_text(
        '[{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "x", "input": '
        + '{"a": ' * 981
        + "1"
        + "}" * 981
        + "}]}]"
    )
    big = tmp_path / "big.json"
    big.write_text('[{"role": "user", "content": "x", "n": ' + "9" * 5000 + "}]")
    nan = tmp_path / "nan.json"
    nan.write_text('[{"role": "user", "content": "x", "n": NaN}]')
    strat = tmp_path / "strat.json"
    strat.write_text(
        json.dumps(
            {"format": "ctxview.session", "version": 1, "settings": {"strategy": []},
             "transcript": []}
        )
    )  # fmt: skip
    app = make_app(str(SAMPLES / "agent_loop.json"))
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        before = app.model
        for path in (fifo, Path("/dev/zero"), deep, big, nan, strat):
            t0 = time.monotonic()
            app.open_path(str(path))
            await settle(pilot)
            assert time.monotonic() - t0 < 5, path
            assert app.model is before
            msgs = [m for m, t, _ in app.notice_log]
            assert any(m.startswith(str(path)) for m in msgs), (path, msgs)
            assert all("\n" not in m for m in msgs)
        await pilot.press("j")
        await pilot.pause()
        assert app.is_running


async def test_x_export_refuses_a_typed_api_key(tmp_path: Path, monkeypatch: Any) -> None:
    """`x` refuses a request body holding the ANTHROPIC_API_KEY value, as autosave does."""
    key = "sk-ant-typed-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    app = make_app(None)  # the offline model (make_app's default), the key is in the env
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        app.query_one("#chat", Input).value = f"my key is {key}"
        await pilot.press("enter")
        await settle(pilot)
        app.timeline.focus()
        await pilot.press("x")
        await pilot.pause()
        out = tmp_path / "req.json"
        app.screen.query_one("#path", Input).value = str(out)
        await pilot.press("enter")
        await settle(pilot)
        assert not out.exists() and list(tmp_path.iterdir()) == []
        msgs = [m for m, t, _ in app.notice_log]
        assert any("not written" in m and "ANTHROPIC_API_KEY" in m for m in msgs), msgs
        assert key not in " ".join(msgs)
