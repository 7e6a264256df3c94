"""``ctxview proxy``: a local recording proxy for the Anthropic Messages API, OpenAI's Chat
Completions and Responses APIs and Gemini's generateContent / streamGenerateContent.

Built on aiohttp, both sides: its server (``aiohttp.web``) and its client (``ClientSession``) are
one maintained library on one asyncio loop, the server streams a response chunk by chunk with
``StreamResponse.write`` and the client yields upstream bytes as they arrive
(``content.iter_any()``), and aiohttp cancels a handler whose client went away
(``handler_cancellation``), which is how a client disconnect cancels the upstream request. No HTTP
is parsed by hand.

Every request is forwarded to its provider's upstream (:func:`route`: by its path, else by the
headers only one provider's clients send; each upstream set on its own), (path, query, body, headers minus hop-by-hop ones; a
compressed body is forwarded decompressed, without its ``Content-Encoding``); the response is
passed back unchanged (SSE unbuffered). Each finished exchange becomes a :class:`RequestRecord`
(credential headers never do) that a :class:`~ctxview.live.recording.RecordLog` thread parses,
redacts, appends to the recording and hands to ``on_record``.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import re
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import unquote_plus, urlsplit, urlunsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from ctxview.live.recording import (
    RECORDED_REQUEST_HEADERS,
    RECORDED_RESPONSE_HEADERS,
    REDACTED,
    RecordLog,
    RequestRecord,
    now_iso,
)
from ctxview.sessions.proxylog import ENDPOINT_PROVIDER, endpoint_of
from ctxview.sessions.replies import api_error, json_reply, stream_reply

DEFAULT_UPSTREAM = "https://api.anthropic.com"
DEFAULT_OPENAI_UPSTREAM = "https://api.openai.com"
DEFAULT_GEMINI_UPSTREAM = "https://generativelanguage.googleapis.com"
#: each provider's default upstream
DEFAULT_UPSTREAMS = {
    "anthropic": DEFAULT_UPSTREAM,
    "openai": DEFAULT_OPENAI_UPSTREAM,
    "gemini": DEFAULT_GEMINI_UPSTREAM,
}

#: never forwarded as-is: hop-by-hop (RFC 9110 §7.6.1), what aiohttp sets itself, and the body's
#: encoding (the server hands the handler the body decompressed; it is forwarded so)
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
        "content-encoding",
    }
)
#: a header or query parameter whose name says its value is a credential (``x-api-key``,
#: ``authorization``, ``anthropic-api-key``, ``api-key``, ``X-Custom-Auth``, ``?key=``, cookies…):
#: forwarded untouched, its value never recorded or shown
CREDENTIAL_NAME = re.compile(r"key|auth|token|secret|passw|cookie|credential|signature|^sig$", re.I)

#: upstream connect timeout
CONNECT_TIMEOUT = 30.0
#: default upstream read timeout: the longest silence between two pieces of a response (a
#: non-streamed reply of a big max_tokens may take minutes; a stream sends pings)
UPSTREAM_TIMEOUT = 600.0
#: a client has this long to send a request's head (slow or half-sent requests are dropped)
HEADER_TIMEOUT = 30.0
#: at shutdown, requests in flight get this long to finish; then they are cut (and recorded so)
SHUTDOWN_GRACE = 2.0
#: a request body larger than this is forwarded as it arrives and not kept (the Messages API
#: refuses bodies above 32 MB): memory stays flat whatever a client sends
RECORD_BODY_LIMIT = 32 * 1024**2
#: finished records kept in memory (``Proxy.records``) besides the recording
RECENT_RECORDS = 64


def _error_body(etype: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": etype, "message": message}}).encode()


def _json_or_none(data: bytes) -> Any:
    if not data:
        return None
    try:
        return json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return None


def split_userinfo(url: str) -> tuple[str, list[str]]:
    """(the URL without ``user:password@``, the credential values it held)."""
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url, []
    userinfo, _, hostport = parts.netloc.rpartition("@")
    secrets = [userinfo, *userinfo.split(":", 1)]
    secrets += [unquote_plus(s) for s in secrets]
    return urlunsplit(parts._replace(netloc=hostport)), secrets


def redact_query(path_qs: str) -> tuple[str, list[str]]:
    """(the path with every credential query parameter's value replaced, those values)."""
    path, sep, query = path_qs.partition("?")
    if not sep:
        return path_qs, []
    secrets: list[str] = []
    pieces = []
    for piece in query.split("&"):
        name, eq, value = piece.partition("=")
        if eq and value and CREDENTIAL_NAME.search(unquote_plus(name)):
            secrets += [value, unquote_plus(value)]
            piece = f"{name}={REDACTED}"
        pieces.append(piece)
    return path + "?" + "&".join(pieces), secrets


def _header_secrets(value: str) -> list[str]:
    """A credential header's value and the parts a body might echo (a bearer token, cookies)."""
    out = [value, value.split(" ", 1)[-1].strip()]
    for part in value.split(";"):
        out.append(part.split("=", 1)[-1].strip())
    return out


#: path prefixes only Google's Generative Language API serves (its OpenAI-compatible
#: ``/v1beta/openai/…`` included: the body is OpenAI's, the upstream Google's)
_GEMINI_PREFIXES = ("/v1beta/", "/v1alpha/", "/upload/v1beta/", "/download/v1beta/")


def route(method: str, path: str, headers: Any) -> str:
    """The provider whose upstream a request goes to: its path (the endpoints a recording knows,
    Google's ``/v1beta/…``), else the headers only one provider's clients send
    (``anthropic-version``/``x-api-key``: Anthropic; ``x-goog-api-key``: Gemini; a bearer
    ``Authorization`` alone: OpenAI), else Anthropic."""
    bare = path.split("?", 1)[0]
    if bare.startswith(_GEMINI_PREFIXES) or "x-goog-api-key" in headers:
        return "gemini"
    endpoint = endpoint_of(method, path)
    if endpoint in ENDPOINT_PROVIDER:
        return ENDPOINT_PROVIDER[endpoint]
    if "anthropic-version" in headers or "x-api-key" in headers:
        return "anthropic"
    if "authorization" in headers or "openai-organization" in headers:
        return "openai"
    return "anthropic"


class Upstream:
    """Where one provider's requests go: the URL as used and shown (without ``user:password``),
    that user:password as HTTP basic auth (sent when the client sends no Authorization of its
    own: aiohttp refuses both at once), and the credential values it holds."""

    def __init__(self, url: str, provider: str = "anthropic") -> None:
        shown, self.secrets = split_userinfo(url.rstrip("/"))
        if provider == "openai" and shown.endswith("/v1"):
            # OPENAI_BASE_URL names the /v1 its clients add paths to; requests carry /v1
            shown = shown[: -len("/v1")]
        parts = urlsplit(url)
        self.auth = (
            aiohttp.encode_basic_auth(
                unquote_plus(parts.username), unquote_plus(parts.password or "")
            )
            if parts.username is not None
            else None
        )
        if self.auth is not None:
            self.secrets += _header_secrets(self.auth)
        self.url = shown


class _BodyRefused(Exception):
    """The request body could not be read (a bad gzip body, say): answered 400."""


class _TimedServer(web.Server):
    """aiohttp's server, with a deadline for each connection's first request head: a client that
    opens a connection and sends its request slowly (or half of it) is dropped after
    HEADER_TIMEOUT instead of holding a slot for ever."""

    def __call__(self) -> Any:
        handler = super().__call__()
        loop = asyncio.get_running_loop()  # called by the loop's create_server, on it

        def check() -> None:
            transport = handler.transport
            if transport is not None and getattr(handler, "_request_count", 1) == 0:
                transport.close()

        loop.call_later(HEADER_TIMEOUT, check)
        return handler


class Proxy:
    """The proxy's handler, its upstream client and its recording."""

    def __init__(
        self,
        upstream: str = DEFAULT_UPSTREAM,
        *,
        openai_upstream: str = DEFAULT_OPENAI_UPSTREAM,
        gemini_upstream: str = DEFAULT_GEMINI_UPSTREAM,
        record_path: str | None = None,
        on_record: Callable[[RequestRecord], None] | None = None,
        upstream_timeout: float = UPSTREAM_TIMEOUT,
        recent: int = RECENT_RECORDS,
    ) -> None:
        #: each provider's upstream (``upstream``: Anthropic's)
        self.upstreams = {
            "anthropic": Upstream(upstream),
            "openai": Upstream(openai_upstream, "openai"),
            "gemini": Upstream(gemini_upstream, "gemini"),
        }
        #: Anthropic's upstream as used, shown and saved: without user:password
        self.upstream = self.upstreams["anthropic"].url
        #: every upstream's user:password, removed from whatever is recorded
        self._upstream_secrets = [s for u in self.upstreams.values() for s in u.secrets]
        self.record_path = record_path
        self.upstream_timeout = upstream_timeout
        #: the newest ``recent`` finished records, bodies included (tests, a library user; the
        #: command and the app keep none: the recording holds them all)
        self.records: deque[RequestRecord] = deque(maxlen=recent)
        self._on_record = on_record
        self.log = RecordLog(
            record_path,
            self.upstream,
            self._recorded,
            upstreams={k: u.url for k, u in self.upstreams.items()},
        )
        self._session: aiohttp.ClientSession | None = None
        self._runner: web.AppRunner | None = None
        self._counter = 0
        self._closing = False
        self.address: tuple[str, int] = ("", 0)

    @property
    def save_error(self) -> str | None:
        return self.log.error

    def _recorded(self, rec: RequestRecord) -> None:
        self.records.append(rec)
        if self._on_record is not None:
            self._on_record(rec)

    # -- lifecycle --------------------------------------------------------------------------------
    async def start(self, host: str = "127.0.0.1", port: int = 8787) -> tuple[str, int]:
        """Open the recording, then listen. Raises OSError (the recording or the port)."""
        self._counter = self.log.open()
        self._session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=CONNECT_TIMEOUT, sock_read=self.upstream_timeout
            ),
            auto_decompress=True,
            skip_auto_headers=("User-Agent", "Accept-Encoding"),
        )
        app = web.Application(client_max_size=RECORD_BODY_LIMIT)
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(
            app, handler_cancellation=True, access_log=None, shutdown_timeout=SHUTDOWN_GRACE
        )
        await self._runner.setup()
        server = self._runner.server
        if server is not None:
            # aiohttp has no deadline for a request head; AppRunner builds its own Server, so
            # the one it built is given the subclass that adds one (no state of its own)
            server.__class__ = _TimedServer
        site = web.TCPSite(self._runner, host, port, backlog=2048, reuse_address=True)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []
        self.address = sockets[0].getsockname()[:2] if sockets else (host, port)
        return self.address

    async def close(self) -> None:
        """Stop: requests in flight get SHUTDOWN_GRACE seconds, then are cut (recorded as cut);
        every record is written before this returns."""
        self._closing = True
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()
        await asyncio.to_thread(self.log.close)

    async def flush(self) -> None:
        """Wait until every finished request is written (tests)."""
        await asyncio.to_thread(self.log.wait_idle, 10)

    # -- the handler ------------------------------------------------------------------------------
    def _forward_headers(self, request: web.Request, secrets: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in request.headers.items():
            low = k.lower()
            if low in HOP_BY_HOP:
                continue
            if CREDENTIAL_NAME.search(low):
                secrets += _header_secrets(v)
            out[k] = v
        return out

    def _finish(self, rec: RequestRecord, t0: float, secrets: list[str]) -> None:
        rec.duration_ms = round((time.perf_counter() - t0) * 1000, 2)
        rec.ended_at = now_iso()
        self.log.submit(rec, [*secrets, *self._upstream_secrets])

    def _cut_reason(self, default: str) -> str:
        return "the proxy stopped mid-request" if self._closing else default

    async def _read_body(
        self, request: web.Request, rec: RequestRecord
    ) -> bytearray | AsyncIterator[bytes]:
        """The body (decompressed); above RECORD_BODY_LIMIT an iterator that forwards it as it
        arrives (counted, hashed, not kept)."""
        head = bytearray()
        try:
            while len(head) <= RECORD_BODY_LIMIT:
                chunk = await request.content.readany()
                if not chunk:
                    rec.request_bytes = len(head)
                    return head  # (not copied: a body may be 32 MB)
                head += chunk
        except (aiohttp.web.HTTPException, aiohttp.ClientError, ValueError, OSError) as exc:
            raise _BodyRefused(str(exc) or type(exc).__name__) from None
        except Exception as exc:  # aiohttp's payload errors (a bad gzip body)
            if type(exc).__module__.startswith("aiohttp"):
                raise _BodyRefused(str(exc) or type(exc).__name__) from None
            raise

        digest = hashlib.sha256()

        async def rest() -> AsyncIterator[bytes]:
            first = bytes(head)
            head.clear()
            digest.update(first)
            rec.request_bytes = len(first)
            yield first
            async for piece in request.content.iter_any():
                digest.update(piece)
                rec.request_bytes += len(piece)
                yield piece
            rec.request_note = (
                f"{rec.request_bytes} bytes (sha256 {digest.hexdigest()}): above the "
                f"{RECORD_BODY_LIMIT // 1024**2} MB a recording keeps; forwarded, not kept"
            )

        rec.request_note = f"above the {RECORD_BODY_LIMIT // 1024**2} MB a recording keeps"
        return rest()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        assert self._session is not None
        t0 = time.perf_counter()
        path, secrets = redact_query(request.path_qs)
        provider = route(request.method, request.path, request.headers)
        upstream = self.upstreams[provider]
        endpoint = endpoint_of(request.method, request.path)
        rec = RequestRecord(
            id=self._counter,
            started_at=now_iso(),
            method=request.method,
            path=path,
            endpoint=endpoint,
            provider=ENDPOINT_PROVIDER.get(endpoint, provider),
        )
        self._counter += 1
        headers = self._forward_headers(request, secrets)
        if upstream.auth is not None and "authorization" not in {k.lower() for k in headers}:
            headers["Authorization"] = upstream.auth
        rec.request_headers = {
            k.lower(): v
            for k, v in request.headers.items()
            if k.lower() in RECORDED_REQUEST_HEADERS
        }
        try:
            body = await self._read_body(request, rec)
        except _BodyRefused as exc:
            message = f"ctxview proxy: the request body could not be read ({exc})"
            rec.status = 400
            rec.error = {"type": "invalid_request_error", "message": message}
            rec.incomplete = "request body unreadable"
            rec.request_note = message
            self._finish(rec, t0, secrets)
            return web.Response(
                status=400,
                body=_error_body("invalid_request_error", message),
                content_type="application/json",
            )
        except asyncio.CancelledError:
            rec.incomplete = self._cut_reason("client disconnected while sending the request")
            self._finish(rec, t0, secrets)
            raise
        if isinstance(body, bytearray):
            rec.body = body
        try:
            up = await self._session.request(
                request.method,
                upstream.url + request.path_qs,
                headers=headers,
                data=body if body else None,
                allow_redirects=False,
            )
        except asyncio.CancelledError:
            rec.incomplete = self._cut_reason("client disconnected before the upstream answered")
            self._finish(rec, t0, secrets)
            raise
        except (aiohttp.ClientError, OSError, TimeoutError) as exc:
            message = self._upstream_failure(exc, upstream.url)
            rec.status = 502
            rec.error = {"type": "api_error", "message": message}
            rec.incomplete = "upstream failed"
            rec.response = {"type": "error", "error": rec.error}
            self._finish(rec, t0, secrets)
            return web.Response(
                status=502,
                body=_error_body("api_error", message),
                content_type="application/json",
            )
        try:
            return await self._relay(request, up, rec, t0, secrets)
        finally:
            up.close()  # no-op once fully read; otherwise it drops the upstream connection

    def _upstream_failure(self, exc: BaseException, up: str) -> str:
        """The 502's message: what happened, in words, with the upstream (no credentials)."""
        if isinstance(exc, aiohttp.ServerDisconnectedError):
            what = f"upstream {up} closed the connection after receiving the request, without answering"
        elif isinstance(exc, (TimeoutError, aiohttp.ServerTimeoutError)) and not isinstance(
            exc, aiohttp.ConnectionTimeoutError
        ):
            what = (
                f"upstream {up} did not answer within {self.upstream_timeout:g} s "
                "(--upstream-timeout)"
            )
        elif isinstance(exc, (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)):
            what = f"upstream {up} is unreachable ({_strip(str(exc), self._upstream_secrets)})"
        else:
            reason = _strip(str(exc) or type(exc).__name__, self._upstream_secrets)
            what = f"upstream {up} failed ({reason})"
        return f"ctxview proxy: {what}"

    async def _relay(
        self,
        request: web.Request,
        up: aiohttp.ClientResponse,
        rec: RequestRecord,
        t0: float,
        secrets: list[str],
    ) -> web.StreamResponse:
        rec.status = up.status
        rec.first_byte_ms = round((time.perf_counter() - t0) * 1000, 2)
        rec.response_headers = {
            k.lower(): v for k, v in up.headers.items() if k.lower() in RECORDED_RESPONSE_HEADERS
        }
        out_headers = [(k, v) for k, v in up.headers.items() if k.lower() not in HOP_BY_HOP]
        ctype = up.headers.get("content-type", "")
        if "text/event-stream" not in ctype:
            try:
                data = await up.read()
            except asyncio.CancelledError:
                rec.incomplete = self._cut_reason("client disconnected")
                self._finish(rec, t0, secrets)
                raise
            except (aiohttp.ClientError, OSError, TimeoutError) as exc:
                rec.incomplete = f"upstream response cut ({exc or type(exc).__name__})"
                self._finish(rec, t0, secrets)
                if request.transport is not None:
                    request.transport.close()
                return web.Response(status=502, body=_error_body("api_error", rec.incomplete))
            parsed = _json_or_none(data)
            rec.response = parsed
            rec.error = api_error(rec.endpoint, parsed) if up.status >= 400 else None
            if up.status < 400:
                got, rec.incomplete = json_reply(rec.endpoint, parsed, len(data))
                rec.response = got.message if got.message is not None else parsed
                rec.usage = got.usage or None
                rec.stop_reason = got.stop_reason
                rec.complete = rec.incomplete is None
                if got.error is not None:
                    rec.error = got.error
                if parsed is None and data:
                    rec.response = {"non_json_body": data[:2000].decode("utf-8", "replace")}
            whole = web.Response(status=up.status, body=data, headers=CIMultiDict(out_headers))
            self._finish(rec, t0, secrets)
            return whole
        rec.streamed = True
        resp = web.StreamResponse(status=up.status, headers=CIMultiDict(out_headers))
        chunks: list[bytes] = []
        written = 0  # of the chunks, those the client was sent
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
                    reason = (
                        f"upstream silent for {self.upstream_timeout:g} s (--upstream-timeout)"
                        if isinstance(exc, TimeoutError)
                        else f"upstream stream broken ({exc or type(exc).__name__})"
                    )
                    upstream_broken = True
                    break
                chunks.append(chunk)
                await resp.write(chunk)
                written += 1
        except asyncio.CancelledError:
            self._record_stream(
                rec,
                chunks,
                self._cut_reason("client disconnected mid-stream"),
                sent_all=written == len(chunks),
            )
            self._finish(rec, t0, secrets)
            raise
        except (ConnectionError, aiohttp.ClientConnectionError):
            reason = "client disconnected mid-stream"
        self._record_stream(rec, chunks, reason, sent_all=written == len(chunks))
        self._finish(rec, t0, secrets)
        if upstream_broken:
            if request.transport is not None:
                request.transport.close()  # the client sees a broken stream, as it would direct
        elif reason is None:
            with contextlib.suppress(ConnectionError, aiohttp.ClientConnectionError):
                await resp.write_eof()
        return resp

    @staticmethod
    def _record_stream(
        rec: RequestRecord, chunks: list[bytes], reason: str | None, sent_all: bool = False
    ) -> None:
        """The reply of a streamed exchange. ``reason``: why the stream stopped early, unless
        the client was sent all of it, its end included (``sent_all``): a client that has the
        whole reply hangs up (the SDKs close at ``[DONE]`` or ``message_stop``) before the
        upstream's end of body may reach the proxy, and that cuts nothing."""
        got, end = stream_reply(rec.endpoint, b"".join(chunks))
        if sent_all and got.complete:
            reason = None
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
            rec.incomplete = f"stream ended before {end}"


def _strip(text: str, secrets: list[str]) -> str:
    for s in sorted(secrets, key=len, reverse=True):
        if s:
            text = text.replace(s, REDACTED)
    return text


LOOPBACK_NAMES = ("localhost",)


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the proxy on this machine (127.0.0.0/8, ::1, localhost,
    and the short forms ``127.1`` the resolver accepts)."""
    import ipaddress
    import socket

    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:  # inet_aton reads the short forms: 127.1 is 127.0.0.1
        return ipaddress.ip_address(socket.inet_aton(host)).is_loopback
    except (OSError, ValueError):
        return False


#: each provider's upstream flag, and the variable its clients are pointed at the proxy with
UPSTREAM_FLAGS = {
    "anthropic": ("--upstream", "ANTHROPIC_BASE_URL"),
    "openai": ("--openai-upstream", "OPENAI_BASE_URL"),
    "gemini": ("--gemini-upstream", "GOOGLE_GEMINI_BASE_URL"),
}


def check_upstream(upstream: str, host: str, port: int, provider: str = "anthropic") -> str | None:
    """Why this upstream cannot be used (a malformed URL, or the proxy itself), or None."""
    flag, env = UPSTREAM_FLAGS[provider]
    try:
        shown, _ = split_userinfo(upstream)
        parts = urlsplit(upstream)
    except ValueError as exc:  # "Invalid IPv6 URL": not shown, it may hold a password
        return f"{flag}: not a URL ({exc}); expected one such as {DEFAULT_UPSTREAMS[provider]}"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{flag}: expected an http(s) URL, got {shown!r}"
    try:
        up_port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return f"{flag}: the port of {shown!r} is not a number 0-65535"
    local = {"127.0.0.1", "localhost", "::1", host}
    if (parts.hostname in local or is_loopback(parts.hostname)) and up_port == port:
        return (
            f"{flag} {shown} is this proxy itself (is {env} pointing at the "
            f"proxy? pass {flag} {DEFAULT_UPSTREAMS[provider]})"
        )
    return None
