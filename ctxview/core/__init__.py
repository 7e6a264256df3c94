"""The headless core: context, strategies, protocol checks, tokens. Imports neither Textual nor
the anthropic SDK (a test enforces it)."""

from ctxview.core.context import ContextEvent, ConversationContext
from ctxview.core.protocol import Problem, check_protocol
from ctxview.core.strategies import STRATEGIES, Strategy, get_strategy, register_strategy
from ctxview.core.transcript import Record, Transcript

__all__ = [
    "STRATEGIES",
    "ContextEvent",
    "ConversationContext",
    "Problem",
    "Record",
    "Strategy",
    "Transcript",
    "check_protocol",
    "get_strategy",
    "register_strategy",
]
