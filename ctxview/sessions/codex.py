"""Codex CLI sessions: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``.

Each line is ``{timestamp, type, payload}``:

* ``session_meta``: the session (its ``base_instructions`` / ``instructions`` are the system
  prompt);
* ``turn_context``: the settings of the turn that follows (its ``model`` is the model of the
  responses after it);
* ``response_item``: one Responses API item (a message, a function call or its output, a
  reasoning item, a built-in tool call ...): ONE canonical message each
  (:func:`ctxview.core.providers.openai_wire.responses_item`), its item kept in
  ``meta["wire"]``;
* ``event_msg``: what the CLI showed; its ``token_count`` holds the usage of the response that
  just ended (``last_token_usage``, repeated while ``total_token_usage`` stays the same), the
  recorded usage of that request; the others repeat response items (``user_message``,
  ``agent_message``, ``agent_reasoning``) or mark the task and are not messages;
* ``compacted``: a compaction: the conversation goes on from its ``replacement_history`` (read
  as messages, the first marked as the compaction's start), or from its summary ``message``.
  The ``token_count`` Codex records right after it, with no input, is its estimate of the new
  history, not a response's usage: what the history holds beyond the items shown (the summary,
  sealed) is kept on each of its messages (:func:`compaction_hidden`).

One API response is a run of assistant items (reasoning, calls, a message): its first item
carries the response's usage and starts a request; the others are marked ``same_response``.
Lines that are not records, or records of an unknown type, are skipped with the reason.

The oldest rollouts (Codex CLI of mid 2025, before the envelope) hold no ``{type, payload}``
records: the first line is the session's meta itself (``{id, timestamp, instructions, git}``),
``{"record_type": "state"}`` lines mark saved state, and every other line is a bare Responses
item. Such a file is read as if each line had its envelope (:func:`is_legacy_header`); it has no
turn context (no model) and no ``token_count`` (no recorded usage).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctxview.core.compaction import COMPACTION_HIDDEN, KEEPS_HISTORY, RESULTS_UNBILLED
from ctxview.core.providers.base import RECORDED_CARRY
from ctxview.core.providers.openai import CODEX, usage
from ctxview.core.providers.openai_tokens import search_results, server_tool_call
from ctxview.core.providers.openai_wire import responses_item
from ctxview.sessions.model import LoadedSession, SessionError

#: the record types of a rollout line (a tuple: a line's ``type`` may be any JSON value, and a
#: list or an object cannot be looked up in a set)
RECORD_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
#: the tool a Codex agent starts a sub-agent with
SPAWN_TOOL = "spawn_agent"
#: the meta key of a response that ran a server-side tool (its name): the API billed that
#: response's request for the tool's results, which the rollout does not hold
SERVER_TOOL_RUN = "server_tool_run"


def is_codex_record(record: Mapping[str, Any]) -> bool:
    """A rollout line's record: a known ``type`` and an object ``payload`` (or the meta line of
    the oldest rollouts, :func:`is_legacy_header`)."""
    return (
        record.get("type") in RECORD_TYPES and isinstance(record.get("payload"), Mapping)
    ) or is_legacy_header(record)


#: the keys of the meta line of the oldest rollouts (Codex's ``SessionMeta`` with its git info)
_LEGACY_HEADER_KEYS = frozenset(
    ("id", "timestamp", "instructions", "git", "cwd", "originator", "cli_version")
)


def is_legacy_header(record: Mapping[str, Any]) -> bool:
    """The first line of a rollout written before the ``{timestamp, type, payload}`` envelope:
    the session's meta itself, its ``id`` and ``timestamp`` strings and no key but the meta's."""
    return (
        isinstance(record.get("id"), str)
        and isinstance(record.get("timestamp"), str)
        and _LEGACY_HEADER_KEYS.issuperset(record)
    )


def _enveloped(records: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """The records of an oldest-form rollout in today's form: its meta line as ``session_meta``,
    each bare item as a ``response_item`` (its ``timestamp``, if it has one, kept as the
    record's); the ``record_type`` state lines are markers, not records, and are left out."""
    out: list[tuple[int, dict[str, Any]]] = []
    for k, (n, rec) in enumerate(records):
        if k == 0:
            out.append((n, {"type": "session_meta", "timestamp": rec["timestamp"], "payload": rec}))
        elif "record_type" in rec and "type" not in rec:
            continue
        elif "payload" not in rec and isinstance(rec.get("type"), str):
            ts = rec.get("timestamp")
            out.append((n, {"type": "response_item", "timestamp": ts, "payload": rec}))
        else:
            out.append((n, rec))  # not an item: skipped with its reason below
    return out


def _instructions(payload: Mapping[str, Any]) -> str | None:
    base = payload.get("base_instructions")
    if isinstance(base, Mapping) and isinstance(base.get("text"), str):
        return base["text"] or None
    text = payload.get("instructions")
    return text if isinstance(text, str) and text else None


def spawned_by(meta: Mapping[str, Any]) -> str | None:
    """The thread that spawned a Codex sub-agent, from its ``session_meta``: ``source`` is
    ``{"subagent": {"thread_spawn": {"parent_thread_id": …, "depth": …}}}`` (Codex's
    ``SessionSource::SubAgent(SubAgentSource::ThreadSpawn)``); None for any other session."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    parent = spawn.get("parent_thread_id") if isinstance(spawn, dict) else None
    return parent if isinstance(parent, str) and parent else None


def spawn_links(messages: list[dict[str, Any]]) -> dict[str, str]:
    """thread id -> the ``spawn_agent`` call that started it: Codex answers the call with the
    new thread's id (``{"agent_id": …}``), the id its rollout's ``session_meta`` has."""
    spawns: set[str] = set()
    links: dict[str, str] = {}
    for m in messages:
        content = m.get("content")
        for b in content if isinstance(content, list) else []:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use" and b.get("name") == SPAWN_TOOL:
                spawns.add(str(b.get("id")))
            elif b.get("type") == "tool_result" and b.get("tool_use_id") in spawns:
                agent = _agent_id(b.get("content"))
                if agent is not None:
                    links.setdefault(agent, str(b["tool_use_id"]))
    return links


def _agent_id(content: Any) -> str | None:
    text = content if isinstance(content, str) else None
    if isinstance(content, list):
        text = "".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    try:
        out = json.loads(text) if text else None
    except (ValueError, RecursionError):
        return None
    agent = out.get("agent_id") if isinstance(out, dict) else None
    return agent if isinstance(agent, str) and agent else None


def _codex_bytes_tokens(item: Mapping[str, Any]) -> int:
    """Codex's own estimate of a history item's tokens (``estimate_item_token_count`` in
    codex-rs: its compact JSON's UTF-8 bytes / 4, rounded up; an encrypted reasoning or
    compaction item by its sealed length: ``(len * 3 / 4 - 650) / 4``; a ghost snapshot, which
    is never sent, nothing)."""
    if item.get("type") == "ghost_snapshot":
        return 0
    sealed = item.get("encrypted_content")
    if item.get("type") in ("reasoning", "compaction") and isinstance(sealed, str):
        return -(-max(0, len(sealed) * 3 // 4 - 650) // 4)
    text = json.dumps(item, separators=(",", ":"), ensure_ascii=False)
    return -(-len(text.encode("utf-8", "replace")) // 4)


def compaction_hidden(estimate: Any, system: str | None, history: list[Any]) -> int | None:
    """The tokens a compaction's new history holds that its ``replacement_history`` does not
    show: the summary, sealed in a ``compaction`` item the publisher redacted, or one the
    rollout did not keep (9 of unseen3's 13 compactions, Codex CLI 0.140 to 0.142.4, hold
    none; 0.142.2 and 0.142.5 wrote a redacted one). After a compaction Codex
    records its own estimate of the new history with the base instructions
    (``recompute_token_usage``: a ``token_count`` whose ``last_token_usage`` has no input and
    that estimate as ``total_tokens``); what that exceeds the same estimate of the items shown
    by is the hidden part. On the 13 compactions of unseen3/codex: 608 to 4,661 tokens, and the
    recorded prompts rose by 0.9 to 1.5 times that across each compaction, beyond the re-sent
    items. None without the estimate or the base instructions."""
    if type(estimate) is not int or estimate <= 0 or not system:
        return None
    shown = -(-len(system.encode("utf-8", "replace")) // 4)
    shown += sum(_codex_bytes_tokens(i) for i in history if isinstance(i, Mapping))
    return max(0, estimate - shown)


def _unsealed(metas: list[dict[str, Any]], first: int) -> bool:
    """Whether the response whose first message is ``first`` returned its reasoning with no
    sealed form (``"encrypted_content": null``: a provider that does not return it): Codex
    then has nothing of it to send back, and it is billed to no later request. vibetracker
    (unseen2, Codex CLI 0.39, aide-gpt-5): its one turn's ten responses recorded 9,536
    reasoning tokens, and the recorded prompts grew by the messages alone."""
    for meta in metas[first:]:
        if meta is not metas[first] and not meta.get("same_response"):
            break
        wire = meta.get("wire")
        if (
            isinstance(wire, Mapping)
            and wire.get("type") == "reasoning"
            and "encrypted_content" in wire
            and wire["encrypted_content"] is None
        ):
            return True
    return False


def _record_reasoning(metas: list[dict[str, Any]], first: int, tokens: Any) -> None:
    """The hidden reasoning of the response whose first message is ``first``: the API bills it
    as input to the next requests of the same turn (Codex sends its reasoning items back, their
    ``encrypted_content`` sealed), at the reasoning tokens the response recorded. On
    611 requests inside a turn of the Codex diagnosis set (docs/providers.md), the recorded prompt outgrew the added messages by
    the previous response's ``reasoning_output_tokens``: median 18 for under 50 of them, 103 for
    50 to 200, 324 for 200 to 500, 540 for 500 to 1,000, 1,293 above. The response's first
    message carries it (:data:`RECORDED_CARRY`), its other items nothing, so a sealed item's
    length is not counted again."""
    if type(tokens) is not int or tokens < 0:
        return
    if _unsealed(metas, first):
        tokens = 0
    metas[first][RECORDED_CARRY] = tokens
    for meta in metas[first + 1 :]:
        if meta.get("same_response"):
            meta[RECORDED_CARRY] = 0


def read_codex(
    path: str, records: list[tuple[int, dict[str, Any]]], bad: dict[int, str]
) -> LoadedSession:
    """The session of a rollout's records (``(line number, record)``; ``bad``: the lines that
    were not records, with why)."""
    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    reasons = dict(bad)
    system: str | None = None
    model: str | None = None
    session_model: str | None = None
    response: int | None = None  # the first message of the open response
    # the first message of the latest response since the last token_count: Codex runs a
    # response's tool calls while it streams and records their outputs before the response's
    # token_count, so the usage belongs to the response before those outputs
    counted: int | None = None
    last_total: Any = None
    thread: Any = None  # this rollout's thread id (its first session_meta's)
    inherited = False  # reading the replayed items a forked thread starts with
    # the replacement history of the latest compaction, until Codex's estimate of it
    # (:func:`compaction_hidden`): (its items, their metas)
    compaction: tuple[list[Any], list[dict[str, Any]]] | None = None
    # the hosted web searches in the history whose results the API still bills (their
    # messages), and those an interrupted turn left unbilled, for the next message
    # (:data:`RESULTS_UNBILLED`)
    searches: list[int] = []
    unbilled: list[int] = []
    # whether this rollout writes a response's usage before its items (Codex CLI 0.39: its
    # events as they came, the response's items when it ended), decided at the first usage;
    # then each usage waits for the next one, or the file's end, to meet its response
    ahead: bool | None = None
    answered = False  # an assistant item of this thread's own was read
    pending: tuple[Any, int, Any] | None = None  # (usage, its line, its reasoning tokens)
    if records and is_legacy_header(records[0][1]):
        records = _enveloped(records)

    def give(first: int | None, found: tuple[Any, int, Any] | None) -> None:
        """The usage of the response whose first message is ``first``."""
        if found is None or first is None or "usage" in metas[first]:
            return
        u, line, reasoning = found
        metas[first]["usage"] = u.as_meta()
        metas[first]["token_count_line"] = line
        _record_reasoning(metas, first, reasoning)

    def add(msg: dict[str, Any], meta: dict[str, Any]) -> None:
        nonlocal response, counted, unbilled, answered
        if msg.get("role") == "assistant" and not meta.get("forked_history"):
            answered = True
        if unbilled:
            meta[RESULTS_UNBILLED] = unbilled
            unbilled = []
        if msg.get("role") == "assistant":
            if response is not None and messages and messages[-1].get("role") == "assistant":
                meta["same_response"] = True
            else:
                response = counted = len(messages)
            if model is not None:
                meta["model"] = model
        else:
            response = None
        messages.append(msg)
        metas.append(meta)

    for n, rec in records:
        kind = rec.get("type")
        payload = rec.get("payload")
        ts = rec.get("timestamp")
        if kind not in RECORD_TYPES or not isinstance(payload, Mapping):
            reasons[n] = (
                f"unknown record type {str(kind)[:40]!r}"
                if kind not in RECORD_TYPES
                else "payload: expected an object"
            )
            continue
        if kind == "session_meta":
            system = system or _instructions(payload)
            if thread is None:
                thread = payload.get("id")
                # a forked thread's rollout (a spawned sub-agent's, or a user's fork) begins
                # with the parent's items replayed: its history, which this thread's requests
                # send, but whose usage was the parent's requests
                inherited = bool(spawned_by(payload) or payload.get("forked_from_id"))
            continue
        if kind == "turn_context":
            inherited = False
            m = payload.get("model")
            if isinstance(m, str) and m:
                model = m
                session_model = session_model or m
            continue
        if kind == "event_msg":
            if payload.get("type") == "turn_aborted" and searches and not inherited:
                # Codex chains a turn's requests on its Responses websocket to the previous
                # response, which holds the hosted searches' results; an interrupted response
                # leaves nothing to chain to, and the whole history sent again bills each
                # web_search_call as its item alone. unseen3's 019eecb9: at the turn after an
                # interrupt the recorded prompt fell 63.2k while the file added 5.9k; after it
                # the prompts held 47.5k less than the messages counted with 11 searches'
                # results (11 x 4,300 = 47.3k). The interrupted turn's own items stay: five
                # other interrupts (no search before them) moved the residual by under 400.
                unbilled, searches = searches, []
                continue
            if payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if not isinstance(info, Mapping):
                continue
            total = info.get("total_token_usage")
            last = info.get("last_token_usage")
            if (
                compaction is not None
                and isinstance(last, Mapping)
                and not last.get("input_tokens")
            ):
                # Codex's estimate of the compacted history, not a response's usage
                hidden = compaction_hidden(last.get("total_tokens"), system, compaction[0])
                for m in compaction[1] if hidden is not None else ():
                    m[COMPACTION_HIDDEN] = hidden
                compaction = None
                continue
            compaction = None
            if total == last_total or not isinstance(last, Mapping):
                continue  # the same usage again (a rate-limit update)
            last_total = total
            if inherited:
                response = counted = None
                continue
            u = usage(last)
            found = None if u is None else (u, n, last.get("reasoning_output_tokens"))
            if ahead is None and messages:
                # vibetracker (unseen2, Codex CLI 0.39): the first usage (5,645) comes after the
                # user's message and before any item of the response it measured; read so,
                # every request is the one the usage before it measured, its items after it.
                # (A usage before any message is a follower's seed: given already.)
                ahead = not answered
            if ahead:
                found, pending = pending, found
            give(counted, found)
            response = counted = None  # the next assistant item starts the next response
            continue
        meta: dict[str, Any] = {"line": n}
        if isinstance(ts, str):
            meta["timestamp"] = ts
        if inherited:
            meta["forked_history"] = True
        if kind == "response_item":
            meta["wire"] = payload
            add(responses_item(payload), meta)
            server = server_tool_call(payload)
            if search_results(payload) and not inherited:
                searches.append(len(messages) - 1)
            if (
                server is not None
                and response is not None
                and (payload.get("type") != "web_search_call" or search_results(payload))
            ):
                # the API ran it and billed its results as input, which no line holds: to
                # this response's own request too (the later ones hold the call, and count
                # its results: ``openai_tokens.WEB_SEARCH_RESULT_TOKENS``)
                metas[response].setdefault(SERVER_TOOL_RUN, server)
            continue
        # compacted: the conversation goes on from the replacement history (or the summary)
        history = payload.get("replacement_history")
        boundary = {"trigger": "codex", "line": n}
        searches, unbilled = [], []  # the searches before it are summarised away
        if isinstance(history, list) and history:
            compaction = (history, [])
            for k, item in enumerate(history):
                m = dict(meta)
                m["wire"] = item
                m["compacted_history"] = True
                if k == 0:
                    m["compact_boundary"] = boundary
                msg = responses_item(item)
                if isinstance(item, Mapping) and item.get("type") == "compaction":
                    # it closes the history, every item of which the next request sends and
                    # the API bills (019f36b8: ~10k of re-sent initial context)
                    msg["content"] = [
                        {**b, KEEPS_HISTORY: True} if isinstance(b, dict) else b
                        for b in msg.get("content") or ()
                    ]
                add(msg, m)
                compaction[1].append(m)
        else:
            text = payload.get("message")
            meta["compact_summary"] = True
            meta["compact_boundary"] = boundary
            add({"role": "user", "content": text if isinstance(text, str) else ""}, meta)
    if ahead:
        give(counted, pending)  # the last usage's response, after it
    if not messages:
        raise SessionError(f"{path}: no messages found in this Codex session (no response_item)")
    return LoadedSession(
        path,
        CODEX,
        messages,
        metas,
        system=system,
        model=model or session_model,
        skipped_lines=sorted(reasons),
        skipped_reasons=reasons,
        provider="openai",
        subagent_links=spawn_links(messages),
    )
