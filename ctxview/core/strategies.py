"""Eviction strategies: small named objects behind one interface.

A strategy trims a :class:`~ctxview.core.window.Window` by calling ``window.evict(n)``
until the window satisfies it. Adding one means writing a class with ``name``, ``description``
and ``truncate`` — or a plain function of the window's messages and a :class:`Budget` — and
passing it to :func:`register_strategy`; ``ConversationContext`` does not change.

The built-in eviction rules are functions of integers (:func:`seed_evictions` and the others):
a Window's truncation and the request replay's range form (``ctxview.core.requests``) both
call them, so each rule is stated once for both window sources.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, overload, runtime_checkable

from ctxview.core.providers.openai_wire import stored_reasoning
from ctxview.core.window import Entry, Window


@runtime_checkable
class Strategy(Protocol):
    name: str
    description: str

    def truncate(self, window: Window) -> None:
        """Evict from the front of ``window.tail`` until the window satisfies the strategy."""


def _is_tool_result_message(message: Mapping[str, Any]) -> bool:
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


def _calls_tools(message: Mapping[str, Any]) -> bool:
    """An assistant message holding a ``tool_use`` block."""
    if message.get("role") != "assistant":
        return False
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_use" for b in content
    )


#: the longest run of system messages read as lying inside a call's exchange (Codex writes one or
#: two developer messages there): it bounds the look-back of :func:`joins_previous`, so a hostile
#: run of system messages costs no quadratic work
_SYSTEM_RUN = 64


def joins_previous(messages: Indexed, x: int, lo: int = 0) -> bool:
    """Message ``x`` of ``messages`` belongs with the messages before it (looking back no
    further than ``lo``); the safe strategies never start a kept tail with such a message:

    * a user message holding a ``tool_result`` block (its tool_use is before it);
    * a system message inside a call's exchange (after an assistant message with tool_use
      blocks or a message answering them, over other system messages): the Responses API pairs
      an output with its call by id across the input, and Codex sends a developer message
      between a call and its output;
    * the assistant item that follows a reasoning item of a stored response: the Responses API
      refuses the one without the other (``docs/protocol.md``, OpenAI)."""
    m = messages[x]
    if _is_tool_result_message(m):
        return True
    if x > lo and m.get("role") == "assistant":
        return stored_reasoning(messages[x - 1]) is not None
    stop = max(lo, x - _SYSTEM_RUN)
    while x > stop and m.get("role") == "system":
        x -= 1
        m = messages[x]
        if _is_tool_result_message(m) or _calls_tools(m):
            return True
    return False


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
        if not assistant[hi - 1]:
            return 1
        # a response read as one message per item (an OpenAI session): its run of assistant
        # messages stays whole, so the results that follow find their calls
        k = 1
        while k < n and assistant[hi - k - 1]:
            k += 1
        return k
    k = 1
    while k < n:
        k += 1
        x = hi - k
        if assistant[x]:
            # the whole run of assistant messages: one response read as one message per item
            # (an OpenAI session) holds its calls in any of them
            while k < n and assistant[hi - k - 1]:
                k += 1
            return k
        if not tool_result[x]:
            return k - 1  # the partner is not in the tail (already evicted): keep what we have
    return k


def _splits_a_response(lo: int, hi: int, x: int, tool_result: Indexed, assistant: Indexed) -> bool:
    """A tail starting at ``x`` keeps the end of a run of assistant messages (one response read
    as one message per item: an OpenAI session) and the tool results after it, whose calls may
    be in the run's evicted part."""
    if x <= lo or not assistant[x] or not assistant[x - 1]:
        return False
    y = x
    while y < hi and assistant[y]:
        y += 1
    return y < hi and bool(tool_result[y])


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
        while keep > floor and (
            tool_result[hi - keep] or _splits_a_response(lo, hi, hi - keep, tool_result, assistant)
        ):
            keep -= 1
    if keep < n:
        return n - keep if pinned is None else _settled(hi - keep, hi, pinned) - lo
    return 0


# The built-in eviction rules, each a function of integers: the tail is the messages at positions
# ``lo .. hi-1`` (oldest first) after the pinned first message; ``cut``: anything was evicted
# since the segment began; ``tool_result`` (a message answering calls: :func:`joins_previous`),
# ``assistant``, ``pinned`` (None: no pins): flags by position; ``tokens``: the window's estimate (system prompt included) and ``tok`` each message's
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
        # from ``start``: a cut made above inside a run of assistant messages is seen as one
        safe = _safe_evictions(start, hi, cut, hi - lo, tool_result, assistant, pinned)
        lo = max(lo, start + safe)
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


