"""The window a strategy works on: the pinned first message plus a deque of the newest."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from typing import Any

from ctxview.core.tokens import estimate_message, estimate_system

#: One message in a context: ``(id, message)``. A plain tuple keeps the add path cheap.
Entry = tuple[int, dict[str, Any]]


def entry_role(entry: Entry) -> str:
    return str(entry[1].get("role"))


class Window:
    """State a :class:`~ctxview.core.strategies.Strategy` trims.

    Strategies only ever remove the oldest messages after the pinned first (``evict``): that keeps
    every add amortised O(1), whatever the window size.
    """

    __slots__ = (
        "_system_tokens",
        "_tail_tokens",
        "_tokens",
        "cut",
        "evicted",
        "first",
        "low_water_fraction",
        "max_context_tokens",
        "max_messages",
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
        self.max_messages = max_messages
        self.max_context_tokens = max_context_tokens
        self.low_water_fraction = low_water_fraction
        self.system_prompt = system_prompt
        #: Entries evicted by the current truncation, in the order they left.
        self.evicted: list[Entry] = []
        #: True once anything was evicted: the tail no longer follows the first message directly.
        self.cut = False
        self._tokens: dict[int, int] = {}
        self._tail_tokens: int | None = None
        self._system_tokens: int | None = None

    # -- reading -------------------------------------------------------------------------------
    @property
    def size(self) -> int:
        return len(self.tail) + (self.first is not None)

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[Entry]:
        if self.first is not None:
            yield self.first
        yield from self.tail

    def oldest_role(self) -> str | None:
        """Role of the oldest message after the pinned first (None when the tail is empty)."""
        return entry_role(self.tail[0]) if self.tail else None

    def entry_tokens(self, entry: Entry) -> int:
        """Estimated tokens of one entry, cached by id."""
        value = self._tokens.get(entry[0])
        if value is None:
            value = estimate_message(entry[1])
            self._tokens[entry[0]] = value
        return value

    @property
    def system_tokens(self) -> int:
        if self._system_tokens is None:
            self._system_tokens = estimate_system(self.system_prompt)
        return self._system_tokens

    @property
    def tail_tokens(self) -> int:
        if self._tail_tokens is None:
            self._tail_tokens = sum(self.entry_tokens(e) for e in self.tail)
        return self._tail_tokens

    @property
    def tokens(self) -> int:
        """Estimated tokens of system prompt + window."""
        first = self.entry_tokens(self.first) if self.first is not None else 0
        return self.system_tokens + first + self.tail_tokens

    # -- changing ------------------------------------------------------------------------------
    def set_system_prompt(self, system_prompt: Any) -> None:
        self.system_prompt = system_prompt
        self._system_tokens = None

    def append(self, entry: Entry) -> None:
        if self.first is None:
            self.first = entry
            return
        self.tail.append(entry)
        if self._tail_tokens is not None:
            self._tail_tokens += self.entry_tokens(entry)

    def evict(self, n: int = 1) -> None:
        """Remove the ``n`` oldest messages after the pinned first; O(n)."""
        tail, out = self.tail, self.evicted
        if n == 1 and tail and self._tail_tokens is None and not self._tokens:
            out.append(tail.popleft())  # the common case, kept short
            self.cut = True
            return
        k = min(n, len(tail))
        if k <= 0:
            return
        for _ in range(k):
            out.append(tail.popleft())
        self.cut = True
        if self._tail_tokens is not None or self._tokens:
            cache = self._tokens
            for entry in out[len(out) - k :]:
                value = cache.pop(entry[0], None)
                if self._tail_tokens is not None:
                    self._tail_tokens -= value if value is not None else estimate_message(entry[1])

    def evict_oldest(self) -> Entry:
        """Remove and return the oldest message after the pinned first."""
        self.evict(1)
        return self.evicted[-1]

    def evict_to_size(self, size: int) -> None:
        excess = len(self.tail) + (self.first is not None) - size
        if excess > 0:
            self.evict(excess)

    def clear(self) -> None:
        self.first = None
        self.tail.clear()
        self.evicted = []
        self.cut = False
        self._tokens.clear()
        self._tail_tokens = None


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
