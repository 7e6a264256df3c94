"""Eviction strategies: small named objects behind one interface.

A strategy trims a :class:`~ctxview.core.window.Window` by calling ``window.evict(n)``
until the window satisfies it. Adding one means writing a class with ``name``, ``description``
and ``truncate`` and passing it to :func:`register_strategy`; ``ConversationContext`` does
not change.

The built-in eviction rules are functions of integers (:func:`seed_evictions` and the others):
a Window's truncation and the request replay's range form (``ctxview.core.requests``) both
call them, so each rule is stated once for both window sources.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from ctxview.core.window import Entry, Window


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


class Indexed(Protocol):
    """A value of each message, by position (a list, a deque, or a view computing it)."""

    def __getitem__(self, x: int, /) -> Any: ...


def _floor(lo: int, hi: int, tool_result: Indexed, assistant: Indexed) -> int:
    """How many of the newest tail messages ``lo .. hi-1`` a safe strategy must keep, at least.

    The message just added (the newest) is always kept. When it holds tool_results, the assistant
    message whose tool_use they answer is kept with it (walking back over consecutive user
    tool_result messages, which the API merges into one turn), even if that takes the window past
    max: a tool_result without its tool_use is a 400.
    """
    n = hi - lo
    if n == 0:
        return 0
    if not tool_result[hi - 1]:
        return 1
    k = 1
    while k < n:
        k += 1
        x = hi - k
        if assistant[x]:
            return k
        if not tool_result[x]:
            return k - 1  # the partner is not in the tail (already evicted): keep what we have
    return k


def _settled(lo: int, hi: int, pinned: Indexed | None) -> int:
    """``lo`` past the pinned messages at the front of the tail after an eviction: they join
    ``Window.held`` (never the newest, which strategies find at the end of the tail)."""
    if pinned is not None:
        while hi - lo > 1 and pinned[lo]:
            lo += 1
    return lo


def _safe_evictions(
    lo: int,
    hi: int,
    cut: bool,
    keep: int,
    tool_result: Indexed,
    assistant: Indexed,
    pinned: Indexed | None,
) -> int:
    """How many to evict to keep the newest ``keep`` tail messages, moved so that no tool_result
    loses its tool_use.

    ``keep`` is raised to :func:`_floor` (the newest message, with its tool_use partner). Then,
    if anything was ever evicted and the kept tail would start with a user message holding a
    ``tool_result`` block, that message is evicted too, and no further: a plain user message or an
    assistant message may start the tail (the API merges consecutive user turns).
    """
    n = hi - lo
    floor = _floor(lo, hi, tool_result, assistant)
    keep = min(n, max(keep, floor))
    if keep < n or cut:
        while keep > floor and tool_result[hi - keep]:
            keep -= 1
    if keep < n:
        return n - keep if pinned is None else _settled(hi - keep, hi, pinned) - lo
    return 0


# The built-in eviction rules, each a function of integers: the tail is the messages at positions
# ``lo .. hi-1`` (oldest first) after the pinned first message; ``cut``: anything was evicted
# since the segment began; ``tool_result``, ``assistant``, ``pinned`` (None: no pins): flags by
# position; ``tokens``: the window's estimate (system prompt included) and ``tok`` each message's
# (read by token-budget alone). Each returns how many of the oldest tail messages leave (a
# pinned one among them joins ``Window.held`` instead). A Window passes its own numbers
# (``_RuleStrategy.truncate``), the request replay its own (``requests.range_form``), so a
# rule is stated once for both, and neither builds an object a message.


def seed_evictions(
    lo: int,
    hi: int,
    cut: bool,
    max_messages: int,
    low_water_fraction: float,
    max_tokens: int,
    tool_result: Indexed,
    assistant: Indexed,
    pinned: Indexed | None,
    tokens: int,
    tok: Indexed,
) -> int:
    """:class:`SeedStrategy`'s rule."""
    excess = hi - lo + 1 - max_messages
    if excess <= 0:
        return 0
    if excess >= hi - lo:
        return hi - lo
    return excess if pinned is None else _settled(lo + excess, hi, pinned) - lo


