"""Readers that lose nothing: parallel tool calls logged out of order, the branch of the
last response, sub-agent transcripts, JPEG sizes past EXIF, request fields kept through export."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ctxview import check_protocol
from ctxview.cli import main
from ctxview.core.protocol import errors
from ctxview.sessions import load_session, replay
from tests.support.paths import FIXTURES

CC = FIXTURES / "claude_code"
REQ = FIXTURES / "anthropic_requests"


def _blocks(path: Path) -> dict[str, list[str]]:
    """message.id -> block types of every main-thread line of that response, in file order."""
    out: dict[str, list[str]] = {}
    for raw in path.read_text().splitlines():
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) else None
        if rec.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        for b in msg.get("content") or []:
            if b.get("type") == "text" and not b.get("text", "").strip():
                continue  # whitespace-only text is dropped, as Claude Code does before sending
            out.setdefault(msg.get("id") or rec.get("uuid"), []).append(b["type"])
    return out


def test_parallel_tool_calls_logged_out_of_order() -> None:
    path = CC / "spotter_tool_heavy_L26-36_parallel_tools_out_of_order.jsonl"
    s = load_session(path)
    asst = [m for m in s.messages if m["role"] == "assistant"]
    uses = [b["id"] for m in asst for b in m["content"] if b["type"] == "tool_use"]
    results = [
        b["tool_use_id"]
        for m in s.messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b["type"] == "tool_result"
    ]
    assert len(uses) == 3 and sorted(uses) == sorted(results)
    assert [b["type"] for b in asst[0]["content"]] == ["thinking", "tool_use", "tool_use"]
    assert s.metas[1]["source_lines"] == [2, 3, 4, 5]
    assert check_protocol(s.messages) == []


@pytest.mark.parametrize(
    "name",
    [
        "spotter_short.jsonl",
        "spotter_tool_heavy_L26-36_parallel_tools_out_of_order.jsonl",
        "spotter_6c2214d7_subagent_agent-afc096d.jsonl",
        "simonw_sample_session.jsonl",
    ],
)
def test_real_transcripts_rebuild_every_block(name: str) -> None:
    path = CC / name
    s = load_session(path)
    assert errors(check_protocol(s.messages)) == []
    rebuilt = [b["type"] for m in s.messages if m["role"] == "assistant" for b in m["content"]]
    expected = [t for types in _blocks(path).values() for t in types]
    assert sorted(rebuilt) == sorted(expected)


def _line(uuid: str, parent: str | None, kind: str, content: Any, **extra: Any) -> str:
    msg: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        msg["id"] = extra.pop("mid", "msg_" + uuid)
    rec = {"type": kind, "uuid": uuid, "parentUuid": parent, "message": msg, **extra}
    return json.dumps(rec)


def test_bash_mode_lines_after_the_last_response_do_not_choose_the_branch(tmp_path: Path) -> None:
    lines = [
        _line("u1", None, "user", "fix the bug"),
        _line("a1", "u1", "assistant", [{"type": "text", "text": "done"}]),
        _line("u2", "a1", "user", "thanks, now the docs"),
        _line("a2", "u2", "assistant", [{"type": "text", "text": "docs done"}]),
        # `!ls` in bash mode, and a local command, hanging off line 1 after the last response
        _line("b1", "u1", "user", "<bash-input>ls</bash-input>"),
        _line("b2", "b1", "user", "<bash-stdout>a b</bash-stdout>"),
    ]
    p = tmp_path / "s.jsonl"
    p.write_text("\n".join(lines) + "\n")
    s = load_session(p)
    assert [m["content"] if isinstance(m["content"], str) else "…" for m in s.messages] == [
        "fix the bug",
        "…",
        "thanks, now the docs",
        "…",
    ]
    # a question typed after the last response (descending from it) is on the branch
    p.write_text("\n".join([*lines, _line("u3", "a2", "user", "and the tests?")]) + "\n")
    assert load_session(p).messages[-1]["content"] == "and the tests?"


def test_subagent_transcript_opens_and_is_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sub = CC / "spotter_6c2214d7_subagent_agent-afc096d.jsonl"
    s = load_session(sub)
    assert s.format == "claude-code" and len(s.messages) > 10
    session = tmp_path / "6c2214d7.jsonl"
    shutil.copy(CC / "spotter_short.jsonl", session)
    (tmp_path / "6c2214d7" / "subagents").mkdir(parents=True)
    agent = tmp_path / "6c2214d7" / "subagents" / "agent-afc096d.jsonl"
    shutil.copy(sub, agent)
    assert main(["inspect", str(session), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["subagents"] == [str(agent)]


def test_jpeg_size_found_past_exif() -> None:
    from ctxview.core.tokens import image_info

    body = json.loads((REQ / "pai_image_jpeg_base64_req.json").read_text())
    info = image_info(body["messages"][0]["content"][1])
    assert (info["width"], info["height"]) == (540, 360)  # SOF0 at byte 3495, after EXIF
    s = load_session(REQ / "pai_image_jpeg_base64_req.json")
    # the API billed 276 input tokens for the whole request
    assert 250 <= replay(s).context.estimated_tokens <= 300


@pytest.mark.parametrize("path", sorted(REQ.glob("*.json")), ids=lambda p: p.name)
def test_request_fields_survive_save_and_export(
    path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    original = json.loads(path.read_text())
    original.pop("stream", None)
    assert main(["inspect", str(path)]) == 0
    capsys.readouterr()
    assert main(["export", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == original
    # and through a saved ctxview session
    from ctxview.sessions.store import save_session, session_document

    rep = replay(load_session(path))
    doc = session_document(
        rep.context,
        rep.transcript,
        model=rep.session.model,
        max_tokens=rep.session.max_tokens,
        system=rep.session.system,
        tools=rep.session.tools,
        request_params=rep.session.request_params,
    )
    saved = tmp_path / "s.ctxview.json"
    save_session(saved, doc)
    assert main(["export", str(saved)]) == 0
    assert json.loads(capsys.readouterr().out) == original
