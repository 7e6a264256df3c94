"""New messages in an open session's history: a repair's answer to a tool call nothing answers
(``ctxview.core.edits.repair_plan``'s ``inserts``), put where the repair puts it, before a later
message of the window.

Ids are positions in a session's history (the transcript, the window, pins, the ledger, the
request model and the saved file all rely on it), so a message cannot be slipped in between two
others under an id of its own. Instead the history is rebuilt with the new messages in place and
the messages after them numbered on: the session as it would reopen once saved (``ctxview
repair`` writes a ctxview session the same way). Everything keyed by id is rebuilt from it at
once; ``Inserted.new_id`` maps each old id to its new one, for what the caller keeps (the
selection, the rest of the edit). O(history), no replay of the strategy: the window, evictions,
pins and steps are restored as they stand.

Headless: no Textual.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ctxview.core.clearing import DEFAULT_EDITING
from ctxview.core.edits import END as END  # the key of new messages after the window's last
from ctxview.core.repair import inserted_meta
from ctxview.sessions.session import Session


@dataclass
class Inserted:
    #: the session with the new messages in its history and window
    session: Session
    #: old id -> new id, for every message of the old history
    new_id: list[int]
    #: the new messages' ids, in order
    ids: list[int]


def with_inserts(
    rep: Session,
    inserts: Mapping[int, Sequence[dict[str, Any]]],
    *,
    defaults: dict[str, Any] | None = None,
    meta: Callable[[], dict[str, Any]] = inserted_meta,
) -> Inserted:
    """``rep`` with ``inserts`` (window message id -> the new messages that go right before it;
    :data:`END`: after the window's last) in its history: a new :class:`Session` of the same
    file, settings, view and system prompt, whose new messages were added at the next step and
    are in the window. ``rep`` itself is left as it was (an undo shows it again)."""
    from ctxview.sessions.replay import replay

    ctx = rep.context
    window = ctx.window_ids
    in_window = set(window)
    unknown = [k for k in inserts if k != END and k not in in_window]
    if unknown:
        raise KeyError(f"message #{unknown[0]} is not in the window")
    step = ctx.step + 1
    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    added: dict[int, int] = {}
    evicted: dict[int, int] = {}
    new_id: list[int] = []
    ids: list[int] = []

    def put(new: Sequence[dict[str, Any]]) -> list[int]:
        out = []
        for m in new:
            k = len(messages)
            messages.append(m)
            metas.append(meta())
            added[k] = step
            out.append(k)
        return out

    before: dict[int, list[int]] = {}
    for rec in rep.transcript.records:
        if rec.id in inserts:
            before[rec.id] = put(inserts[rec.id])
            ids.extend(before[rec.id])
        k = len(messages)
        new_id.append(k)
        messages.append(rec.message)
        metas.append(dict(rec.meta))  # (edits of the new session set keys: not in the old's)
        added[k] = rec.added_step
        if rec.evicted_step is not None:
            evicted[k] = rec.evicted_step
    last = put(inserts.get(END, ()))
    ids.extend(last)
    new_window: list[int] = []
    for mid in window:
        new_window.extend(before.get(mid, ()))
        new_window.append(new_id[mid])
    new_window.extend(last)
    session = rep.session
    held = [new_id[i] for i in ctx.held_ids]
    loaded = replace(
        session,
        messages=messages,
        metas=metas,
        system=rep.system,
        max_context_messages=ctx.max_context_messages,
        strategy=ctx.strategy,
        max_context_tokens=ctx.max_context_tokens,
        low_water_fraction=ctx.low_water_fraction,
        context_editing=(
            ctx.context_editing.to_dict()
            if ctx.context_editing != DEFAULT_EDITING
            else session.context_editing
        ),
        saved_window=new_window,
        saved_cut=ctx.cut,
        saved_evicted_steps=evicted,
        saved_added_steps=added,
        saved_step=step,
        saved_pinned=[new_id[i] for i in ctx.pinned_ids],
        saved_held=held,
        as_sent_format=rep.as_sent or session.as_sent_format,
        # the calibration memo is of the old messages
        calibration_memo=None,
    )
    if rep.as_sent is not None:
        new = replay(loaded, as_sent=True, defaults=defaults)
    else:  # the live settings (a request body's own max would grow to its length)
        new = replay(
            loaded,
            max_context_messages=ctx.max_context_messages,
            strategy=ctx.strategy,
            defaults=defaults,
        )
    return Inserted(new, new_id, ids)
