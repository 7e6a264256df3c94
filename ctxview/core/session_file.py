"""The ctxview session file (docs/session-format.md): its document written, atomically and never
with the API key in it, and read back into a :class:`SavedSession` with every value checked.

Every saved session has this shape: a library user's context (``ConversationContext.save``), the
app's saves and autosaves, a repair's output, a proxy recording of the older single-document
form. Reading fails with a :class:`~ctxview.core.jsonfile.SessionError` naming the file and the
place (the line and column of bad JSON, or the JSON path of a bad value).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any

from ctxview.core.atomic import atomic_write, check_no_api_key
from ctxview.core.formats import RECORDED_FORMATS
from ctxview.core.jsonfile import MAX_BYTES, SessionError, parse_json, read_text
from ctxview.core.strategies import STRATEGIES
from ctxview.core.validate import _kind, message_problem, plain_message, validate_system
from ctxview.textfmt import json_text

SESSION_FORMAT = "ctxview.session"
SESSION_VERSION = 1
#: recorded formats a session can be shown "as sent" in (``settings.as_sent`` of a saved one)
AS_SENT_FORMATS = RECORDED_FORMATS
#: how ctxview's proxy titles its recordings (older ones have no ``settings.as_sent``)
PROXY_TITLE = "ctxview proxy recording:"

#: meta keys written as top-level record fields rather than inside "meta"
_RECORD_FIELDS = ("timestamp", "usage")
#: the keys of a transcript record as :func:`record_item` writes it
_USUAL_RECORD = itemgetter(
    "id", "message", "timestamp", "usage", "added_at_step", "evicted_at_step"
)


# -- writing -------------------------------------------------------------------------------------
def record_item(
    id: int,
    message: Any,
    meta: dict[str, Any],
    added_step: int | None,
    evicted_step: int | None,
) -> dict[str, Any]:
    """One transcript record of a saved session: timestamp and usage are fields of their own,
    the rest of the message's metadata goes under ``meta`` (left out when empty)."""
    rest = {k: v for k, v in meta.items() if k not in _RECORD_FIELDS}
    item: dict[str, Any] = {
        "id": id,
        "message": message,
        "timestamp": meta.get("timestamp"),
        "usage": meta.get("usage"),
        "added_at_step": added_step,
        "evicted_at_step": evicted_step,
    }
    if rest:
        item["meta"] = rest
    return item


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def document(
    *,
    title: str | None,
    settings: dict[str, Any],
    step: int,
    records: list[dict[str, Any]],
    window: dict[str, Any],
    saved_at: str | None = None,
) -> dict[str, Any]:
    """The ctxview session document (docs/session-format.md) around its parts: every saved
    session, a live one or a proxy recording, has this shape. ``saved_at``: now, to the second,
    unless given."""
    return {
        "format": SESSION_FORMAT,
        "version": SESSION_VERSION,
        "saved_at": saved_at or _now(),
        "title": title,
        "settings": settings,
        "step": step,
        "transcript": records,
        "window": window,
    }


def write_session_file(
    path: str | os.PathLike[str], document: dict[str, Any], *, make_parents: bool = True
) -> None:
    """Write a session document to ``path``: JSON with control characters escaped, atomically
    (:func:`~ctxview.core.atomic.atomic_write`: a crash leaves the old file or the new one);
    ValueError, before anything is written, when it holds the ANTHROPIC_API_KEY value."""
    data = json_text(document, indent=1).encode("utf-8")
    check_no_api_key(data)
    atomic_write(path, data, make_parents=make_parents)


# -- reading -------------------------------------------------------------------------------------
@dataclass(slots=True)
class SavedSession:
    """A ctxview session document as read: every value checked, nothing rebuilt yet.

    ``window`` (its ids, increasing) is None for a document without one: its messages are then
    replayed through its settings; ``recorded_requests`` holds the requests of a proxy recording of the older
    single-document form (the session layer opens those as a recording, not as one context)."""

    messages: list[dict[str, Any]]
    metas: list[dict[str, Any]]
    system: Any = ""
    tools: list[Any] = field(default_factory=list)
    model: str | None = None
    max_tokens: int | None = None
    max_context_messages: int | None = None
    strategy: str | None = None
    max_context_tokens: int | None = None
    low_water_fraction: float | None = None
    #: the context-editing parameters in their config/session form (checked, not parsed)
    context_editing: dict[str, Any] | None = None
    title: str | None = None
    request_params: dict[str, Any] = field(default_factory=dict)
    as_sent: str | None = None
    window: list[int] | None = None
    #: the window was cut (something evicted) at some point
    cut: bool = False
    #: the ids of the window's pinned messages
    pinned: list[int] = field(default_factory=list)
    #: the ids of the pinned messages the strategy had passed (None: not saved, older files)
    held: list[int] | None = None
    #: when each message was added and evicted (transcript ids -> steps), and the last step
    added_steps: dict[int, int] = field(default_factory=dict)
    evicted_steps: dict[int, int] = field(default_factory=dict)
    step: int | None = None
    recorded_requests: list[Any] | None = None


