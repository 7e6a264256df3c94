"""The full history behind a context: every message ever added, and when each left the window."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ctxview.core.events import ContextEvent, EventSource

Status = Literal["pinned", "kept", "evicted"]


@dataclass(slots=True)
class Record:
    id: int
    message: dict[str, Any]
    added_step: int
    evicted_step: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def role(self) -> str:
        return str(self.message.get("role"))


class Transcript:
    """Fed by a context's events: keeps the whole history, window membership, eviction steps."""

    def __init__(self, context: EventSource | None = None) -> None:
        self.records: list[Record] = []
        self._by_id: dict[int, Record] = {}
        self.pinned_id: int | None = None
        self._window: set[int] = set()
        #: ids a user pinned (``ConversationContext.pin``); the first message is always pinned
        self.pins: set[int] = set()
        self.listeners: list[Callable[[ContextEvent], None]] = []
        self._unsubscribe: Callable[[], None] | None = None
        #: the context attached last
        self.context: EventSource | None = None
        if context is not None:
            self.attach(context)

    def attach(self, context: EventSource) -> None:
        """Record ``context``'s events from now on; it becomes ``context.transcript`` (what
        ``ctx.save`` saves). ValueError when the context holds messages this empty
        transcript never saw: its history would start mid-way, and a session saved from it
        would not reopen (attach before the first add)."""
        if not self.records and context.next_id:
            raise ValueError(
                f"attach the Transcript before the first message is added: the context has "
                f"added {context.next_id} already, and a history without them cannot be saved "
                "or reopened"
            )
        if self._unsubscribe is not None:
            self._unsubscribe()
        self._unsubscribe = context.subscribe(self.on_event)
        self.context = context
        context.transcript = self

    def on_event(self, event: ContextEvent) -> None:
        if event.kind == "added":
            assert event.message is not None
            rec = Record(event.ids[0], event.message, event.step, None, dict(event.meta or {}))
            self.records.append(rec)
            self._by_id[rec.id] = rec
            self._window.add(rec.id)
            if self.pinned_id is None:
                self.pinned_id = rec.id
        elif event.kind == "evicted":
            for mid in event.ids:
                self._by_id[mid].evicted_step = event.step
                self._window.discard(mid)
            if event.reason == "compaction":
                # the conversation starts again: the next message added is the pinned first
                self.pinned_id = None
                self.pins.clear()
        elif event.kind == "edited":
            self._edited(event)
        elif event.kind == "pinned":
            if event.reason == "pin":
                self.pins.update(event.ids)
            else:
                self.pins.difference_update(event.ids)
        for listener in self.listeners:
            listener(event)

    def _edited(self, event: ContextEvent) -> None:
        """An edit: the record holds what is sent; ``meta["original"]`` what was first recorded
        (dropped again when an undo brings the original back); ``meta["removed"]`` marks a
        message an edit took out of the window."""
        rec = self._by_id[event.ids[0]]
        meta = rec.meta
        if event.reason == "remove":
            rec.evicted_step = event.step
            meta["removed"] = True
            meta["edited_at_step"] = event.step  # the request model places the edit in time
            self._window.discard(rec.id)
            return
        if event.reason == "readmit":
            rec.evicted_step = None
            meta.pop("removed", None)
            self._window.add(rec.id)
        assert event.message is not None
        original = meta.get("original", rec.message)
        if event.message == original:
            meta.pop("original", None)
            meta.pop("edited_at_step", None)
        else:
            meta["original"] = original
            meta["edited_at_step"] = event.step
        rec.message = event.message

    def edited(self, mid: int) -> bool:
        """True when the message sent differs from the one recorded (an edit or a repair)."""
        rec = self._by_id.get(mid)
        return rec is not None and "original" in rec.meta

    def restore(
        self, records: list[Record], window_ids: list[int], pinned: list[int] | None = None
    ) -> None:
        """Take a saved history at once (C-speed bulk updates; for 100,000 records)."""
        if pinned:
            self.pins.update(pinned)
        self.records.extend(records)
        self._by_id.update((r.id, r) for r in records)
        self._window.update(window_ids)
        if self.pinned_id is None and records:
            self.pinned_id = window_ids[0] if window_ids else records[0].id

    def __len__(self) -> int:
        return len(self.records)

    def __getitem__(self, mid: int) -> Record:
        return self._by_id[mid]

    def get(self, mid: int) -> Record | None:
        return self._by_id.get(mid)

    def in_window(self, mid: int) -> bool:
        return mid in self._window

    def status(self, mid: int) -> Status:
        if (mid == self.pinned_id or mid in self.pins) and mid in self._window:
            return "pinned"
        return "kept" if mid in self._window else "evicted"

    @property
    def window_size(self) -> int:
        return len(self._window)

    @property
    def evicted(self) -> list[Record]:
        return [r for r in self.records if r.evicted_step is not None]

    def usage(self, mid: int) -> Mapping[str, Any] | None:
        rec = self._by_id.get(mid)
        if rec is None:
            return None
        u = rec.meta.get("usage")
        return u if isinstance(u, Mapping) else None