class _Messages:
    """By position in a Window's tail: its message."""

    __slots__ = ("_tail",)

    def __init__(self, tail: deque[Entry]) -> None:
        self._tail = tail

    def __getitem__(self, x: int) -> dict[str, Any]:
        return self._tail[x][1]


class _Assistants:
    """By position in a Window's tail: an assistant message."""

    __slots__ = ("_tail",)

    def __init__(self, tail: deque[Entry]) -> None:
        self._tail = tail

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


def _views(window: Window) -> tuple[JoinsPrevious, _Assistants]:
    """The flags a rule reads of ``window``'s tail, built once a window (its tail is one deque
    for its life)."""
    views: tuple[JoinsPrevious, _Assistants] | None = window.rule_views
    if views is None:
        # computed when read: a rule reads a few at the tail's two ends
        tail = window.tail
        views = window.rule_views = (JoinsPrevious(_Messages(tail)), _Assistants(tail))
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
    #: never leaves half a tool pair in the window (the context pins the answers of a first
    #: message's tool_use for it: the rules evict by position and know no pairs before ``lo``)
    keeps_tool_pairs = True

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
    keeps_tool_pairs = False
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


# -- strategies as plain functions ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Budget:
    """What a strategy function is given besides the messages: the context's limits and its
    token count now (system prompt, tool definitions and every window message, by the
    context's ``token_counter``); ``count(message)`` counts one message the same way."""

    max_messages: int
    max_tokens: int
    tokens: int
    low_water_fraction: float
    count: Callable[[Mapping[str, Any]], int]


#: ``(window_messages, budget) -> how many to drop`` (the oldest after the first), or the
#: messages to keep: the first (optional) and the newest, in order
StrategyFunction = Callable[[list[dict[str, Any]], Budget], "int | Sequence[Mapping[str, Any]]"]


class FunctionStrategy:
    """A strategy written as a plain function (:data:`StrategyFunction`).

    The function sees the window's first message and the messages it may drop, oldest first
    (pinned messages the eviction front passed are kept aside: never dropped, not shown), and
    returns how many of the oldest after the first to drop, or the list it keeps. The messages
    are the window's own: read them, do not change them. Nothing else is done for it: to keep
    tool pairs whole, return ``safe_cut(messages, n)``."""

    __slots__ = ("description", "function", "name")

    def __init__(self, name: str, function: StrategyFunction, description: str = "") -> None:
        self.name = name
        self.function = function
        self.description = description or (function.__doc__ or "").strip().split("\n")[0]

    def truncate(self, window: Window) -> None:
        first = [window.first[1]] if window.first is not None else []
        messages = first + [e[1] for e in window.tail]
        budget = Budget(
            window.max_messages,
            window.max_context_tokens,
            window.counted_tokens(),
            window.low_water_fraction,
            window.count_message,
        )
        n = _drop_count(self.name, self.function(messages, budget), messages, len(first))
        if n:
            window.evict(n)

    def __repr__(self) -> str:
        return f"FunctionStrategy({self.name!r}, {self.function!r})"


def _drop_count(name: str, result: object, messages: list[dict[str, Any]], n_first: int) -> int:
    droppable = len(messages) - n_first
    if isinstance(result, int) and not isinstance(result, bool):
        if not 0 <= result <= droppable:
            raise ValueError(
                f"strategy {name!r} asked to drop {result} of the {droppable} messages after "
                "the first (the first message is never dropped)"
            )
        return result
    if isinstance(result, (str, bytes, Mapping)) or not isinstance(result, Sequence):
        raise TypeError(
            f"strategy {name!r} returned {type(result).__name__}: return how many to drop (an "
            "int) or the messages to keep (a list)"
        )
    kept = list(result)
    # the kept run of the newest, matched from the end; what comes before it in ``kept`` may
    # only be the first message (``messages[:1] + messages[-k:]`` repeats it in a short window)
    j = 0
    while j < len(kept) and j < droppable and _same(kept[-1 - j], messages[-1 - j]):
        j += 1
    if not all(n_first and _same(m, messages[0]) for m in kept[: len(kept) - j]):
        raise ValueError(
            f"strategy {name!r} returned messages to keep that are not the newest of the window "
            "in order (the window drops its oldest messages after the first: keep the first, "
            "optionally, and a run of the newest)"
        )
    return droppable - j


def _same(a: object, b: object) -> bool:
    return a is b or a == b


class _FlagsOf:
    """A flag of each message of a list, by tail position (the list without its first)."""

    __slots__ = ("_messages", "_test")

    def __init__(
        self, messages: Sequence[Mapping[str, Any]], test: Callable[[Mapping[str, Any]], bool]
    ) -> None:
        self._messages = messages
        self._test = test

    def __getitem__(self, x: int) -> bool:
        return self._test(self._messages[x + 1])


