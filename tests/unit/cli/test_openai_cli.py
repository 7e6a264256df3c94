"""The commands on OpenAI files: the provider in every JSON output, the body exported as read,
and ``repair`` refusing to turn another API's file into an Anthropic request body."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.paths import ACCEPTANCE

CHAT = ACCEPTANCE / "openai_chat" / "pai_complex_agent_run_req3.json"
CODEX = next((ACCEPTANCE / "codex").glob("localpush_rollout-2026-02-23T20-34*.jsonl"))


def test_json_outputs_name_the_provider(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", str(CHAT), "--json")
    assert code == 0 and json.loads(out)["provider"] == "openai"
    code, out, _ = run(capsys, "requests", str(CODEX), "--json")
    assert code == 0 and json.loads(out)["provider"] == "openai"
    code, out, _ = run(capsys, "compare", str(CODEX), "--json", "--max", "8")
    assert code == 0 and json.loads(out)["provider"] == "openai"
    code, out, _ = run(capsys, "diff", str(CHAT), str(CHAT), "--json")
    assert code == 0 and json.loads(out)["provider"] == {"a": "openai", "b": "openai"}


def test_export_writes_the_body_as_read(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "export", str(CHAT))
    assert code == 0 and json.loads(out) == json.loads(CHAT.read_text())


def test_repair_writes_another_apis_file_in_its_own_form(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fixes are made on the canonical messages and written by the provider's own body
    writer: an OpenAI body stays an OpenAI body, its untouched messages as they were."""
    bad = {
        "model": "gpt-4o",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
            {"role": "user", "content": "oops"},
        ],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    code, out, _ = run(capsys, "inspect", str(path), "--json")
    report = json.loads(out)
    assert code == 1 and [p["code"] for p in report["problems"]] == ["unanswered_tool_use"]
    assert report["fixes"]  # what repair will do, as for an Anthropic file
    out = tmp_path / "fixed.json"
    code, _, err = run(capsys, "repair", str(path), "-o", str(out))
    assert code == 0, err
    fixed = json.loads(out.read_text())
    assert fixed["model"] == "gpt-4o" and fixed["messages"][:2] == bad["messages"][:2]
    assert any(m.get("role") == "tool" and m.get("tool_call_id") == "c1" for m in fixed["messages"])
    code, _, _ = run(capsys, "inspect", str(out))
    assert code == 0


def test_export_of_a_recorded_session_is_the_window_it_sent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """As ``inspect`` checks it: a recorded session longer than the config's max is exported
    whole, as sent, in its own API's form (not the config's seed window of 20)."""
    src = ACCEPTANCE / "gemini_cli" / "aim_control_flash.json"
    code, out, _ = run(capsys, "inspect", str(src), "--json")
    size = json.loads(out)["window"]["size"]
    assert size > 20
    dst = tmp_path / "body.json"
    code, _, err = run(capsys, "export", str(src), "-o", str(dst))
    assert code in (0, 1) and f"({size} messages)" in err
    assert len(json.loads(dst.read_text())["contents"]) == size


def test_export_of_an_openai_session_without_a_model_names_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The config's model is an Anthropic one: an OpenAI body never gets it; export says the
    file names no model."""
    line = {
        "timestamp": "t",
        "type": "response_item",
        "payload": {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": "hi"}],
        },
    }
    src = tmp_path / "rollout-x.jsonl"
    src.write_text(json.dumps(line) + "\n")
    dst = tmp_path / "body.json"
    code, _, err = run(capsys, "export", str(src), "-o", str(dst))
    assert code == 0 and "names no model" in err
    body = json.loads(dst.read_text())
    assert "model" not in body and body["input"][0]["content"][0]["text"] == "hi"


def test_chat_refuses_to_continue_another_apis_session(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the chat talks to Claude: an OpenAI body would go out as it is (the offline model
    # answered "400 bad request: messages.1.tool_calls: Extra inputs are not permitted")
    monkeypatch.setenv("HOME", str(tmp_path))
    out = tmp_path / "out.json"
    code, _, err = run(capsys, "chat", "--no-tui", "hi", str(CHAT), "--offline", "-o", str(out))
    assert code == 2
    assert "the chat talks to Claude: this openai-chat session is another API's" in err
    assert not out.exists()


def test_requests_of_another_apis_body_without_a_model_are_not_priced_as_claude(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The config's model is a Claude model: a Gemini body that names none is neither headed
    nor priced as one."""
    src = tmp_path / "body.json"
    turns = [("user", "hi"), ("model", "hello"), ("user", "more")]
    contents = [{"role": r, "parts": [{"text": t}]} for r, t in turns]
    src.write_text(json.dumps({"contents": contents}))
    code, out, _ = run(capsys, "requests", str(src), "--json")
    assert code == 0
    report = json.loads(out)
    [req] = report["requests"]
    assert (report["provider"], req["model"], req["cost_usd"]) == ("gemini", None, None)
