"""The dialogs that look at the shown session: the Requests view (``R``), Compare (``C``), the
system prompt editor (``ctrl+e``), the agent sessions list (``ctrl+l``) and the key help.
Each gets what it shows as arguments and answers with a message to the app
(``ctxview.app.messages``) or a new selection in the timeline."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ctxview.app.messages import ContextChanged, OpenRequested, ReplayRequested

if TYPE_CHECKING:
    from textual.app import App

    from ctxview.app.model import SessionModel
    from ctxview.app.widgets.timeline import Timeline
    from ctxview.config import Config


def show_requests(app: App[Any], model: SessionModel, config: Config, timeline: Timeline) -> None:
    """The Requests view of the shown session; enter selects a request's message."""
    from ctxview.app.screens.requests import RequestsScreen

    screen = RequestsScreen.for_session(model, config)
    if screen is None:
        app.notify("no requests yet: nothing has been sent", markup=False)
        return

    def chosen(mid: int | None) -> None:
        if mid is not None:
            timeline.select_id(mid)
            timeline.focus()

    app.push_screen(screen, chosen)


def show_compare(app: App[Any], model: SessionModel, config: Config) -> None:
    """Every strategy replayed on the shown session at the current max; enter replays the
    session from the start under the chosen one (or as sent), as its row did."""
    from ctxview.app.model import AS_SENT
    from ctxview.app.screens.compare import CompareScreen

    screen = CompareScreen.for_session(model, config)

    def chosen(name: str | None) -> None:
        if name is None:
            return
        if name == AS_SENT:
            app.post_message(ReplayRequested(as_sent=True))
        else:
            app.post_message(
                ReplayRequested(
                    as_sent=False, strategy=name, max_messages=screen.max_context_messages
                )
            )

    app.push_screen(screen, chosen)


def edit_system_prompt(app: App[Any], model: SessionModel) -> None:
    from ctxview.app.screens.modals import SystemPromptScreen

    def done(text: str | None) -> None:
        if text is None or text == model.context.system_text:
            return
        model.context.system_prompt = text
        model.unsaved = True
        app.post_message(ContextChanged())
        app.notify(f"system prompt set ({len(text):,} characters)", markup=False)

    app.push_screen(SystemPromptScreen(model.context.system_text), done)


def show_sessions(app: App[Any]) -> None:
    """The agent sessions list: enter opens, f opens and follows."""
    from ctxview.app.screens.sessions import SessionsScreen

    def chosen(answer: tuple[str, bool] | None) -> None:
        if answer:
            app.post_message(OpenRequested(answer[0], follow=answer[1]))

    app.push_screen(SessionsScreen(), chosen)


def show_help(app: App[Any]) -> None:
    from ctxview.app.keys import KEYS_HELP
    from ctxview.app.screens.modals import HelpScreen

    app.push_screen(HelpScreen(KEYS_HELP))
