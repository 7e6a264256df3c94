"""Opening a file = replaying its messages through ConversationContext (or restoring a saved
ctxview session exactly, evictions included)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxview.core.clearing import parse_context_editing
from ctxview.core.context import (
    DEFAULT_LOW_WATER_FRACTION,
    DEFAULT_MAX_CONTEXT_TOKENS,
    ConversationContext,
)
from ctxview.core.transcript import Record, Transcript
from ctxview.sessions.model import LoadedSession, gc_paused


@dataclass
class Replay:
    session: LoadedSession
    context: ConversationContext
    transcript: Transcript
    #: True when a saved ctxview session's window was restored as saved (not replayed)
    restored: bool


def _pick(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def replay(session: LoadedSession, **settings: Any) -> Replay:
    """Build the live context and its transcript from a loaded file (see :func:`_replay`)."""
    with gc_paused():
        return _replay(session, **settings)


def _replay(
    session: LoadedSession,
    *,
    max_context_messages: int | None = None,
    strategy: str | None = None,
    max_context_tokens: int | None = None,
    low_water_fraction: float | None = None,
    system_prompt: str | None = None,
    defaults: dict[str, Any] | None = None,
) -> Replay:
    """Build the live context and its transcript from a loaded file.

    Settings: an explicit argument wins, then the session's own, then ``defaults`` (the config).
    A ctxview session opened with its own settings is restored exactly as saved.
    """
    d = defaults or {}
    max_ = _pick(
        max_context_messages, session.max_context_messages, d.get("max_context_messages"), 20
    )
    if session.format == "request" and max_context_messages is None:
        # a recorded request opens as it was sent: every one of its messages in the window
        max_ = max(max_, len(session.messages))
    strat = _pick(strategy, session.strategy, d.get("strategy"), "seed")
    max_tokens = _pick(
        max_context_tokens,
        session.max_context_tokens,
        d.get("max_context_tokens"),
        DEFAULT_MAX_CONTEXT_TOKENS,
    )
    frac = _pick(
        low_water_fraction,
        session.low_water_fraction,
        d.get("low_water_fraction"),
        DEFAULT_LOW_WATER_FRACTION,
    )
    system = _pick(
        system_prompt, session.system_text if session.system else None, d.get("system_prompt"), ""
    )
    editing = session.context_editing
    ctx = ConversationContext(
        max_context_messages=max_,
        system_prompt=system,
        strategy=strat,
        max_context_tokens=max_tokens,
        low_water_fraction=frac,
        context_editing=parse_context_editing(
            editing if editing is not None else d.get("context_editing")
        ),
    )
    if isinstance(session.system, list):
        # keep the blocks (cache_control and all) for the token estimate; text is what is shown
        ctx._window.set_system_prompt(session.system)
    transcript = Transcript()
    same_settings = (
        max_context_messages in (None, session.max_context_messages)
        and strategy in (None, session.strategy)
        and max_context_tokens in (None, session.max_context_tokens)
        and low_water_fraction in (None, session.low_water_fraction)
    )
    if session.saved_window is not None and same_settings:
        window = set(session.saved_window)
        added, evicted = session.saved_added_steps, session.saved_evicted_steps
        transcript.restore(
            [
                Record(i, msg, added.get(i, i + 1), None if i in window else evicted.get(i), meta)
                for i, (msg, meta) in enumerate(zip(session.messages, session.metas, strict=True))
            ],
            session.saved_window,
        )
        ctx.restore(
            [(i, session.messages[i]) for i in session.saved_window],
            next_id=len(session.messages),
            cut=session.saved_cut or len(window) < len(session.messages),
            step=session.saved_step,
        )
        transcript.attach(ctx)
        return Replay(session, ctx, transcript, True)
    transcript.attach(ctx)
    add = ctx.add_message
    for msg, meta in zip(session.messages, session.metas, strict=True):
        add(msg, meta=meta, copy=False)
    return Replay(session, ctx, transcript, False)


def open_session(
    path: str | None,
    format: str | None = None,
    *,
    max_context_messages: int | None = None,
    strategy: str | None = None,
    new_chat_system_prompt: Callable[[], str] = str,
    defaults: dict[str, Any] | None = None,
) -> Replay:
    """The file at ``path`` replayed, or a new chat (no path) with the configured system prompt
    (read only for a new chat): what the TUI and ``chat --no-tui`` start from. Raises
    :class:`SessionError` (unreadable) or ``ValueError`` (bad settings)."""
    from ctxview.sessions.readers import load_session

    if path:
        session = load_session(path, format)
    else:
        session = LoadedSession(path="", format="new", messages=[], metas=[])
    return replay(
        session,
        max_context_messages=max_context_messages,
        strategy=strategy,
        system_prompt=None if path else new_chat_system_prompt(),
        defaults=defaults,
    )
