"""The proxy under hostile or broken peers: bodies that are not what they claim, credentials by
every route, upstreams that never answer or hang up, slow clients, shutdown mid-request, and
recording targets that must be refused."""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
import os
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import anthropic
import pytest
from aiohttp import web

import ctxview.live.proxy as proxy_mod
from ctxview.cli import main
from ctxview.live.proxy import Proxy, is_loopback
from ctxview.live.recording import REDACTED
from tests.support.fake_api import FakeAPI, Response, text_events
from tests.support.proxy_thread import ProxyThread, running

BODY: dict[str, Any] = {
    "model": "claude-test",
    "max_tokens": 9,
    "messages": [{"role": "user", "content": "hello"}],
}


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ProxyThread, FakeAPI]]:
    yield from running(tmp_path_factory.mktemp("proxy"))


async def post(url: str, data: bytes, **headers: str) -> tuple[int, bytes]:
    """(status, body) of a POST to /v1/messages; (0, b"") when the connection broke (a cut
    response reaches the client as a broken one, as it would direct)."""
    try:
        async with (
            aiohttp.ClientSession(auto_decompress=False) as s,
            s.post(url + "/v1/messages", data=data, headers=headers) as r,
        ):
            return r.status, await r.read()
    except aiohttp.ClientError:
        return 0, b""


@pytest.fixture
async def upstream() -> AsyncIterator[Callable[[Any], Awaitable[str]]]:
    """An upstream of the test's own (an aiohttp handler), on the test's loop."""
    runners: list[web.AppRunner] = []

    async def start(handler: Any) -> str:
        app = web.Application(client_max_size=1024**3)
        app.router.add_route("*", "/{tail:.*}", handler)
        runner = web.AppRunner(app, handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        runners.append(runner)
        return f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]

    yield start
    for r in runners:
        await r.cleanup()


# -- responses that are not what their status says ---------------------------------------------
@pytest.mark.parametrize(
    ("raw", "length", "reason"),
    [
        (b"hello", None, "the response body is not JSON (5 bytes)"),
        (b'{"id": "msg_1", "type": "message", "role": "assis', None, "not JSON (49 bytes)"),
        (b'{"type": "error"}', None, "the response is JSON but not a message"),
        (b'{"id": "msg_1", "type": "mess', 400, "upstream response cut"),
    ],
)
async def test_a_200_that_is_not_a_whole_message_is_incomplete_with_the_reason(
    shared: tuple[ProxyThread, FakeAPI], raw: bytes, length: int | None, reason: str
) -> None:
    px, api = shared
    mark = px.mark()
    api.queue(Response("raw", raw=raw, length=length))
    await post(px.url, json.dumps(BODY).encode(), **{"content-type": "application/json"})
    (line,) = px.lines_since(mark)
    assert line["complete"] is False and reason in line["incomplete"]


