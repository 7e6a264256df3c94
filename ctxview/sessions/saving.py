"""``ctxview.save(ctx, path)`` and ``ctxview.load(path)``: the names the ``ctxview`` package gives
:meth:`ConversationContext.save <ctxview.core.context.ConversationContext.save>` and
:meth:`ConversationContext.load <ctxview.core.context.ConversationContext.load>` (the same code:
``save`` also takes the context's :class:`~ctxview.core.transcript.Transcript`)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ctxview.core.context import ConversationContext
from ctxview.core.transcript import Transcript

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
    force: bool = False,
) -> None:
    """``context.save(path, ...)`` (:meth:`ConversationContext.save`); a transcript saves the
    context it records (ValueError when it records none, or no longer is its history)."""
    if isinstance(context, Transcript):
        ctx = context.context
        if not isinstance(ctx, ConversationContext):
            raise ValueError("this Transcript is attached to no context: nothing to save")
        if ctx.transcript is not context:
            raise ValueError(
                "this Transcript is no longer its context's history (another was attached "
                "since): save the context"
            )
        context = ctx
    context.save(
        path,
        model=model,
        max_tokens=max_tokens,
        tools=tools,
        request_params=request_params,
        title=title,
        force=force,
    )


def load(path: str | os.PathLike[str]) -> ConversationContext:
    """``ConversationContext.load(path)`` (:meth:`ConversationContext.load`)."""
    return ConversationContext.load(path)
