"""In the TUI: r repairs a tool call nothing answers by inserting the answer (Anthropic's
Messages API before a system turn, Chat Completions right after the call, the Responses API at
the end of the call's turn): the error goes, an `added` row appears, u brings the error back,
and ctrl+s saves a session that reopens valid, its export in the file's own API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from ctxview.app.screens.files import SavePathScreen
from ctxview.core.repair import INTERRUPTED
from ctxview.sessions import open_session
from tests.support.apphelp import make_app, row_texts, settle, wait_until

READ = {"path": "a.txt"}
FILES: dict[str, dict[str, Any]] = {
    # the call is answered by nothing: a system turn comes next
    "anthropic": {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "read a.txt"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "read", "input": READ}],
            },
            {"role": "system", "content": "the tool was interrupted"},
            {"role": "user", "content": "ok, say hi"},
        ],
    },
    # a user message follows the call: its tool message must come first
    "openai-chat": {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "read a.txt"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read", "arguments": json.dumps(READ)},
                    }
                ],
            },
            {"role": "user", "content": "never mind, say hi"},
            {"role": "assistant", "content": "hi"},
        ],
    },
    # the call's output is nowhere in the input
    "openai-responses": {
        "model": "gpt-4o",
        "input": [
            {"role": "user", "content": "read a.txt"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "read",
                "arguments": json.dumps(READ),
            },
            {"role": "system", "content": "the tool was interrupted"},
            {"role": "assistant", "content": "sorry"},
            {"role": "user", "content": "ok"},
        ],
    },
}


def _detail(app: Any) -> str:
    return "\n".join(str(w.render()) for w in app.detail.query(Static))


@pytest.mark.parametrize("api", sorted(FILES))
async def test_r_inserts_the_answer_u_takes_it_back_and_the_save_reopens_valid(
    api: str, tmp_path: Path
) -> None:
    path = tmp_path / f"{api}.json"
    path.write_text(json.dumps(FILES[api]))
    app = make_app(str(path), as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.error_ids() == [1]
        n_before = len(app.model.transcript)
        await pilot.press("n")  # the error: the message with the call
        await wait_until(pilot, lambda: app.timeline.selected_id == 1)
        assert "fix (r): answer" in _detail(app)
        await pilot.press("r")
        await wait_until(pilot, lambda: len(app.model.transcript) == n_before + 1)
        model = app.model
        assert model.error_ids() == [] and model.verdict()[0] == "ok"
        assert model.transcript[2].message["content"][0]["content"] == INTERRUPTED
        assert model.context.window_ids == list(range(n_before + 1))
        notice = [m for m, _, _ in app.notice_log][-1]
        assert notice.startswith("repaired (1 fix): answer") and "u undoes" in notice
        added = [r for r in row_texts(app) if "added ·" in r]
        assert len(added) == 1 and added[0][1:8].strip() == "2"
        app.timeline.select_id(2)
        await wait_until(pilot, lambda: "added by repair" in _detail(app))
        assert app.model.unsaved and "unsaved" in app.title

        await pilot.press("u")
        await wait_until(pilot, lambda: len(app.model.transcript) == n_before)
        assert app.model.error_ids() == [1]
        assert not [r for r in row_texts(app) if "added ·" in r]
        await wait_until(pilot, lambda: app.timeline.selected_id == 1)  # the call it answered

        await pilot.press("r")
        await wait_until(pilot, lambda: len(app.model.transcript) == n_before + 1)
        assert app.model.error_ids() == []
        await pilot.press("ctrl+s")  # a file of another format: saved as a new ctxview session
        await wait_until(pilot, lambda: isinstance(app.screen, SavePathScreen))
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.model.unsaved)
        saved = app.model.path
        body = app.request_body()
    assert saved is not None and saved != str(path)
    assert json.loads(path.read_text()) == FILES[api]  # the file opened is left as it was
    reopened = open_session(saved, as_sent=True)
    assert reopened.session.provider == app.model.session.provider
    assert [p.code for p in reopened.protocol_problems() if p.severity == "error"] == []
    assert reopened.transcript[2].meta["inserted_by"] == "repair"
    # the next request in the file's own API: the answer as that API's item
    if api == "openai-chat":
        tool = body["messages"][2]
        assert tool["role"] == "tool" and tool["tool_call_id"] == "call_1"
    elif api == "openai-responses":
        out = body["input"][2]
        assert out["type"] == "function_call_output" and out["call_id"] == "call_1"
    else:
        assert body["messages"][2]["content"][0]["tool_use_id"] == "toolu_1"


async def test_u_refuses_to_take_back_an_insert_once_a_chat_went_on(tmp_path: Path) -> None:
    """Undoing the insert would show the session from before it, losing the chat since: it is
    refused, with the edits before it (they name messages by that session's ids)."""
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(FILES["anthropic"]))
    app = make_app(str(path), as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        app.timeline.select_id(3)
        await pilot.press("P")  # an edit before the repair: pin #3 (previewed)
        await wait_until(pilot, lambda: app.screen.__class__.__name__ == "EditPreviewScreen")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model.context.pinned_ids == [3])
        await pilot.press("n", "r")
        await wait_until(pilot, lambda: len(app.model.transcript) == 5)
        assert app.model.context.pinned_ids == [4]  # the pin moved on with its message
        await pilot.press("i", *"hello", "enter")
        await wait_until(pilot, lambda: len(app.model.transcript) > 6 and not app.chat.busy)
        n = len(app.model.transcript)
        await pilot.press("escape")
        app.timeline.focus()
        await pilot.press("u")
        await wait_until(pilot, lambda: "cannot undo" in [m for m, _, _ in app.notice_log][-1])
        assert "nor the edits before it" in [m for m, _, _ in app.notice_log][-1]
        await pilot.press("u")
        await wait_until(pilot, lambda: [m for m, _, _ in app.notice_log][-1] == "nothing to undo")
        assert len(app.model.transcript) == n and app.model.context.pinned_ids == [4]
        assert app.model.error_ids() == []


