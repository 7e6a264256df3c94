"""The app's shell, below everything ctxview shows: every notification and title made visible
text, a crash kept for the log file instead of printed over the terminal, SIGTERM and SIGHUP
ending the app cleanly, and plain-key actions that wait while the user types or a dialog is up."""

from __future__ import annotations

from typing import Any, ClassVar

from textual.app import App

from ctxview.app.safe import one_line, visible


class ShellApp(App[int]):
    #: actions that are plain keys: not while typing in an input, nor under a dialog
    TYPING_SENSITIVE: ClassVar[set[str]] = set()
    #: priority-bound actions: everywhere on the main screen, an input included
    MAIN_SCREEN_ONLY: ClassVar[set[str]] = set()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: (message, title, severity) of the latest notices, newest last (toasts come and go)
        self.notice_log: list[tuple[str, str, Any]] = []
        #: notices raised since the last toast: (message, title, severity, timeout)
        self._pending_notices: list[tuple[str, str, Any, float]] = []

    def use_theme(self, theme: object, where: str) -> None:
        """The configured theme (from ``where``), or a warning that there is none of that name."""
        from ctxview.config import ConfigError, check_theme

        if not theme:
            return
        try:
            check_theme(theme, self.available_themes)
        except ConfigError as exc:
            self.notify(
                f"{where}: {exc}; using {self.theme}",
                title="config",
                severity="warning",
                markup=False,
            )
        else:
            self.theme = str(theme)

    # -- crashes and signals --------------------------------------------------------------------
    #: set when an unhandled exception ended the app: (exception, its traceback text)
    crash: tuple[BaseException, str] | None = None

    def _handle_exception(self, error: Exception) -> None:
        """A crash: keep the traceback for the log file (see launch) instead of printing it over
        the user's terminal; the app exits with status 1."""
        import traceback

        if self.crash is None:
            self.crash = (error, "".join(traceback.format_exception(error)))
        super()._handle_exception(error)
        self._exit_renderables.clear()  # the one line and the log replace Textual's dump

    def _install_signal_handlers(self) -> None:
        """SIGTERM and SIGHUP: save (before_signal_exit), leave the terminal as it was, exit
        143 / 129. Not for a headless app (Pilot, tests, benchmarks): it runs in its host's event
        loop, and a SIGTERM meant for the host (``timeout pytest``) would only end the app while
        the host went on."""
        import asyncio
        import signal

        if self.is_headless:
            return
        try:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(sig, self._on_signal, int(sig))
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):
            pass  # not the main thread (tests) or no signals here (Windows)

    def _on_signal(self, signum: int) -> None:
        self.before_signal_exit()
        self.exit(return_code=128 + signum)

    def before_signal_exit(self) -> None:
        """What to save before SIGTERM or SIGHUP ends the app."""

    # -- the sanitising boundary for app-wide text ---------------------------------------------
    #: how long a notice stays, by severity (seconds): short, so that none goes stale over the
    #: rows (a caller's longer timeout is cut to these)
    NOTICE_SECONDS: ClassVar[dict[str, float]] = {"information": 3, "warning": 5, "error": 8}
    #: notices raised this close together are one event: one toast says them all
    SAME_EVENT_SECONDS: ClassVar[float] = 0.5
    _SEVERITY_ORDER: ClassVar[dict[str, int]] = {"information": 0, "warning": 1, "error": 2}

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: Any = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification (the app's, its widgets', the chat controller's, from threads)
        comes here: control characters, C1 controls and bidi overrides are made visible and the
        text is never parsed as markup, whatever the caller passed. Notices of one event are
        shown as one toast, which replaces the toast before it."""
        import threading

        if getattr(self, "_thread_id", None) not in (None, threading.get_ident()):
            self.call_from_thread(
                self.notify, message, title=title, severity=severity, timeout=timeout
            )
            return
        limit = self.NOTICE_SECONDS.get(str(severity), 5)
        note = (
            visible(str(message)[:4000]),
            one_line(str(title), 120),
            severity,
            limit if timeout is None else min(timeout, limit),
        )
        self.notice_log.append(note[:3])
        if len(self.notice_log) > 200:
            del self.notice_log[:100]
        self._pending_notices.append(note)
        if len(self._pending_notices) == 1:
            self.call_later(self._show_notices)

    def _show_notices(self) -> None:
        """The notices raised since the last call as one toast, replacing the toast before it
        (merged into it when it was raised a moment ago: the same event)."""
        import time

        notes = list(self._pending_notices)
        self._pending_notices.clear()
        if not notes:
            return
        order = self._SEVERITY_ORDER
        now = time.time()
        shown = list(self._notifications)
        recent = [n for n in shown if now - n.raised_at < self.SAME_EVENT_SECONDS]
        earlier = [(n.message, n.title, n.severity, n.timeout) for n in recent]
        notes = [*earlier, *notes]
        severity = max((n[2] for n in notes), key=lambda s: order.get(str(s), 0))
        for n in shown:  # one toast at a time: what came before is stale
            self._unnotify(n, refresh=False)
        texts: list[str] = []
        for message, title, _, _ in notes:
            text = f"{title}: {message}" if title and len(notes) > 1 else message
            if text not in texts:
                texts.append(text)
        titles = {t for _, t, _, _ in notes if t}
        super().notify(
            "\n".join(texts),
            title=next(iter(titles)) if len(titles) == 1 and len(notes) == 1 else "",
            severity=severity,
            markup=False,
            timeout=max(n[3] for n in notes),
        )

    def validate_title(self, title: str) -> str:
        """The header's title (and the terminal's, where a driver sets it) is always visible
        text: a session named with an OSC sequence cannot retitle the terminal."""
        return one_line(str(title), 300)

    def validate_sub_title(self, sub_title: str) -> str:
        return one_line(str(sub_title), 300)

    # -- guards --------------------------------------------------------------------------------
    def _priority(self, action: str) -> bool:
        """Is ``action`` bound to a priority key of the app (one that works under a dialog)?"""
        return any(
            b.priority and b.action == action
            for bound in self._bindings.key_to_bindings.values()
            for b in bound
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.MAIN_SCREEN_ONLY:
            # priority keys: on the main screen only (a dialog's text area keeps its own ctrl+e)
            return self.screen is self.screen_stack[0]
        if self.screen.is_modal and not self._priority(action):
            # under a modal dialog only priority keys reach the app (Textual's modal binding
            # chain): the others would do nothing, so the footer does not offer them
            return False
        if action not in self.TYPING_SENSITIVE:
            return True
        # plain-key actions: not while typing, and not under a modal screen
        focused = self.focused
        typing = focused is not None and any(
            c.__name__ in ("Input", "TextArea") for c in type(focused).__mro__
        )
        return not typing and self.screen is self.screen_stack[0]
