"""A proxy recording is a log of requests: the real anthropic SDK -> one shared proxy -> the
loopback fake API; the recording then opened with ``requests``, ``inspect`` and the reader."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import pytest

from ctxview.cli import main
from ctxview.sessions import SessionError, load_session, replay
from tests.support.fake_api import FakeAPI, Response, error, text_events, tool_events
from tests.support.paths import ROOT
from tests.support.proxy_thread import ProxyThread, running

KEY = "sk-ant-api03-PROXYLOGKEY-0123456789abcdef"
OLD_FORM = ROOT / "tests" / "fixtures" / "proxy_recording_single_document.json"


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ProxyThread, FakeAPI]]:
    yield from running(tmp_path_factory.mktemp("proxy"))


def client(px: ProxyThread) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=KEY, base_url=px.url, max_retries=0)


def extract(px: ProxyThread, mark: int, path: Path) -> Path:
    """This test's part of the shared recording, as a recording of its own (header + lines)."""
    px.flush()
    lines = px.record.read_text().splitlines()
    mine = [x for x in lines[1:] if json.loads(x)["id"] >= mark]
    path.write_text("\n".join([lines[0], *mine]) + "\n")
    return path


def msg(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def reply(final: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [b.model_dump(exclude_none=True) for b in final.content],
    }


def plain(text: str) -> Response:
    return Response(
        "json",
        body={
            "id": "msg_plain",
            "type": "message",
            "role": "assistant",
            "model": "claude-test",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 11, "output_tokens": 4, "cache_read_input_tokens": 2},
        },
    )


