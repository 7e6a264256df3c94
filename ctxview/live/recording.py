"""What the proxy records, and the ctxview session document a recording is saved as.

Headless (no Textual, no aiohttp). A recording is a ctxview session (docs/session-format.md)
whose transcript is the newest ``POST /v1/messages`` request's messages plus its reply, with one
extra top-level key, ``requests``: every request the proxy saw, in order (see the "Recordings"
section of the format document). Credential headers are never part of a record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ctxview.core.protocol import check_protocol
from ctxview.core.tokens import estimate_message, estimate_system, estimate_tools
from ctxview.sessions.store import document, record_item
from ctxview.sessions.validate import message_problem, validate_system

#: request headers a record keeps (an allow-list: anything else, credentials above all, is dropped)
RECORDED_REQUEST_HEADERS = ("anthropic-version", "anthropic-beta", "content-type")
#: response headers a record keeps
RECORDED_RESPONSE_HEADERS = ("content-type", "request-id", "retry-after", "x-should-retry")


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass
class RequestRecord:
    """One request through the proxy and what came back."""

    id: int
    started_at: str
    method: str
    path: str
    request: Any = None
    request_headers: dict[str, str] = field(default_factory=dict)
    status: int | None = None
    streamed: bool = False
    #: the assembled message (streamed or JSON), or the JSON body of any other response
    response: Any = None
    usage: dict[str, Any] | None = None
    stop_reason: str | None = None
    #: false for a stream cut before message_stop, an abandoned response, an error
    complete: bool = False
    #: why an incomplete response is incomplete (None when complete)
    incomplete: str | None = None
    #: the API error ({type, message}) of a 4xx/5xx or an SSE error event; the proxy's own for 502
    error: dict[str, Any] | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    first_byte_ms: float | None = None
    duration_ms: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started_at": self.started_at,
            "method": self.method,
            "path": self.path,
            "request_headers": dict(self.request_headers),
            "request": self.request,
            "response": {
                "status": self.status,
                "streamed": self.streamed,
                "complete": self.complete,
                "incomplete": self.incomplete,
                "stop_reason": self.stop_reason,
                "usage": self.usage,
                "error": self.error,
                "headers": dict(self.response_headers),
                "body": self.response,
                "first_byte_ms": self.first_byte_ms,
                "duration_ms": self.duration_ms,
            },
        }


def is_messages_call(rec: RequestRecord) -> bool:
    path = rec.path.split("?", 1)[0].rstrip("/")
    return rec.method == "POST" and path.endswith("/v1/messages")


def _valid_messages(body: Any) -> list[dict[str, Any]] | None:
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    msgs = body["messages"]
    if any(message_problem(m) is not None for m in msgs):
        return None
    return list(msgs)


def _system_of(body: dict[str, Any]) -> Any:
    system = body.get("system", "")
    try:
        validate_system(system, "system")
    except ValueError:
        return ""
    return "" if system is None else system


def session_document(
    records: list[RequestRecord], *, upstream: str, with_requests: bool = True
) -> dict[str, Any]:
    """The recording as a ctxview session: the newest valid messages call is the transcript.
    Without ``with_requests`` the ``requests`` list is left out (see :class:`RecordingWriter`)."""
    last: RequestRecord | None = None
    messages: list[dict[str, Any]] = []
    for rec in reversed(records):
        if is_messages_call(rec):
            found = _valid_messages(rec.request)
            if found is not None:
                last, messages = rec, found
                break
    metas: list[dict[str, Any]] = [{} for _ in messages]
    settings: dict[str, Any] = {
        "model": None,
        "max_tokens": None,
        "max_context_messages": max(1, len(messages)),
        "strategy": "seed",
        "system_prompt": "",
        "tools": [],
        "as_sent": "proxy",  # opens as it was sent (ctxview.sessions.replay)
    }
    if last is not None:
        body = last.request
        if metas:
            metas[-1]["timestamp"] = last.started_at
        reply = last.response
        if (
            last.complete
            and isinstance(reply, dict)
            and reply.get("role") == "assistant"
            and isinstance(reply.get("content"), list)
            and reply["content"]
            and message_problem({"role": "assistant", "content": reply["content"]}) is None
        ):
            messages.append({"role": "assistant", "content": reply["content"]})
            meta: dict[str, Any] = {"timestamp": last.started_at, "usage": last.usage}
            if last.stop_reason:
                meta["stop_reason"] = last.stop_reason
            if isinstance(reply.get("model"), str):
                meta["model"] = reply["model"]
            metas.append(meta)
        model = body.get("model")
        max_tokens = body.get("max_tokens")
        tools = body.get("tools")
        settings.update(
            model=model if isinstance(model, str) else None,
            max_tokens=max_tokens
            if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0
            else None,
            max_context_messages=max(1, len(messages)),
            system_prompt=_system_of(body),
            tools=tools if isinstance(tools, list) else [],
        )
    return {
        **document(
            title=f"ctxview proxy recording: {len(records)} request(s) to {upstream}",
            settings=settings,
            step=len(messages),
            records=[
                record_item(i, msg, meta, i + 1, None)
                for i, (msg, meta) in enumerate(zip(messages, metas, strict=True))
            ],
            window={"ids": list(range(len(messages))), "cut": False},
            saved_at=now_iso(),
        ),
        **({"requests": [r.to_dict() for r in records]} if with_requests else {}),
    }


REDACTED = "[credential removed by ctxview]"


def _redact(text: str, secrets: set[str]) -> str:
    for secret in secrets:
        if len(secret) >= 8 and secret in text:
            text = text.replace(secret, REDACTED)
    return text


class RecordingWriter:
    """Encodes a growing recording without re-encoding it: a finished record never changes, so
    each is encoded once and kept; a save encodes only the new records and the session part
    (the newest request's messages), then joins. Any credential value seen in a header is
    blanked wherever it occurs (a body that echoes the key, say)."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self._encoded: dict[int, str] = {}
        self._secrets: set[str] = set()

    def encode(self, records: list[RequestRecord], secrets: set[str]) -> bytes:
        if not secrets <= self._secrets:  # a new credential: check what was encoded before it
            self._secrets = set(secrets)
            self._encoded.clear()
        for rec in records:
            if rec.id not in self._encoded:
                self._encoded[rec.id] = _redact(
                    json.dumps(rec.to_dict(), ensure_ascii=False), secrets
                )
        head = session_document(records, upstream=self.upstream, with_requests=False)
        text = _redact(json.dumps(head, ensure_ascii=False, indent=1), secrets)
        assert text.endswith("}")
        body = ",\n".join(self._encoded[r.id] for r in sorted(records, key=lambda r: r.id))
        return (text[:-1] + ',\n "requests": [\n' + body + "\n ]\n}\n").encode("utf-8")


@dataclass(frozen=True)
class RequestSummary:
    """A frozen, display-ready view of one recorded request (what the TUI and --no-tui show)."""

    id: int
    time: str
    method: str
    path: str
    model: str
    status: int | None
    streamed: bool
    complete: bool
    incomplete: str | None
    stop_reason: str | None
    messages: int | None
    estimated_tokens: int | None
    problems: tuple[str, ...]
    verdict: str
    input_tokens: int | None
    output_tokens: int | None
    cache_read: int | None
    cache_write: int | None
    error: str | None
    duration_ms: float | None
    reply_preview: str


def _int(usage: dict[str, Any] | None, key: str) -> int | None:
    v = (usage or {}).get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def summarise(rec: RequestRecord) -> RequestSummary:
    """Window size, protocol verdict and cache usage of one request (text not yet sanitised)."""
    body = rec.request if isinstance(rec.request, dict) else {}
    msgs = body.get("messages") if is_messages_call(rec) else None
    problems: tuple[str, ...] = ()
    n_msgs: int | None = None
    est: int | None = None
    if isinstance(msgs, list):
        n_msgs = len(msgs)
        valid = _valid_messages(body)
        if valid is None:
            problems = ("malformed messages (not checked)",)
            verdict = "malformed"
        else:
            found = check_protocol(valid, body.get("system"))
            problems = tuple(p.message for p in found if p.severity == "error")
            verdict = f"✗ {len(problems)} problem(s)" if problems else "✓ valid"
            est = (
                sum(estimate_message(m) for m in valid)
                + estimate_system(_system_of(body))
                + estimate_tools(body.get("tools"))
            )
    else:
        verdict = "—"
    reply = rec.response if isinstance(rec.response, dict) else {}
    preview = ""
    content = reply.get("content")
    if isinstance(content, list):
        parts = []
        for b in content:
            if isinstance(b, dict):
                if b.get("type") == "text":
                    parts.append(str(b.get("text", "")))
                elif b.get("type") == "tool_use":
                    parts.append(f"[tool_use {b.get('name')}]")
        preview = " ".join(parts)
    err = None
    if rec.error:
        err = f"{rec.error.get('type', 'error')}: {rec.error.get('message', '')}"
    model = body.get("model") if isinstance(body.get("model"), str) else reply.get("model")
    return RequestSummary(
        id=rec.id,
        time=rec.started_at[11:19],
        method=rec.method,
        path=rec.path,
        model=str(model or ""),
        status=rec.status,
        streamed=rec.streamed,
        complete=rec.complete,
        incomplete=rec.incomplete,
        stop_reason=rec.stop_reason,
        messages=n_msgs,
        estimated_tokens=est,
        problems=problems,
        verdict=verdict,
        input_tokens=_int(rec.usage, "input_tokens"),
        output_tokens=_int(rec.usage, "output_tokens"),
        cache_read=_int(rec.usage, "cache_read_input_tokens"),
        cache_write=_int(rec.usage, "cache_creation_input_tokens"),
        error=err,
        duration_ms=rec.duration_ms,
        reply_preview=preview,
    )


def summary_line(s: RequestSummary) -> str:
    """One line for ``--no-tui`` (the caller sanitises it with one_line)."""

    def n(v: int | None) -> str:
        return "-" if v is None else str(v)

    status = "---" if s.status is None else str(s.status)
    kind = "stream" if s.streamed else "json"
    parts = [f"#{s.id} {s.time} {s.method} {s.path} {status} {kind}"]
    if s.model:
        parts.append(s.model)
    if s.messages is not None:
        parts.append(f"{s.messages} msgs ~{n(s.estimated_tokens)} tok {s.verdict}")
    if s.input_tokens is not None or s.output_tokens is not None:
        parts.append(
            f"in {n(s.input_tokens)} out {n(s.output_tokens)} "
            f"cache read {n(s.cache_read)} write {n(s.cache_write)}"
        )
    if s.stop_reason:
        parts.append(f"stop {s.stop_reason}")
    if s.incomplete:
        parts.append(f"INCOMPLETE ({s.incomplete})")
    if s.error:
        parts.append(f"error {s.error}")
    if s.duration_ms is not None:
        parts.append(f"{s.duration_ms:.0f} ms")
    return " · ".join(parts)
