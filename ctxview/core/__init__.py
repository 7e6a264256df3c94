"""The headless core: context, strategies, protocol checks, tokens. Imports neither Textual nor
the anthropic SDK (a test enforces it)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxview.core.content import ContentError
    from ctxview.core.context import ConversationContext, ProtocolError
    from ctxview.core.events import ContextEvent
    from ctxview.core.jsonfile import SessionError
    from ctxview.core.protocol import Problem, ProtocolReport, check_protocol, check_request
    from ctxview.core.strategies import (
        STRATEGIES,
        Budget,
        FunctionStrategy,
        Strategy,
        get_strategy,
        register_strategy,
        safe_cut,
    )
    from ctxview.core.transcript import Record, Transcript
    from ctxview.core.window import Window

#: public name -> the module that defines it; each is imported on first use, so importing one
#: core module (``ctxview.core.tokens``) does not import them all
_HOME = {
    "ContentError": "content",
    "ContextEvent": "events",
    "ProtocolError": "context",
    "ConversationContext": "context",
    "Problem": "protocol",
    "check_protocol": "protocol",
    "ProtocolReport": "protocol",
    "check_request": "protocol",
    "STRATEGIES": "strategies",
    "Budget": "strategies",
    "FunctionStrategy": "strategies",
    "safe_cut": "strategies",
    "Window": "window",
    "Strategy": "strategies",
    "get_strategy": "strategies",
    "register_strategy": "strategies",
    "SessionError": "jsonfile",
    "Record": "transcript",
    "Transcript": "transcript",
}

__all__ = [
    "STRATEGIES",
    "Budget",
    "ContentError",
    "ContextEvent",
    "ConversationContext",
    "FunctionStrategy",
    "Problem",
    "ProtocolError",
    "ProtocolReport",
    "Record",
    "SessionError",
    "Strategy",
    "Transcript",
    "Window",
    "check_protocol",
    "check_request",
    "get_strategy",
    "register_strategy",
    "safe_cut",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
