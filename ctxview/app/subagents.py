"""Sub-agents in the app: open the sub-agent a ``Task``/``Agent`` tool call started (``enter`` on
its message), and go back to the session that started it (``b``, or ``escape`` when nothing else
is to be cancelled). The sessions opened this way form a path from the main session down; going
back restores the parent as it was left (its edits, its selected message)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxview.app import messages
from ctxview.textfmt import counted, one_line

if TYPE_CHECKING:
    from ctxview.app.model import SessionModel
    from ctxview.sessions.subagents import SubAgent


@dataclass
class Step:
    """A session the user went down from: the model, the message selected, the agent opened."""

    model: SessionModel
    selected: int | None
    agent: SubAgent


class SubAgentNavigation:
    def __init__(self, app: Any) -> None:
        self.app = app
        #: the sessions above the shown one, the main session first
        self.path: list[Step] = []
        #: the model this navigation is about to show (any other opened model ends the path)
        self._expected: SessionModel | None = None

    def shown_model(self) -> SessionModel:
        return self.app.model  # type: ignore[no-any-return]

    def breadcrumb(self) -> str:
        """ "main › <agent> › ..." for the title; empty at the main session."""
        if not self.path:
            return ""
        return " › ".join(["main", *(one_line(s.agent.label, 40) for s in self.path)])

    def open_selected(self) -> bool:
        """Open the sub-agent of the selected message; False (and a notice) when it has none."""
        model = self.shown_model()
        mid = self.app.timeline.selected_id
        agent = model.replay.subagent_of_message(mid) if mid is not None else None
        if agent is None:
            self.app.notify(
                "no sub-agent here: select a Task or Agent tool call (or its result) whose "
                "sub-agent transcript is beside the session",
                markup=False,
            )
            return False
        self.app.run_worker(
            lambda: self._load(model, mid, agent),
            thread=True,
            exclusive=True,
            group="open",
            description="open a sub-agent",
        )
        return True

    def _load(self, parent: SessionModel, selected: int | None, agent: SubAgent) -> None:
        from ctxview.app.model import SessionModel
        from ctxview.sessions import replay
        from ctxview.sessions.model import SessionError

        app = self.app
        try:
            loaded = agent.load()
            rep = replay(loaded, defaults=app.config.as_defaults(), as_sent=True)
        except (SessionError, ValueError) as exc:
            app.call_from_thread(
                app.notify,
                str(exc),
                title="cannot open the sub-agent",
                severity="error",
                markup=False,
            )
            return
        model = SessionModel(rep, agent.path or loaded.path, loaded.model or parent.model)
        app.call_from_thread(self._show, Step(parent, selected, agent), model)

    def _show(self, step: Step, model: SessionModel) -> None:
        if self.app.model is not step.model:
            return  # another session was opened meanwhile
        self.path.append(step)
        self._expected = model
        self.app.post_message(messages.SessionOpened(model))
        self.app.notify(
            f"sub-agent {step.agent.label} · {counted(len(model.transcript), 'message')} · b: back",
            markup=False,
        )

    def back(self) -> bool:
        """Show the session the shown sub-agent was opened from; False at the main session."""
        if not self.path:
            return False
        step = self.path.pop()
        self._expected = step.model
        self.app.post_message(messages.SessionOpened(step.model))
        if step.selected is not None:
            self.app.call_after_refresh(self.app.timeline.select_id, step.selected)
        return True

    def opened(self, model: SessionModel) -> None:
        """A session is shown: another file than the one this navigation opened ends the
        path down to it."""
        if model is not self._expected:
            self.path.clear()
        self._expected = None
