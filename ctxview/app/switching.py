"""Switching the open recorded session between "as sent" and simulations under max and
strategy: each switch is a fresh replay of the recorded messages in a worker thread; only the
newest switch asked for is shown (keys pressed faster than a replay). The replay is posted to
the app as :class:`~ctxview.app.messages.SessionReplaced`."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ctxview.app.messages import ReplayRequested, SessionReplaced

if TYPE_CHECKING:
    from textual.app import App

    from ctxview.app.model import SessionModel
    from ctxview.config import Config
    from ctxview.sessions import LoadedSession

#: a switch: (as sent, strategy, max)
View = tuple[bool, str | None, int | None]


class Switcher:
    """Replays of the open session (``model``, kept current by the app). ``app`` serves the
    worker, notices and messages (Textual's services only)."""

    def __init__(self, app: App[Any], model: SessionModel, config: Config) -> None:
        self.app = app
        self.model = model
        self.config = config
        #: the switch being replayed, if any
        self.pending: View | None = None
        self._gen = 0  #: only the newest switch is installed

    def default(self, key: str, fallback: Any) -> Any:
        value = self.config.as_defaults().get(key)
        return fallback if value is None else value

    def switch(
        self,
        *,
        as_sent: bool,
        max_messages: int | None = None,
        strategy: str | None = None,
        note: str | None = None,
    ) -> None:
        """Replay as sent, or as a simulation under max and strategy (the config's where not
        given)."""
        if not as_sent:
            max_messages = max_messages or int(self.default("max_context_messages", 20))
            strategy = strategy or str(self.default("strategy", "seed"))
        old = self.model
        records = old.transcript.records  # the snapshot is taken here, on the UI thread
        edited = any("original" in r.meta or r.meta.get("removed") for r in records)
        session = replace(
            old.session,
            # as recorded: an edit or a repair is not carried into the other view
            messages=[r.meta.get("original", r.message) for r in records],
            metas=[
                {k: v for k, v in r.meta.items() if k not in ("original", "removed")}
                for r in records
            ],
            system=old.system,
            max_context_messages=None,
            strategy=None,
            saved_window=None,
            saved_pinned=list(old.context.pinned_ids),  # pins stay pinned in the other view
        )
        self._gen += 1
        self.pending = (as_sent, strategy, max_messages)
        view, gen = self.pending, self._gen
        self.app.run_worker(
            lambda: self._replay(old, session, view, edited, note, gen),
            thread=True,
            exclusive=True,
            group="open",
            description="replay",
        )

    def _replay(
        self,
        old: SessionModel,
        session: LoadedSession,
        view: View,
        edited: bool,
        note: str | None,
        gen: int,
    ) -> None:
        from ctxview.app.model import SessionModel
        from ctxview.sessions import replay

        as_sent, strategy, max_messages = view
        try:
            rep = replay(
                session,
                max_context_messages=max_messages,
                strategy=strategy,
                defaults=self.config.as_defaults(),
                as_sent=as_sent,
            )
        except ValueError as exc:
            self.app.call_from_thread(self._failed, gen)
            self.app.call_from_thread(self.app.notify, str(exc), severity="error", markup=False)
            return
        model = SessionModel(rep, old.path, old.model, tools=old.tools)
        model.show_evicted = old.show_evicted
        self.app.call_from_thread(self._switched, old, model, edited, note, gen)

    def _failed(self, gen: int) -> None:
        if gen == self._gen:
            self.pending = None

    def _switched(
        self, old: SessionModel, model: SessionModel, edited: bool, note: str | None, gen: int
    ) -> None:
        if gen != self._gen:
            return  # a newer switch was asked for meanwhile: it installs its own replay
        self.pending = None
        if self.model is not old:
            return  # another file was opened meanwhile
        if len(old.transcript) != len(model.transcript):
            # messages arrived meanwhile (following): replay again with them
            simulated = model.as_sent is None
            ctx = model.context
            self.app.post_message(
                ReplayRequested(
                    as_sent=not simulated,
                    max_messages=ctx.max_context_messages if simulated else None,
                    strategy=ctx.strategy if simulated else None,
                    note=note,
                )
            )
            return
        self.app.post_message(SessionReplaced(old, model, at_end=False))
        if note is not None:
            self.app.notify(note, markup=False, timeout=5)
            return
        lost = " (edits and repairs are not carried over)" if edited else ""
        back = "" if model.as_sent is not None else " · a: back to as sent"
        self.app.notify(f"{model.mode_label()}{back}{lost}", markup=False, timeout=5)
