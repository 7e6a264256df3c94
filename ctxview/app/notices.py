"""Eviction notices: one per burst of evictions (a tool loop evicts on every add), and while a
reply streams, one per turn."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ctxview.app.model import Eviction

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer


class EvictionNotices:
    """Gathers evictions and says them once things are quiet; ``busy`` holds them (a reply in
    flight). ``app`` serves the timer and the notice (Textual's services only)."""

    DELAY = 0.3  #: seconds of quiet before the notice

    def __init__(self, app: App[Any], busy: Callable[[], bool]) -> None:
        self.app = app
        self.busy = busy
        self._buffer: list[Eviction] = []
        self._timer: Timer | None = None

    @property
    def pending(self) -> bool:
        """Evictions are waiting for quiet (a notice is still to come)."""
        return self._timer is not None

    def add(self, evictions: list[Eviction]) -> None:
        self._buffer.extend(evictions)
        if self._timer is None:
            self._timer = self.app.set_timer(self.DELAY, self._flush)

    def _flush(self) -> None:
        if self.busy():
            self._timer = self.app.set_timer(self.DELAY, self._flush)
            return
        self._timer = None
        buf, self._buffer = self._buffer, []
        if not buf:
            return
        merged = Eviction(
            sorted(i for e in buf for i in e.ids), sum(e.tokens for e in buf), buf[-1].reason
        )
        self.app.notify(merged.describe(), title="eviction", markup=False, timeout=4)
