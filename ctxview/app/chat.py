"""The chat in the TUI: a thin adapter between the app and the headless agent loop
(``ctxview.chat.loop``). It runs the loop's turns as workers, turns its events into the draft and
messages to the app (``ctxview.app.messages``) and notifications, and answers the loop's
pre-send question with ``ConfirmSendScreen``."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ctxview.app.messages import ContextChanged, DraftChanged, ExactCount, MaxChosen, StrategyChosen
from ctxview.app.model import Draft
from ctxview.app.widgets.chat_input import ChatInput
from ctxview.chat.backends import AnthropicBackend, Backend, ChatError, import_sdk
from ctxview.chat.loop import (
    Added,
    AgentLoop,
    ChatEvent,
    Fault,
    SaveFailed,
    Sending,
    TextDelta,
    ThinkingDelta,
    TurnDone,
    cannot_chat,
    make_backend,
)
from ctxview.chat.tools import ToolSettings
from ctxview.core.protocol import Problem

if TYPE_CHECKING:
    from textual.message import Message
    from textual.widgets import Input
    from textual.worker import Worker

    from ctxview.app.model import SessionModel
    from ctxview.app.widgets.timeline import Timeline
    from ctxview.config import Config
    from ctxview.core.context import ConversationContext


class ChatHost(Protocol):
    """What the chat needs of the app that shows it: the session shown now (``model``, its
    request body and saved document), the config, the timeline (where the reply's row is) and
    Textual's services (workers, dialogs, notices, messages)."""

    config: Config

    @property
    def model(self) -> SessionModel: ...

    @property
    def timeline(self) -> Timeline: ...

    def request_body(self) -> dict[str, Any]: ...

    def session_document(self) -> dict[str, Any]: ...

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...

    def post_message(self, message: Message) -> bool: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def push_screen(
        self, screen: Any, callback: Any = None, wait_for_dismiss: bool = False
    ) -> Any: ...

    def run_worker(
        self,
        work: Any,
        name: str | None = "",
        group: str = "default",
        description: str = "",
        exit_on_error: bool = True,
        start: bool = True,
        exclusive: bool = False,
        thread: bool = False,
    ) -> Worker[Any]: ...


class AppSession:
    """The loop's :class:`~ctxview.chat.loop.ChatSession`: whatever session the app shows now."""

    def __init__(self, app: ChatHost) -> None:
        self.app = app

    @property
    def context(self) -> ConversationContext:
        return self.app.model.context

    @property
    def tools(self) -> list[Any]:
        return self.app.model.tools

    def request_body(self) -> dict[str, Any]:
        return self.app.request_body()

    def protocol_problems(self) -> list[Problem]:
        return self.app.model.problems  # the model's memoised check of this window

    def session_document(self) -> dict[str, Any]:
        return self.app.session_document()


class ChatController:
    def __init__(
        self,
        app: ChatHost,
        *,
        offline: bool,
        backend: Backend | None = None,
        tools: ToolSettings | None = None,
        autosave: bool = True,
    ) -> None:
        self.app = app
        self.offline = offline
        cfg = app.config
        self.loop = AgentLoop(
            AppSession(app),
            backend if backend is not None else make_backend(offline, cfg.values),
            tools=tools or ToolSettings.from_config(cfg.values),
            rounds=int(cfg.get("tool_rounds", 8)),
            autosave=autosave,
        )
        self.loop.subscribe(self._on_event)
        self._worker: Any = None
        self._at_end = False

    # what tests and the app read of the loop
    @property
    def backend(self) -> Backend:
        return self.loop.backend

    @property
    def busy(self) -> bool:
        return self.loop.busy

    @property
    def failed(self) -> bool:
        return self.loop.failed

    @property
    def requests(self) -> list[dict[str, Any]]:
        return self.loop.requests

    @property
    def autosave_path(self) -> Path | None:
        return self.loop.autosave_path

    # -- lifecycle ------------------------------------------------------------------------------
    def warm(self) -> None:
        """Import the SDK in a thread after the first paint, so the first send does not wait."""
        if isinstance(self.backend, AnthropicBackend):
            self.app.run_worker(
                import_sdk,
                thread=True,
                group="sdk",
                exit_on_error=False,
                description="import the SDK",
            )

    def reset(self) -> None:
        self.cancel()
        self.loop.reset()

    def ensure_tools(self) -> None:
        self.loop.ensure_tools()

    def autosave_now(self) -> Path | None:
        return self.loop.autosave_now()

    # -- user actions ---------------------------------------------------------------------------
    def submit_input(self, field: Input) -> None:
        """Send what was typed in ``field`` (it remembers it, for up / down)."""
        text = field.value
        if not text.strip():
            return
        if (why := self._other_api()) is not None:
            self.app.notify(why, severity="warning", markup=False)  # the text stays typed
            return
        field.value = ""
        if isinstance(field, ChatInput):
            field.remember(text)
        self.submit(text)

    def submit(self, text: str) -> None:
        if self.busy:
            self.app.notify(
                "a reply is in flight: wait, or press escape to cancel it", markup=False
            )
            return
        mid = self.loop.add_prompt(text)
        self._check_and_send(mid, text)

    def _other_api(self) -> str | None:
        """Why this session is not the chat's to send (another API's body), or None."""
        session = self.app.model.session
        return cannot_chat(session.provider, session.format)

    def retry(self) -> None:
        # ctrl+r must not send what enter refuses: another API's body, which the Messages API
        # (or the offline model answering as it) rejects with a 400 naming no real cause
        why = self._other_api() or self.loop.cannot_retry()
        if why is not None:
            self.app.notify(why, markup=False)
            return
        self.app.model.set_draft(None)
        self.app.post_message(DraftChanged(rows=True))
        self._check_and_send()

    def cancel(self) -> None:
        if self._worker is not None and self.busy:
            self._worker.cancel()

    def count_tokens(self) -> None:
        app = self.app
        if self._other_api() is not None:
            # count_tokens is the Messages API's: it would refuse (or miscount) another API's body
            est = app.model.window_tokens if app.model.tokens_ready else 0
            app.notify(
                f"count_tokens counts Claude requests: this {app.model.session.format} session "
                f"is another API's (estimate: ~{est:,})",
                title="count_tokens",
                severity="warning",
                markup=False,
            )
            return

        async def run() -> None:
            body = self.loop.preview_body()
            try:
                n = await self.backend.count_tokens(body)
            except ChatError as exc:
                est = app.model.window_tokens if app.model.tokens_ready else 0
                app.notify(
                    f"{exc} (estimate: ~{est:,})",
                    title="count_tokens",
                    severity="warning",
                    markup=False,
                )
                return
            app.post_message(ExactCount(n))
            app.notify(f"exact window size: {n:,} input tokens (count_tokens)", markup=False)

        app.run_worker(run(), group="count", exclusive=True, description="count_tokens")

    def _start(self, turn: Coroutine[Any, Any, Any]) -> None:
        self._worker = self.app.run_worker(
            turn, group="chat", exclusive=True, exit_on_error=False, description="chat turn"
        )

    # -- the loop's pre-send question, answered with a dialog -------------------------------------
    def _check_and_send(self, mid: int | None = None, text: str = "") -> None:
        """The loop's pre-send steps: no worker is held open while the dialog is up."""
        pre = self.loop.presend(mid)
        if pre is None:
            self._start(self.loop.send())
            return
        from ctxview.app.screens.modals import ConfirmSendScreen

        app = self.app

        def chosen(choice: str | None) -> None:
            # the app applies a new strategy or max first (its queue keeps the order), then the
            # loop goes on
            if choice == "pair-safe":
                app.post_message(StrategyChosen("pair-safe"))  # notified, remembered
            elif choice == "raise":
                app.post_message(MaxChosen(pre.raise_to))
                app.call_later(self.submit, text)  # evicted messages never come back: again
                return
            app.call_later(self._start, self.loop.answer(pre, choice, text, mid))

        app.push_screen(
            ConfirmSendScreen(pre.problems, pre.missing, pre.raise_to, pre.pair_safe_helps), chosen
        )

    # -- the loop tells -------------------------------------------------------------------------
    def _on_event(self, event: ChatEvent) -> None:
        app = self.app
        model = app.model
        if isinstance(event, TextDelta | ThinkingDelta):
            d = model.draft
            if d is None:
                return
            if isinstance(event, TextDelta):
                d.text += event.text
            else:
                d.thinking += event.text
            app.post_message(DraftChanged())
        elif isinstance(event, Sending):
            model.set_draft(Draft())
            # the reply's row is followed when the cursor was at the end
            self._at_end = app.timeline.cursor >= len(model.rows) - 2
            app.post_message(DraftChanged(rows=True, end=self._at_end))
        elif isinstance(event, Added):
            if event.what == "prompt":
                model.set_draft(None)
                app.post_message(ContextChanged(keep=event.id))
            else:
                if event.what == "reply":
                    model.set_draft(None)
                app.post_message(ContextChanged(keep=event.id if self._at_end else None))
        elif isinstance(event, Fault):
            d = model.draft or Draft()
            if event.partial and not d.text:
                d.text = event.partial
            d.state = event.state
            d.reason = event.message
            model.set_draft(d)
            app.post_message(DraftChanged(rows=True))
            app.notify(
                event.message,
                title="reply " + event.state,
                severity="error",
                markup=False,
                timeout=12,
            )
        elif isinstance(event, TurnDone):
            r = event.result
            if r.outcome == "rounds":
                app.notify(r.message, severity="warning", markup=False)
            elif r.outcome == "declined":
                app.notify(r.message, markup=False)
        elif isinstance(event, SaveFailed):
            app.notify(event.message, severity="warning", markup=False)