def read_session_file(path: str | os.PathLike[str]) -> SavedSession:
    """The ctxview session saved at ``path``. :class:`SessionError` naming the file and the
    place when it cannot be read: missing, not a regular file, too large, not UTF-8, bad JSON
    (line and column), or a value that is not what the format holds (its JSON path)."""
    spath = os.fspath(path)
    data = parse_json(spath, read_text(spath, MAX_BYTES))
    try:
        return read_document(data)
    except ValueError as exc:
        raise SessionError(f"{spath}: {exc}") from None
    except RecursionError:
        raise SessionError(f"{spath}: JSON is nested too deeply to read") from None


def _transcript(
    transcript: list[Any],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[int, int], dict[int, int]]:
    """(messages, metas, added steps, evicted steps) of the records of ``transcript``."""
    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    evicted: dict[int, int] = {}
    added: dict[int, int] = {}
    add_message, add_meta = messages.append, metas.append
    plain = plain_message
    usual = _USUAL_RECORD
    for i, rec in enumerate(transcript):
        raw_meta: Any = None
        try:
            # the record ctxview writes: these six keys and no other (one look-up, not six)
            if len(rec) != 6 or type(rec) is not dict:
                raise KeyError
            rid, msg, ts, usage, added_step, evicted_step = usual(rec)
        except (KeyError, TypeError):
            if type(rec) is not dict and not isinstance(rec, dict):
                raise ValueError(f"transcript[{i}]: expected an object, got {_kind(rec)}") from None
            get = rec.get
            rid, msg, ts, usage = get("id"), get("message"), get("timestamp"), get("usage")
            added_step, evicted_step = get("added_at_step"), get("evicted_at_step")
            raw_meta = get("meta")
        if rid != i:
            raise ValueError(f"transcript[{i}].id: expected {i}, got {rid!r}")
        # message_problem's fast yes first (100,000 calls); anything else is asked properly
        if not plain(msg):
            found = message_problem(msg)
            if found is not None:
                raise ValueError(f"transcript[{i}].message{found[0]}: {found[1]}")
        add_message(msg)
        meta: dict[str, Any] = (
            {}
            if raw_meta is None
            else raw_meta.copy()
            if type(raw_meta) is dict
            else dict(raw_meta)
            if isinstance(raw_meta, dict)
            else {}
        )
        if isinstance(ts, str):
            meta["timestamp"] = ts
        if isinstance(usage, dict):
            meta["usage"] = usage
        add_meta(meta)
        if isinstance(evicted_step, int):
            evicted[i] = evicted_step
        if isinstance(added_step, int):
            added[i] = added_step
    return messages, metas, added, evicted


def _window(window: Any, count: int) -> tuple[list[int], bool, list[int], list[int] | None]:
    """(ids, cut, pinned, held) of a document's ``window`` over ``count`` transcript messages."""
    if not isinstance(window, dict) or not isinstance(window.get("ids"), list):
        raise ValueError("window: expected an object with an array of ids")
    ids = window["ids"]
    for k, mid in enumerate(ids):
        if not isinstance(mid, int) or isinstance(mid, bool) or not 0 <= mid < count:
            raise ValueError(f"window.ids[{k}]: {mid!r} is not the id of a transcript message")
    if ids != sorted(set(ids)):
        raise ValueError("window.ids: ids must be increasing and unique")
    pinned = window.get("pinned", [])
    if not isinstance(pinned, list):
        raise ValueError(f"window.pinned: expected an array of ids, got {_kind(pinned)}")
    in_window = set(ids)
    for k, mid in enumerate(pinned):
        if not isinstance(mid, int) or isinstance(mid, bool) or mid not in in_window:
            raise ValueError(f"window.pinned[{k}]: {mid!r} is not the id of a window message"[:160])
    held = window.get("held")
    if held is not None:
        if not isinstance(held, list):
            raise ValueError(f"window.held: expected an array of ids, got {_kind(held)}")
        for k, mid in enumerate(held):
            if not isinstance(mid, int) or isinstance(mid, bool) or mid not in in_window:
                raise ValueError(
                    f"window.held[{k}]: {mid!r} is not the id of a window message"[:160]
                )
        held = sorted(set(held))
    return ids, bool(window.get("cut", False)), sorted(set(pinned)), held