class JoinsPrevious:
    """:func:`joins_previous` of each message of ``messages`` by position plus ``offset``,
    looking back no further than ``lo`` (a window's tail: what was evicted before it is not
    read, so every window source flags a message alike)."""

    __slots__ = ("_lo", "_messages", "_offset")

    def __init__(self, messages: Indexed, lo: int = 0, offset: int = 0) -> None:
        self._messages = messages
        self._lo = lo
        self._offset = offset

    def __getitem__(self, x: int) -> bool:
        return joins_previous(self._messages, x + self._offset, self._lo)


def safe_cut(messages: Sequence[Mapping[str, Any]], drop: int) -> int:
    """``drop`` (how many of the oldest messages after the first leave ``messages``, a window
    whose first message is kept) moved so that no tool_result loses its tool_use: never the
    newest message nor the tool_use its results answer, and the kept run never starts with a
    tool_result message. The rule ``pair-safe`` applies, for a strategy function to reuse."""
    n = len(messages) - 1
    if n <= 0:
        return 0
    drop = max(0, min(int(drop), n))
    tool_result = JoinsPrevious(messages, 1, 1)
    assistant = _FlagsOf(messages, lambda m: m.get("role") == "assistant")
    return _safe_evictions(0, n, drop > 0, n - drop, tool_result, assistant, None)


STRATEGIES: dict[str, Strategy] = {}
#: the names of the strategies ctxview ships (never replaced without ``replace=True``)
BUILT_IN: frozenset[str] = frozenset()


@overload
def register_strategy(strategy: Strategy, /, *, replace: bool = False) -> Strategy: ...


@overload
def register_strategy(
    name: str,
    function: StrategyFunction,
    /,
    *,
    description: str = "",
    replace: bool = False,
) -> Strategy: ...


def register_strategy(
    strategy: Strategy | str,
    function: StrategyFunction | None = None,
    /,
    *,
    description: str = "",
    replace: bool = False,
) -> Strategy:
    """Make a strategy known by its name (``--strategy``, session files, ``ctx.strategy =
    name``): an object with ``name``, ``description`` and ``truncate(window)``, or a name and
    a plain function (:class:`FunctionStrategy`). Returns the strategy.

    ValueError when another strategy has the name already (a built-in one included) unless
    ``replace=True``; registering the same one again does nothing."""
    if isinstance(strategy, str):
        if function is None or not callable(function):
            raise TypeError("register_strategy(name, function): the function is missing")
        existing = STRATEGIES.get(strategy)
        if isinstance(existing, FunctionStrategy) and existing.function is function:
            return existing
        made: Strategy = FunctionStrategy(strategy, function, description)
    else:
        if function is not None:
            raise TypeError("register_strategy(strategy): a strategy object takes no function")
        if not isinstance(strategy, Strategy):
            raise TypeError(
                f"not a strategy: {strategy!r} (it needs name, description and truncate(window); "
                "or pass a name and a function)"
            )
        made = strategy
    name = made.name
    if not isinstance(name, str) or not name:
        raise ValueError(f"a strategy's name is a non-empty string, got {name!r}")
    existing = STRATEGIES.get(name)
    if existing is not None and existing is not made and not replace:
        what = "a built-in strategy" if name in BUILT_IN else "a strategy"
        raise ValueError(
            f"{what} named {name!r} is registered already: pass replace=True to replace it"
        )
    STRATEGIES[name] = made
    return made


for _s in (
    SeedStrategy(),
    PairSafeStrategy(),
    TokenBudgetStrategy(),
    LowWaterStrategy(),
    ClearToolUsesStrategy(),
    ClearThinkingStrategy(),
):
    register_strategy(_s)
BUILT_IN = frozenset(STRATEGIES)


def get_strategy(name: str | Strategy | StrategyFunction) -> Strategy:
    """The strategy called ``name``, a strategy object as it is, or a plain function as a
    :class:`FunctionStrategy` named after it (its registered one when it is registered);
    ValueError naming the known ones otherwise."""
    if not isinstance(name, str):
        if isinstance(name, Strategy):
            return name
        if callable(name):
            for registered in STRATEGIES.values():
                if isinstance(registered, FunctionStrategy) and registered.function is name:
                    return registered
            return FunctionStrategy(getattr(name, "__name__", "custom"), name)
        raise ValueError(f"not a strategy: {name!r}")
    try:
        return STRATEGIES[name]
    except KeyError:
        known = ", ".join(sorted(STRATEGIES))
        raise ValueError(
            f"unknown strategy {name!r} (known: {known}); a strategy of your own is known once "
            f"registered: ctxview.register_strategy({name!r}, function)"
        ) from None
