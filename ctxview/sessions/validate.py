"""The session layer's name for :mod:`ctxview.core.validate` (shape checks of messages with
JSON paths in the errors): the readers of every format import it from here."""

from __future__ import annotations

from ctxview.core.validate import (
    _kind,
    block_problem,
    message_problem,
    plain_message,
    validate_messages,
    validate_system,
)

__all__ = [
    "_kind",
    "block_problem",
    "message_problem",
    "plain_message",
    "validate_messages",
    "validate_system",
]
