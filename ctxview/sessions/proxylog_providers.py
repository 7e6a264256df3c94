"""How a conversation of OpenAI's or Gemini's API opens from a proxy recording, and how one of
their recorded requests is checked.

As for the Messages API (:func:`ctxview.sessions.proxylog.conversation_session`), a conversation
opens as its longest request sent it plus that request's reply; here the request body, with the
reply's wire items appended in the provider's own shape, goes through the provider's reader
(Chat Completions: ``messages`` + ``choices[0].message``; Responses: ``input`` + ``output``;
Gemini: ``contents`` + ``candidates[0].content``), one canonical message per wire item with the
item in ``meta["wire"]``. A Responses request that continues a stored response
(``previous_response_id``) sends only its new items: its whole conversation is the recorded
request it continues, that request's reply, then its own items (the chain rebuilt, as far as the
recording holds it). Each reply's usage (in the canonical counts: the provider's usage rule),
model, stop reason and time go on its first message. A Gemini conversation carries its longest
request's route (``proxy_record.route_of``: Vertex AI or the Gemini API, streamed or not), which
its token estimate bills by.

Headless.
"""

from __future__ import annotations

import json
from typing import Any

from ctxview.sessions.model import LoadedSession, SessionError
from ctxview.sessions.proxy_record import (
    RequestRecord,
    conversation_items,
    model_in_path,
    route_of,
)
from ctxview.textfmt import plural

#: the request body's key that holds each endpoint's conversation
ITEMS_KEY = {
    "chat_completions": "messages",
    "responses": "input",
    "generate_content": "contents",
    "stream_generate_content": "contents",
}


def reply_items(rec: RequestRecord) -> list[Any]:
    """The wire items a whole reply adds to its conversation (none for a cut or failed one)."""
    reply = rec.response
    if not rec.complete or not isinstance(reply, dict):
        return []
    if rec.endpoint == "chat_completions":
        choices = reply.get("choices")
        first = choices[0] if isinstance(choices, list) and choices else None
        msg = first.get("message") if isinstance(first, dict) else None
        return [msg] if isinstance(msg, dict) else []
    if rec.endpoint == "responses":
        output = reply.get("output")
        return [it for it in output if isinstance(it, dict)] if isinstance(output, list) else []
    candidates = reply.get("candidates")
    first = candidates[0] if isinstance(candidates, list) and candidates else None
    content = first.get("content") if isinstance(first, dict) else None
    if isinstance(content, dict) and content.get("parts"):
        return [{"role": content.get("role") or "model", "parts": content["parts"]}]
    return []


def _read(endpoint: str, path: str, body: dict[str, Any]) -> LoadedSession:
    """The provider's reader of a request body of this endpoint."""
    if endpoint == "chat_completions":
        from ctxview.sessions.openai_bodies import read_chat

        return read_chat(path, body)
    if endpoint == "responses":
        from ctxview.sessions.openai_bodies import read_responses

        return read_responses(path, body)
    from ctxview.sessions.gemini import read_request

    return read_request(path, json.dumps(body), body)


def check_request(rec: RequestRecord) -> tuple[tuple[str, ...], str, int | None] | None:
    """(problems, verdict, estimated tokens) of one recorded request of another provider, read
    by its reader and checked by its provider's rules in its API's words; None when its body is
    not one of theirs."""
    from ctxview.core.protocol import check_protocol
    from ctxview.core.providers.registry import provider

    if rec.endpoint not in ITEMS_KEY or not isinstance(rec.request, dict):
        return None
    try:
        session = _read(rec.endpoint, rec.path, rec.request)
    except ValueError as exc:
        return (f"malformed request ({exc})",), "malformed", None
    p = provider(rec.provider)
    model = session.model or model_in_path(rec.path)
    rules = p.rules_for(session.format, session.request_params, model)
    found = check_protocol(session.messages, session.system, rules=rules)
    problems = tuple(x.message for x in found if x.severity == "error")
    n = len(problems)
    verdict = f"✗ {n} problem{'s' if n != 1 else ''}" if problems else "✓ valid"
    route = route_of(rec.path) if rec.provider == "gemini" else None
    tokens = p.tokens.of(model, session.format, route).request_tokens(
        session.messages, session.system, session.tools, session.request_params
    )
    return problems, verdict, tokens


