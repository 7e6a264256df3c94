"""A loopback fake of the Anthropic Messages API: JSON and SSE streams, tool_use, faults.

Every request body is recorded. Responses are queued per test with ``server.queue(...)``; when
the queue is empty a plain text reply is streamed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def text_events(
    text: str, *, stop: str = "end_turn", cut: bool = False, msg_id: str = "msg_fake"
) -> list[bytes]:
    out = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": msg_id,
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-fake",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 21,
                        "output_tokens": 1,
                        "cache_read_input_tokens": 7,
                        "cache_creation_input_tokens": 3,
                    },
                },
            },
        ),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        ),
    ]
    words = text.split(" ")
    for k, w in enumerate(words):
        out.append(
            sse(
                "content_block_delta",
                {
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": {
                        "type": "text_delta",
                        "text": w + (" " if k < len(words) - 1 else ""),
                    },
                },
            )
        )
    if cut:
        return out  # the connection closes here: no content_block_stop, no message_stop
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": 12},
            },
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return out


def thinking_events(
    thinking: str, text: str, signature: str = "EqQBCkYIBxgCKkBzaWduZWQ="
) -> list[bytes]:
    """A reply with extended thinking: a thinking block (deltas + signature), then text."""
    head = text_events("")[:1]  # message_start
    out = [
        *head,
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": thinking},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": signature},
            },
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "text_delta", "text": text},
            },
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 1}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                "usage": {"output_tokens": 40},
            },
        ),
        sse("message_stop", {"type": "message_stop"}),
    ]
    return out


def tool_events(
    name: str, tool_input: dict[str, Any], tool_id: str = "toolu_fake_1", say: str = "Using a tool."
) -> list[bytes]:
    out = text_events(say)[:-3]  # message_start, text block, deltas (no stops yet)
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    out.append(
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": tool_id, "name": name, "input": {}},
            },
        )
    )
    out.append(
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 1,
                "delta": {"type": "input_json_delta", "partial_json": json.dumps(tool_input)},
            },
        )
    )
    out.append(sse("content_block_stop", {"type": "content_block_stop", "index": 1}))
    out.append(
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 30},
            },
        )
    )
    out.append(sse("message_stop", {"type": "message_stop"}))
    return out


@dataclass
class Response:
    kind: str  # "sse" | "error" | "hang" | "json" | "raw" (``raw`` bytes as the body)
    events: list[bytes] = field(default_factory=list)
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: bytes = b""
    #: "raw": the Content-Length sent (default: the body's length; more: a body cut short)
    length: int | None = None
    #: "sse": seconds the connection stays open after the last event (an upstream whose end of
    #: body comes after the stream's end marker; a client may hang up in between)
    linger: float = 0.0


def error(status: int, etype: str, message: str, **headers: str) -> Response:
    return Response(
        "error",
        status=status,
        body={"type": "error", "error": {"type": etype, "message": message}},
        headers=headers,
    )


class _Server(ThreadingHTTPServer):
    # a real listen backlog: the default of 5 drops connections under a burst of 200 clients
    request_queue_size = 1024
    daemon_threads = True


class FakeAPI:
    def __init__(
        self,
        port: int = 0,
        smart: bool = False,
        default: Callable[[str, dict[str, Any]], Response] | None = None,
    ) -> None:
        self.smart = smart
        #: the reply to a request when none is queued, from its path and body (another
        #: provider's API: ``tests.support.fake_providers``)
        self.default = default
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.bodies: list[bytes] = []
        self._queue: list[Response] = []
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                raw = self.rfile.read(length)
                body = json.loads(raw or b"{}")
                with api._lock:
                    api.requests.append(body)
                    api.paths.append(self.path)
                    api.headers.append({k.lower(): v for k, v in self.headers.items()})
                    api.bodies.append(raw)
                    resp = api._queue.pop(0) if api._queue else None
                if self.path.startswith("/v1/messages/count_tokens"):
                    if resp is not None and resp.kind == "error":
                        return self._json(resp.status, resp.body, resp.headers)
                    return self._json(200, {"input_tokens": 1234})
                if resp is None and api.default is not None:
                    resp = api.default(self.path, body)
                if resp is None:
                    resp = (
                        api.scripted(body)
                        if api.smart
                        else Response("sse", text_events("Hello from the fake API."))
                    )
                if resp.delay:
                    time.sleep(resp.delay)
                if resp.kind == "error":
                    return self._json(resp.status, resp.body, resp.headers)
                if resp.kind == "hang":
                    time.sleep(30)
                    return
                if resp.kind == "json":
                    return self._json(resp.status, resp.body, resp.headers)
                if resp.kind == "raw":
                    self.send_response(resp.status)
                    self.send_header("content-type", "application/json")
                    length = len(resp.raw) if resp.length is None else resp.length
                    self.send_header("content-length", str(length))
                    self.send_header("connection", "close")
                    self.end_headers()
                    self.wfile.write(resp.raw)
                    self.close_connection = True
                    return
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("connection", "close")
                self.end_headers()
                for chunk in resp.events:
                    try:
                        self.wfile.write(chunk)
                        self.wfile.flush()
                    except (BrokenPipeError, ConnectionResetError):
                        return
                if resp.linger:
                    time.sleep(resp.linger)
                self.close_connection = True

            def _json(
                self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

        self.server = _Server(("127.0.0.1", port), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def scripted(self, body: dict[str, Any]) -> Response:
        """For driving the app by hand: the reply depends on the last message."""
        last = (body.get("messages") or [{}])[-1]
        content = last.get("content")
        if isinstance(content, list) and any(b.get("type") == "tool_result" for b in content):
            results = [str(b.get("content")) for b in content if b.get("type") == "tool_result"]
            return Response("sse", text_events("The tool said: " + "; ".join(results)))
        text = (
            content
            if isinstance(content, str)
            else " ".join(str(b.get("text", "")) for b in content or [])
        )
        low = text.lower()
        for status, etype in (
            (400, "invalid_request_error"),
            (401, "authentication_error"),
            (404, "not_found_error"),
            (413, "request_too_large"),
            (429, "rate_limit_error"),
            (500, "api_error"),
            (529, "overloaded_error"),
        ):
            if f"fail{status}" in low:
                return error(
                    status,
                    etype,
                    f"scripted {etype}",
                    **({"retry-after": "20"} if status == 429 else {}),
                )
        if "cut" in low:
            return Response(
                "sse", text_events("This reply will be cut off before the end", cut=True)
            )
        if "slow" in low:
            return Response("sse", text_events("a slow reply"), delay=5)
        if low.startswith("calc"):
            return Response(
                "sse",
                tool_events(
                    "calculator",
                    {"expression": text.split(" ", 1)[-1]},
                    f"toolu_fake_{len(self.requests)}",
                ),
            )
        return Response("sse", text_events(f"Fake API reply to: {text[:80]}"))

    def queue(self, *responses: Response) -> None:
        with self._lock:
            self._queue.extend(responses)

    def start(self) -> FakeAPI:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def running() -> Iterator[FakeAPI]:
    api = FakeAPI().start()
    try:
        yield api
    finally:
        api.stop()


if __name__ == "__main__":
    # python tests/support/fake_api.py 8765  → ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=x ctxview
    import sys

    server = FakeAPI(int(sys.argv[1]) if len(sys.argv) > 1 else 8765, smart=True).start()
    print(
        f"fake Messages API on {server.url} (say 'calc 6*7', 'cut', 'slow', 'fail529', ...)",
        flush=True,
    )
    try:
        server.thread.join()
    except KeyboardInterrupt:
        server.stop()
