"""The window a strategy works on: the pinned first message plus a deque of the newest.

Pinned messages (``Window.pins``, ids a user pinned) are never evicted: when the eviction front
reaches one, it moves from the front of ``tail`` to ``held`` (the pinned messages the strategy has
passed, in id order) instead of leaving. A message unpinned while in ``held`` is released: it
leaves before the strategy's next truncation (it had already passed it), never earlier. The window reads ``first``, ``held``, ``tail``: the same
order as before, so a request never changes shape because of a pin. Strategies count and cut
``tail`` as before (``first`` + the newest max-1): the held pinned messages are kept on top of
that, and their tokens count toward ``max_context_tokens``.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ctxview.core.counting import ESTIMATE, Estimate, RequestCounter
from ctxview.core.tokens import estimate_message

#: One message in a context: ``(id, message)``. A plain tuple keeps the add path cheap.
Entry = tuple[int, dict[str, Any]]


class Window:
    """State a :class:`~ctxview.core.strategies.Strategy` trims.

    Strategies only ever remove the oldest messages after the pinned first (``evict``): that keeps
    every add amortised O(1), whatever the window size.
    """

    __slots__ = (
        "_first_tokens",
        "_held_tokens",
        "_system_tokens",
        "_tail_tok",
        "_tail_tokens",
        "_tools",
        "_tools_tokens",
        "count_message",
        "counter",
        "cut",
        "evicted",
        "first",
        "held",
        "low_water_fraction",
        "max_context_tokens",
        "max_messages",
        "pins",
        "released",
        "request_counter",
        "rule_views",
        "system_prompt",
        "tail",
    )

    def __init__(
        self,
        max_messages: int,
        max_context_tokens: int,
        low_water_fraction: float,
        system_prompt: Any = "",
    ) -> None:
        self.first: Entry | None = None
        self.tail: deque[Entry] = deque()
        #: pinned messages the eviction front passed (older than every tail message), id order
        self.held: list[Entry] = []
        #: ids of pinned messages (the first message is pinned without being listed here)
        self.pins: set[int] = set()
        #: ``held`` holds a message unpinned since: evicted before the next truncation
        self.released = False
        self._held_tokens: int | None = None
        self.max_messages = max_messages
        self.max_context_tokens = max_context_tokens
        self.low_water_fraction = low_water_fraction
        self.system_prompt = system_prompt
        #: Entries evicted by the current truncation, in the order they left.
        self.evicted: list[Entry] = []
        #: True once anything was evicted: the tail no longer follows the first message directly.
        self.cut = False
        self._tail_tok: deque[int] | None = None
        self._tail_tokens: int | None = None
        self._system_tokens: int | None = None
        self._first_tokens: int | None = None
        #: the tool definitions' estimate (sent with every request, counted like the system)
        self._tools_tokens = 0
        self._tools: Any = None
        #: how tokens are counted (``ConversationContext(token_counter=...)``)
        self.counter: Estimate = ESTIMATE
        self.count_message: Callable[[Mapping[str, Any]], int] = estimate_message
        #: a callback counting a whole request, when one was given
        self.request_counter: RequestCounter | None = None
        #: what the strategies' rules read of the tail by position, built once by the first
        #: truncation (``strategies._views``): its flags read the tail deque, which never changes
        self.rule_views: Any = None

    # -- reading -------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.tail) + (self.first is not None) + len(self.held)

    @property
    def counted(self) -> int:
        """The messages the strategy counts against max: the first and the tail (not ``held``)."""
        return len(self.tail) + (self.first is not None)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Entry]:
        if self.first is not None:
            yield self.first
        if self.held:
            yield from self.held
        yield from self.tail

    @property
    def over_max(self) -> int:
        """How many counted messages the window holds beyond max (a kept tool pair, or the
        newest at max 1); held pinned messages are not counted."""
        return max(0, self.counted - self.max_messages)

    @property
    def over_token_budget(self) -> bool:
        """True when the estimate (system prompt included) exceeds ``max_context_tokens``."""
        return self.tokens > self.max_context_tokens

    @property
    def tail_tokens(self) -> int:
        """Estimated tokens of the tail. The first call estimates every tail message once; from
        then on a deque of per-message estimates runs beside the tail, so adds and evictions
        keep the total in O(1)."""
        if self._tail_tokens is None:
            self._tail_tok = deque(self.count_message(e[1]) for e in self.tail)
            self._tail_tokens = sum(self._tail_tok)
        return self._tail_tokens

    def token_terms(self) -> tuple[int, deque[int]]:
        """(:attr:`tokens`, the estimated tokens of each tail message, oldest first). With a
        request callback: its count, and each message's estimate scaled to it."""
        tokens = self.tokens  # (estimates the tail's messages if not done yet)
        assert self._tail_tok is not None
        if self.request_counter is None:
            return tokens, self._tail_tok
        counted = self.counted_tokens()
        ratio = counted / tokens if tokens else 1.0
        return counted, deque(math.ceil(t * ratio) for t in self._tail_tok)

    @property
    def tokens(self) -> int:
        """Estimated tokens of system prompt + tool definitions + window."""
        if self._first_tokens is None:
            self._first_tokens = self.count_message(self.first[1]) if self.first is not None else 0
        if self._system_tokens is None:
            self._system_tokens = self.counter.system(self.system_prompt)
        tail = self._tail_tokens if self._tail_tokens is not None else self.tail_tokens
        if self.held:
            if self._held_tokens is None:
                self._held_tokens = sum(self.count_message(e[1]) for e in self.held)
            return (
                self._system_tokens
                + self._tools_tokens
                + self._first_tokens
                + self._held_tokens
                + tail
            )
        return self._system_tokens + self._tools_tokens + self._first_tokens + tail

    # -- changing ------------------------------------------------------------------------------
    def set_system_prompt(self, system_prompt: Any) -> None:
        self.system_prompt = system_prompt
        self._system_tokens = None

    def set_tools(self, tools: Any) -> None:
        self._tools = tools
        self._tools_tokens = self.counter.tools(tools)

    def set_counter(self, counter: Estimate, request_counter: RequestCounter | None) -> None:
        """Count with ``counter`` from now on (every running total is recounted when read)."""
        self.counter = counter
        self.count_message = counter.message
        self.request_counter = request_counter
        self._tail_tok = self._tail_tokens = None
        self._first_tokens = self._system_tokens = self._held_tokens = None
        self._tools_tokens = counter.tools(self._tools)

    def request_parts(self) -> dict[str, Any]:
        """What a request sends besides its model and settings: ``system``, ``messages``,
        ``tools`` (empty ones left out), for a request-counting callback."""
        parts: dict[str, Any] = {}
        if self.system_prompt:
            parts["system"] = self.system_prompt
        parts["messages"] = [e[1] for e in self]
        if self._tools:
            parts["tools"] = self._tools
        return parts

    def counted_tokens(self) -> int:
        """The window's tokens (system and tools included) by the request callback when there
        is one, else :attr:`tokens`."""
        rc = self.request_counter
        if rc is None:
            return self.tokens
        counted = rc(self.request_parts())
        if isinstance(counted, bool) or not isinstance(counted, int) or counted < 0:
            raise ValueError(f"token_counter returned {counted!r}, not a number of tokens")
        return counted

    def append(self, entry: Entry) -> None:
        if self.first is None:
            self.first = entry
            self._first_tokens = None
            return
        self.tail.append(entry)
        if self._tail_tok is not None and self._tail_tokens is not None:
            value = self.count_message(entry[1])
            self._tail_tok.append(value)
            self._tail_tokens += value

    def evict(self, n: int = 1) -> None:
        """Remove the ``n`` oldest messages after the pinned first; O(n). A pinned one among
        them moves to ``held`` instead (it stays in the window, and is not counted any more)."""
        tail, out, toks, pins = self.tail, self.evicted, self._tail_tok, self.pins
        if n == 1 and tail and (not pins or tail[0][0] not in pins):
            # the common case (one add, one eviction), kept short; with pins, the front of the
            # tail is never pinned once settled (the newest message aside)
            out.append(tail.popleft())
            self.cut = True
            if toks is not None and self._tail_tokens is not None:
                self._tail_tokens -= toks.popleft()
            if pins and len(tail) > 1 and tail[0][0] in pins:
                self._settle_front()
            return
        if pins:
            self._evict_pinned(n)
            return
        k = min(n, len(tail))
        if k <= 0:
            return
        for _ in range(k):
            out.append(tail.popleft())
        self.cut = True
        if toks is not None and self._tail_tokens is not None:
            for _ in range(k):
                self._tail_tokens -= toks.popleft()

    def _evict_pinned(self, n: int) -> None:
        tail, out, toks, pins = self.tail, self.evicted, self._tail_tok, self.pins
        k = min(n, len(tail))
        for _ in range(k):
            entry = tail.popleft()
            value = toks.popleft() if toks is not None else None
            if entry[0] in pins:
                self.held.append(entry)
                if self._held_tokens is not None:
                    self._held_tokens += (
                        value if value is not None else self.count_message(entry[1])
                    )
            else:
                out.append(entry)
            if value is not None and self._tail_tokens is not None:
                self._tail_tokens -= value
        if k > 0:
            self.cut = True
        self._settle_front()

    def settle(self) -> None:
        """After a pin, an unpin or an edit: pinned messages at the front of the tail join
        ``held``; an unpinned message left in ``held`` is *released*: it stays where it is (the
        window's order never changes) until :meth:`evict_released`, which the context calls
        before the strategy's next truncation (the strategy had already passed it)."""
        self.released = any(e[0] not in self.pins for e in self.held)
        self._settle_front()

    def evict_released(self) -> None:
        """Evict the released (unpinned) messages of ``held``, in id order."""
        pins = self.pins
        kept: list[Entry] = []
        for entry in self.held:
            (kept if entry[0] in pins else self.evicted).append(entry)
        if len(kept) != len(self.held):
            self.cut = True  # an eviction: pair-safe strategies check the tail's front again
        self.held = kept
        self._held_tokens = None
        self.released = False

    def _settle_front(self) -> None:
        """Pinned messages at the front of the tail join ``held`` (never the newest message:
        strategies find it, and its tool pair, at the end of the tail)."""
        tail, pins = self.tail, self.pins
        toks = self._tail_tok
        while len(tail) > 1 and tail[0][0] in pins:
            entry = tail.popleft()
            self.held.append(entry)
            if toks is not None and self._tail_tokens is not None:
                value = toks.popleft()
                self._tail_tokens -= value
                if self._held_tokens is not None:
                    self._held_tokens += value
            else:
                self._held_tokens = None

    def evict_oldest(self) -> Entry:
        """Remove and return the oldest message after the pinned first."""
        self.evict(1)
        return self.evicted[-1]

    def clear(self) -> None:
        self.first = None
        self.tail.clear()
        self.held = []
        self.released = False
        self._held_tokens = None
        self.evicted = []
        self.cut = False
        self._tail_tok = None
        self._tail_tokens = None
        self._first_tokens = None


def json_copy(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); faster than copy.deepcopy."""
    t = type(value)
    if t is dict:
        return {k: json_copy(v) for k, v in value.items()}
    if t is list:
        return [json_copy(v) for v in value]
    if isinstance(value, Mapping):
        return {k: json_copy(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [json_copy(v) for v in value]
    return value
