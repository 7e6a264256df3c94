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
        text is never parsed as markup, whatever the caller passed."""
        kwargs: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        super().notify(
            visible(str(message)[:4000]),
            title=one_line(str(title), 120),
            severity=severity,
            markup=False,
            **kwargs,
        )

    def validate_title(self, title: str) -> str:
        """The header's title (and the terminal's, where a driver sets it) is always visible
        text: a session named with an OSC sequence cannot retitle the terminal."""
        return one_line(str(title), 300)

    def validate_sub_title(self, sub_title: str) -> str:
        return one_line(str(sub_title), 300)

    # -- guards --------------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in self.MAIN_SCREEN_ONLY:
            # priority keys: on the main screen only (a dialog's text area keeps its own ctrl+e)
            return self.screen is self.screen_stack[0]
        if action not in self.TYPING_SENSITIVE:
            return True
        # plain-key actions: not while typing, and not under a modal screen
        focused = self.focused
        typing = focused is not None and any(
            c.__name__ in ("Input", "TextArea") for c in type(focused).__mro__
        )
        return not typing and self.screen is self.screen_stack[0]