def pair_safe_evictions(
    lo: int,
    hi: int,
    cut: bool,
    max_messages: int,
    low_water_fraction: float,
    max_tokens: int,
    tool_result: Indexed,
    assistant: Indexed,
    pinned: Indexed | None,
    tokens: int,
    tok: Indexed,
) -> int:
    """:class:`PairSafeStrategy`'s rule."""
    keep = max_messages - 1
    if hi - lo > keep or cut:
        return _safe_evictions(lo, hi, cut, keep, tool_result, assistant, pinned)
    return 0


def token_budget_evictions(
    lo: int,
    hi: int,
    cut: bool,
    max_messages: int,
    low_water_fraction: float,
    max_tokens: int,
    tool_result: Indexed,
    assistant: Indexed,
    pinned: Indexed | None,
    tokens: int,
    tok: Indexed,
) -> int:
    """:class:`TokenBudgetStrategy`'s rule: evictions in steps, each of which may set ``cut``."""
    start = lo
    keep = max_messages - 1
    if hi - lo > keep:
        e = hi - lo - max(keep, _floor(lo, hi, tool_result, assistant))
        if e > 0:
            for x in range(lo, lo + e):
                if pinned is None or not pinned[x]:  # (a pinned message stays, in ``held``)
                    tokens -= tok[x]
            lo += e
            if pinned is not None:
                lo = _settled(lo, hi, pinned)
            cut = True
    floor = _floor(lo, hi, tool_result, assistant)
    while hi - lo > floor and tokens > max_tokens:
        if pinned is None:
            tokens -= tok[lo]
            lo += 1
        else:
            if not pinned[lo]:
                tokens -= tok[lo]
            lo = _settled(lo + 1, hi, pinned)
        cut = True
    if cut:
        lo += _safe_evictions(lo, hi, cut, hi - lo, tool_result, assistant, pinned)
    return lo - start


def low_water_evictions(
    lo: int,
    hi: int,
    cut: bool,
    max_messages: int,
    low_water_fraction: float,
    max_tokens: int,
    tool_result: Indexed,
    assistant: Indexed,
    pinned: Indexed | None,
    tokens: int,
    tok: Indexed,
) -> int:
    """:class:`LowWaterStrategy`'s rule."""
    if hi - lo + 1 > max_messages:  # the first and the tail: the messages counted against max
        target = max(2, math.floor(max_messages * low_water_fraction))
        return _safe_evictions(lo, hi, cut, target - 1, tool_result, assistant, pinned)
    if cut:
        return _safe_evictions(lo, hi, cut, hi - lo, tool_result, assistant, pinned)
    return 0


#: the signature of the rules above
EvictionRule = Callable[
    [int, int, bool, int, float, int, Indexed, Indexed, "Indexed | None", int, Indexed], int
]


class _ToolResults:
    """By position in a Window's tail: a user message holding a ``tool_result`` block, computed
    when read (a rule reads a few at the tail's two ends)."""

    __slots__ = ("_tail",)

    def __init__(self, tail: deque[Entry]) -> None:
        self._tail = tail

    def __getitem__(self, x: int) -> bool:
        return _is_tool_result_message(self._tail[x][1])


class _Assistants(_ToolResults):
    """By position in a Window's tail: an assistant message."""

    __slots__ = ()

    def __getitem__(self, x: int) -> bool:
        return self._tail[x][1].get("role") == "assistant"


class _Pinned:
    """By position in a Window's tail: a pinned message."""

    __slots__ = ("_pins", "_tail")

    def __init__(self, tail: deque[Entry], pins: set[int]) -> None:
        self._tail = tail
        self._pins = pins

    def __getitem__(self, x: int) -> bool:
        return self._tail[x][0] in self._pins


def _views(window: Window) -> tuple[_ToolResults, _Assistants]:
    """The flags a rule reads of ``window``'s tail, built once a window (its tail is one deque
    for its life)."""
    views: tuple[_ToolResults, _Assistants] | None = window.rule_views
    if views is None:
        views = window.rule_views = (_ToolResults(window.tail), _Assistants(window.tail))
    return views


