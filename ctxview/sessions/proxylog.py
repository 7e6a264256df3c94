"""Proxy recordings: a log of requests (docs/proxy-recording.md), and how one opens as sessions.

A recording is JSON Lines: a header line (``format: ctxview.proxy-log``), then one line per
request/response exchange, appended as each exchange ends. Requests are grouped into
conversations by their messages (:class:`Conversations`: a request whose messages extend an
earlier request's belongs to that request's conversation); each conversation opens as one
:class:`~ctxview.sessions.model.LoadedSession` of format ``proxy`` whose transcript is the
conversation as its longest request sent it, with each reply's usage and time on it, and whose
``exchanges`` are the conversation's requests as recorded (errors, cut streams and count_tokens
calls included).

This module (with :mod:`ctxview.sessions.proxy_record`, the record itself) is the one definition
of the log's format, of the grouping rule and of a record's display summary: the proxy writes with
it, the readers read with it. A conversation of another provider's API opens through that
provider's reader (:mod:`ctxview.sessions.proxylog_providers`).

Headless: imports neither Textual nor an SDK nor aiohttp.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxview.core.protocol import check_protocol
from ctxview.core.tokens import estimate_message, estimate_system, estimate_tools
from ctxview.sessions.model import REQUEST_OWN_FIELDS, LoadedSession, SessionError
from ctxview.sessions.proxy_record import (
    COUNT_ENDPOINTS,
    ENDPOINT_PROVIDER,
    ENDPOINTS,
    MODEL_CALLS,
    PROVIDERS,
    RequestRecord,
    conversation_items,
    counted_tokens,
    endpoint_of,
    model_in_path,
)
from ctxview.sessions.validate import message_problem, validate_system
from ctxview.textfmt import plural

LOG_FORMAT = "ctxview.proxy-log"
LOG_VERSION = 1

__all__ = [
    "COUNT_ENDPOINTS",
    "ENDPOINTS",
    "ENDPOINT_PROVIDER",
    "LOG_FORMAT",
    "LOG_VERSION",
    "MODEL_CALLS",
    "PROVIDERS",
    "Conversations",
    "RequestRecord",
    "RequestSummary",
    "conversation_items",
    "endpoint_of",
    "model_in_path",
    "open_recording",
    "parse_log",
    "summarise",
    "summary_line",
]


# -- conversations ---------------------------------------------------------------------------
def _message_digest(message: Any) -> bytes:
    data = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.blake2b(data.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class Conversations:
    """Assigns each request's messages to a conversation: a request whose messages extend (or
    repeat: a retry) the messages of an earlier request of the same provider joins that request's
    conversation (the longest such earlier request decides); any other starts a new one. Only a
    digest of each request's message prefix is kept (16 bytes a message while hashing, one entry
    a request). A Responses request that continues a stored response (``previous_response_id``)
    sends only its new items: it joins the conversation of the recorded response it names."""

    def __init__(self) -> None:
        self._ends: dict[tuple[int, bytes], int] = {}
        #: Responses API response id -> its conversation
        self._responses: dict[str, int] = {}
        self.count = 0

    def key(self, messages: Any, provider: str = "anthropic") -> int | None:
        """The conversation number (1, 2, …) of a request with these ``messages``; None when
        they are not a non-empty list."""
        if not isinstance(messages, list) or not messages:
            return None
        chain: list[bytes] = []
        h = hashlib.blake2b(digest_size=16)
        if provider != "anthropic":  # the same words sent to two APIs are two conversations
            h.update(provider.encode())
        for m in messages:
            h.update(_message_digest(m))
            chain.append(h.digest())
        found: int | None = None
        for j in range(len(chain), 0, -1):
            found = self._ends.get((j, chain[j - 1]))
            if found is not None:
                break
        if found is None:
            self.count += 1
            found = self.count
        self._ends[(len(chain), chain[-1])] = found
        return found

    def assign(self, rec: RequestRecord) -> int | None:
        """The conversation of a record (by its endpoint's items, or the stored response its
        request continues), remembered for the requests after it."""
        body = rec.request if isinstance(rec.request, dict) else {}
        previous = body.get("previous_response_id") if rec.endpoint == "responses" else None
        number: int | None = None
        if isinstance(previous, str) and previous in self._responses:
            number = self._responses[previous]
        else:
            number = self.key(conversation_items(rec.endpoint, body), rec.provider)
        if number is not None and rec.endpoint == "responses" and isinstance(rec.response, dict):
            rid = rec.response.get("id")
            if isinstance(rid, str):
                self._responses[rid] = number
        return number


# -- reading a recording ---------------------------------------------------------------------
def is_proxy_log(first_line: str) -> bool:
    """Whether a file whose first line is this is a proxy recording (its header)."""
    if LOG_FORMAT not in first_line:
        return False
    try:
        head = json.loads(first_line)
    except ValueError:
        return False
    return isinstance(head, dict) and head.get("format") == LOG_FORMAT


def _header(path: str, line_no: int, head: dict[str, Any]) -> None:
    version = head.get("version")
    if version != LOG_VERSION:
        newer = isinstance(version, int) and not isinstance(version, bool) and version > 1
        raise SessionError(
            f"{path}: line {line_no}: "
            + (
                f"version {version}: written by a newer ctxview (this one reads version 1)"
                if newer
                else f"version: expected {LOG_VERSION}, got {version!r}"[:160]
            )
        )


def parse_log(path: str, text: str) -> tuple[list[RequestRecord], list[int], dict[str, str]]:
    """(records in file order, 1-based numbers of lines that could not be read, each provider's
    upstream as the newest header names it: ``upstream`` Anthropic's, ``upstreams`` every one) of a
    recording's text. A line cut by a crash (the last one) is skipped and named."""
    records: list[RequestRecord] = []
    bad: list[int] = []
    upstreams: dict[str, str] = {}
    for n, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):
            bad.append(n)
            continue
        if not isinstance(item, dict):
            bad.append(n)
            continue
        if item.get("format") == LOG_FORMAT:
            _header(path, n, item)
            if isinstance(item.get("upstream"), str):
                upstreams["anthropic"] = item["upstream"]
            named = item.get("upstreams")
            if isinstance(named, dict):
                upstreams.update((k, v) for k, v in named.items() if isinstance(v, str))
            continue
        try:
            records.append(RequestRecord.from_dict(item, f"line {n}"))
        except ValueError:
            bad.append(n)
    return records, bad, upstreams


