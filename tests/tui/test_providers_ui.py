"""The header names the provider of a session that is not Anthropic's, and what its file
cannot show; an Anthropic session's header is unchanged."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.config import load_config
from ctxview.core.providers import openai
from tests.support.apphelp import make_app, settle, wait_until
from tests.support.paths import ACCEPTANCE, ROOT

CODEX = next((ACCEPTANCE / "codex").glob("localpush_rollout-2026-02-23T20-34*.jsonl"))


async def test_the_header_names_openai_and_the_model() -> None:
    app = make_app(str(CODEX))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.sub_title.startswith("OpenAI · gpt-5.3-codex · ")
        # the checker is the session provider's (a Codex rollout: the Responses API's pairing)
        assert app.model.checker.rules is openai.CODEX_RULES


async def test_a_continued_response_says_its_earlier_turns_are_not_in_the_file(
    tmp_path: Path,
) -> None:
    body = {
        "model": "gpt-5",
        "previous_response_id": "resp_123",
        "input": [{"type": "function_call_output", "call_id": "call_1", "output": "42"}],
    }
    path = tmp_path / "continued.json"
    path.write_text(json.dumps(body))
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.sub_title.startswith("OpenAI · continues a stored response · gpt-5")
        # its output answers a call of the stored response: no error
        assert not [p for p in app.model.problems if p.severity == "error"]


async def test_a_stored_prompt_body_opens_and_says_its_prompt_is_not_in_the_file(
    tmp_path: Path,
) -> None:
    path = tmp_path / "prompt.json"
    path.write_text(json.dumps({"prompt": {"id": "pmpt_1", "variables": {"word": "cat"}}}))
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.sub_title.startswith("OpenAI · uses a stored prompt · ")


async def test_an_anthropic_header_names_the_model_alone() -> None:
    app = make_app(str(ROOT / "sample_sessions" / "agent_loop.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.sub_title.startswith(app.model.model + " · ")


async def test_chat_on_another_apis_session_says_why_and_keeps_the_text() -> None:
    app = make_app(str(CODEX))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        before = len(app.model.transcript)
        await pilot.press("i", "h", "i", "enter")
        await settle(pilot)
        assert any("the chat talks to Claude" in m for m, _, _ in app.notice_log)
        assert len(app.model.transcript) == before
        assert app.query_one("#chat").value == "hi"


async def test_retry_and_count_tokens_on_another_apis_session_send_nothing(
    tmp_path: Path,
) -> None:
    """ctrl+r and ctrl+k refuse what enter refuses: a Gemini body ending on the user's turn is
    not sent to the Messages API (which answered "messages: at least one message is required")."""
    app = make_app(str(_body_without_a_model(tmp_path)))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        before = len(app.model.transcript)
        await pilot.press("ctrl+r")
        await settle(pilot)
        notices = [m for m, _, _ in app.notice_log]
        assert any("the chat talks to Claude: this gemini session" in m for m in notices)
        assert not any("reply failed" in m for m in notices)
        assert len(app.model.transcript) == before
        await pilot.press("ctrl+k")
        await settle(pilot)
        notices = [m for m, _, _ in app.notice_log]
        assert "count_tokens counts Claude requests: this gemini session" in notices[-1]


async def test_the_chat_input_of_another_apis_session_does_not_invite_a_message() -> None:
    """The placeholder says what the session is for, not "Message the offline demo model":
    the chat refuses another API's session."""
    app = make_app(str(CODEX))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        placeholder = app.query_one("#chat").placeholder
        assert placeholder.startswith("OpenAI session: to read, check and export")
        assert "Message" not in placeholder
    app = make_app(str(ROOT / "sample_sessions" / "agent_loop.json"))
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        assert app.query_one("#chat").placeholder.startswith("Message the offline demo model")


