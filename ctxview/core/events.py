"""What a context reports to its subscribers: one :class:`ContextEvent` per change, and what a
listener (a :class:`~ctxview.core.transcript.Transcript`) needs of the context it follows."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from ctxview.core.tokens import estimate_message

EventKind = Literal["added", "evicted", "config", "edited", "pinned"]


@dataclass(frozen=True, slots=True)
class ContextEvent:
    """Something that happened to a context.

    ``added``: ``ids`` holds the one new id, ``message`` the message, ``meta`` what the caller
    attached (timestamp, usage...). ``evicted``: ``ids`` in the order they left, ``reason`` is
    ``"add"``, ``"max"``, ``"strategy"``, ``"tokens"``, ``"system"`` or ``"compaction"``
    (:meth:`ConversationContext.start_again`: the whole window left). ``config``: a setting
    changed (``reason`` names it) and nothing was evicted. ``edited``: a window message was
    edited by hand or by a repair (``reason``: ``"replace"`` with the new ``message``,
    ``"remove"``: it left the window, ``"readmit"``: an undo put ``message`` back); ``ids`` holds
    the one id. ``pinned``: ``reason`` ``"pin"`` or ``"unpin"``, ``ids`` the messages pinned or
    unpinned (a tool pair goes together); the window's messages do not change.
    """

    kind: EventKind
    step: int
    ids: tuple[int, ...]
    reason: str = "add"
    message: dict[str, Any] | None = None
    meta: Mapping[str, Any] | None = None
    #: evicted: the messages that left, in the order of ``ids``
    evicted_messages: tuple[dict[str, Any], ...] = ()

    @property
    def tokens(self) -> int:
        """Estimated tokens of the evicted messages (computed on demand)."""
        return sum(estimate_message(m) for m in self.evicted_messages)


Subscriber = Callable[[ContextEvent], None]


class EventSource(Protocol):
    """What a transcript needs of the context it records (a
    :class:`~ctxview.core.context.ConversationContext`): its events, how many messages it has
    added, and where to be found (``context.transcript``)."""

    transcript: Any

    @property
    def next_id(self) -> int: ...

    def subscribe(self, callback: Subscriber) -> Callable[[], None]: ...