# -- request bodies ---------------------------------------------------------------------------
async def test_a_gzip_body_is_forwarded_decompressed_without_its_encoding(
    shared: tuple[ProxyThread, FakeAPI],
) -> None:
    px, api = shared
    mark = px.mark()
    before = len(api.bodies)
    data = json.dumps(BODY).encode()
    status, _ = await post(
        px.url,
        gzip.compress(data),
        **{"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert status == 200
    assert api.bodies[before] == data
    assert "content-encoding" not in api.headers[before]
    (line,) = px.lines_since(mark)
    assert line["request"] == BODY and line["complete"] is True


async def test_a_bad_gzip_body_is_a_recorded_400(shared: tuple[ProxyThread, FakeAPI]) -> None:
    px, api = shared
    mark = px.mark()
    before = len(api.bodies)
    status, body = await post(
        px.url,
        b"not gzip at all",
        **{"content-type": "application/json", "content-encoding": "gzip"},
    )
    assert status == 400
    err = json.loads(body)
    assert err["type"] == "error" and err["error"]["type"] == "invalid_request_error"
    assert "Traceback" not in err["error"]["message"]
    assert len(api.bodies) == before  # never forwarded
    (line,) = px.lines_since(mark)
    assert line["status"] == 400 and line["complete"] is False
    assert "could not be read" in line["error"]["message"]


async def test_a_body_above_the_record_limit_is_streamed_through_and_not_kept(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, upstream: Any
) -> None:
    monkeypatch.setattr(proxy_mod, "RECORD_BODY_LIMIT", 64 * 1024)
    got: dict[str, Any] = {}

    async def count(request: web.Request) -> web.Response:
        h, n = hashlib.sha256(), 0
        async for chunk in request.content.iter_any():
            h.update(chunk)
            n += len(chunk)
        got.update(n=n, sha=h.hexdigest())
        return web.json_response(
            {"type": "error", "error": {"type": "request_too_large"}}, status=413
        )

    url = await upstream(count)
    proxy = Proxy(url, record_path=str(tmp_path / "big.jsonl"))
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        big = json.dumps(dict(BODY, pad="x" * 300_000)).encode()
        status, _ = await post(f"http://{host}:{port}", big, **{"content-type": "application/json"})
        assert status == 413
        assert got == {"n": len(big), "sha": hashlib.sha256(big).hexdigest()}
        await proxy.flush()
        (rec,) = proxy.records
        assert rec.request is None and rec.request_bytes == len(big)
        assert rec.request_note is not None and hashlib.sha256(big).hexdigest() in rec.request_note
    finally:
        await proxy.close()


# -- credentials --------------------------------------------------------------------------------
async def test_credentials_by_every_route_are_redacted(
    shared: tuple[ProxyThread, FakeAPI],
) -> None:
    px, api = shared
    mark = px.mark()
    secrets = {
        "query": "QUERYSECRET-0123456789",
        "anthropic-api-key": "ANTHROPICAPIKEY-0123456789",
        "api-key": "PLAINAPIKEY-0123456789",
        "x-custom-auth": "CUSTOMAUTH-0123456789",
        "quoted": 'sk-ant-"QUOTED\\BACKSLASH-0123456789',
    }
    echo = " ".join(secrets.values())
    body = dict(BODY, messages=[{"role": "user", "content": f"echo: {echo}"}])
    async with (
        aiohttp.ClientSession() as s,
        s.post(
            f"{px.url}/v1/messages?beta=true&key={secrets['query']}",
            json=body,
            headers={
                "anthropic-api-key": secrets["anthropic-api-key"],
                "api-key": secrets["api-key"],
                "X-Custom-Auth": secrets["x-custom-auth"],
                "x-api-key": secrets["quoted"],
            },
        ) as r,
    ):
        assert r.status == 200
        await r.read()
    assert api.paths[-1].endswith(f"key={secrets['query']}")  # forwarded untouched
    (line,) = px.lines_since(mark)
    assert line["path"] == f"/v1/messages?beta=true&key={REDACTED}"
    text = px.record.read_text()
    for value in secrets.values():
        assert value not in text and json.dumps(value)[1:-1] not in text
    assert line["request"]["messages"][0]["content"].count(REDACTED) == len(secrets)


async def test_a_rotating_key_is_redacted_in_each_request(
    shared: tuple[ProxyThread, FakeAPI],
) -> None:
    px, api = shared
    mark = px.mark()
    keys = [f"sk-ant-ROTATING-{k:04d}-abcdef" for k in range(5)]
    for key in keys:
        c = anthropic.AsyncAnthropic(api_key=key, base_url=px.url, max_retries=0)
        body = dict(BODY, messages=[{"role": "user", "content": f"mine is {key}"}])
        api.queue(Response("sse", text_events("ok")))
        await c.messages.create(**body)  # type: ignore[call-overload]
    lines = px.lines_since(mark)
    assert len(lines) == 5
    text = px.record.read_text()
    assert not any(k in text for k in keys)


async def test_the_upstreams_password_is_never_shown_saved_or_in_a_502(
    fake_api: FakeAPI, tmp_path: Path
) -> None:
    port = fake_api.server.server_address[1]
    rec = tmp_path / "rec.jsonl"
    proxy = Proxy(f"http://user:PASSWORD-0123456789@127.0.0.1:{port}", record_path=str(rec))
    host, pport = await proxy.start("127.0.0.1", 0)
    try:
        assert "PASSWORD" not in proxy.upstream
        status, _ = await post(f"http://{host}:{pport}", json.dumps(BODY).encode())
        assert status == 200
        assert fake_api.headers[-1]["authorization"].startswith("Basic ")  # still used
    finally:
        await proxy.close()
    assert "PASSWORD" not in rec.read_text()
    dead = Proxy(f"http://user:PASSWORD-0123456789@127.0.0.1:{_free_port()}")
    host, pport = await dead.start("127.0.0.1", 0)
    try:
        status, body = await post(f"http://{host}:{pport}", json.dumps(BODY).encode())
        assert status == 502 and b"PASSWORD" not in body and b"unreachable" in body
    finally:
        await dead.close()


# -- upstreams that do not answer, clients that do not send, shutdown --------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_an_upstream_that_never_answers_times_out_as_a_recorded_502(
    upstream: Any,
) -> None:
    async def silent(request: web.Request) -> web.Response:
        await asyncio.sleep(30)
        return web.Response()

    proxy = Proxy(await upstream(silent), upstream_timeout=0.3)
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        status, body = await post(f"http://{host}:{port}", json.dumps(BODY).encode())
        assert status == 502 and b"did not answer within 0.3 s" in body
        await proxy.flush()
        (rec,) = proxy.records
        assert rec.status == 502 and not rec.complete
    finally:
        await proxy.close()


async def _stalled_stream(request: web.Request) -> web.StreamResponse:
    await request.read()
    resp = web.StreamResponse(headers={"content-type": "text/event-stream"})
    await resp.prepare(request)
    for chunk in text_events("first words")[:3]:
        await resp.write(chunk)
    await asyncio.sleep(30)
    return resp


async def test_a_stream_that_goes_silent_is_cut_after_the_upstream_timeout(
    upstream: Any,
) -> None:
    proxy = Proxy(await upstream(_stalled_stream), upstream_timeout=0.3)
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        await post(f"http://{host}:{port}", json.dumps(BODY).encode())
        await proxy.flush()
        (rec,) = proxy.records
        assert rec.incomplete == "upstream silent for 0.3 s (--upstream-timeout)"
    finally:
        await proxy.close()


async def test_shutdown_is_bounded_and_the_cut_request_is_recorded(
    monkeypatch: pytest.MonkeyPatch, upstream: Any, tmp_path: Path
) -> None:
    monkeypatch.setattr(proxy_mod, "SHUTDOWN_GRACE", 0.2)
    rec = tmp_path / "cut.jsonl"
    proxy = Proxy(await upstream(_stalled_stream), record_path=str(rec))
    host, port = await proxy.start("127.0.0.1", 0)
    client = asyncio.ensure_future(post(f"http://{host}:{port}", json.dumps(BODY).encode()))
    for _ in range(200):
        if proxy._counter:
            break
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # the stream's first events are through
    t0 = time.monotonic()
    await proxy.close()
    assert time.monotonic() - t0 < 3
    client.cancel()
    lines = [json.loads(x) for x in rec.read_text().splitlines()[1:]]
    (line,) = lines
    assert line["complete"] is False and line["incomplete"] == "the proxy stopped mid-request"
    assert line["response"]["content"][0]["text"] == "first "


async def test_a_client_that_never_finishes_its_request_head_is_dropped(
    monkeypatch: pytest.MonkeyPatch, fake_api: FakeAPI
) -> None:
    monkeypatch.setattr(proxy_mod, "HEADER_TIMEOUT", 0.2)
    proxy = Proxy(fake_api.url)
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n")  # no blank line: half a head
        await writer.drain()
        assert await asyncio.wait_for(reader.read(), 3) == b""  # closed by the proxy
        writer.close()
    finally:
        await proxy.close()


async def test_an_upstream_that_hangs_up_after_the_request_is_not_called_unreachable() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    up_port = server.sockets[0].getsockname()[1]
    proxy = Proxy(f"http://127.0.0.1:{up_port}")
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        status, body = await post(f"http://{host}:{port}", json.dumps(BODY).encode())
        message = json.loads(body)["error"]["message"]
        assert status == 502 and "unreachable" not in message
        assert "closed the connection after receiving the request" in message
    finally:
        await proxy.close()
        server.close()


# -- the command line ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "kind",
    ["directory", "fifo", "missing folder", "symlink into a missing folder", "not a recording"],
)
def test_a_record_target_that_cannot_be_a_recording_is_refused_at_start(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    target = tmp_path / "target"
    if kind == "directory":
        target.mkdir()
        want = "is a directory"
    elif kind == "fifo":
        os.mkfifo(target)
        want = "is a FIFO"
    elif kind == "missing folder":
        target = tmp_path / "no" / "such" / "rec.jsonl"
        want = f"no such folder: {tmp_path / 'no' / 'such'}"
    elif kind == "symlink into a missing folder":  # the folder named is the one missing
        target.symlink_to(tmp_path / "no" / "rec.jsonl")
        want = f"no such folder: {tmp_path / 'no'}"
    else:
        target.write_text('{"messages": []}\n')
        want = "is not a ctxview proxy recording (not replaced"
    args = ["proxy", "--no-tui", "--port", str(_free_port()), "--record", str(target)]
    assert main([*args, "--upstream", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert want in err and "Traceback" not in err
    assert not (tmp_path / "no").exists()
    if kind == "not a recording":
        assert target.read_text() == '{"messages": []}\n'


async def test_a_recording_is_appended_to_never_rewritten(
    fake_api: FakeAPI, tmp_path: Path
) -> None:
    rec = tmp_path / "rec.jsonl"
    for _ in range(2):
        before = rec.read_bytes() if rec.exists() else b""
        proxy = Proxy(fake_api.url, record_path=str(rec))
        host, port = await proxy.start("127.0.0.1", 0)
        try:
            c = anthropic.AsyncAnthropic(
                api_key="sk-ant-x-0123456789", base_url=f"http://{host}:{port}", max_retries=0
            )
            await c.messages.create(**BODY)  # type: ignore[call-overload]
            await proxy.flush()
            # on disk as soon as the request ends, before the proxy stops
            assert rec.read_bytes().startswith(before) and len(rec.read_bytes()) > len(before)
        finally:
            await proxy.close()
    lines = [json.loads(x) for x in rec.read_text().splitlines()]
    assert [x.get("format", x.get("type")) for x in lines] == [
        "ctxview.proxy-log",
        "exchange",
        "ctxview.proxy-log",
        "exchange",
    ]
    assert [x["id"] for x in lines if "id" in x] == [0, 1]  # ids stay unique in the file


async def test_a_run_appending_numbers_its_conversations_as_a_reader_does(
    fake_api: FakeAPI, tmp_path: Path
) -> None:
    from ctxview.sessions.proxylog import group, parse_log

    rec = tmp_path / "rec.jsonl"
    bodies = [BODY, {**BODY, "messages": [{"role": "user", "content": "another conversation"}]}]
    for body in bodies:
        proxy = Proxy(fake_api.url, record_path=str(rec))
        host, port = await proxy.start("127.0.0.1", 0)
        try:
            c = anthropic.AsyncAnthropic(
                api_key="sk-ant-x-0123456789", base_url=f"http://{host}:{port}", max_retries=0
            )
            await c.messages.create(**body)  # type: ignore[call-overload]
            await proxy.flush()
        finally:
            await proxy.close()
    written = [json.loads(x) for x in rec.read_text().splitlines()]
    live = [x["conversation"] for x in written if x.get("type") == "exchange"]
    records, _, _ = parse_log(str(rec), rec.read_text())
    read = {r.id: n for n, rs in group(records).items() for r in rs}
    assert live == [read[0], read[1]] == [1, 2]


def test_loopback_hosts_in_every_spelling() -> None:
    for host in ("127.0.0.1", "127.1", "127.0.0.2", "::1", "localhost"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "192.0.2.2", "fd00::2", "", "example.com"):
        assert not is_loopback(host), host


def test_host_127_1_gives_no_exposure_warning_and_an_empty_host_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        args = ["proxy", "--no-tui", "--port", str(port), "--upstream", "http://127.0.0.1:1"]
        assert main([*args, "--host", "127.1"]) == 2  # the port is taken: it stops there
    err = capsys.readouterr().err
    assert "warning" not in err and "cannot listen on 127.1" in err
    assert main(["proxy", "--no-tui", "--host", "", "--upstream", "http://127.0.0.1:1"]) == 2
    err = capsys.readouterr().err
    assert "--host: expected an address to bind" in err and "http://:" not in err


def test_a_run_appending_after_a_cut_line_takes_the_next_id(tmp_path: Path) -> None:
    """A line cut by a kill still holds its id: the next run does not reuse it."""
    from ctxview.live.recording import RecordLog

    rec = tmp_path / "rec.jsonl"
    rec.write_text(
        '{"format": "ctxview.proxy-log", "version": 1}\n'
        '{"type": "exchange", "id": 0, "endpoint": "messages", "request": {"messages": []}}\n'
        '{"type": "exchange", "id": 7, "conversation": 1, "endpoint": "mess'
    )
    log = RecordLog(str(rec), "http://127.0.0.1:1")
    try:
        assert log.open() == 8
    finally:
        log.close()
