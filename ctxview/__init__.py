"""ctxview: see what an LLM agent's conversation context holds, forgets, and will send."""

from ctxview.core import (
    ContextEvent,
    ConversationContext,
    Problem,
    Transcript,
    check_protocol,
)

__version__ = "0.1.0"

__all__ = [
    "ContextEvent",
    "ConversationContext",
    "Problem",
    "Transcript",
    "__version__",
    "check_protocol",
]
