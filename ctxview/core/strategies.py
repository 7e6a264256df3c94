"""Eviction strategies: small named objects behind one interface.

A strategy trims a :class:`~ctxview.core.window.Window` by calling ``window.evict(n)``
until the window satisfies it. Adding one means writing a class with ``name``, ``description``
and ``truncate`` and passing it to :func:`register_strategy`; ``ConversationContext`` does
not change.
"""

from __future__ import annotations

import math
from typing import Protocol, runtime_checkable

from ctxview.core.window import Window


@runtime_checkable
class Strategy(Protocol):
    name: str
    description: str

    def truncate(self, window: Window) -> None:
        """Evict from the front of ``window.tail`` until the window satisfies the strategy."""


def _pair_safe_front(window: Window) -> None:
    """After a cut, drop messages until the kept tail starts with an assistant message.

    A tail that starts with a user message after a gap may begin with a tool_result whose tool_use
    was evicted, and the roles would not alternate after the pinned first message.
    """
    if not window.cut:
        return
    tail = window.tail
    while tail and tail[0][1].get("role") != "assistant":
        window.evict(1)


class SeedStrategy:
    """Exactly the Java ``_truncateIfNeeded``: keep messages[0] plus the newest max-1."""

    name = "seed"
    description = "the tutorial's rule: first message + newest max-1 (may orphan a tool_result)"

    def truncate(self, window: Window) -> None:
        excess = len(window.tail) + 1 - window.max_messages
        if excess > 0:
            window.evict(excess)


class PairSafeStrategy:
    """The seed's cut, then drop until the kept tail starts with an assistant message."""

    name = "pair-safe"
    description = "the seed's cut, moved forward so the tail starts with an assistant turn"

    def truncate(self, window: Window) -> None:
        excess = len(window.tail) + 1 - window.max_messages
        if excess > 0:
            window.evict(excess)
        if window.cut and window.tail and window.tail[0][1].get("role") != "assistant":
            _pair_safe_front(window)


class TokenBudgetStrategy:
    """First message + the longest run of newest messages within ``max_context_tokens``."""

    name = "token-budget"
    description = "first + newest messages that fit max_context_tokens (system included), pair-safe"

    def truncate(self, window: Window) -> None:
        window.evict_to_size(window.max_messages)
        while window.tail and window.tokens > window.max_context_tokens:
            window.evict(1)
        _pair_safe_front(window)


class LowWaterStrategy:
    """Cache-friendly: when max is crossed, trim to ``low_water_fraction * max`` in one go."""

    name = "low-water"
    description = "on crossing max, trim to a fraction of max at once (prefix cache survives)"

    def truncate(self, window: Window) -> None:
        if window.size > window.max_messages:
            target = max(1, math.floor(window.max_messages * window.low_water_fraction))
            window.evict_to_size(target)
        _pair_safe_front(window)


STRATEGIES: dict[str, Strategy] = {}


def register_strategy(strategy: Strategy) -> Strategy:
    STRATEGIES[strategy.name] = strategy
    return strategy


for _s in (SeedStrategy(), PairSafeStrategy(), TokenBudgetStrategy(), LowWaterStrategy()):
    register_strategy(_s)


def get_strategy(name: str | Strategy) -> Strategy:
    """The strategy called ``name``; ValueError naming the known ones otherwise."""
    if not isinstance(name, str):
        if isinstance(name, Strategy):
            return name
        raise ValueError(f"not a strategy: {name!r}")
    try:
        return STRATEGIES[name]
    except KeyError:
        known = ", ".join(sorted(STRATEGIES))
        raise ValueError(f"unknown strategy {name!r} (known: {known})") from None
