"""ctxview: see what an LLM agent's conversation context holds, forgets, and will send."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxview.core import (
        ContextEvent,
        ConversationContext,
        Problem,
        ProtocolReport,
        Transcript,
        check_protocol,
        check_request,
    )

__version__ = "0.1.0"

__all__ = [
    "ContextEvent",
    "ConversationContext",
    "Problem",
    "ProtocolReport",
    "Transcript",
    "__version__",
    "check_protocol",
    "check_request",
]


def __getattr__(name: str) -> Any:
    # the core is imported on first use of one of its names, not by ``import ctxview.cli``: the
    # app's first screen needs only part of it
    if name in __all__:
        from ctxview import core

        value = getattr(core, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
