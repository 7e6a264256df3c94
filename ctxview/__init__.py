"""ctxview: see what an LLM agent's conversation context holds, forgets, and will send."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxview.core import (
        Budget,
        ContentError,
        ContextEvent,
        ConversationContext,
        Problem,
        ProtocolError,
        ProtocolReport,
        SessionError,
        Strategy,
        Transcript,
        Window,
        check_protocol,
        check_request,
        register_strategy,
        safe_cut,
    )
    from ctxview.sessions.saving import load, save

__version__ = "0.1.0"

__all__ = [
    "Budget",
    "ContentError",
    "ContextEvent",
    "ConversationContext",
    "Problem",
    "ProtocolError",
    "ProtocolReport",
    "SessionError",
    "Strategy",
    "Transcript",
    "Window",
    "__version__",
    "check_protocol",
    "check_request",
    "load",
    "register_strategy",
    "safe_cut",
    "save",
]

#: names of the session layer (saving and opening files), imported on first use
_SAVING = ("save", "load")


def __getattr__(name: str) -> Any:
    # the core is imported on first use of one of its names, not by ``import ctxview.cli``: the
    # app's first screen needs only part of it
    if name in _SAVING:
        from ctxview.sessions import saving

        value = getattr(saving, name)
        globals()[name] = value
        return value
    if name in __all__:
        from ctxview import core

        value = getattr(core, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