def valid_messages(body: Any) -> list[dict[str, Any]] | None:
    """A request body's messages when every one is a well-formed message, else None."""
    if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
        return None
    msgs = body["messages"]
    if any(message_problem(m) is not None for m in msgs):
        return None
    return list(msgs)


def system_of(body: dict[str, Any]) -> Any:
    """A request body's system prompt when well formed, else ``""``."""
    system = body.get("system", "")
    try:
        validate_system(system, "system")
    except ValueError:
        return ""
    return "" if system is None else system


def _reply_of(rec: RequestRecord) -> dict[str, Any] | None:
    reply = rec.response
    if (
        rec.complete
        and isinstance(reply, dict)
        and reply.get("role") == "assistant"
        and isinstance(reply.get("content"), list)
        and reply["content"]
        and message_problem({"role": "assistant", "content": reply["content"]}) is None
    ):
        return {"role": "assistant", "content": reply["content"]}
    return None


def _first_prompt(messages: list[Any]) -> str:
    """The first user text of a conversation's items, in any provider's shape (a message's
    string content or its first text part; a Gemini content's first text part)."""
    for m in messages:
        if not isinstance(m, dict) or m.get("role") not in (None, "user"):
            continue
        content = m.get("content", m.get("parts"))
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            for b in content:
                text = b.get("text") if isinstance(b, dict) else None
                if isinstance(text, str) and b.get("type") in (None, "text", "input_text"):
                    return text
    return ""


def group(records: list[RequestRecord]) -> dict[int, list[RequestRecord]]:
    """Records by conversation number (keys assigned again, in file order, by the one rule)."""
    conversations = Conversations()
    out: dict[int, list[RequestRecord]] = {}
    for rec in records:
        rec.conversation = conversations.assign(rec)
        if rec.conversation is not None:
            out.setdefault(rec.conversation, []).append(rec)
    return out


