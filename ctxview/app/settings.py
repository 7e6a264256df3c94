"""The shown session's settings: as sent or simulated, max, strategy and model, and which of
them are saved to config.toml.

A recorded session switches between "as sent" and simulations under max and strategy: each
switch is a fresh replay of the recorded messages in a worker thread; only the newest switch
asked for is shown (keys pressed faster than a replay), posted to the app as
:class:`~ctxview.app.messages.SessionReplaced`. A change in place (a chat's max, a simulation's
strategy) is posted as :class:`~ctxview.app.messages.ContextChanged`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ctxview.app.messages import ContextChanged, NameChanged, ReplayRequested, SessionReplaced
from ctxview.app.model import AS_SENT, as_sent_possible
from ctxview.app.safe import one_line
from ctxview.config import ConfigError, save_config_values
from ctxview.core.strategies import STRATEGIES

if TYPE_CHECKING:
    from textual.app import App

    from ctxview.app.model import SessionModel
    from ctxview.config import Config
    from ctxview.sessions import LoadedSession

#: a switch: (as sent, strategy, max)
View = tuple[bool, str | None, int | None]


class Settings:
    """The settings of the shown session (``model``; see :meth:`show`). ``chat_busy`` tells
    whether a reply is in flight (no switch meanwhile); ``save_config`` whether changes may be
    written to config.toml. ``app`` serves the workers, notices and messages (Textual's services
    only)."""

    def __init__(
        self,
        app: App[Any],
        model: SessionModel,
        config: Config,
        chat_busy: Callable[[], bool],
        save_config: bool,
    ) -> None:
        self.app = app
        self.model = model
        self.config = config
        self.chat_busy = chat_busy
        self.save_config = save_config
        #: the switch being replayed, if any
        self.pending: View | None = None
        self._gen = 0  #: only the newest switch is installed
        self._told_per_file = False

    def show(self, model: SessionModel) -> None:
        """Another session (or view of it) is shown."""
        self.model = model
        self._told_per_file = False

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
        simulated = model.as_sent is None
        ctx = model.context
        again = ReplayRequested(
            as_sent=not simulated,
            max_messages=ctx.max_context_messages if simulated else None,
            strategy=ctx.strategy if simulated else None,
            note=note,
        )
        if len(old.transcript) != len(model.transcript):
            # messages arrived meanwhile (following): replay again with them
            self.app.post_message(again)
            return
        # a switch the user asked for shows another view than the one saved (a switch with a
        # note is the follower's: a compaction seen)
        model.unsaved = old.unsaved or note is None
        # (more may arrive before the app shows it: a followed update queued before this
        # message is added to ``old``, and the app then replays again)
        self.app.post_message(SessionReplaced(old, model, at_end=False, again=again))
        if note is not None:
            self.app.notify(note, markup=False, timeout=5)
            return
        lost = " (edits and repairs are not carried over)" if edited else ""
        back = "" if model.as_sent is not None else " · a: back to as sent"
        self.app.notify(f"{model.mode_label()}{back}{lost}", markup=False, timeout=5)

    def persist_setting(self, updates: dict[str, Any]) -> None:
        """Max, strategy and model stay with the shown session (saved with it; a new chat's in
        its autosave): none becomes a default unless the user asks, from the palette (a key,
        a command-line flag or a pre-send answer is a choice for this session only). Said
        once per session."""
        if self._told_per_file:
            return
        self._told_per_file = True
        what = self.model.name if self.model.path is not None else "this chat"
        self.app.notify(
            f"applies to {what} only (not saved as a default); to keep it for new sessions: "
            "ctrl+p → Make these settings the default",
            markup=False,
            timeout=5,
        )

    def make_default(self) -> None:
        """The session's max, strategy and model become the defaults in config.toml (as sent
        has no max or strategy of ctxview's: only the model)."""
        ctx = self.model.context
        updates: dict[str, Any] = {
            "max_context_messages": ctx.max_context_messages,
            "strategy": ctx.strategy,
            "model": self.model.model,
        }
        if self.model.as_sent is not None:
            updates = {"model": self.model.model}
        if not self.model.model:  # another API's session that names no model: the config's stays
            del updates["model"]
        self.persist(updates)

    def persist(self, updates: dict[str, Any]) -> None:
        """Write ``updates`` to config.toml, and say so with the command that undoes it."""
        if not self.save_config:
            return
        before = {key: self.config.get(key) for key in updates}
        try:
            path = save_config_values(updates, self.config.path)
        except (ConfigError, OSError) as exc:
            self.app.notify(f"not saved to config: {exc}", severity="warning", markup=False)
            return
        self.config.values.update(updates)
        changed = {k: v for k, v in updates.items() if before[k] != v}
        if not changed:
            return
        saved = ", ".join(f"{k} = {v}" for k, v in changed.items())
        undo = " && ".join(
            f"ctxview config set {k} {before[k]}" for k in changed if before[k] is not None
        )
        self.app.notify(
            f"saved as your default in {path}: {saved}" + (f" — undo: {undo}" if undo else ""),
            title="config",
            markup=False,
            timeout=8,
        )

    def show_as_sent(self) -> None:
        """Show the recorded session as it was sent again (after a simulation)."""
        model = self.model
        if model.as_sent is not None:
            self.app.notify(
                "already shown as sent (no ctxview truncation)", markup=False, timeout=3
            )
            return
        from ctxview.sessions.replay import as_sent_format

        if as_sent_format(model.session) is None:
            self.app.notify(
                "as sent: only for a recorded session (a Claude Code transcript, a request "
                "body, a proxy recording); this one is simulated under max and strategy",
                severity="warning",
                markup=False,
            )
            return
        self.replay_as(as_sent=True)

    def replay_as(
        self,
        *,
        as_sent: bool,
        max_messages: int | None = None,
        strategy: str | None = None,
        note: str | None = None,
    ) -> None:
        """Replay the open session as sent, or as a simulation under max and strategy (the
        config's where not given): a recorded session switches between the two."""
        if self.chat_busy():
            self.app.notify(
                "a reply is in flight: wait, or press escape to cancel it", markup=False
            )
            return
        if self.model.draft is not None:
            self.model.set_draft(None)
        self.switch(as_sent=as_sent, max_messages=max_messages, strategy=strategy, note=note)

    def set_max(self, n: int) -> None:
        ctx = self.model.context
        old = ctx.max_context_messages
        if n < 1:
            self.app.notify(
                "max messages must be >= 1: the first message is always kept",
                severity="error",
                markup=False,
            )
            return
        if self.model.as_sent is not None:
            # choosing a max leaves "as sent": a simulation under it and the config's strategy
            self.replay_as(as_sent=False, max_messages=n)
            return
        ctx.set_max_context_messages(n)
        self.model.unsaved = True
        self.app.post_message(ContextChanged(count_stale=True))
        if n > old and self.model.evicted_count():
            self.app.notify(
                f"max raised to {n}: evicted messages do not come back (the seed's semantics); "
                "the window refills with new messages",
                markup=False,
            )
        self.persist_setting({"max_context_messages": n})

    def set_strategy(self, name: str) -> None:
        if name == AS_SENT:
            self.show_as_sent()
            return
        if name not in STRATEGIES:
            return
        if self.model.as_sent is not None:
            # choosing a strategy leaves "as sent": a simulation under it and the config's max
            self.replay_as(as_sent=False, strategy=name)
            return
        self.model.context.set_strategy(name)
        self.model.unsaved = True
        self.app.post_message(ContextChanged(count_stale=True))
        self.app.notify(
            f"strategy: {name} — {STRATEGIES[name].description}", markup=False, timeout=4
        )
        self.persist_setting({"strategy": name})

    def set_model_name(self, name: str) -> None:
        if name in (self.model.model, one_line(self.model.model, 200)):
            return  # the Model input shows a hostile name made visible: unchanged, not renamed
        self.model.model = name
        self.model.unsaved = True
        self.app.post_message(NameChanged(count_stale=True))
        self.app.notify(f"model: {name}", markup=False, timeout=3)
        self.persist_setting({"model": name})

    def max_delta(self, delta: int) -> None:
        pending = self.pending
        if pending is not None and not pending[0] and pending[2] is not None:
            # a simulation is still being replayed: step on from its max (keys faster than it)
            self.replay_as(
                as_sent=False, strategy=pending[1], max_messages=max(1, pending[2] + delta)
            )
            return
        if self.model.as_sent is not None:
            # as sent has no max of ctxview's: + / - start a simulation at the config's max
            self.replay_as(as_sent=False)
            return
        n = self.model.context.max_context_messages + delta
        if n < 1:
            self.app.notify("max is already 1: only the pinned first message is kept", markup=False)
            return
        self.set_max(n)

    def cycle_strategy(self) -> None:
        names = list(STRATEGIES)
        pending = self.pending
        if pending is not None:
            # a switch is still being replayed: cycle on from where it goes, not from the
            # view on screen (s pressed faster than the replay)
            as_sent, cur_or_none, max_messages = pending
            cur = "" if as_sent else (cur_or_none or "")
            if cur == names[-1] and as_sent_possible(self.model):
                self.replay_as(as_sent=True)
            else:
                nxt = names[(names.index(cur) + 1) % len(names)] if cur in names else names[0]
                self.replay_as(as_sent=False, strategy=nxt, max_messages=max_messages)
            return
        cur = self.model.context.strategy
        if self.model.as_sent is not None:
            cur = ""  # from as sent: the first strategy, simulated at the config's max
        elif cur == names[-1] and as_sent_possible(self.model):
            self.show_as_sent()  # s cycles through "as sent" for a recorded session
            return
        self.set_strategy(names[(names.index(cur) + 1) % len(names)] if cur in names else names[0])