async def test_a_repairs_every_call_and_the_selection_follows_its_message(tmp_path: Path) -> None:
    messages = FILES["anthropic"]["messages"]
    path = tmp_path / "two.json"
    second = json.loads(json.dumps(messages[1]))
    second["content"][0]["id"] = "toolu_2"
    body = {**FILES["anthropic"], "messages": [*messages[:3], second, *messages[2:]]}
    path.write_text(json.dumps(body))
    app = make_app(str(path), as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.error_ids() == [1, 3]
        app.timeline.select_id(5)  # "ok, say hi"
        await pilot.press("A")
        await wait_until(pilot, lambda: len(app.model.transcript) == 8)
        assert app.model.error_ids() == []
        assert len([r for r in row_texts(app) if "added ·" in r]) == 2
        await wait_until(pilot, lambda: app.timeline.selected_id == 7)
        assert app.model.transcript[7].message == messages[3]
        app.set_model_name("claude-opus-4-6")  # a setting chosen after the repair
        await pilot.press("u")
        await wait_until(pilot, lambda: len(app.model.transcript) == 6)
        await wait_until(pilot, lambda: app.timeline.selected_id == 5)
        assert app.model.model == "claude-opus-4-6"  # undoing the repair keeps it


async def test_undoing_an_insert_in_a_simulation_keeps_the_max_and_strategy_chosen_since(
    tmp_path: Path,
) -> None:
    path = tmp_path / "anthropic.json"
    path.write_text(json.dumps(FILES["anthropic"]))
    app = make_app(str(path))  # a simulation under the config's max and strategy
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.as_sent is None
        await pilot.press("n", "r")
        await wait_until(pilot, lambda: len(app.model.transcript) == 5)
        app.set_max(3)
        app.settings.set_strategy("pair-safe")
        await pilot.press("u")
        await wait_until(pilot, lambda: len(app.model.transcript) == 4)
        ctx = app.model.context
        assert (ctx.max_context_messages, ctx.strategy) == (3, "pair-safe")
        assert len(ctx.window_ids) <= 3
