"""A library user's context saved as a ctxview session, and opened again as it was.

``ctxview.save(ctx, path)`` and ``ctxview.load(path)`` (re-exported by the ``ctxview`` package):
the context's history is its :class:`~ctxview.core.transcript.Transcript` (attached before the
first add), the file the same session format the app saves and opens, so ``ctxview FILE`` and
``ctxview inspect FILE`` show the run. They live here, not on the context: the core does not
import the session layer above it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ctxview.core.content import tools_value
from ctxview.core.context import ConversationContext
from ctxview.core.transcript import Transcript
from ctxview.sessions.replay import open_session
from ctxview.sessions.store import save_session, session_document

if TYPE_CHECKING:
    from ctxview.core.sdk_types import ToolUnionParam


def save(
    context: ConversationContext | Transcript,
    path: str | os.PathLike[str],
    *,
    model: str = "",
    max_tokens: int | None = None,
    tools: Iterable[ToolUnionParam] | None = None,
    request_params: Mapping[str, Any] | None = None,
    title: str | None = None,
) -> None:
    """Write ``context`` (or the context of a transcript) and its full history to ``path``
    in the ctxview session format, atomically (never with the API key in it): every message
    with when it was added and evicted, the window, pins, settings and strategy (by name),
    the system prompt and tools (the context's unless given). ``model``, ``max_tokens`` and
    ``request_params`` are recorded for the next request the app would send.

    ValueError when the context has no transcript (``Transcript(ctx)`` before the first add)."""
    if isinstance(context, Transcript):
        transcript = context
        if not isinstance(context.context, ConversationContext):
            raise ValueError("this Transcript is attached to no context: nothing to save")
        ctx = context.context
    else:
        ctx = context
        if not isinstance(ctx.transcript, Transcript):
            raise ValueError(
                "saving needs the context's history: create Transcript(ctx) before the first "
                "add (it records every message and eviction the session file holds)"
            )
        transcript = ctx.transcript
    doc = session_document(
        ctx,
        transcript,
        model=model or None,
        max_tokens=max_tokens,
        tools=list(ctx.tools) if tools is None else tools_value(tools),
        title=title,
        request_params=dict(request_params or {}),
    )
    save_session(path, doc, make_parents=False)


def load(path: str | os.PathLike[str]) -> ConversationContext:
    """The context saved at ``path`` (by :func:`save`, the app, or any ctxview session file),
    reopened as it was: the same window, evictions and their steps, pins, settings and strategy
    (a strategy of your own must be registered under its saved name first), its system prompt
    and tools; its history is ``ctx.transcript``. Raises ``SessionError`` (unreadable) or
    ``ValueError`` (bad settings, an unknown strategy), naming the file."""
    session = open_session(os.fspath(path))
    ctx = session.context
    if session.session.tools:
        ctx._set_tools(session.session.tools)  # (no event: the window is as saved)
    return ctx
