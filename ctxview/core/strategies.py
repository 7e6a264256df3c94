"""Eviction strategies: small named objects behind one interface.

A strategy trims a :class:`~ctxview.core.window.Window` by calling ``window.evict(n)``
until the window satisfies it. Adding one means writing a class with ``name``, ``description``
and ``truncate`` and passing it to :func:`register_strategy`; ``ConversationContext`` does
not change.
"""

from __future__ import annotations

import math
from typing import Any, Protocol, runtime_checkable

from ctxview.core.window import Window


@runtime_checkable
class Strategy(Protocol):
    name: str
    description: str

    def truncate(self, window: Window) -> None:
        """Evict from the front of ``window.tail`` until the window satisfies the strategy."""


def _is_tool_result_message(message: dict[str, Any]) -> bool:
    """A user message holding at least one ``tool_result`` block."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if not isinstance(content, list):
        return False
    return any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)


def min_keep(window: Window) -> int:
    """How many of the newest tail messages a safe strategy must keep, at least.

    The message just added (the newest) is always kept. When it holds tool_results, the assistant
    message whose tool_use they answer is kept with it (walking back over consecutive user
    tool_result messages, which the API merges into one turn), even if that takes the window past
    max: a tool_result without its tool_use is a 400.
    """
    tail = window.tail
    n = len(tail)
    if n == 0:
        return 0
    if not _is_tool_result_message(tail[-1][1]):
        return 1
    k = 1
    while k < n:
        k += 1
        if tail[-k][1].get("role") == "assistant":
            return k
        if not _is_tool_result_message(tail[-k][1]):
            return k - 1  # the partner is not in the tail (already evicted): keep what we have
    return k


def safe_cut(window: Window, keep: int) -> None:
    """Keep the newest ``keep`` tail messages, moved so that no tool_result loses its tool_use.

    ``keep`` is raised to :func:`min_keep` (the newest message, with its tool_use partner). Then,
    if anything was ever evicted and the kept tail would start with a user message holding a
    ``tool_result`` block, that message is evicted too, and no further: a plain user message or an
    assistant message may start the tail (the API merges consecutive user turns).
    """
    tail = window.tail
    n = len(tail)
    floor = min_keep(window)
    keep = min(n, max(keep, floor))
    if keep < n or window.cut:
        while keep > floor and _is_tool_result_message(tail[n - keep][1]):
            keep -= 1
    if keep < n:
        window.evict(n - keep)


class SeedStrategy:
    """Exactly the Java ``_truncateIfNeeded``: keep messages[0] plus the newest max-1.

    At max 1 this evicts the message just added (the Java semantics); the app warns before such a
    send. It may orphan a tool_result, which the API rejects with a 400.
    """

    name = "seed"
    description = "the tutorial's rule: first message + newest max-1 (may orphan a tool_result)"

    def truncate(self, window: Window) -> None:
        excess = len(window.tail) + 1 - window.max_messages
        if excess > 0:
            window.evict(excess)


class PairSafeStrategy:
    """The seed's cut, then one step more when the kept tail would start with tool results.

    Rules: keep the first message plus the newest max-1; if anything was ever evicted and the kept
    tail starts with a user message holding a ``tool_result`` block, evict that message too, and
    no further. The message just added is never evicted (at max 1 the window is the first message
    plus the newest); when the newest message holds tool_results and its tool_use partner does not
    fit (max 2), both are kept and the window is max+1 (``Window.over_max``).
    """

    name = "pair-safe"
    description = "the seed's cut, moved past a leading tool_result; never drops the newest message"

    def truncate(self, window: Window) -> None:
        keep = window.max_messages - 1
        if len(window.tail) > keep or window.cut:
            safe_cut(window, keep)


class TokenBudgetStrategy:
    """First message + the newest messages that fit ``max_context_tokens``, cut pair-safely.

    The message cap applies as in ``pair-safe``. Messages are then evicted oldest first while the
    estimate (system prompt included) is over budget, but never the message just added nor the
    tool_use its tool_results answer: a window still over budget is flagged
    (``Window.over_token_budget``, the ``over_token_budget`` warning), not emptied.
    """

    name = "token-budget"
    description = "first + newest messages that fit max_context_tokens (system included), pair-safe"

    def truncate(self, window: Window) -> None:
        keep = window.max_messages - 1
        tail = window.tail
        if len(tail) > keep:
            window.evict(len(tail) - max(keep, min_keep(window)))
        floor = min_keep(window)
        while len(tail) > floor and window.tokens > window.max_context_tokens:
            window.evict(1)
        if window.cut:
            safe_cut(window, len(tail))


class LowWaterStrategy:
    """Cache-friendly: when max is crossed, trim to ``max(2, floor(max * low_water_fraction))``.

    One deep cut every few turns instead of one message per turn, so the cached prompt prefix
    survives between cuts. The cut is pair-safe (as ``pair-safe``) and never drops the message
    just added.
    """

    name = "low-water"
    description = "on crossing max, trim to a fraction of max at once (prefix cache survives)"

    def truncate(self, window: Window) -> None:
        if window.size > window.max_messages:
            target = max(2, math.floor(window.max_messages * window.low_water_fraction))
            safe_cut(window, target - 1)
        elif window.cut:
            safe_cut(window, len(window.tail))


class ClearToolUsesStrategy:
    """Anthropic's ``clear_tool_uses_20250919`` context edit, as a strategy: nothing is ever
    evicted (so no pair breaks); what is sent is an edited copy in which the results of old tool
    uses are a placeholder (:mod:`ctxview.core.clearing`; parameters: ``context_editing``). The
    context recognises it by name (``clearing.STRATEGY_EDITS``) and keeps the edited copy."""

    name = "clear-tool-uses"
    description = (
        "Anthropic's context editing: never evicts; old tool results sent as a placeholder"
    )

    def truncate(self, window: Window) -> None:
        return None


class ClearThinkingStrategy:
    """Anthropic's ``clear_thinking_20251015`` context edit, as a strategy: nothing is evicted;
    the thinking blocks of older assistant turns are left out of what is sent."""

    name = "clear-thinking"
    description = "Anthropic's context editing: never evicts; thinking of older turns not sent"

    def truncate(self, window: Window) -> None:
        return None


STRATEGIES: dict[str, Strategy] = {}


def register_strategy(strategy: Strategy) -> Strategy:
    STRATEGIES[strategy.name] = strategy
    return strategy


for _s in (
    SeedStrategy(),
    PairSafeStrategy(),
    TokenBudgetStrategy(),
    LowWaterStrategy(),
    ClearToolUsesStrategy(),
    ClearThinkingStrategy(),
):
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