def conversation_session(
    path: str, records: list[RequestRecord], number: int, of: int, upstream: str
) -> LoadedSession:
    """One conversation as a session: the messages its longest request sent (the newest of the
    longest), plus that request's reply; each reply's usage, model and time on its message;
    every request of the conversation, as recorded, in ``exchanges``."""
    calls = [
        (r, msgs)
        for r in records
        if r.endpoint == "messages" and (msgs := valid_messages(r.request)) is not None
    ]
    if not calls:
        raise SessionError(
            f"{path}: conversation #{number}: none of its {plural(len(records), 'request')} holds "
            "well-formed messages to show"
        )
    spine_rec, spine = max(reversed(calls), key=lambda c: len(c[1]))
    messages = list(spine)
    reply = _reply_of(spine_rec)
    if reply is not None:
        messages.append(reply)
    metas: list[dict[str, Any]] = [{} for _ in messages]
    last_body = spine_rec.request
    assert isinstance(last_body, dict)
    final_system, final_tools = system_of(last_body), last_body.get("tools") or []
    digests = [_message_digest(m) for m in messages]
    for rec, msgs in calls:
        n = len(msgs)
        if n > len(messages) or any(_message_digest(m) != digests[i] for i, m in enumerate(msgs)):
            continue  # not on the conversation's longest path
        for i in range(n):
            metas[i].setdefault("timestamp", rec.started_at)
        if n < len(messages) and messages[n].get("role") == "assistant":
            if _reply_of(rec) is None:
                continue  # the reply the conversation went on with came from a retry
            body = rec.request
            assert isinstance(body, dict)
            meta: dict[str, Any] = {"timestamp": rec.started_at, "request": rec.id}
            if rec.usage:
                meta["usage"] = rec.usage
            if isinstance(rec.response, dict) and isinstance(rec.response.get("model"), str):
                meta["model"] = rec.response["model"]
            if rec.stop_reason:
                meta["stop_reason"] = rec.stop_reason
            # the request model breaks the cache where these change from one request to the next
            if system_of(body) != final_system:
                meta["system"] = system_of(body)
            if (body.get("tools") or []) != final_tools:
                meta["tools"] = body.get("tools") or []
            metas[n] = meta
    model = last_body.get("model")
    max_tokens = last_body.get("max_tokens")
    return LoadedSession(
        path,
        "proxy",
        messages,
        metas,
        system=final_system,
        tools=final_tools if isinstance(final_tools, list) else [],
        model=model if isinstance(model, str) else None,
        max_tokens=max_tokens
        if isinstance(max_tokens, int) and not isinstance(max_tokens, bool) and max_tokens > 0
        else None,
        title=f"proxy recording: conversation #{number} of {of}, "
        f"{len(records)} request{'s' if len(records) != 1 else ''}"
        + (f" to {upstream}" if upstream else ""),
        request_params={k: v for k, v in last_body.items() if k not in REQUEST_OWN_FIELDS},
        exchanges=[r.to_dict() for r in records],
        conversation=number,
    )


def open_recording(
    path: str,
    records: list[RequestRecord],
    bad: list[int],
    upstreams: Mapping[str, str],
    number: int | None,
) -> LoadedSession:
    """Conversation ``number`` of a recording (default: the one with the most requests, the
    first of those), with every conversation listed in ``conversations``."""
    groups = group(records)
    if not groups:
        raise SessionError(
            f"{path}: a proxy recording of {len(records)} request"
            f"{'s' if len(records) != 1 else ''}, none of them with messages (nothing to open)"
        )
    listing = []
    for k, recs in groups.items():
        longest = max(
            (
                (valid_messages(r.request) if r.provider == "anthropic" else None)
                or conversation_items(r.endpoint, r.request)
                or []
                for r in recs
            ),
            key=len,
            default=[],
        )
        listing.append(
            {
                "conversation": k,
                "requests": len(recs),
                "messages": len(longest),
                "first_prompt": _first_prompt(longest)[:200],
                "started_at": recs[0].started_at,
            }
        )
    if number is None:
        number = max(groups, key=lambda k: (len(groups[k]), -k))
    elif number not in groups:
        raise SessionError(
            f"{path}#{number}: no such conversation (this recording holds "
            f"{len(groups)}: #1–#{len(groups)})"
            if len(groups) > 1
            else f"{path}#{number}: no such conversation (this recording holds one: #1)"
        )
    chosen = groups[number]
    if chosen[0].provider != "anthropic":
        from ctxview.sessions import proxylog_providers

        session = proxylog_providers.conversation_session(
            path, chosen, number, len(groups), upstreams.get(chosen[0].provider, "")
        )
    else:
        session = conversation_session(
            path, chosen, number, len(groups), upstreams.get("anthropic", "")
        )
    session.conversations = listing
    session.skipped_lines = bad
    others = sum(1 for r in records if r.conversation is None)
    if len(groups) > 1:
        session.warnings.append(
            f"this recording holds {len(groups)} conversations; showing #{number} "
            f"(open another as FILE#N; `ctxview requests FILE` lists them)"
        )
    if others:
        session.warnings.append(
            f"{others} request{'s' if others != 1 else ''} without messages (other endpoints) "
            "belong to no conversation"
        )
    return session


