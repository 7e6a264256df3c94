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


def test_repair_refuses_another_apis_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
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
    assert code == 1 and report["fixes"] == []  # no Messages API fix offered
    assert [p["code"] for p in report["problems"]] == ["unanswered_tool_use"]
    out = tmp_path / "fixed.json"
    code, _, err = run(capsys, "repair", str(path), "-o", str(out))
    assert code == 2 and "openai session" in err and not out.exists()