async def test_three_calls_are_three_requests_each_with_its_usage_and_time(
    shared: tuple[ProxyThread, FakeAPI], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    px, api = shared
    mark = px.mark()
    c = client(px)
    msgs = [msg("three calls: first")]
    api.queue(plain("one"))
    msgs += [reply(await c.messages.create(model="claude-test", max_tokens=9, messages=msgs))]
    msgs.append(msg("second"))
    api.queue(plain("two"))
    msgs += [reply(await c.messages.create(model="claude-test", max_tokens=9, messages=msgs))]
    msgs.append(msg("third"))
    api.queue(Response("sse", text_events("three streamed")))
    async with c.messages.stream(model="claude-test", max_tokens=9, messages=msgs) as s:
        await s.get_final_message()
    rec = extract(px, mark, tmp_path / "rec.jsonl")

    assert main(["requests", str(rec), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["format"] == "proxy" and doc["strategy"] is None  # as sent
    reqs = doc["requests"]
    assert [r["window_size"] for r in reqs] == [1, 3, 5]
    assert all(r["timestamp"] and r["recorded"] for r in reqs)
    assert reqs[0]["recorded"]["input_tokens"] == 11 and reqs[2]["recorded"]["input_tokens"] == 21
    assert [e["status"] for e in doc["exchanges"]] == [200, 200, 200]
    # the TUI opens it as sent: every message of the longest request and its reply
    session = replay(load_session(rec), as_sent=True)
    assert session.as_sent == "proxy" and len(session.window_messages()) == 6


async def test_every_request_is_listed_errors_and_cuts_flagged(
    shared: tuple[ProxyThread, FakeAPI], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    px, api = shared
    mark = px.mark()
    c = client(px)
    msgs = [msg("seven calls: calc 6*7")]
    api.queue(Response("sse", tool_events("calculator", {"expression": "6*7"}, "toolu_7")))
    async with c.messages.stream(model="claude-test", max_tokens=9, messages=msgs) as s:
        msgs.append(reply(await s.get_final_message()))
    msgs.append(
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_7", "content": "42"}],
        }
    )
    api.queue(error(429, "rate_limit_error", "slow down", **{"retry-after": "1"}))
    with pytest.raises(anthropic.RateLimitError):
        await c.messages.create(model="claude-test", max_tokens=9, messages=msgs)
    api.queue(Response("sse", text_events("It is 42.")))
    async with c.messages.stream(model="claude-test", max_tokens=9, messages=msgs) as s:
        msgs.append(reply(await s.get_final_message()))
    msgs.append(msg("and now?"))
    api.queue(error(400, "invalid_request_error", "scripted 400"))
    with pytest.raises(anthropic.BadRequestError):
        await c.messages.create(model="claude-test", max_tokens=9, messages=msgs)
    await c.messages.count_tokens(model="claude-test", messages=msgs)  # type: ignore[arg-type]
    api.queue(Response("sse", text_events("cut off here", cut=True)))
    async with c.messages.stream(model="claude-test", max_tokens=9, messages=msgs) as s:
        await s.get_final_message()
    api.queue(plain("done"))
    await c.messages.create(model="claude-test", max_tokens=9, messages=msgs)
    rec = extract(px, mark, tmp_path / "seven.jsonl")

    assert main(["requests", str(rec)]) == 0
    out = capsys.readouterr().out
    listed = [ln for ln in out.splitlines() if ln.startswith("  #")]
    assert len(listed) == 7, out
    assert "429" in listed[1] and "rate_limit_error" in listed[1]
    assert "400" in listed[3] and "invalid_request_error" in listed[3]
    assert " count " in listed[4] and "counted 1234 input tokens" in listed[4]
    assert "INCOMPLETE (stream ended before message_stop)" in listed[5]
    assert "(2 failed, 1 incomplete, 1 count_tokens)" in out
    for line in (listed[0], listed[2], listed[6]):
        assert " in " in line and "cache read" in line  # usage
    # the request model's table: the three answered requests, with their recorded usage
    assert main(["requests", str(rec), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["window_size"] for r in doc["requests"]] == [1, 3, 5]
    assert all(r["recorded"] for r in doc["requests"])
    assert [e["endpoint"] for e in doc["exchanges"]].count("count_tokens") == 1
    # inspect and compare read it too
    assert main(["inspect", str(rec), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages_total"] == 6
    assert main(["compare", str(rec), "--json"]) == 0


async def test_conversations_through_one_proxy_are_kept_apart(
    shared: tuple[ProxyThread, FakeAPI], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent and its sub-agent, interleaved: each request joins the conversation whose
    messages it extends; each conversation opens on its own as FILE#N."""
    px, api = shared
    mark = px.mark()
    c = client(px)
    agent = [msg("agent: plan the work")]
    sub = [msg("sub-agent: read the files")]
    for k in range(3):
        api.queue(plain(f"agent step {k}"))
        agent += [reply(await c.messages.create(model="claude-test", max_tokens=9, messages=agent))]
        agent.append(msg(f"agent turn {k}"))
        if k < 2:
            api.queue(plain(f"sub step {k}"))
            sub += [reply(await c.messages.create(model="claude-test", max_tokens=9, messages=sub))]
            sub.append(msg(f"sub turn {k}"))
    lines = px.lines_since(mark)
    keys = [x["conversation"] for x in lines]
    assert keys[0::2][:3] == [keys[0]] * 3 and keys[1] == keys[3] != keys[0]
    rec = extract(px, mark, tmp_path / "two.jsonl")

    default = load_session(rec)  # the conversation with the most requests: the agent's
    assert default.conversation == 1 and len(default.exchanges) == 3
    assert [c["requests"] for c in default.conversations] == [3, 2]
    assert any("holds 2 conversations" in w for w in default.warnings)
    second = load_session(f"{rec}#2")
    assert second.conversation == 2 and second.messages[0] == sub[0]
    assert len(second.exchanges) == 2 and len(second.messages) == 4
    assert main(["inspect", f"{rec}#2", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["messages_total"] == 4
    with pytest.raises(SessionError, match=r"#3: no such conversation \(this recording holds 2"):
        load_session(f"{rec}#3")
    with pytest.raises(SessionError, match="not one"):
        load_session(f"{OLD_FORM.parent / 'README.md'}#1")


def test_a_recording_of_the_single_document_form_opens_as_a_log(
    capsys: pytest.CaptureFixture[str],
) -> None:
    session = load_session(OLD_FORM)
    assert session.format == "proxy" and len(session.exchanges) == 3
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.metas[1]["usage"] and session.metas[3]["usage"]
    assert main(["requests", str(OLD_FORM)]) == 0
    out = capsys.readouterr().out
    assert "recorded in conversation #1: 3 requests (1 failed, 0 incomplete" in out


def test_a_line_cut_by_a_crash_is_named_and_the_rest_opens(tmp_path: Path) -> None:
    rec = tmp_path / "crashed.jsonl"
    shutil.copy(ROOT / "tests" / "fixtures" / "proxy_log.jsonl", rec)
    whole = rec.read_text()
    rec.write_text(whole + whole.splitlines()[1][:50])  # a last line cut mid-way
    session = load_session(rec)
    n = len(whole.splitlines())
    assert session.skipped_lines == [n + 1]
    # the header, seven requests of the first conversation, one of the second
    assert n == 9 and len(session.exchanges) == 7


def test_a_recording_from_a_newer_ctxview_is_refused_by_name(tmp_path: Path) -> None:
    rec = tmp_path / "newer.jsonl"
    rec.write_text('{"format": "ctxview.proxy-log", "version": 7}\n')
    with pytest.raises(SessionError, match="line 1: version 7: written by a newer ctxview"):
        load_session(rec)
