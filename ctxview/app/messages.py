"""What the app's controllers and screens tell the app: small typed messages posted upward.

The app hands its parts what they need (the model, the timeline, the config) as attributes and
arguments; they never call into the app. What only the app may do (install a session, redraw the
panes after a change of the context, change max or strategy, replay) it does on receiving one of
these. ``App.post_message`` is thread-safe, so a worker thread may post them too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from ctxview.app.model import SessionModel
    from ctxview.live.follow import Update


class SessionOpened(Message):
    """A file was read and replayed: show it instead of the open session (and follow it)."""

    def __init__(self, model: SessionModel, *, follow: bool = False) -> None:
        super().__init__()
        self.model = model
        self.follow = follow


class NameChanged(Message):
    """The shown session's file (saved under a new name) or model changed: the titles, the
    chat's prompt and the panes follow; ``count_stale`` drops the exact count_tokens figure."""

    def __init__(self, *, count_stale: bool = False) -> None:
        super().__init__()
        self.count_stale = count_stale


class OpenRequested(Message):
    """Open this file (and follow it): chosen in a list of sessions."""

    def __init__(self, path: str, *, follow: bool = False) -> None:
        super().__init__()
        self.path = path
        self.follow = follow


class SessionReplaced(Message):
    """The open session was replayed anew (a followed transcript rewritten): show the replay,
    keeping the selection, or the last row when the cursor was there."""

    def __init__(
        self,
        old: SessionModel,
        model: SessionModel,
        *,
        at_end: bool,
        again: ReplayRequested | None = None,
    ) -> None:
        super().__init__()
        self.old = old
        self.model = model
        self.at_end = at_end
        #: a replay of ``old``'s own messages (a switch of view): posted instead of showing it
        #: when ``old`` has more by then (a followed transcript grew after the replay was made)
        self.again = again


class Followed(Message):
    """An update of a followed transcript (from its polling thread), with the model replayed
    for it if it is a replay: the app has the follower that posted it (``source``) apply it,
    if that one is still following."""

    def __init__(self, source: object, update: Update, model: SessionModel | None) -> None:
        super().__init__()
        self.source = source
        self.update = update
        self.model = model


class ContextChanged(Message):
    """The open session's context changed (an edit, a reply, appended lines): rows, animation,
    notifications and panes follow. ``keep`` is the message to select afterwards (the current
    selection when None), ``end`` moves to the last row, ``flash`` animates rows, and
    ``count_stale`` drops the exact count_tokens figure (the window it counted is gone)."""

    def __init__(
        self,
        *,
        keep: int | None = None,
        end: bool = False,
        flash: list[int] | None = None,
        count_stale: bool = False,
    ) -> None:
        super().__init__()
        self.keep = keep
        self.end = end
        self.flash = list(flash or [])
        self.count_stale = count_stale


class DraftChanged(Message):
    """The reply being streamed grew or failed: the timeline and (on it) the detail follow."""

    def __init__(self, *, rows: bool = False, end: bool = False) -> None:
        super().__init__()
        self.rows = rows  #: the draft row appeared or went: the row count changed
        self.end = end  #: move to the last row (the draft's) afterwards


class FiguresChanged(Message):
    """A worker's figures are in the shown model: token estimates or a protocol check
    (``rows``: the timeline and every pane), the cache figures (``panes``: the sidebar), or
    none to show (``cache``: the sidebar's cache line)."""

    def __init__(self, *, rows: bool = False, panes: bool = False, cache: bool = False) -> None:
        super().__init__()
        self.rows = rows
        self.panes = panes
        self.cache = cache


class ExactCount(Message):
    """The API counted the window's tokens exactly (count_tokens)."""

    def __init__(self, tokens: int) -> None:
        super().__init__()
        self.tokens = tokens


class StrategyChosen(Message):
    """Simulate under this strategy (or ``as sent``), as the sidebar's Select would."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name


class MaxChosen(Message):
    """Simulate at this max, as typing it in the sidebar would."""

    def __init__(self, value: int) -> None:
        super().__init__()
        self.value = value


class ReplayRequested(Message):
    """Replay the open recorded session as sent, or as a simulation under max and strategy,
    with ``note`` as the notice."""

    def __init__(
        self,
        *,
        as_sent: bool,
        max_messages: int | None = None,
        strategy: str | None = None,
        note: str | None = None,
    ) -> None:
        super().__init__()
        self.as_sent = as_sent
        self.max_messages = max_messages
        self.strategy = strategy
        self.note = note


class Command(Message):
    """Run one of the app's actions by name (the command palette's entries)."""

    def __init__(self, action: str) -> None:
        super().__init__()
        self.action = action
