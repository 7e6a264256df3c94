"""Following a transcript in the TUI (``ctxview FILE --follow``, ``f``).

A thread polls the file (:class:`ctxview.live.follow.Follower`, polling with backoff: a watcher
library such as watchfiles would add a dependency and a Rust extension for one file that is
appended to a few times a second, and polling also sees a file replaced under the same name); each
:class:`Update` is applied on the app's thread: appended messages go through the live
``ConversationContext`` (the timeline grows, evictions animate, verdict and cache line follow), a
replay installs a model freshly replayed in the thread. The thread posts each update to the app
(:class:`~ctxview.app.messages.Followed`), which has it applied on its own thread. The view stays where the user scrolled unless the cursor was on
the last row.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from ctxview.app.messages import (
    ContextChanged,
    Followed,
    NameChanged,
    ReplayRequested,
    SessionReplaced,
)
from ctxview.app.skipped import skipped_note
from ctxview.core.compaction import claude_code_compaction
from ctxview.live.follow import LATE_BLOCK, Backoff, Follower, Update
from ctxview.sessions.fileio import FileRefused
from ctxview.textfmt import counted, visible

if TYPE_CHECKING:
    from textual.app import App

    from ctxview.app.model import SessionModel
    from ctxview.app.widgets.timeline import Timeline
    from ctxview.config import Config

FOLLOWABLE = ("claude-code", "codex")


class Following:
    """Follows the transcript at ``path`` shown as ``model`` (the app keeps ``model`` current
    when it installs another view of the same session). ``app`` serves the worker, notices and
    messages (Textual's services only)."""

    def __init__(
        self, app: App[Any], model: SessionModel, timeline: Timeline, config: Config
    ) -> None:
        assert model.path is not None
        self.app = app
        self.path = model.path
        self.model = model
        self.timeline = timeline
        self.config = config
        self.stopped = threading.Event()
        follower = Follower
        if model.session.format == "codex":
            from ctxview.live.follow_codex import CodexFollower

            follower = CodexFollower
        self.follower = follower(self.path, applied=[r.message for r in model.transcript.records])
        self._error_shown = False

    @property
    def active(self) -> bool:
        return not self.stopped.is_set()

    def start(self) -> None:
        self.app.run_worker(
            self._run,
            thread=True,
            group="follow",
            exclusive=True,
            name="follow",
            description="follow a transcript",
        )

    def stop(self) -> None:
        self.stopped.set()

    # -- the polling thread ------------------------------------------------------------------------
    def _run(self) -> None:
        from textual.worker import get_current_worker

        worker = get_current_worker()
        backoff = Backoff()
        while not self.stopped.is_set() and not worker.is_cancelled:
            try:
                changed = self.follower.poll()
            except (OSError, FileRefused) as exc:
                if not self._error_shown:
                    self._error_shown = True
                    msg = (  # a FileRefused names the path itself
                        str(exc)
                        if isinstance(exc, FileRefused)
                        else f"{self.path}: {exc.strerror or exc}"
                    )
                    self._call(self._notify_error, msg)
                self.stopped.wait(Backoff.SLOW)
                continue
            self._error_shown = False
            update = None
            if changed or self.follower.pending:
                update = self.follower.step(quiet=not changed)
            if update is not None:
                model = self._replayed(update) if update.kind == "replay" else None
                self._post(Followed(self, update, model))
            self.stopped.wait(backoff.next(changed))

    def _post(self, message: Followed) -> None:
        if not self.stopped.is_set():
            self.app.post_message(message)

    def _call(self, fn: Any, *args: Any) -> None:
        if self.stopped.is_set():
            return
        try:
            self.app.call_from_thread(fn, *args)
        except RuntimeError:  # the app is shutting down
            self.stopped.set()

    def _replayed(self, update: Update) -> SessionModel:
        from ctxview.app.model import SessionModel
        from ctxview.sessions import LoadedSession, replay

        old = self.model
        session = LoadedSession(
            self.path,
            old.session.format,
            list(update.messages),
            [dict(m) for m in update.metas],
            model=update.model or old.session.model,
            title=old.session.title,
            subagents=list(old.session.subagents),
            skipped_lines=list(update.skipped_lines),
            skipped_reasons=dict(update.skipped_reasons),
            warnings=list(update.warnings),
            # the user's pins are kept across the replay (pinned again as they are added)
            saved_pinned=list(old.context.pinned_ids),
            system=old.session.system,
            provider=old.session.provider,
        )
        ctx = old.context
        simulated = old.as_sent is None  # as sent stays as sent; a simulation keeps its settings
        rep = replay(
            session,
            max_context_messages=ctx.max_context_messages if simulated else None,
            strategy=ctx.strategy if simulated else None,
            defaults=self.config.as_defaults(),
            as_sent=not simulated,
        )
        return SessionModel(rep, self.path, self._request_model(update.model))

    def _request_model(self, recorded: str | None) -> str:
        """The model the next request goes to once the file records ``recorded``: that one,
        unless the shown model was chosen (neither the file's so far nor the config's, which a
        transcript followed from before its first reply opens on)."""
        shown = self.model.model
        if recorded is None or shown not in ("", self.model.session.model, self.config["model"]):
            return shown
        return recorded

    # -- on the app's thread -----------------------------------------------------------------------
    def _notify_error(self, message: str) -> None:
        self.app.notify(
            f"following: {visible(message)} (still trying)",
            severity="warning",
            markup=False,
            timeout=6,
        )

    def apply(
        self, update: Update, model: SessionModel | None
    ) -> ContextChanged | SessionReplaced | None:
        """Apply ``update`` (on the app's thread, the app asks): appended lines go into the
        shown context; a replay becomes the new model. What the app then shows is returned, for
        the app to show at once (a message would let a reader see the lines before the rows)."""
        if self.stopped.is_set():  # another file was opened meanwhile
            return None
        self._note_skipped(update)
        if update.kind == "append" and not update.messages:  # only lines skipped
            return None
        tl = self.timeline
        rows = self.model.rows
        at_end = not rows or tl.cursor >= len(rows) - 1
        if update.kind == "append":
            ctx = self.model.context
            last = None
            simulated = self.model.as_sent is None
            for msg, meta in zip(update.messages, update.metas, strict=True):
                if simulated and claude_code_compaction(meta) and len(ctx):
                    # a compaction: the simulation starts again at its summary, as on opening
                    last = ctx.start_again(msg, meta=dict(meta), copy=False)
                else:
                    last = ctx.add_message(msg, meta=dict(meta), copy=False)
            if not simulated and any(claude_code_compaction(m) for m in update.metas):
                # as sent, a compaction starts the request again at its summary
                self.app.post_message(
                    ReplayRequested(
                        as_sent=True,
                        note="following: compacted; the request starts again at the summary",
                    )
                )
            recorded = Follower.recorded_model(list(update.metas))
            if recorded is not None and recorded != self.model.session.model:
                self.model.model = self._request_model(recorded)
                self.model.session.model = recorded
                self.app.post_message(NameChanged(count_stale=True))
            return ContextChanged(keep=last if at_end else None, end=at_end)
        assert model is not None
        old, self.model = self.model, model
        if update.reason != LATE_BLOCK:  # that one is routine: no notification for it
            self.app.notify(
                f"{visible(model.name)}: {update.reason}: replayed "
                f"({counted(len(update.messages), 'message')})",
                title="following",
                markup=False,
                timeout=5,
            )
        return SessionReplaced(old, model, at_end=at_end)

    def _note_skipped(self, update: Update) -> None:
        """A notice for the lines the update skipped that the shown session had not (a
        replay's model carries them; appended lines add theirs to the shown session)."""
        session = self.model.session
        known = set(session.skipped_lines)
        new = [n for n in update.skipped_lines if n not in known]
        if not new:
            return
        reasons = dict(update.skipped_reasons)
        session.skipped_lines = sorted(known | set(new))
        session.skipped_reasons.update(reasons)
        new_skipped = [{"line": n, "reason": reasons.get(n, "not usable")} for n in new]
        self.app.notify(
            skipped_note(new_skipped, "skipped while following"),
            title="following",
            severity="warning",
            markup=False,
            timeout=8,
        )


def toggle_follow(
    current: Following | None,
    app: App[Any],
    model: SessionModel,
    timeline: Timeline,
    config: Config,
) -> Following | None:
    """``f``: follow the open Claude Code transcript or Codex rollout, or stop following it;
    what follows now."""
    if current is not None and current.active:
        current.stop()
        app.notify("stopped following", markup=False)
        return None
    if not model.path or model.session.format not in FOLLOWABLE:
        app.notify(
            "f follows a Claude Code transcript or a Codex rollout (.jsonl) opened from a file",
            severity="warning",
            markup=False,
        )
        return current
    following = Following(app, model, timeline, config)
    following.start()
    app.notify(
        f"following {visible(model.name)}: new lines appear as they are written", markup=False
    )
    return following