def _chains(records: list[RequestRecord]) -> dict[int, list[Any]]:
    """Each model call's whole conversation, by record id: its items, after the items and
    reply of the stored response it continues (``previous_response_id``) when recorded."""
    whole: dict[int, list[Any]] = {}
    by_response: dict[str, RequestRecord] = {}
    for rec in records:
        items = conversation_items(rec.endpoint, rec.request)
        if items is None:
            continue
        body = rec.request if isinstance(rec.request, dict) else {}
        previous = body.get("previous_response_id") if rec.endpoint == "responses" else None
        before = by_response.get(previous) if isinstance(previous, str) else None
        if before is not None and before.id in whole:
            items = [*whole[before.id], *reply_items(before), *items]
        whole[rec.id] = items
        reply = rec.response if isinstance(rec.response, dict) else {}
        if rec.endpoint == "responses" and isinstance(reply.get("id"), str):
            by_response[reply["id"]] = rec
    return whole


def _positions(session: LoadedSession, wire: list[Any]) -> list[int | None]:
    """For each wire item, the index of the canonical message read from it (None: it became
    something else, such as a Chat Completions system prompt)."""
    out: list[int | None] = []
    i = 0
    for item in wire:
        k = i
        while k < len(session.metas) and session.metas[k].get("wire") != item:
            k += 1
        if k < len(session.metas):
            out.append(k)
            i = k + 1
        else:
            out.append(None)
    return out


def _same(endpoint: str, path: str, replies: list[Any], wire: list[Any], n: int) -> bool:
    """Whether the conversation goes on from these reply items at ``wire[n]``: the very items,
    or items a client wrote its own way that read as the same messages (a Chat Completions
    client sends the reply back without its ``refusal: null``, say)."""
    sent = wire[n : n + len(replies)]
    if sent == replies:
        return True
    if len(sent) != len(replies):
        return False
    key = ITEMS_KEY[endpoint]
    try:
        return (
            _read(endpoint, path, {key: replies}).messages
            == _read(endpoint, path, {key: sent}).messages
        )
    except ValueError:
        return False


def conversation_session(
    path: str, records: list[RequestRecord], number: int, of: int, upstream: str
) -> LoadedSession:
    """One conversation of OpenAI's or Gemini's API as a session (see the module docstring)."""
    from ctxview.core.providers.registry import provider

    chains = _chains(records)
    calls = [r for r in records if r.id in chains and isinstance(r.request, dict)]
    if not calls:
        raise SessionError(
            f"{path}: conversation #{number}: none of its {plural(len(records), 'request')} holds "
            "messages to show"
        )
    spine = max(reversed(calls), key=lambda r: len(chains[r.id]))
    endpoint = spine.endpoint
    assert isinstance(spine.request, dict)
    wire = [*chains[spine.id], *reply_items(spine)]
    body = {k: v for k, v in spine.request.items() if k != "previous_response_id"}
    body[ITEMS_KEY[endpoint]] = wire
    try:
        session = _read(endpoint, path, body)
    except ValueError as exc:
        raise SessionError(f"{path}: conversation #{number}: {exc}") from None
    if spine.provider == "gemini":
        if session.model is None:
            session.model = model_in_path(spine.path)
        # the longest request's route: what its tokens are counted by (Vertex AI's streamed
        # usage leaves the function declarations out)
        session.route = route_of(spine.path)
    at = _positions(session, wire)
    counts = provider(spine.provider).usage
    for rec in calls:
        n = len(chains[rec.id])
        mine = chains[rec.id]
        if n > len(chains[spine.id]) or mine != wire[:n]:
            continue  # not on the conversation's longest path
        for k in range(n):
            if at[k] is not None:
                session.metas[at[k]].setdefault("timestamp", rec.started_at)  # type: ignore[index]
        replies = reply_items(rec)
        if not replies or at[n] is None or not _same(endpoint, path, replies, wire, n):
            continue  # cut, failed, or the conversation went on from a retry's reply
        meta = session.metas[at[n]]  # type: ignore[index]
        meta.update({"timestamp": rec.started_at, "request": rec.id})
        counted = counts(rec.usage) if rec.usage else None
        if counted is not None:
            meta["usage"] = counted.as_meta()
        reply = rec.response if isinstance(rec.response, dict) else {}
        named = reply.get("model") or reply.get("modelVersion")
        if isinstance(named, str):
            meta["model"] = named
        if rec.stop_reason:
            meta["stop_reason"] = rec.stop_reason
    # the API the conversation went to stays known when the file is "proxy": its body is
    # written, its tokens estimated and a saved copy reopened in that API's form
    session.wire_format = session.wire_format or session.format
    session.format = "proxy"
    session.title = (
        f"proxy recording: conversation #{number} of {of}, "
        f"{len(records)} request{'s' if len(records) != 1 else ''}"
        + (f" to {upstream}" if upstream else "")
    )
    session.exchanges = [r.to_dict() for r in records]
    session.conversation = number
    return session
