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

One API response is a run of assistant items (reasoning, calls, a message): its first item
carries the response's usage and starts a request; the others are marked ``same_response``.
Lines that are not records, or records of an unknown type, are skipped with the reason.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxview.core.providers.openai import CODEX, usage
from ctxview.core.providers.openai_wire import responses_item
from ctxview.sessions.model import LoadedSession, SessionError

#: the record types of a rollout line (a tuple: a line's ``type`` may be any JSON value, and a
#: list or an object cannot be looked up in a set)
RECORD_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")


def is_codex_record(record: Mapping[str, Any]) -> bool:
    """A rollout line's record: a known ``type`` and an object ``payload``."""
    return record.get("type") in RECORD_TYPES and isinstance(record.get("payload"), Mapping)


def _instructions(payload: Mapping[str, Any]) -> str | None:
    base = payload.get("base_instructions")
    if isinstance(base, Mapping) and isinstance(base.get("text"), str):
        return base["text"] or None
    text = payload.get("instructions")
    return text if isinstance(text, str) and text else None


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
    last_total: Any = None

    def add(msg: dict[str, Any], meta: dict[str, Any]) -> None:
        nonlocal response
        if msg.get("role") == "assistant":
            if response is not None and messages and messages[-1].get("role") == "assistant":
                meta["same_response"] = True
            else:
                response = len(messages)
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
            continue
        if kind == "turn_context":
            m = payload.get("model")
            if isinstance(m, str) and m:
                model = m
                session_model = session_model or m
            continue
        if kind == "event_msg":
            if payload.get("type") != "token_count":
                continue
            info = payload.get("info")
            if not isinstance(info, Mapping):
                continue
            total = info.get("total_token_usage")
            last = info.get("last_token_usage")
            if total == last_total or not isinstance(last, Mapping):
                continue  # the same usage again (a rate-limit update)
            last_total = total
            u = usage(last)
            if u is not None and response is not None and "usage" not in metas[response]:
                metas[response]["usage"] = u.as_meta()
                metas[response]["token_count_line"] = n
            response = None  # the next assistant item starts the next response
            continue
        meta: dict[str, Any] = {"line": n}
        if isinstance(ts, str):
            meta["timestamp"] = ts
        if kind == "response_item":
            meta["wire"] = payload
            add(responses_item(payload), meta)
            continue
        # compacted: the conversation goes on from the replacement history (or the summary)
        history = payload.get("replacement_history")
        boundary = {"trigger": "codex", "line": n}
        if isinstance(history, list) and history:
            for k, item in enumerate(history):
                m = dict(meta)
                m["wire"] = item
                m["compacted_history"] = True
                if k == 0:
                    m["compact_boundary"] = boundary
                add(responses_item(item), m)
        else:
            text = payload.get("message")
            meta["compact_summary"] = True
            meta["compact_boundary"] = boundary
            add({"role": "user", "content": text if isinstance(text, str) else ""}, meta)
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
    )
