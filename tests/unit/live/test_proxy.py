"""ctxview proxy: the real anthropic SDK -> the proxy -> the loopback fake Messages API."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anthropic
import pytest
from aiohttp import web

from ctxview.cli import main
from ctxview.live.proxy import Proxy, check_upstream
from ctxview.live.recording import RequestRecord, summarise, summary_line
from ctxview.sessions import load_session
from tests.support.fake_api import FakeAPI, Response, error, sse, text_events

KEY = "sk-ant-api03-PROXYTESTKEY-0123456789abcdef"
BODY: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 64,
    "system": "be brief",
    "messages": [{"role": "user", "content": "hello there"}],
}


@pytest.fixture
async def proxied(fake_api: FakeAPI, tmp_path: Path) -> AsyncIterator[tuple[Proxy, str, Path]]:
    rec = tmp_path / "rec.json"
    proxy = Proxy(fake_api.url, record_path=str(rec))
    host, port = await proxy.start("127.0.0.1", 0)
    assert host == "127.0.0.1"
    try:
        yield proxy, f"http://{host}:{port}", rec
    finally:
        await proxy.close()


def client(url: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(api_key=KEY, base_url=url, max_retries=0)


def log_lines(path: Path) -> list[dict[str, Any]]:
    """The exchange lines of a recording (the header checked and left out)."""
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["format"] == "ctxview.proxy-log" and lines[0]["version"] == 1
    return lines[1:]


async def test_stream_passthrough_and_recording(
    proxied: tuple[Proxy, str, Path], fake_api: FakeAPI
) -> None:
    proxy, url, rec_path = proxied
    fake_api.queue(Response("sse", text_events("one two three")))
    pieces: list[str] = []
    async with client(url).messages.stream(**BODY) as stream:
        async for text in stream.text_stream:
            pieces.append(text)
        final = await stream.get_final_message()
    assert "".join(pieces) == "one two three"
    assert final.stop_reason == "end_turn"
    # the key passed through untouched
    assert fake_api.headers[0]["authorization"] == f"Bearer {KEY}"
    assert fake_api.requests[0]["messages"] == BODY["messages"]
    await proxy.flush()
    (rec,) = proxy.records
    assert rec.streamed and rec.complete and rec.incomplete is None
    assert rec.status == 200 and rec.stop_reason == "end_turn"
    assert rec.endpoint == "messages" and rec.conversation == 1
    assert rec.usage == {
        "input_tokens": 21,
        "output_tokens": 12,
        "cache_read_input_tokens": 7,
        "cache_creation_input_tokens": 3,
    }
    assert rec.response["content"] == [{"type": "text", "text": "one two three"}]
    (line,) = log_lines(rec_path)
    assert line["request"] == BODY | {"stream": True}
    assert line["complete"] is True and line["conversation"] == 1
    assert line["started_at"] <= line["ended_at"] and line["first_byte_ms"] <= line["duration_ms"]
    # the recording opens like any session: the request's messages plus the reply
    session = load_session(rec_path)
    assert session.format == "proxy"
    assert session.metas[1]["usage"] == rec.usage
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert session.system == "be brief" and session.model == "claude-test"
    assert main(["inspect", str(rec_path), "--json"]) == 0


async def test_json_response(proxied: tuple[Proxy, str, Path], fake_api: FakeAPI) -> None:
    proxy, url, _ = proxied
    message = {
        "id": "msg_json",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": [{"type": "text", "text": "plain JSON reply"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
    fake_api.queue(Response("json", body=message))
    got = await client(url).messages.create(**BODY)
    assert got.content[0].text == "plain JSON reply"  # type: ignore[union-attr]
    await proxy.flush()
    (rec,) = proxy.records
    assert not rec.streamed and rec.complete and rec.response == message
    assert rec.usage == {"input_tokens": 5, "output_tokens": 3}


@pytest.mark.parametrize(
    ("status", "etype", "exc"),
    [
        (429, "rate_limit_error", anthropic.RateLimitError),
        (500, "api_error", anthropic.InternalServerError),
        (529, "overloaded_error", anthropic.APIStatusError),
    ],
)
async def test_errors_pass_through(
    proxied: tuple[Proxy, str, Path],
    fake_api: FakeAPI,
    status: int,
    etype: str,
    exc: type[Exception],
) -> None:
    proxy, url, rec_path = proxied
    fake_api.queue(error(status, etype, f"scripted {etype}", **{"retry-after": "7"}))
    with pytest.raises(exc) as info:
        async with client(url).messages.stream(**BODY) as stream:
            await stream.get_final_message()
    assert info.value.status_code == status  # type: ignore[attr-defined]
    assert info.value.body == {
        "type": "error",
        "error": {"type": etype, "message": f"scripted {etype}"},
    }  # type: ignore[attr-defined]
    assert info.value.response.headers["retry-after"] == "7"  # type: ignore[attr-defined]
    await proxy.flush()
    (rec,) = proxy.records
    assert rec.status == status and not rec.complete
    assert rec.error == {"type": etype, "message": f"scripted {etype}"}
    assert log_lines(rec_path)[0]["status"] == status


async def test_stream_cut_before_message_stop_is_incomplete(
    proxied: tuple[Proxy, str, Path], fake_api: FakeAPI
) -> None:
    proxy, url, rec_path = proxied
    fake_api.queue(Response("sse", text_events("cut short here", cut=True)))
    async with client(url).messages.stream(**BODY) as stream:
        final = await stream.get_final_message()
    assert final.stop_reason is None  # what the client sees direct, too
    await proxy.flush()
    (rec,) = proxy.records
    assert rec.status == 200 and not rec.complete
    assert rec.incomplete == "stream ended before message_stop"
    assert rec.response["content"][0]["text"] == "cut short here"
    await proxy.flush()
    # the incomplete reply is not part of the session's transcript
    assert [m["role"] for m in load_session(rec_path).messages] == ["user"]


@pytest.mark.parametrize(
    "reason", [None, "client disconnected mid-stream", "upstream stream broken (reset)"]
)
def test_an_error_event_is_the_reason_whoever_hangs_up_first(reason: str | None) -> None:
    """The API's error event says why its stream ended; the client reading it hangs up at
    once, and that disconnect can reach the proxy first (a race seen in CI): the record keeps
    the error event as the reason either way."""
    events = text_events("partial")[:3]
    events.append(
        sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
    )
    rec = RequestRecord(0, "2026-11-30T00:00:00Z", "POST", "/v1/messages", status=200)
    Proxy._record_stream(rec, events, reason)
    assert not rec.complete and rec.incomplete == "error event: overloaded_error"
    assert rec.error == {"type": "overloaded_error", "message": "busy"}
    # without an error event, the disconnect is the reason
    rec2 = RequestRecord(1, "2026-11-30T00:00:00Z", "POST", "/v1/messages", status=200)
    Proxy._record_stream(rec2, text_events("partial")[:3], "client disconnected mid-stream")
    assert not rec2.complete and rec2.incomplete == "client disconnected mid-stream"


async def test_sse_error_event_is_recorded(
    proxied: tuple[Proxy, str, Path], fake_api: FakeAPI
) -> None:
    proxy, url, _ = proxied
    events = text_events("partial")[:3]
    events.append(
        sse("error", {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
    )
    fake_api.queue(Response("sse", events))
    with pytest.raises(anthropic.APIStatusError):
        async with client(url).messages.stream(**BODY) as stream:
            await stream.get_final_message()
    # the client raises as soon as it reads the error event; the proxy records when its side of
    # the stream ends, a moment later
    for _ in range(200):
        await proxy.flush()
        if proxy.records:
            break
        await asyncio.sleep(0.025)
    (rec,) = proxy.records
    assert rec.error == {"type": "overloaded_error", "message": "busy"}
    assert not rec.complete and rec.incomplete == "error event: overloaded_error"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_upstream_down_is_502_with_an_api_error(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{_free_port()}"
    proxy = Proxy(dead)
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        with pytest.raises(anthropic.APIStatusError) as info:
            await client(f"http://{host}:{port}").messages.create(**BODY)
        assert info.value.status_code == 502
        body = info.value.body
        assert isinstance(body, dict) and body["type"] == "error"
        assert body["error"]["type"] == "api_error"
        assert "unreachable" in body["error"]["message"]
        await proxy.flush()
        (rec,) = proxy.records
        assert rec.status == 502 and rec.incomplete == "upstream failed"
    finally:
        await proxy.close()


async def test_client_disconnect_cancels_upstream() -> None:
    """An upstream that sends message_start and then waits: the client reads one event and
    leaves; the proxy records an abandoned response and drops the upstream request."""
    started = asyncio.Event()
    upstream_cancelled = asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        await request.read()
        resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
        await resp.prepare(request)
        for chunk in text_events("first words")[:3]:
            await resp.write(chunk)
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            upstream_cancelled.set()
            raise
        return resp

    app = web.Application()
    app.router.add_post("/v1/messages", slow)
    runner = web.AppRunner(app, handler_cancellation=True)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    up_port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    proxy = Proxy(f"http://127.0.0.1:{up_port}")
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        async with client(f"http://{host}:{port}").messages.stream(**BODY) as stream:
            async for event in stream:
                if event.type == "text":
                    break  # leave mid-stream: the context manager closes the connection
        await asyncio.wait_for(upstream_cancelled.wait(), 5)
        for _ in range(100):
            await proxy.flush()
            if proxy.records:
                break
            await asyncio.sleep(0.02)
        (rec,) = proxy.records
        assert not rec.complete
        assert rec.incomplete == "client disconnected mid-stream"
        assert rec.response["content"][0]["text"] == "first "
    finally:
        await proxy.close()
        await runner.cleanup()


async def test_paths_verbatim_and_count_tokens(
    proxied: tuple[Proxy, str, Path], fake_api: FakeAPI
) -> None:
    proxy, url, _ = proxied
    got = await client(url).messages.count_tokens(
        model="claude-test", messages=BODY["messages"], extra_query={"beta": "true"}
    )
    assert got.input_tokens == 1234
    assert fake_api.paths == ["/v1/messages/count_tokens?beta=true"]
    await proxy.flush()
    (rec,) = proxy.records
    assert rec.path == "/v1/messages/count_tokens?beta=true"
    assert rec.response == {"input_tokens": 1234}
    assert rec.endpoint == "count_tokens" and rec.complete and rec.conversation == 1
    assert summarise(rec).counted_tokens == 1234
    # a GET the fake does not implement: its 501 comes back unchanged
    c = client(url)
    with pytest.raises(anthropic.APIStatusError) as info:
        await c.models.list()
    assert info.value.status_code == 501


async def test_the_key_is_never_recorded_or_shown(
    proxied: tuple[Proxy, str, Path], fake_api: FakeAPI, capsys: pytest.CaptureFixture[str]
) -> None:
    proxy, url, rec_path = proxied
    fake_api.queue(error(401, "authentication_error", "invalid key"))
    with pytest.raises(anthropic.AuthenticationError):
        await client(url).messages.create(**BODY)
    # the x-api-key form too
    other = anthropic.AsyncAnthropic(
        api_key=KEY, base_url=url, max_retries=0, default_headers={"x-api-key": KEY}
    )
    async with other.messages.stream(**BODY) as stream:
        await stream.get_final_message()
    assert fake_api.headers[0]["authorization"] == f"Bearer {KEY}"
    assert fake_api.headers[1]["x-api-key"] == KEY
    await proxy.flush()
    data = rec_path.read_bytes()
    lines = [summary_line(summarise(r)) for r in proxy.records]
    for haystack in (data.decode(), "\n".join(lines), repr([r.to_dict() for r in proxy.records])):
        assert KEY not in haystack
        assert KEY[:12] not in haystack  # not even a prefix
        assert "x-api-key" not in haystack and "authorization" not in haystack.lower()


async def test_a_key_echoed_in_a_body_is_blanked_in_the_recording(
    proxied: tuple[Proxy, str, Path], fake_api: FakeAPI
) -> None:
    proxy, url, rec_path = proxied
    body = dict(BODY, messages=[{"role": "user", "content": f"my key is {KEY}"}])
    async with client(url).messages.stream(**body) as stream:
        await stream.get_final_message()
    await proxy.flush()
    text = rec_path.read_text()
    assert KEY not in text and "[credential removed by ctxview]" in text


async def test_concurrent_streams_are_not_mixed(
    proxied: tuple[Proxy, str, Path], fake_api: FakeAPI
) -> None:
    proxy, url, rec_path = proxied
    fake_api.smart = True
    c = client(url)

    async def one(k: int) -> str:
        body = dict(BODY, messages=[{"role": "user", "content": f"stream number {k}"}])
        async with c.messages.stream(**body) as stream:
            return "".join([t async for t in stream.text_stream])

    got = await asyncio.gather(*(one(k) for k in range(40)))
    assert got == [f"Fake API reply to: stream number {k}" for k in range(40)]
    await proxy.flush()
    lines = log_lines(rec_path)
    assert len(lines) == 40
    for r in lines:
        asked = r["request"]["messages"][0]["content"]
        assert r["response"]["content"][0]["text"] == f"Fake API reply to: {asked}"
    # forty first messages: forty conversations
    assert sorted(r["conversation"] for r in lines) == list(range(1, 41))


def test_check_upstream_refuses_itself_and_bad_urls() -> None:
    assert check_upstream("http://127.0.0.1:8787", "127.0.0.1", 8787) is not None
    assert check_upstream("http://localhost:8787/", "127.0.0.1", 8787) is not None
    assert check_upstream("ftp://x", "127.0.0.1", 8787) is not None
    assert check_upstream("https://api.anthropic.com", "127.0.0.1", 8787) is None
    # a URL urlsplit cannot parse is refused, never raised; its text (a password?) not shown
    why = check_upstream("http://user:hunter2@[::1", "127.0.0.1", 8787)
    assert why is not None and why.startswith("--upstream: not a URL (Invalid IPv6 URL)")
    assert "hunter2" not in why


def test_summary_line_is_one_line_of_untrusted_text() -> None:
    rec = RequestRecord(0, "2026-01-01T00:00:00.000+00:00", "POST", "/v1/messages")
    rec.request = {"model": "evil\x1b[31m\nmodel", "messages": [{"role": "user", "content": "x"}]}
    rec.status = 400
    rec.error = {"type": "invalid_request_error", "message": "bad\x1b]0;title\x07"}
    from ctxview.textfmt import one_line

    line = one_line(summary_line(summarise(rec)), 400)
    assert "\x1b" not in line and "\n" not in line and "\x07" not in line


def test_cli_refuses_a_bad_upstream_and_a_busy_port(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["proxy", "--no-tui", "--upstream", "ftp://nowhere"]) == 2
    assert "expected an http(s) URL" in capsys.readouterr().err
    assert main(["proxy", "--no-tui", "--port", "8787", "--upstream", "http://127.0.0.1:8787"]) == 2
    assert "is this proxy itself" in capsys.readouterr().err
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert (
            main(["proxy", "--no-tui", "--port", str(port), "--upstream", "http://127.0.0.1:1"])
            == 2
        )
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and "Traceback" not in err


def test_cli_warns_when_bound_beyond_loopback(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        port = s.getsockname()[1]
        assert (
            main(
                [
                    "proxy",
                    "--no-tui",
                    "--host",
                    "0.0.0.0",
                    "--port",
                    str(port),
                    "--upstream",
                    "http://127.0.0.1:1",
                ]
            )
            == 2
        )
    assert "warning: --host 0.0.0.0" in capsys.readouterr().err
