"""Opening a file = replaying its messages through ConversationContext (or restoring a saved
ctxview session exactly, evictions included): how every source becomes a
:class:`~ctxview.sessions.session.Session`."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

from ctxview.core.body import REQUEST_BODY_FORMATS
from ctxview.core.compaction import claude_code_compaction
from ctxview.core.context import (
    DEFAULT_LOW_WATER_FRACTION,
    DEFAULT_MAX_CONTEXT_MESSAGES,
    DEFAULT_MAX_CONTEXT_TOKENS,
    DEFAULT_STRATEGY,
    ConversationContext,
)
from ctxview.core.session_file import AS_SENT_FORMATS
from ctxview.core.transcript import Record, Transcript
from ctxview.sessions.model import LoadedSession, gc_paused
from ctxview.sessions.session import Session


def as_sent_format(session: LoadedSession) -> str | None:
    """The recorded format a session can be shown "as sent" in, or None: Claude Code
    transcripts (JSONL and web ``loglines``), request bodies, ctxview's proxy recordings, and
    ctxview sessions saved from such a view."""
    if session.format in AS_SENT_FORMATS:
        return session.format
    return session.as_sent_format


def compaction_start(session: LoadedSession) -> int:
    """The index of the message the last Claude Code compaction starts the conversation again
    at (its ``compact_boundary`` / compact summary), or 0: a request after a compaction holds
    only the summary and what followed (``ctxview.core.requests.segment_starts``)."""
    metas = session.metas
    for i in range(len(metas) - 1, 0, -1):
        if claude_code_compaction(metas[i]):
            return i
    return 0


def _pick(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def replay(session: LoadedSession, *, as_sent: bool = False, **settings: Any) -> Session:
    """Build the live context and its transcript from a loaded file (see :func:`_replay`).

    ``as_sent=True`` (the TUI): a recorded session (:func:`as_sent_format`) opened with neither
    ``max_context_messages`` nor ``strategy`` is shown as it was sent (:func:`_replay_as_sent`).
    """
    with gc_paused():
        if (
            as_sent
            and settings.get("max_context_messages") is None
            and settings.get("strategy") is None
            and (fmt := as_sent_format(session)) is not None
        ):
            return _replay_as_sent(session, fmt, **settings)
        return _replay(session, **settings)


def _counter(session: LoadedSession) -> Any:
    """The context's token counter: a session of another API than Anthropic's counts by its
    provider's token model for the file's model (None: the default estimate, Anthropic's)."""
    if session.provider == "anthropic":
        return None
    from ctxview.core.counting import ModelEstimate
    from ctxview.core.providers.registry import provider

    return ModelEstimate(
        provider(session.provider).tokens,
        session.model,
        session.wire_format or session.format,
        session.route,
    )


def _replay_as_sent(
    session: LoadedSession,
    fmt: str,
    *,
    max_context_tokens: int | None = None,
    low_water_fraction: float | None = None,
    system_prompt: str | None = None,
    defaults: dict[str, Any] | None = None,
    **_: Any,
) -> Session:
    """A recorded session as it was sent: every message in the window (``seed`` with max one
    above the message count: no truncation), except that after a Claude Code compaction the
    window starts at its summary (the messages before it left the request: ``compacted``).
    A ctxview session saved from this view is restored as saved."""
    if session.saved_window is not None and session.as_sent_format is not None:
        rep = _replay(session, system_prompt=system_prompt, defaults=defaults)
        rep.as_sent = fmt
        # as sent: nothing is truncated, however long it grows (as Session sets it when built)
        rep.context._max_follows_size = True
        rep.compacted_before = compaction_start(session)
        return rep
    d = defaults or {}
    n = len(session.messages)
    system = _pick(system_prompt, session.system_text if session.system else None, "")
    ctx = ConversationContext(
        max_context_messages=n + 1,
        system_prompt=system,
        strategy="seed",
        max_context_tokens=_pick(
            max_context_tokens,
            session.max_context_tokens,
            d.get("max_context_tokens"),
            DEFAULT_MAX_CONTEXT_TOKENS,
        ),
        low_water_fraction=_pick(
            low_water_fraction,
            session.low_water_fraction,
            d.get("low_water_fraction"),
            DEFAULT_LOW_WATER_FRACTION,
        ),
        token_counter=_counter(session),
    )
    if isinstance(session.system, list):
        ctx._window.set_system_prompt(session.system)
    transcript = Transcript()
    start = compaction_start(session)
    if start:
        # the request after the compaction: its summary and what followed; the messages before
        # it left the window when the summary came (step start + 1)
        msgs, metas = session.messages, session.metas
        transcript.restore(
            [
                Record(i, msg, i + 1, start + 1 if i < start else None, meta)
                for i, (msg, meta) in enumerate(zip(msgs, metas, strict=True))
            ],
            list(range(start, n)),
            [i for i in session.saved_pinned if start <= i < n],
        )
        ctx.restore(
            [(i, msgs[i]) for i in range(start, n)],
            next_id=n,
            cut=True,
            step=n,
            pinned=[i for i in session.saved_pinned if start <= i < n],
        )
        transcript.attach(ctx)
    elif not session.saved_pinned and all(
        m.get("role") in ("user", "assistant", "system") for m in session.messages
    ):
        # every message in the window, nothing evicted: taken at once, as the adds one by one
        # below would leave it (message i added at step i + 1; meta copied as the transcript
        # copies an added message's), without an event per message (100,000 of them)
        msgs, metas = session.messages, session.metas
        transcript.restore(
            [
                Record(i, msg, i + 1, None, dict(meta))
                for i, (msg, meta) in enumerate(zip(msgs, metas, strict=True))
            ],
            list(range(n)),
        )
        ctx.restore(list(enumerate(msgs)), next_id=n, cut=False, step=n)
        transcript.attach(ctx)
    else:
        transcript.attach(ctx)
        add = ctx.add_message
        pinned = set(session.saved_pinned)
        for msg, meta in zip(session.messages, session.metas, strict=True):
            mid = add(msg, meta=meta, copy=False)
            if mid in pinned:  # the user's pins (kept across a switch from a simulation)
                with contextlib.suppress(KeyError, ValueError):
                    ctx.pin(mid)
    return Session(session, ctx, transcript, False, fmt, start)


def _replay(
    session: LoadedSession,
    *,
    max_context_messages: int | None = None,
    strategy: str | None = None,
    max_context_tokens: int | None = None,
    low_water_fraction: float | None = None,
    system_prompt: str | None = None,
    defaults: dict[str, Any] | None = None,
) -> Session:
    """Build the live context and its transcript from a loaded file.

    Settings: an explicit argument wins, then the session's own, then ``defaults`` (the config).
    A ctxview session opened with its own settings is restored exactly as saved.
    """
    d = defaults or {}
    max_ = _pick(
        max_context_messages,
        session.max_context_messages,
        d.get("max_context_messages"),
        DEFAULT_MAX_CONTEXT_MESSAGES,
    )
    if session.format in REQUEST_BODY_FORMATS and max_context_messages is None:
        # a recorded request opens as it was sent: every one of its messages in the window
        max_ = max(max_, len(session.messages))
    strat = _pick(strategy, session.strategy, d.get("strategy"), DEFAULT_STRATEGY)
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
        # its config/session form, validated where it was read: parsed when first used
        context_editing=editing if editing is not None else d.get("context_editing"),
        token_counter=_counter(session),
    )
    if isinstance(session.system, list):
        # keep the blocks (cache_control and all) for the token estimate; text is what is shown
        ctx._window.set_system_prompt(session.system)
    same_settings = (
        max_context_messages in (None, session.max_context_messages)
        and strategy in (None, session.strategy)
        and max_context_tokens in (None, session.max_context_tokens)
        and low_water_fraction in (None, session.low_water_fraction)
    )
    if session.saved_window is not None and same_settings:
        transcript = ctx.restore_history(
            session.messages,
            session.metas,
            session.saved_window,
            cut=session.saved_cut,
            added_steps=session.saved_added_steps,
            evicted_steps=session.saved_evicted_steps,
            step=session.saved_step,
            pinned=session.saved_pinned,
            held=session.saved_held,
        )
        return Session(session, ctx, transcript, True)
    transcript = ctx.replay_history(session.messages, session.metas, session.saved_pinned)
    return Session(session, ctx, transcript, False)


def open_session(
    path: str | None,
    format: str | None = None,
    *,
    max_context_messages: int | None = None,
    strategy: str | None = None,
    new_chat_system_prompt: Callable[[], str] = str,
    defaults: dict[str, Any] | None = None,
    as_sent: bool = False,
) -> Session:
    """The file at ``path`` replayed, or a new chat (no path) with the configured system prompt
    (read only for a new chat): what the TUI and ``chat --no-tui`` start from (``as_sent``: see
    :func:`replay`). Raises
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
        as_sent=as_sent,
    )
