"""Checks made before a request goes out that are not protocol errors (pure: no UI, no SDK).

Kept apart from the chat loop so the headless agent loop can use it too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ctxview.textfmt import plural


def not_in_window(window_ids: Sequence[int], message_id: int, max_messages: int) -> str | None:
    """Why the message just added will not be sent, or None when the window holds it.

    A strategy can evict the newest message at once (``max 1`` keeps only the pinned first
    message; ``pair-safe`` drops a tail that starts with a user message): the request would go
    out without what the user just typed.
    """
    if message_id in window_ids:
        return None
    return (
        f"your message #{message_id} is not in the window (max {max_messages}, "
        f"{plural(len(window_ids), 'message')} kept): "
        "the model will not see it"
    )


def pair_safe_would_fix(
    entries: Sequence[tuple[int, dict[str, Any]]], max_messages: int, cut: bool, system: Any = None
) -> bool:
    """Whether switching to ``pair-safe`` makes this window valid (messages the seed evicted never
    come back, so it cannot always: when the newest message is itself the orphaned tool_result,
    it stays, and so does the error)."""
    from ctxview.core.protocol import check_protocol, errors
    from ctxview.core.strategies import PairSafeStrategy
    from ctxview.core.window import Window

    window = Window(max_messages, 10**12, 0.5, system)
    for entry in entries:
        window.append(entry)
    window.cut = cut
    PairSafeStrategy().truncate(window)
    return not errors(check_protocol([m for _, m in window], system))


def raised_max(window_size: int, max_messages: int) -> int:
    """A max that leaves room for the message and a reply after the current window."""
    return max(max_messages, window_size) + 2