def min_keep(window: Window) -> int:
    """How many of the newest tail messages of ``window`` a safe strategy must keep, at least
    (:func:`_floor`)."""
    return _floor(0, len(window.tail), *_views(window))


class _RuleStrategy:
    """A built-in strategy: its rule (``rule``, a function of integers) run on a Window."""

    name: str
    description: str

    #: the rule reads ``tokens`` and ``tok`` (the others never estimate a message)
    reads_tokens = False

    @staticmethod
    def rule(*args: Any) -> int:
        raise NotImplementedError

    def truncate(self, window: Window) -> None:
        tail = window.tail
        views = window.rule_views or _views(window)
        tokens, tok = window.token_terms() if self.reads_tokens else (0, ())
        n = self.rule(
            0,
            len(tail),
            window.cut,
            window.max_messages,
            window.low_water_fraction,
            window.max_context_tokens,
            views[0],
            views[1],
            _Pinned(tail, window.pins) if window.pins else None,
            tokens,
            tok,
        )
        if n > 0:
            window.evict(n)


class SeedStrategy(_RuleStrategy):
    """Exactly the Java ``_truncateIfNeeded``: keep messages[0] plus the newest max-1.

    At max 1 this evicts the message just added (the Java semantics); the app warns before such a
    send. It may orphan a tool_result, which the API rejects with a 400.
    """

    name = "seed"
    description = "the tutorial's rule: first message + newest max-1 (may orphan a tool_result)"
    rule = staticmethod(seed_evictions)


class PairSafeStrategy(_RuleStrategy):
    """The seed's cut, then one step more when the kept tail would start with tool results.

    Rules: keep the first message plus the newest max-1; if anything was ever evicted and the kept
    tail starts with a user message holding a ``tool_result`` block, evict that message too, and
    no further. The message just added is never evicted (at max 1 the window is the first message
    plus the newest); when the newest message holds tool_results and its tool_use partner does not
    fit (max 2), both are kept and the window is max+1 (``Window.over_max``).
    """

    name = "pair-safe"
    description = "the seed's cut, moved past a leading tool_result; never drops the newest message"
    rule = staticmethod(pair_safe_evictions)


class TokenBudgetStrategy(_RuleStrategy):
    """First message + the newest messages that fit ``max_context_tokens``, cut pair-safely.

    The message cap applies as in ``pair-safe``. Messages are then evicted oldest first while the
    estimate (system prompt included) is over budget, but never the message just added nor the
    tool_use its tool_results answer: a window still over budget is flagged
    (``Window.over_token_budget``, the ``over_token_budget`` warning), not emptied.
    """

    name = "token-budget"
    description = "first + newest messages that fit max_context_tokens (system included), pair-safe"
    rule = staticmethod(token_budget_evictions)
    reads_tokens = True


class LowWaterStrategy(_RuleStrategy):
    """Cache-friendly: when max is crossed, trim to ``max(2, floor(max * low_water_fraction))``.

    One deep cut every few turns instead of one message per turn, so the cached prompt prefix
    survives between cuts. The cut is pair-safe (as ``pair-safe``) and never drops the message
    just added.
    """

    name = "low-water"
    description = "on crossing max, trim to a fraction of max at once (prefix cache survives)"
    rule = staticmethod(low_water_evictions)


TOOL_USES_EDIT = "clear_tool_uses_20250919"
THINKING_EDIT = "clear_thinking_20251015"
#: strategy name -> the context edit it models (:mod:`ctxview.core.clearing` applies them; the
#: names live here so a context whose strategy is a plain one never imports it)
STRATEGY_EDITS = {"clear-tool-uses": TOOL_USES_EDIT, "clear-thinking": THINKING_EDIT}


class ClearToolUsesStrategy:
    """Anthropic's ``clear_tool_uses_20250919`` context edit, as a strategy: nothing is ever
    evicted (so no pair breaks); what is sent is an edited copy in which the results of old tool
    uses are a placeholder (:mod:`ctxview.core.clearing`; parameters: ``context_editing``). The
    context recognises it by name (``STRATEGY_EDITS``) and keeps the edited copy."""

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