def _body_without_a_model(tmp_path: Path) -> Path:
    path = tmp_path / "no_model.json"
    path.write_text(json.dumps({"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}))
    return path


def test_another_apis_body_without_a_model_is_not_given_the_configs_claude_model(
    tmp_path: Path, monkeypatch: Any
) -> None:
    from ctxview.app.app import CtxviewApp
    from ctxview.app.launch import launch
    from ctxview.cli import build_app_parser

    started: list[CtxviewApp] = []
    monkeypatch.setattr(CtxviewApp, "run", lambda self, **kw: started.append(self))
    path = _body_without_a_model(tmp_path)
    assert launch(build_app_parser().parse_args([str(path)])) == 0
    [app] = started
    assert app.model.replay.provider == "gemini" and app.model.model == ""
    assert "model" not in app.request_body()  # `x` writes the body as `ctxview export` does


async def test_opening_another_apis_body_without_a_model_keeps_the_chats_model_out(
    tmp_path: Path,
) -> None:
    path = _body_without_a_model(tmp_path)
    app = make_app(str(ROOT / "sample_sessions" / "agent_loop.json"))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.files.load(str(path))
        await wait_until(pilot, lambda: app.model.path == str(path))
        await settle(pilot)
        assert app.sub_title == "Gemini · offline"
        assert "model" not in app.request_body()
        assert app.model.cache_prediction.cost_usd is None  # priced at no model's rates
        app.action_make_default()  # the strategy and max become defaults, no empty model
        assert load_config().get("model") == "claude-sonnet-5-5"


async def test_a_blocks_tokens_are_the_providers_estimate(tmp_path: Path) -> None:
    """An OpenAI audio clip is billed by its length (10 tokens a second), not its base64: the
    detail pane counts the block as the provider's estimate does."""
    import base64
    import io
    import wave

    from textual.widgets import Static

    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:  # one second of silence
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(8000)
        w.writeframes(b"\0\0" * 8000)
    clip = {"data": base64.b64encode(buf.getvalue()).decode(), "format": "wav"}
    content = [
        {"type": "text", "text": "what is said?"},
        {"type": "input_audio", "input_audio": clip},
    ]
    path = tmp_path / "audio.json"
    path.write_text(
        json.dumps({"model": "gpt-4o", "messages": [{"role": "user", "content": content}]})
    )
    app = make_app(str(path))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert app.timeline.select_id(0)
        await settle(pilot)
        titles = [str(w.render()) for w in app.detail.query(Static) if w.has_class("block-title")]
        assert "[1] input_audio · ~10 tokens" in titles, titles


async def test_the_opened_notice_says_what_the_reader_says_of_the_file(tmp_path: Path) -> None:
    body = {"model": "gpt-5", "previous_response_id": "resp_1", "input": "and then?"}
    path = tmp_path / "continued.json"
    path.write_text(json.dumps(body))
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.open_path(str(path))
        await wait_until(pilot, lambda: any(m.startswith("opened ") for m, _, _ in app.notice_log))
        (opened,) = [m for m, _, _ in app.notice_log if m.startswith("opened ")]
        assert "\nthis request continues a stored response (previous_response_id)" in opened


async def test_a_chat_bodys_fix_names_its_place_in_the_body(tmp_path: Path) -> None:
    """The leading system messages of a Chat Completions body count in its places: the
    orphaned tool message is messages[4] of the file, not messages.3."""
    call = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "ok"},
            {"role": "tool", "tool_call_id": "call_9", "content": "x"},
        ],
    }
    p = tmp_path / "chat.json"
    p.write_text(json.dumps(body))
    app = make_app(str(p), as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.error_ids() == [3]
        app.timeline.select_id(3)
        await settle(pilot)
        fix = " ".join(str(w.render()) for w in app.query(".fix"))
        assert "drop the orphaned tool_result for call_9 (messages[4])" in fix
        await pilot.press("r")
        await settle(pilot)
        notice = [m for m, t, _ in app.notice_log][-1]
        assert notice.startswith("repaired (1 fix)") and "(#3 = messages[4])" in notice
