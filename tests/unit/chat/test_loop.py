"""``ctxview chat --no-tui``: the headless agent loop, offline and through the real SDK against the
loopback fake API; and the loop's own events."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ctxview.cli import main
from tests.support import cli
from tests.support.fake_api import FakeAPI, Response, error, text_events, tool_events
from tests.support.paths import ROOT

SAMPLES = ROOT / "sample_sessions"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    return cli.run(capsys, "chat", "--no-tui", *args)


def test_offline_calculate_turn_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "calculate 6*7", "--offline", "--json")
    assert code == 0, err
    obj = json.loads(out)
    roles = [m["role"] for m in obj["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    use = obj["messages"][1]["content"][1]
    assert use["type"] == "tool_use" and use["name"] == "calculator"
    result = obj["messages"][2]["content"][0]
    assert result["tool_use_id"] == use["id"] and result["content"] == "42"
    assert not result["is_error"]
    assert "42" in obj["reply"] and obj["backend"] == "offline"
    assert obj["tool_calls"] == [
        {
            "id": use["id"],
            "name": "calculator",
            "input": {"expression": "6*7"},
            "result": "42",
            "is_error": False,
        }
    ]
    assert obj["verdict"]["valid"] and obj["verdict"]["window_size"] == 4
    saved = Path(obj["saved"])
    assert str(saved).startswith(os.environ["CTXVIEW_STATE_DIR"])
    doc = json.loads(saved.read_text())
    assert [t["message"]["role"] for t in doc["transcript"]] == roles


def test_offline_text_output_and_resume(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "calculate 6*7")  # no key: the offline model
    assert code == 0, err
    lines = out.splitlines()
    assert '→ calculator({"expression": "6*7"})' in lines and "← 42" in lines
    assert any("42" in line for line in lines[lines.index("← 42") + 1 :])
    assert any(line.startswith("window 4/") and line.endswith("✓ valid") for line in lines)
    assert lines[-1].startswith("saved ")
    # --resume continues the newest autosave: the window grows, nothing is duplicated
    code, out, err = run(capsys, "what is 2+3", "--resume", "--json")
    assert code == 0, err
    obj = json.loads(out)
    assert obj["messages"][0] == {"role": "user", "content": "what is 2+3"}
    assert obj["verdict"]["window_size"] == 8 and obj["evicted"] == []
    code, out, err = run(
        capsys, "calculate 1+1", "--resume", "--max", "3", "--strategy", "pair-safe"
    )
    assert code == 0, err
    assert "evicted #7–#10 · 4 messages" in out  # what left during the turn (not the replay)
    assert obj["tool_calls"][0]["result"] == "5"


def test_presend_errors_exit_1_naming_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # the seed strategy at max 11 orphans a tool_result: the API would reject the window
    src = str(SAMPLES / "agent_loop.json")
    out_file = tmp_path / "out.json"
    code, out, err = run(capsys, "what now?", src, "--max", "11", "-o", str(out_file))
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1
    assert "not sent" in err and "unexpected `tool_use_id`" in err and "--send-anyway" in err
    doc = json.loads(out_file.read_text())  # saved with the message kept
    assert doc["transcript"][-1]["message"] == {"role": "user", "content": "what now?"}
    # --send-anyway: the offline model answers like the API, with the same 400
    code, out, err = run(capsys, "what now?", src, "--max", "11", "--send-anyway")
    assert code == 1 and "400" in err and "unexpected `tool_use_id`" in err
    # pair-safe keeps the pair: accepted
    code, out, err = run(capsys, "what now?", src, "--max", "11", "--strategy", "pair-safe")
    assert code == 0, err
    assert "✓ valid" in out


def test_unreadable_input_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [')
    code, out, err = run(capsys, "hi", str(bad))
    assert code == 2 and out == "" and str(bad) in err and len(err.splitlines()) == 1
    code, out, err = run(capsys, "hi", str(bad), "--json")
    assert code == 2 and json.loads(out)["exit"] == 2
    code, out, err = run(capsys, "hi", "--resume")
    assert code == 2 and "no autosaved session" in err
    code, out, err = run(capsys, "hi", str(bad), "--resume")
    assert code == 2 and "give FILE or --resume, not both" in err
    assert main(["chat", "hi"]) == 2  # the TUI chat is `ctxview`


def test_what_a_chat_opens() -> None:
    """The TUI and ``chat --no-tui`` open the same: a given file (it wins over ``--resume`` in
    the TUI; the chat command refuses both), else the newest autosave, else a new chat with the
    configured system prompt."""
    from ctxview.chat.autosave import open_chat, resume_path, sessions_dir
    from ctxview.config import load_config
    from ctxview.sessions import SessionError

    assert resume_path("a.json", True) == "a.json" and resume_path(None, False) is None
    with pytest.raises(SessionError, match="--resume: no autosaved session yet"):
        resume_path(None, True)
    sessions_dir().mkdir(parents=True)
    old, new = sessions_dir() / "old.json", sessions_dir() / "new.json"
    for k, p in enumerate((old, new)):
        p.write_text("{}")
        os.utime(p, (1000 + k, 1000 + k))
    assert resume_path(None, True) == str(new)
    cfg = load_config()
    rep = open_chat(None, None, cfg, max_context_messages=7)
    assert rep.session.format == "new" and rep.context.max_context_messages == 7
    assert rep.context.system_prompt == cfg.system_prompt()


def test_real_sdk_turn_with_tools(
    capsys: pytest.CaptureFixture[str], fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-headless-0001")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.queue(
        Response("sse", tool_events("calculator", {"expression": "6*7"}, "toolu_H")),
        Response("sse", text_events("It is 42. \x1b]0;pwned\x07\u202e")),
    )
    code, out, err = run(capsys, "calculate 6*7", "--model", "claude-test-1")
    assert code == 0, err
    assert len(fake_api.requests) == 2
    first, second = fake_api.requests
    assert first["model"] == "claude-test-1"
    assert first["messages"] == [{"role": "user", "content": "calculate 6*7"}]
    assert second["messages"][2]["content"][0]["tool_use_id"] == "toolu_H"
    assert second["messages"][2]["content"][0]["content"] == "42"
    assert "It is 42." in out and "✓ valid" in out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out  # made visible
    saved = Path(out.splitlines()[-1].removeprefix("saved "))
    assert "sk-ant-secret" not in saved.read_text()


def test_real_sdk_fault_exit_1_one_line(
    capsys: pytest.CaptureFixture[str], fake_api: FakeAPI, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-not-real")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    fake_api.queue(error(500, "api_error", "Internal server error"))
    code, out, err = run(capsys, "hello")
    assert code == 1 and out == ""
    assert len(err.splitlines()) == 1 and "500" in err and "Internal server error" in err
    fake_api.queue(Response("sse", text_events("PARTIAL words that stop", cut=True)))
    code, out, err = run(capsys, "hello", "--json")
    obj = json.loads(out)
    assert code == 1 and obj["outcome"] == "incomplete" and obj["exit"] == 1
    assert [m["role"] for m in obj["messages"]] == ["user"]  # the partial reply is not added
    assert "PARTIAL" not in out


async def test_loop_events_offline() -> None:
    from ctxview.chat.backends import OfflineBackend
    from ctxview.chat.loop import AgentLoop, HeadlessSession, PreSend
    from ctxview.chat.tools import ToolSettings
    from ctxview.sessions import LoadedSession, replay

    rep = replay(LoadedSession(path="", format="new", messages=[], metas=[]))
    asked: list[PreSend] = []

    async def decide(pre: PreSend) -> str | None:
        asked.append(pre)
        return "raise"

    loop = AgentLoop(
        HeadlessSession(rep, "m", 1024),
        OfflineBackend(delay=0),
        tools=ToolSettings(),
        autosave=False,
        decide=decide,
    )
    seen: list[Any] = []
    loop.subscribe(lambda e: seen.append((e.kind, getattr(e, "what", None))))
    result = await loop.submit("calculate 6*7")
    assert result.outcome == "done" and result.stop_reason == "end_turn" and not asked
    kinds = [k for k, _ in seen]
    assert kinds[0] == ("added") and seen[0][1] == "prompt"
    assert kinds.count("sending") == 2 and "text" in kinds
    assert kinds.index("tool_call") < kinds.index("tool_result") < kinds.index("done")
    assert seen[-1] == ("done", None)
    # max 1 evicts the message just typed: the loop asks, and "raise" adds it again
    rep.context.set_max_context_messages(1)
    seen.clear()
    result = await asyncio.wait_for(loop.submit("hello"), 10)
    assert asked and asked[0].missing and "not in the window" in asked[0].missing
    assert result.ok and rep.context.max_context_messages == asked[0].raise_to