# -- a record in one line ----------------------------------------------------------------------
@dataclass(frozen=True)
class RequestSummary:
    """A frozen, display-ready view of one recorded request (what the TUI and --no-tui show)."""

    id: int
    time: str
    method: str
    path: str
    endpoint: str
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
    conversation: int | None = None
    #: count_tokens: the input tokens the API counted
    counted_tokens: int | None = None
    #: whose API it went to
    provider: str = "anthropic"


def _int(usage: dict[str, Any] | None, key: str) -> int | None:
    v = (usage or {}).get(key)
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _reply_preview(rec: RequestRecord) -> str:
    """The reply's text and tool calls, in one line's words, per provider's response shape."""
    reply = rec.response if isinstance(rec.response, dict) else {}
    parts: list[str] = []
    if rec.endpoint == "chat_completions":
        choices = reply.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else {}
        msg = first.get("message") if isinstance(first, dict) else None
        if isinstance(msg, dict):
            if isinstance(msg.get("content"), str):
                parts.append(msg["content"])
            for tc in _items(msg.get("tool_calls")):
                fn = tc.get("function") if isinstance(tc, dict) else None
                if isinstance(fn, dict):
                    parts.append(f"[tool_call {fn.get('name')}]")
    elif rec.endpoint == "responses":
        for item in _items(reply.get("output")):
            if not isinstance(item, dict):
                continue
            if item.get("type") == "message":
                for c in _items(item.get("content")):
                    if isinstance(c, dict) and isinstance(c.get("text"), str):
                        parts.append(c["text"])
            elif item.get("type") == "function_call":
                parts.append(f"[function_call {item.get('name')}]")
    elif rec.endpoint in ("generate_content", "stream_generate_content"):
        candidates = reply.get("candidates")
        first = candidates[0] if isinstance(candidates, list) and candidates else {}
        content = first.get("content") if isinstance(first, dict) else None
        for part in _items(content.get("parts")) if isinstance(content, dict) else []:
            if not isinstance(part, dict) or part.get("thought"):
                continue
            if isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif isinstance(part.get("functionCall"), dict):
                parts.append(f"[functionCall {part['functionCall'].get('name')}]")
    else:
        content = reply.get("content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict):
                if b.get("type") == "text":
                    parts.append(str(b.get("text", "")))
                elif b.get("type") == "tool_use":
                    parts.append(f"[tool_use {b.get('name')}]")
    return " ".join(parts)


def _usage_figures(
    rec: RequestRecord,
) -> tuple[int | None, int | None, int | None, int | None]:
    """(input, output, cache read, cache write) of the recorded usage: Anthropic's as the API
    wrote them; another provider's in the canonical counts (its provider's usage rule: input is
    the uncached part, as Anthropic counts it), or none while that provider is not known."""
    if rec.provider == "anthropic":
        u = rec.usage
        return (
            _int(u, "input_tokens"),
            _int(u, "output_tokens"),
            _int(u, "cache_read_input_tokens"),
            _int(u, "cache_creation_input_tokens"),
        )
    if not rec.usage:
        return None, None, None, None
    from ctxview.core.providers.registry import provider

    try:
        counted = provider(rec.provider).usage(rec.usage)
    except KeyError:
        return None, None, None, None
    if counted is None:
        return None, None, None, None
    return counted.uncached, counted.output, counted.cache_read, counted.cache_write


def summarise(rec: RequestRecord) -> RequestSummary:
    """Window size, protocol verdict and cache usage of one request (text not yet sanitised)."""
    body = rec.request if isinstance(rec.request, dict) else {}
    problems: tuple[str, ...] = ()
    n_msgs: int | None = None
    est: int | None = None
    verdict = "—"
    if rec.provider == "anthropic":
        msgs = body.get("messages") if rec.endpoint in ("messages", "count_tokens") else None
        if isinstance(msgs, list):
            n_msgs = len(msgs)
            valid = valid_messages(body)
            if valid is None:
                problems = ("malformed messages (not checked)",)
                verdict = "malformed"
            else:
                found = check_protocol(valid, body.get("system"))
                problems = tuple(p.message for p in found if p.severity == "error")
                n = len(problems)
                verdict = f"✗ {n} problem{'s' if n != 1 else ''}" if problems else "✓ valid"
                est = (
                    sum(estimate_message(m) for m in valid)
                    + estimate_system(system_of(body))
                    + estimate_tools(body.get("tools"))
                )
    else:
        from ctxview.sessions.proxylog_providers import check_request

        items = conversation_items(rec.endpoint, body)
        n_msgs = len(items) if items is not None else None
        checked = check_request(rec) if items is not None else None
        if checked is not None:
            problems, verdict, est = checked
    reply = rec.response if isinstance(rec.response, dict) else {}
    err = None
    if rec.error:
        err = f"{rec.error.get('type', 'error')}: {rec.error.get('message', '')}"
    model = body.get("model") if isinstance(body.get("model"), str) else None
    if not model and rec.provider == "gemini":
        model = model_in_path(rec.path)
    if not model:
        named = reply.get("model") or reply.get("modelVersion")
        model = named if isinstance(named, str) else ""
    counted = counted_tokens(rec.endpoint, reply) if rec.complete else None
    in_tok, out_tok, read, write = _usage_figures(rec)
    return RequestSummary(
        id=rec.id,
        time=rec.started_at[11:19],
        method=rec.method,
        path=rec.path,
        endpoint=rec.endpoint,
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
        input_tokens=in_tok,
        output_tokens=out_tok,
        cache_read=read,
        cache_write=write,
        error=err,
        duration_ms=rec.duration_ms,
        reply_preview=_reply_preview(rec),
        conversation=rec.conversation,
        counted_tokens=counted,
        provider=rec.provider,
    )


def recorded_counts(exchanges: list[dict[str, Any]]) -> str:
    """``16 requests (2 failed, 1 incomplete, 1 count_tokens)``: what a conversation's recorded
    requests came to (the ``requests`` command and the TUI's Requests view say it so)."""
    n = len(exchanges)
    failed = sum(1 for e in exchanges if e.get("error"))
    cut = sum(1 for e in exchanges if e.get("incomplete") and not e.get("error"))
    counts = sum(1 for e in exchanges if e.get("endpoint") in COUNT_ENDPOINTS)
    return (
        f"{n} request{'s' if n != 1 else ''} ({failed} failed, {cut} incomplete, "
        f"{counts} count_tokens)"
    )


def kind_of(s: RequestSummary) -> str:
    """``stream``, ``json`` or ``count`` (a call that counts tokens: Anthropic's count_tokens,
    OpenAI's input_tokens, Gemini's countTokens)."""
    if s.endpoint in COUNT_ENDPOINTS:
        return "count"
    return "stream" if s.streamed else "json"


def summary_line(s: RequestSummary) -> str:
    """One line for ``--no-tui`` and ``requests`` (the caller sanitises it with one_line)."""

    def n(v: int | None) -> str:
        return "-" if v is None else str(v)

    status = "---" if s.status is None else str(s.status)
    parts = [f"#{s.id} {s.time} {s.method} {s.path} {status} {kind_of(s)}"]
    if s.provider != "anthropic":
        parts.append(s.provider)
    if s.conversation is not None:
        parts.append(f"conversation {s.conversation}")
    if s.model:
        parts.append(s.model)
    if s.messages is not None:
        msgs = f"{s.messages} message{'s' if s.messages != 1 else ''}"
        if s.estimated_tokens is None and s.verdict == "—":
            parts.append(msgs)  # (a provider whose requests are not checked here)
        else:
            parts.append(f"{msgs} ~{n(s.estimated_tokens)} tok {s.verdict}")
    if s.counted_tokens is not None:
        parts.append(f"counted {s.counted_tokens} input tokens")
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
