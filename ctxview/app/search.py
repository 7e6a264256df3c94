"""Search in the timeline (``/``, ``n`` / ``N``, escape): the query is parsed and matched
(``ctxview.core.search``) in a worker thread, a chunk of messages at a time, so typing never
waits for a 100,000-message session; the matches found so far are shown (rows marked, ``3/17``)
as they come, and a new key cancels the search in flight."""

from __future__ import annotations

import bisect
from typing import TYPE_CHECKING, Any

from textual.worker import get_current_worker

from ctxview.core.search import Query, QueryError, find, parse_query

if TYPE_CHECKING:
    from textual.app import App
    from textual.timer import Timer

    from ctxview.app.model import SessionModel
    from ctxview.app.widgets.search_bar import SearchBar
    from ctxview.app.widgets.timeline import Timeline

#: the quiet spell after a key before the search starts (a fast typist starts one search)
DEBOUNCE = 0.12


class TimelineSearch:
    """The search of the shown session (``model``, kept current by the app)."""

    def __init__(self, app: App[Any], model: SessionModel, timeline: Timeline) -> None:
        self.app = app
        self.model = model
        self.timeline = timeline
        self.bar: SearchBar | None = None
        self.query: Query | None = None
        #: ids of the matching messages found so far, ascending
        self.matches: list[int] = []
        self.done = True
        self._generation = 0
        self._timer: Timer | None = None
        #: where the cursor was when ``/`` was pressed (escape in the input goes back there)
        self._origin: int | None = None
        self._jumped = False
        self._pending = ""
        self._pending_jump = True

    @property
    def active(self) -> bool:
        return self.query is not None

    # -- the bar -------------------------------------------------------------------------------
    def open(self) -> None:
        """``/``: show the bar (mounted the first time) and put the cursor in it."""
        from ctxview.app.widgets.search_bar import SearchBar

        self._origin = self.timeline.selected_id
        if self.bar is None:
            self.bar = SearchBar(id="search")
            self.app.query_one("#center").mount(self.bar, after=self.timeline)
            self.app.call_after_refresh(self._focus_bar)
        else:
            self._focus_bar()

    def _focus_bar(self) -> None:
        if self.bar is None:
            return
        if not self.bar.query("#search-input"):
            # mounted, its input not yet: a second / typed before the first one's refresh
            self.app.call_after_refresh(self._focus_bar)
            return
        self.bar.add_class("-shown")
        self.bar.input.focus()
        self._show_count()

    def close(self, back: bool = False) -> None:
        """Escape: no search any more, the bar hidden, the timeline focused (``back``: the
        cursor returns to where ``/`` was pressed)."""
        self._cancel()
        self.query = None
        self.matches = []
        self.done = True
        self.timeline.search_matches = frozenset()
        self.timeline.refresh()
        if self.bar is not None:
            self.bar.remove_class("-shown")
            self.bar.input.value = ""
        if back and self._origin is not None:
            self.timeline.select_id(self._origin)
        self.timeline.focus()

    def changed(self, text: str, jump: bool = True) -> None:
        """The query was edited (or, ``jump`` False, the session): search again once the keys
        (or a followed transcript's lines) pause."""
        self._pending, self._pending_jump = text, jump
        if self._timer is not None:
            self._timer.stop()
        self._timer = self.app.set_timer(DEBOUNCE, self._run_pending)

    def _run_pending(self) -> None:
        # (a timer stopped after it fired still calls back: the text typed last is searched)
        self._timer = None
        self.run(self._pending, jump=self._pending_jump)

    # -- searching -----------------------------------------------------------------------------
    def _cancel(self) -> None:
        self._generation += 1
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.app.workers.cancel_group(self.app, "search")

    def run(self, text: str, jump: bool = True) -> None:
        """Search for ``text`` now (again: after the session changed); ``jump``: select the
        first match from where ``/`` was pressed."""
        self._cancel()
        try:
            query = parse_query(text)
        except QueryError as exc:
            self.query, self.matches, self.done = None, [], True
            self.timeline.search_matches = frozenset()
            self.timeline.refresh()
            self._show_count(str(exc))
            return
        if query.empty:
            self.query, self.matches, self.done = None, [], True
            self.timeline.search_matches = frozenset()
            self.timeline.refresh()
            self._show_count()
            return
        self.query, self.matches, self.done = query, [], False
        self._jumped = not jump
        self.timeline.search_matches = frozenset()
        generation = self._generation
        model = self.model
        errors = frozenset(model.error_ids()) if query.errors else frozenset()
        messages = [r.message for r in model.transcript.records]
        self._show_count()
        self.app.run_worker(
            lambda: self._search(generation, model, messages, query, errors),
            thread=True,
            group="search",
            name="search",
            description="search the timeline",
        )

    def _search(
        self,
        generation: int,
        model: SessionModel,
        messages: list[Any],
        query: Query,
        errors: frozenset[int],
    ) -> None:
        worker = get_current_worker()
        for found in find(messages, query, errors):
            if worker.is_cancelled or generation != self._generation:
                return
            if found:
                self.app.call_from_thread(self._found, generation, model, found, False)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._found, generation, model, [], True)

    def _found(self, generation: int, model: SessionModel, ids: list[int], done: bool) -> None:
        if generation != self._generation or model is not self.model:
            return  # a newer search, or another session
        self.matches.extend(ids)
        self.done = done
        self.timeline.search_matches = frozenset(self.matches)
        self.timeline.refresh()
        if not self._jumped and self.matches:
            # as in an editor's incremental search: the first match from where / was pressed
            self._jumped = True
            start = self._origin if self._origin is not None else -1
            k = bisect.bisect_left(self.matches, start)
            if k < len(self.matches) or done:
                self.timeline.select_id(self.matches[k % len(self.matches)])
            else:
                self._jumped = False  # a later chunk may hold one after the cursor
        self._show_count()

    # -- stepping ------------------------------------------------------------------------------
    def step(self, direction: int) -> None:
        """``n`` / ``N``: the next / previous match (round the end, with a notice)."""
        if not self.matches:
            self.app.notify(
                "searching…" if not self.done else "no message matches the search",
                markup=False,
                timeout=2,
            )
            return
        cur = self.timeline.selected_id
        cur = -1 if cur is None else cur
        ms = self.matches
        if direction > 0:
            k = bisect.bisect_right(ms, cur)
            wrapped = k == len(ms)
            target = ms[0] if wrapped else ms[k]
        else:
            k = bisect.bisect_left(ms, cur) - 1
            wrapped = k < 0
            target = ms[-1] if wrapped else ms[k]
        if wrapped and self.done:
            self.app.notify(
                "search wrapped to the " + ("top" if direction > 0 else "bottom"),
                markup=False,
                timeout=2,
            )
        self.timeline.jump_to(target)
        self._show_count()

    def position(self) -> str:
        """``3/17`` (the cursor on the third match), ``–/17`` (between matches), ``17+`` while
        the search runs."""
        n = len(self.matches)
        total = f"{n:,}" if self.done else f"{n:,}+"
        cur = self.timeline.selected_id
        if cur is not None and n:
            k = bisect.bisect_left(self.matches, cur)
            if k < n and self.matches[k] == cur:
                return f"{k + 1:,}/{total}"
        return f"–/{total}"

    def _show_count(self, error: str = "") -> None:
        if self.bar is None:
            return
        if error:
            self.bar.show_count(error, error=True)
        elif self.query is None:
            self.bar.show_count("")
        elif self.done and not self.matches:
            self.bar.show_count(f"no match · {self.query.describe()}")
        else:
            self.bar.show_count(f"{self.position()} · n/N")

    def cursor_moved(self) -> None:
        if self.active:
            self._show_count()

    # -- the session changed --------------------------------------------------------------------
    def show(self, model: SessionModel) -> None:
        """Another session (or view of it): the search runs again on it."""
        self.model = model
        if self.query is not None:
            self.run(self.query.text, jump=False)

    def session_grew(self) -> None:
        """Messages were added or edited: search again once they pause (ids are kept; the
        cursor stays)."""
        if self.query is not None and self._timer is None:  # (a pending search reads it anyway)
            self.changed(self.query.text, jump=False)
