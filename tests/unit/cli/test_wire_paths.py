"""The places ``inspect`` and ``repair`` name are the request body's own: a Chat Completions
body's leading system messages count in its ``messages`` array."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run

CALL = {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
CHAT = {
    "model": "gpt-4o",
    "messages": [
        {"role": "system", "content": "be brief"},
        {"role": "developer", "content": "no tables"},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [CALL]},
        {"role": "user", "content": "again"},
        {"role": "tool", "tool_call_id": "call_9", "content": "x"},
    ],
}


def _write(tmp_path: Path, body: dict[str, object]) -> str:
    p = tmp_path / "body.json"
    p.write_text(json.dumps(body))
    return str(p)


def test_a_chat_bodys_problems_and_fixes_name_its_own_messages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, CHAT)
    _, out, _ = run(capsys, "inspect", path, "--json")
    summary = json.loads(out)
    # the window's positions 1 and 3 are the body's messages[3] (the call) and [5] (the tool)
    assert [(p["index"], p["path"]) for p in summary["problems"]] == [
        (1, "messages[3]"),
        (3, "messages[5]"),
    ]
    assert [f["path"] for f in summary["fixes"]] == ["messages[3]", "messages[5]"]
    assert "(messages[5]); messages[5] had nothing else" in summary["fixes"][1]["detail"]
    for p in summary["problems"]:
        role = CHAT["messages"][int(p["path"][9:-1])]["role"]  # type: ignore[index]
        assert role == {"unanswered_tool_use": "assistant", "orphan_tool_result": "tool"}[p["code"]]
    _, out, _ = run(capsys, "repair", path, "--dry-run")
    lines = out.splitlines()
    assert lines[0].startswith("messages[3]: unanswered_tool_use: ")
    assert lines[1].startswith("messages[5]: orphan_tool_result: drop_message: ")
    assert "messages.3" not in out
    _, out, _ = run(capsys, "repair", path, "--dry-run", "--json")
    assert [f["path"] for f in json.loads(out)["fixes"]] == ["messages[3]", "messages[5]"]


def test_a_tool_results_turn_of_several_tool_messages_names_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Written from the canonical form, one turn of two results is two ``tool`` messages."""
    from ctxview.sessions import load_session, replay

    session = load_session(_write(tmp_path, CHAT))
    rep = replay(session, as_sent=True)
    rep.context.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c2", "name": "f", "input": {}}],
        }
    )
    rep.context.add_message(
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c2", "content": "a"},
                {"type": "tool_result", "tool_use_id": "c3", "content": "b"},
            ],
        }
    )
    body = rep.request_body({})
    assert [m["role"] for m in body["messages"][6:]] == ["assistant", "tool", "tool"]
    assert rep.wire_place(5, 1) == "messages[8]" and rep.wire_place(5) == "messages[7]"


def test_the_messages_apis_places_are_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    body = {
        "model": "claude-sonnet-5-5",
        "max_tokens": 10,
        "system": "be brief",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": "again"},
        ],
    }
    _, out, _ = run(capsys, "inspect", _write(tmp_path, body), "--json")
    problems = json.loads(out)["problems"]
    assert problems and problems[0]["path"] == "messages.1"
    assert problems[0]["message"].startswith("messages.1: ")
