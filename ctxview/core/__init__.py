"""The headless core: context, strategies, protocol checks, tokens. Imports neither Textual nor
the anthropic SDK (a test enforces it)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxview.core.context import ContextEvent, ConversationContext
    from ctxview.core.protocol import Problem, ProtocolReport, check_protocol, check_request
    from ctxview.core.strategies import STRATEGIES, Strategy, get_strategy, register_strategy
    from ctxview.core.transcript import Record, Transcript

#: public name -> the module that defines it; each is imported on first use, so importing one
#: core module (``ctxview.core.tokens``) does not import them all
_HOME = {
    "ContextEvent": "context",
    "ConversationContext": "context",
    "Problem": "protocol",
    "check_protocol": "protocol",
    "ProtocolReport": "protocol",
    "check_request": "protocol",
    "STRATEGIES": "strategies",
    "Strategy": "strategies",
    "get_strategy": "strategies",
    "register_strategy": "strategies",
    "Record": "transcript",
    "Transcript": "transcript",
}

__all__ = [
    "STRATEGIES",
    "ContextEvent",
    "ConversationContext",
    "Problem",
    "ProtocolReport",
    "Record",
    "Strategy",
    "Transcript",
    "check_protocol",
    "check_request",
    "get_strategy",
    "register_strategy",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