def read_document(data: Any) -> SavedSession:
    """A parsed ctxview session document, checked: ValueError("<JSON path>: reason")."""
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise ValueError(f'format: expected "{SESSION_FORMAT}"')
    version = data.get("version")
    if version != SESSION_VERSION:
        if isinstance(version, int) and version > SESSION_VERSION:
            raise ValueError(
                f"version: written by a newer ctxview (version {version}); this one reads "
                f"version {SESSION_VERSION}"
            )
        raise ValueError(f"version: expected {SESSION_VERSION}, got {version!r}")
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise ValueError(f"settings: expected an object, got {_kind(settings)}")
    transcript = data.get("transcript")
    if not isinstance(transcript, list):
        raise ValueError(f"transcript: expected an array, got {_kind(transcript)}")
    messages, metas, added, evicted = _transcript(transcript)
    window: list[int] | None = None
    cut, pinned, held = False, list[int](), None
    if data.get("window") is not None:
        window, cut, pinned, held = _window(data["window"], len(messages))

    def opt_int(key: str) -> int | None:
        v = settings.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"settings.{key}: expected an integer >= 1, got {v!r}"[:160])
        return v

    system = settings.get("system_prompt", "")
    validate_system(system, "settings.system_prompt")
    tools = settings.get("tools") or []
    if not isinstance(tools, list):
        raise ValueError(f"settings.tools: expected an array, got {_kind(tools)}")
    frac = settings.get("low_water_fraction")
    if frac is not None and (
        isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac <= 1
    ):
        raise ValueError(f"settings.low_water_fraction: expected a number in (0, 1], got {frac!r}")
    strategy = settings.get("strategy")
    if strategy is not None and (not isinstance(strategy, str) or strategy not in STRATEGIES):
        raise ValueError(
            f"settings.strategy: unknown strategy {strategy!r:.80} (a strategy of your own is "
            "known once registered: ctxview.register_strategy(name, function) before opening; "
            f"known: {', '.join(STRATEGIES)})"[:300]
        )
    editing = settings.get("context_editing")
    if editing is not None:
        from ctxview.core.clearing import parse_context_editing

        parse_context_editing(editing, "settings.context_editing")  # ValueError naming the path
    model = settings.get("model")
    params = settings.get("request_params") or {}
    if not isinstance(params, dict):
        raise ValueError(f"settings.request_params: expected an object, got {_kind(params)}")
    as_sent = settings.get("as_sent")
    if as_sent is not None and as_sent not in AS_SENT_FORMATS:
        raise ValueError(
            f"settings.as_sent: expected null or one of {', '.join(AS_SENT_FORMATS)}, "
            f"got {as_sent!r}"[:200]
        )
    title = data.get("title") if isinstance(data.get("title"), str) else None
    if as_sent is None and title is not None and title.startswith(PROXY_TITLE):
        as_sent = "proxy"
    requests, step = data.get("requests"), data.get("step")
    return SavedSession(
        messages,
        metas,
        system=system,
        tools=tools,
        model=model if isinstance(model, str) else None,
        max_tokens=opt_int("max_tokens"),
        max_context_messages=opt_int("max_context_messages"),
        strategy=strategy if isinstance(strategy, str) else None,
        max_context_tokens=opt_int("max_context_tokens"),
        low_water_fraction=float(frac)
        if isinstance(frac, (int, float)) and not isinstance(frac, bool)
        else None,
        context_editing=editing,
        title=title,
        request_params=params,
        as_sent=as_sent,
        window=window,
        cut=cut,
        pinned=pinned,
        held=held,
        added_steps=added,
        evicted_steps=evicted,
        step=step if isinstance(step, int) else None,
        recorded_requests=requests if as_sent == "proxy" and isinstance(requests, list) else None,
    )
