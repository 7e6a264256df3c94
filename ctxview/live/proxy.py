"""``ctxview proxy``: a local recording proxy for the Anthropic Messages API.

Built on aiohttp, both sides: its server (``aiohttp.web``) and its client (``ClientSession``) are
one maintained library on one asyncio loop, the server streams a response chunk by chunk with
``StreamResponse.write`` and the client yields upstream bytes as they arrive
(``content.iter_any()``), and aiohttp cancels a handler whose client went away
(``handler_cancellation``), which is how a client disconnect cancels the upstream request. No HTTP
is parsed by hand.

Every request is forwarded verbatim to the upstream (path, query, body, headers minus hop-by-hop
ones); the response is passed back unchanged (SSE unbuffered). A copy of each request body and
response is kept as a :class:`RequestRecord` (credential headers never are) and handed to
``on_record`` and, with ``record_path``, saved atomically after every request.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from ctxview.live.recording import (
    RECORDED_REQUEST_HEADERS,
    RECORDED_RESPONSE_HEADERS,
    RecordingWriter,
    RequestRecord,
    now_iso,
)
from ctxview.live.sse import assemble
from ctxview.sessions.store import atomic_write

DEFAULT_UPSTREAM = "https://api.anthropic.com"

#: never forwarded as-is: hop-by-hop (RFC 9110 §7.6.1) and what aiohttp sets itself
HOP_BY_HOP = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "host",
        "content-length",
    }
)
#: headers whose value is a credential: forwarded untouched, never recorded or shown
CREDENTIAL_HEADERS = frozenset(
    {"x-api-key", "authorization", "proxy-authorization", "cookie", "x-auth-token"}
)

#: a recording is saved once no request was in flight for SAVE_QUIET s, at most SAVE_WITHIN s
#: after a request finished
SAVE_QUIET = 0.02
SAVE_WITHIN = 1.0

#: upstream connect timeout; reads have none (a long stream may idle between events)
CONNECT_TIMEOUT = 30.0


def _error_body(etype: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": etype, "message": message}}).encode()


def _json_or_none(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None


def _api_error(body: Any) -> dict[str, Any] | None:
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        err = body["error"]
        return {"type": str(err.get("type", "error")), "message": str(err.get("message", ""))}
    return None


class Proxy:
    """The proxy's handler, its upstream client, its records and its recording file."""

    def __init__(
        self,
        upstream: str = DEFAULT_UPSTREAM,
        *,
        record_path: str | None = None,
        on_record: Callable[[RequestRecord], None] | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.record_path = record_path
        self.on_record = on_record
        self.records: list[RequestRecord] = []
        #: credential values seen in headers, only to make sure none reaches the recording
        self._secrets: set[str] = set()
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self._dirty = asyncio.Event()
        self._saver: asyncio.Task[None] | None = None
        self._saved = 0
        self._writer = RecordingWriter(self.upstream)
        self._counter = 0
        self._inflight = 0
        self._last_activity = 0.0
        self.save_error: str | None = None
        self.address: tuple[str, int] = ("", 0)

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 8787) -> tuple[str, int]:
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=CONNECT_TIMEOUT),
            auto_decompress=True,
            skip_auto_headers=("User-Agent", "Accept-Encoding"),
        )
        app = web.Application(client_max_size=256 * 1024**2)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(app, handler_cancellation=True, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port, backlog=2048, reuse_address=True)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        self.address = sockets[0].getsockname()[:2] if sockets else (host, port)
        if self.record_path:
            self._saver = asyncio.create_task(self._save_loop())
        return self.address

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._saver is not None:
            if self._dirty.is_set():
                await self._save_now()
            self._saver.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._saver
        if self._session is not None:
            await self._session.close()

    # -- recording --------------------------------------------------------------------------------
    def _finish(self, rec: RequestRecord, t0: float) -> None:
        rec.duration_ms = round((time.perf_counter() - t0) * 1000, 2)
        self.records.append(rec)  # in the order they finish; the recording sorts by id
        if self.record_path:
            self._dirty.set()
        if self.on_record is not None:
            self.on_record(rec)

    async def _save_loop(self) -> None:
        """Save each finished request: at the first quiet moment (no request in flight for
        SAVE_QUIET seconds), and at most SAVE_WITHIN seconds after it finished, so a save (a
        write and two fsyncs) does not compete with the streams of a busy agent."""
        loop = asyncio.get_running_loop()
        while True:
            await self._dirty.wait()
            deadline = loop.time() + SAVE_WITHIN
            while loop.time() < deadline:
                quiet_for = loop.time() - self._last_activity
                if self._inflight == 0 and quiet_for >= SAVE_QUIET:
                    break
                await asyncio.sleep(SAVE_QUIET)
            await self._save_now()

    async def _save_now(self) -> None:
        """Write the recording (in a thread: fsync must not stall streams in flight). Requests
        that finish during a write set the flag again and are saved by the next pass."""
        self._dirty.clear()
        records = list(self.records)
        secrets = set(self._secrets)
        path = self.record_path
        assert path is not None
        try:
            # encoding is a little Python work (new records only) done here; a thread doing it
            # would hold the GIL against the streams in flight. The write + fsync go to a thread.
            data = self._writer.encode(records, secrets)
            await asyncio.to_thread(atomic_write, path, data)
            self._saved = len(records)
            self.save_error = None
        except OSError as exc:
            self.save_error = f"{path}: cannot write the recording ({exc.strerror or exc})"

    async def flush(self) -> None:
        """Save now if anything is unsaved (tests and shutdown)."""
        if self.record_path and (self._dirty.is_set() or self._saved < len(self.records)):
            await self._save_now()

    # -- the handler ------------------------------------------------------------------------------
    def _forward_headers(self, request: web.Request) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in request.headers.items():
            low = k.lower()
            if low in HOP_BY_HOP:
                continue
            if low in CREDENTIAL_HEADERS:
                self._secrets.add(v)
                token = v.split(" ", 1)[-1].strip()
                if token:
                    self._secrets.add(token)
            out[k] = v
        return out

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self._inflight += 1
        try:
            return await self._handle(request)
        finally:
            self._inflight -= 1
            self._last_activity = asyncio.get_running_loop().time()

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        t0 = time.perf_counter()
        rec = RequestRecord(
            id=self._counter,
            started_at=now_iso(),
            method=request.method,
            path=request.path_qs,
        )
        self._counter += 1
        headers = self._forward_headers(request)
        rec.request_headers = {
            k.lower(): v
            for k, v in request.headers.items()
            if k.lower() in RECORDED_REQUEST_HEADERS
        }
        body = await request.read()
        rec.request = _json_or_none(body)
        if rec.request is None and body:
            rec.request = {"non_json_body_bytes": len(body)}
        url = self.upstream + request.path_qs
        try:
            up = await self._session.request(
                request.method,
                url,
                headers=headers,
                data=body if body else None,
                allow_redirects=False,
            )
        except asyncio.CancelledError:
            rec.incomplete = "client disconnected before the upstream answered"
            self._finish(rec, t0)
            raise
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            reason = str(exc) or type(exc).__name__
            message = f"ctxview proxy: upstream {self.upstream} is unreachable ({reason})"
            rec.status = 502
            rec.error = {"type": "api_error", "message": message}
            rec.incomplete = "upstream unreachable"
            rec.response = {"type": "error", "error": rec.error}
            self._finish(rec, t0)
            return web.Response(
                status=502,
                body=_error_body("api_error", message),
                content_type="application/json",
            )
        try:
            return await self._relay(request, up, rec, t0)
        finally:
            up.close()  # no-op once fully read; otherwise it drops the upstream connection

    async def _relay(
        self, request: web.Request, up: aiohttp.ClientResponse, rec: RequestRecord, t0: float
    ) -> web.StreamResponse:
        rec.status = up.status
        rec.first_byte_ms = round((time.perf_counter() - t0) * 1000, 2)
        rec.response_headers = {
            k.lower(): v for k, v in up.headers.items() if k.lower() in RECORDED_RESPONSE_HEADERS
        }
        out_headers = [
            (k, v)
            for k, v in up.headers.items()
            if k.lower() not in HOP_BY_HOP and k.lower() != "content-encoding"
        ]
        ctype = up.headers.get("content-type", "")
        if "text/event-stream" not in ctype:
            try:
                data = await up.read()
            except asyncio.CancelledError:
                rec.incomplete = "client disconnected"
                self._finish(rec, t0)
                raise
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                rec.incomplete = f"upstream response cut ({exc or type(exc).__name__})"
                self._finish(rec, t0)
                if request.transport is not None:
                    request.transport.close()
                return web.Response(status=502, body=_error_body("api_error", rec.incomplete))
            parsed = _json_or_none(data)
            rec.response = parsed
            rec.error = _api_error(parsed) if up.status >= 400 else None
            if isinstance(parsed, dict) and parsed.get("type") == "message":
                usage = parsed.get("usage")
                rec.usage = usage if isinstance(usage, dict) else None
                sr = parsed.get("stop_reason")
                rec.stop_reason = sr if isinstance(sr, str) else None
            rec.complete = up.status < 400
            whole = web.Response(status=up.status, body=data, headers=CIMultiDict(out_headers))
            self._finish(rec, t0)
            return whole
        rec.streamed = True
        resp = web.StreamResponse(status=up.status, headers=CIMultiDict(out_headers))
        chunks: list[bytes] = []
        reason: str | None = None
        upstream_broken = False
        try:
            await resp.prepare(request)
            stream = up.content.iter_any().__aiter__()
            while True:
                try:
                    chunk = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                    reason = f"upstream stream broken ({exc or type(exc).__name__})"
                    upstream_broken = True
                    break
                chunks.append(chunk)
                await resp.write(chunk)
        except asyncio.CancelledError:
            self._record_stream(rec, chunks, "client disconnected mid-stream")
            self._finish(rec, t0)
            raise
        except (ConnectionError, aiohttp.ClientConnectionError):
            reason = "client disconnected mid-stream"
        self._record_stream(rec, chunks, reason)
        self._finish(rec, t0)
        if upstream_broken:
            if request.transport is not None:
                request.transport.close()  # the client sees a broken stream, as it would direct
        elif reason is None:
            with contextlib.suppress(ConnectionError, aiohttp.ClientConnectionError):
                await resp.write_eof()
        return resp

    @staticmethod
    def _record_stream(rec: RequestRecord, chunks: list[bytes], reason: str | None) -> None:
        got = assemble(b"".join(chunks))
        rec.response = got.message
        rec.usage = got.usage or None
        rec.stop_reason = got.stop_reason
        rec.error = got.error
        rec.complete = got.complete and reason is None and rec.status is not None
        if rec.status is not None and rec.status >= 400:
            rec.complete = False
        if got.error is not None:
            # the API's own reason the stream ended; a client that reads it hangs up at once,
            # so its disconnect may reach the proxy before the stream's end does
            rec.incomplete = f"error event: {got.error.get('type', 'error')}"
        elif reason is not None:
            rec.incomplete = reason
        elif not got.complete:
            rec.incomplete = "stream ended before message_stop"


def check_upstream(upstream: str, host: str, port: int) -> str | None:
    """Why this upstream cannot be used (a malformed URL, or the proxy itself), or None."""
    parts = urlsplit(upstream)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"--upstream: expected an http(s) URL, got {upstream!r}"
    up_port = parts.port or (443 if parts.scheme == "https" else 80)
    local = {"127.0.0.1", "localhost", "::1", host}
    if parts.hostname in local and up_port == port:
        return (
            f"--upstream {upstream} is this proxy itself (is ANTHROPIC_BASE_URL pointing at the "
            "proxy? pass --upstream https://api.anthropic.com)"
        )
    return None
