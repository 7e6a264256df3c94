"""The ctxview Textual app: timeline, block detail, config sidebar, chat input."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import suppress
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar, cast

from textual import on
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input

from ctxview.app import messages
from ctxview.app.keys import BINDINGS, MAIN_SCREEN_ONLY, TYPING_SENSITIVE, palette
from ctxview.app.layout import NARROW, sidebar_width
from ctxview.app.model import AS_SENT, SessionModel, as_sent_possible
from ctxview.app.safe import one_line
from ctxview.app.shell import ShellApp
from ctxview.app.widgets.chat_input import ChatInput
from ctxview.app.widgets.timeline import Timeline, TimelineHeader
from ctxview.app.widgets.verdict import VerdictBar
from ctxview.config import Config

if TYPE_CHECKING:
    from ctxview.app.editing import Editor
    from ctxview.app.figures import Figures
    from ctxview.app.files import SessionFiles
    from ctxview.app.follow import Following
    from ctxview.app.notices import EvictionNotices
    from ctxview.app.search import TimelineSearch
    from ctxview.app.settings import Settings
    from ctxview.app.subagents import SubAgentNavigation
    from ctxview.app.widgets.detail import BlockDetail
    from ctxview.app.widgets.sidebar import ConfigSidebar


#: the header's words for what a request's file cannot show (a provider's request notes)
_NOTE_LABELS = {
    "continues_stored_response": "continues a stored response",
    "uses_stored_prompt": "uses a stored prompt",
}


class CtxviewApp(ShellApp):
    TITLE = "ctxview"
    COMMANDS = App.COMMANDS | {palette}
    CSS_PATH = "styles.tcss"

    BINDINGS: ClassVar[list[BindingType]] = BINDINGS
    TYPING_SENSITIVE: ClassVar[set[str]] = TYPING_SENSITIVE
    MAIN_SCREEN_ONLY: ClassVar[set[str]] = MAIN_SCREEN_ONLY

    def __init__(
        self,
        model: SessionModel,
        config: Config,
        *,
        opened_file: bool,
        offline: bool = True,
        chat: Any = None,
        save_config: bool = True,
    ) -> None:
        super().__init__()
        self.model = model
        self.config = config
        self.opened_file = opened_file
        self.offline = offline
        self.chat = chat
        self.save_config = save_config
        self._last_detail = 0.0
        self._detail_timer: Any = None
        self.exact_tokens: int | None = None
        self._user_sidebar: bool | None = None
        self._panes_ready = False
        #: ``--follow``: start following the opened transcript once mounted
        self.follow_on_start = False
        #: ``ctxview fleet DIR``: the Fleet screen over that dataset once mounted
        self.fleet_on_start: str | None = None
        self._following: Following | None = None

    def _chat_busy(self) -> bool:
        """A reply is in flight."""
        return self.chat is not None and bool(getattr(self.chat, "busy", False))

    # -- the parts, each made when first used (the first screen waits for none of their imports,
    # nor for the sidebar's, the detail pane's or the dialogs')
    @cached_property
    def settings(self) -> Settings:
        from ctxview.app.settings import Settings

        return Settings(self, self.model, self.config, self._chat_busy, self.save_config)

    @cached_property
    def files(self) -> SessionFiles:
        from ctxview.app.files import SessionFiles

        return SessionFiles(self, self.model, self.config, self.session_document, self.request_body)

    @cached_property
    def editor(self) -> Editor:
        from ctxview.app.editing import Editor

        return Editor(self, self.model, self.config, self._chat_busy)

    @cached_property
    def figures(self) -> Figures:
        from ctxview.app.figures import Figures

        return Figures(self, self.model, self.config)

    @cached_property
    def subagents(self) -> SubAgentNavigation:
        from ctxview.app.subagents import SubAgentNavigation

        return SubAgentNavigation(self)

    @cached_property
    def search(self) -> TimelineSearch:
        from ctxview.app.search import TimelineSearch

        return TimelineSearch(self, self.model, self.timeline)

    @cached_property
    def evictions(self) -> EvictionNotices:
        from ctxview.app.notices import EvictionNotices

        return EvictionNotices(self, self._chat_busy)

    # -- layout --------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # The timeline comes first; the sidebar and the detail pane are mounted right after the
        # first paint (see _mount_panes), so startup costs one widget, not a dozen.
        yield Header()
        with Horizontal(id="main"), Vertical(id="center"):
            yield VerdictBar(id="verdict")
            yield TimelineHeader(id="timeline-head")
            yield Timeline(id="timeline")
        yield ChatInput(placeholder="", id="chat")
        yield Footer()

    async def _mount_panes(self) -> None:
        from textual.widget import MountError

        from ctxview.app.widgets.detail import BlockDetail
        from ctxview.app.widgets.sidebar import ConfigSidebar

        try:
            model = self.model
            await self.query_one("#main").mount(
                ConfigSidebar(
                    AS_SENT if model.as_sent is not None else model.context.strategy,
                    with_as_sent=as_sent_possible(model),
                    id="sidebar",
                ),
                before="#center",
            )
            await self.query_one("#center").mount(BlockDetail(id="detail"))
        except MountError:
            return  # the app is closing before the panes came up
        self._panes_ready = True
        self._apply_width(self.size.width)
        self.update_panes()
        if self.chat is None:
            from ctxview.app.chat import ChatController

            self.chat = ChatController(self, offline=self.offline)
        self.chat.warm()

    def update_panes(self) -> None:
        """Verdict, sidebar and detail follow the model (the last two once mounted)."""
        if self._panes_ready or self.main_screen.has_class("-hide-sidebar"):
            # (a check of a big window is not worth delaying the first paint for while the
            # verdict line is hidden behind the sidebar)
            self.query_one(VerdictBar).update_from(self.model)
        if not self._panes_ready:
            return  # (the workers below start after the first paint: they compete for the GIL)
        self.figures.schedule_check()
        self.sidebar.update_from(self.model, self.exact_tokens)
        self.show_detail()
        self.figures.schedule_prediction()

    @on(messages.FiguresChanged)
    def _figures_changed(self, event: messages.FiguresChanged) -> None:
        # a worker's figures may arrive while the panes are being torn down (the app is closing)
        with suppress(NoMatches):
            if event.rows:
                self.timeline.refresh()
                self.update_panes()
            elif self._panes_ready:
                if event.cache:
                    self.sidebar.update_cache(self.model)
                else:
                    self.sidebar.update_from(self.model, self.exact_tokens)

    @property
    def _predict_timer(self) -> Any:
        """The cache prediction waiting for a quiet spell, if any (tests wait for it)."""
        return self.figures.predict_timer

    @property
    def last_prediction_seconds(self) -> float:
        return self.figures.last_prediction_seconds

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def detail(self) -> BlockDetail:
        return cast("BlockDetail", self.query_one("#detail"))  # (its module loads after paint)

    @property
    def sidebar(self) -> ConfigSidebar:
        return cast("ConfigSidebar", self.query_one("#sidebar"))

    def before_signal_exit(self) -> None:
        if self.chat is not None and hasattr(self.chat, "autosave_now"):
            self.chat.autosave_now()

    def on_mount(self) -> None:
        self._install_signal_handlers()
        self.use_theme(self.config.get("theme"), str(self.config.path))
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.timeline.animation = str(self.config.get("animation", "full"))
        for err in self.config.errors:
            self.notify(err, title="config", severity="warning", markup=False, timeout=10)
        if self.model.session.skipped_lines:
            from ctxview.app.skipped import skipped_note

            self.notify(
                skipped_note(self.model.session.skipped()),
                title=self.model.name,
                severity="warning",
                markup=False,
                timeout=10,
            )
        self._apply_width(self.size.width)
        self._install_model(self.model, focus=True)
        self.call_after_refresh(self._mount_panes)
        if self.follow_on_start:
            self.call_after_refresh(self.action_follow)
        if self.fleet_on_start:
            self.show_fleet(self.fleet_on_start)

    def show_fleet(self, dataset: str) -> None:
        """The Fleet screen over a scanned dataset; the session chosen there is opened."""
        from ctxview.app.screens.fleet import FleetScreen

        def chosen(path: str | None) -> None:
            if path:
                self.open_path(path)

        self.push_screen(FleetScreen(dataset), chosen)

    def action_follow(self) -> None:
        """Follow the open Claude Code transcript as it grows (or stop): ctxview.app.follow."""
        from ctxview.app.follow import toggle_follow

        self._following = toggle_follow(
            self._following, self, self.model, self.timeline, self.config
        )
        self._update_titles()

    def action_skipped_lines(self) -> None:
        from ctxview.app.skipped import show_skipped

        show_skipped(self, self.model.name, self.model.session)

    def action_sessions(self) -> None:
        from ctxview.app import dialogs

        dialogs.show_sessions(self)

    @on(messages.OpenRequested)
    def _open_requested(self, event: messages.OpenRequested) -> None:
        self.open_path(event.path, follow=event.follow)

    @on(messages.Followed)
    def _followed(self, event: messages.Followed) -> None:
        if self._following is None or event.source is not self._following:
            return  # no longer followed
        change = self._following.apply(event.update, event.model)
        if isinstance(change, messages.ContextChanged):
            self._context_changed(change)
        elif isinstance(change, messages.SessionReplaced):
            self._session_replaced(change)

    @on(messages.SessionReplaced)
    def _session_replaced(self, event: messages.SessionReplaced) -> None:
        if self.model is not event.old:
            return  # another file was opened meanwhile
        if event.again is not None and len(event.old.transcript) != len(event.model.transcript):
            # followed messages were added to the shown session after the replay was made
            self.post_message(event.again)
            return
        selected = self.timeline.selected_id
        self._install_model(event.model)
        if self._following is not None and self._following.model is event.old:
            self._following.model = event.model
        if event.at_end:
            self.timeline.action_jump_end()
        elif selected is not None and selected < len(event.model.transcript):
            self.timeline.select_id(selected)

    @on(messages.ReplayRequested)
    def _replay_requested(self, event: messages.ReplayRequested) -> None:
        self.settings.replay_as(
            as_sent=event.as_sent,
            max_messages=event.max_messages,
            strategy=event.strategy,
            note=event.note,
        )

    def _install_model(self, model: SessionModel, focus: bool = False) -> None:
        self.model = model
        self.exact_tokens = None
        for part in (
            "editor",
            "files",
            "settings",
            "figures",
            "search",
        ):  # those made so far follow it
            if part in self.__dict__:
                self.__dict__[part].show(model)
        self._update_titles()
        self.timeline.set_model(model)
        self.update_panes()
        chat = self.query_one("#chat", Input)
        chat.placeholder = self._chat_placeholder()
        if not model.tokens_ready:
            self.figures.estimate_tokens(model)
        if focus:
            if self.opened_file:
                self.timeline.focus()
            else:
                chat.focus()

    def _chat_placeholder(self) -> str:
        from ctxview.chat.loop import cannot_chat
        from ctxview.core.providers.registry import provider

        session = self.model.session
        if cannot_chat(session.provider, session.format) is not None:
            # the chat would refuse what the placeholder invites: say what this session is for
            return (
                f"{provider(session.provider).label} session: to read, check and export · "
                "new chat: ctxview"
            )
        if self.offline:
            return "Message the offline demo model · enter to send · try: calculate 6*7"
        return f"Message {one_line(self.model.model, 60)} · enter to send · escape cancels a reply"

    def _update_titles(self) -> None:
        unsaved = " · ● unsaved" if self.model.unsaved else ""
        name = self.model.name
        if "subagents" in self.__dict__ and (crumb := self.subagents.breadcrumb()):
            name = crumb
        self.title = f"ctxview · {name}{unsaved}"  # validate_title makes it visible text
        mode = "offline" if self.offline else "online"
        following = " · following" if self._following is not None and self._following.active else ""
        # (another API's session may name no model: the config's, a Claude model, is not its)
        model = f"{self.model.model} · " if self.model.model else ""
        self.sub_title = f"{self._provider_label()}{model}{mode}{following}"

    def _provider_label(self) -> str:
        """``OpenAI · `` before the model for a session of another API than Anthropic's (whose
        header names the model alone), and what the file cannot show of it."""
        from ctxview.core.providers.registry import provider

        name = self.model.replay.provider
        if name == "anthropic":
            return ""
        found = provider(name)
        notes = found.notes(self.model.session.request_params)
        said = dict.fromkeys(_NOTE_LABELS.get(n.code, "") for n in notes)
        more = "".join(f" · {label}" for label in said if label)
        # a Gemini request's route, where the file knows it (the tokens are estimated for it)
        route = self.model.session.route
        sent = f" · {route.label()}" if route is not None else ""
        return f"{found.label}{sent}{more} · "

    def on_resize(self, event: Any) -> None:
        self._apply_width(event.size.width)

    @property
    def main_screen(self) -> Any:
        """The screen with the panes (a dialog may be on top of it)."""
        return self.screen_stack[0]

    def _apply_width(self, width: int) -> None:
        self.set_class(width < NARROW, "-narrow")  # on the app: every screen's notices follow
        if self._user_sidebar is None:
            self.main_screen.set_class(width < NARROW, "-hide-sidebar")
            if width < NARROW and not self._panes_ready:
                self.query_one(VerdictBar).update_from(self.model)
        if self._panes_ready:
            self.sidebar.styles.width = sidebar_width(width)

    @cached_property
    def contrast_filter(self) -> Any:
        """The last line filter: every text readable (WCAG AA); it knows the dimmed colours."""
        from ctxview.app.colours import ContrastFilter

        return ContrastFilter()

    def get_line_filters(self) -> Any:
        """Textual's filters, then ctxview's: every text readable (WCAG AA) in every theme."""
        return [*super().get_line_filters(), self.contrast_filter]

    def _theme_changed(self, theme: Any) -> None:
        if self.save_config and getattr(theme, "name", None):
            self.settings.persist({"theme": theme.name})

    def get_system_commands(self, screen: Any) -> Any:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help: every key", "Show the key reference", self.action_help)

    # -- after every change to the context -----------------------------------------------------
    @on(messages.ContextChanged)
    def _context_changed(self, event: messages.ContextChanged) -> None:
        if event.count_stale:
            self.exact_tokens = None
        self._update_titles()  # (an edit marks the session unsaved)
        self.context_changed(keep=event.keep)
        if event.end:
            self.timeline.action_jump_end()
        if event.flash:
            self.timeline.flash(event.flash)

    @on(messages.DraftChanged)
    def _draft_changed(self, event: messages.DraftChanged) -> None:
        tl = self.timeline
        if event.rows:
            tl.refresh_rows()
        else:
            tl.refresh()
        if event.end:
            tl.action_jump_end()
        elif tl.on_draft:
            self.show_detail()

    @on(messages.ExactCount)
    def _exact_count(self, event: messages.ExactCount) -> None:
        self.exact_tokens = event.tokens
        self.update_panes()

    def context_changed(self, *, keep: int | None = None) -> None:
        """Rows, animation, notification, sidebar and detail follow a change of the context."""
        model = self.model
        selected = keep if keep is not None else self.timeline.selected_id
        model.after_change()
        evictions = model.take_evictions()
        self.timeline.refresh_rows()
        if selected is not None:
            self.timeline.select_id(selected)
        ids = [i for e in evictions for i in e.ids]
        if ids:
            self.timeline.flash(ids)
            self.evictions.add(evictions)
        if "search" in self.__dict__:
            self.search.session_grew()
        self.update_panes()

    # -- the shown session's settings (ctxview/app/settings.py) ---------------------------------
    def set_max(self, n: int) -> None:
        self.settings.set_max(n)

    def set_strategy(self, name: str) -> None:
        self.settings.set_strategy(name)

    def set_model_name(self, name: str) -> None:
        self.settings.set_model_name(name)

    def action_as_sent(self) -> None:
        self.settings.show_as_sent()

    def action_max_delta(self, delta: int) -> None:
        self.settings.max_delta(delta)

    def action_cycle_strategy(self) -> None:
        self.settings.cycle_strategy()

    async def action_quit(self) -> None:
        """Quit, after asking when the session has unsaved changes."""
        self.files.confirm_leave("quit", self.exit)

    def action_make_default(self) -> None:
        self.settings.make_default()

    @on(messages.StrategyChosen)
    def _strategy_chosen(self, event: messages.StrategyChosen) -> None:
        self.set_strategy(event.name)

    @on(messages.MaxChosen)
    def _max_chosen(self, event: messages.MaxChosen) -> None:
        self.set_max(event.value)

    @on(messages.Command)
    def _command(self, event: messages.Command) -> None:
        action: Callable[[], object] = getattr(self, f"action_{event.action}")
        action()

    def on_config_sidebar_max_changed(self, event: ConfigSidebar.MaxChanged) -> None:
        if event.value != self.model.context.max_context_messages or self.model.as_sent:
            self.set_max(event.value)

    def on_config_sidebar_model_changed(self, event: ConfigSidebar.ModelChanged) -> None:
        self.set_model_name(event.name)

    def on_config_sidebar_strategy_changed(self, event: ConfigSidebar.StrategyChanged) -> None:
        if event.name == AS_SENT:
            if self.model.as_sent is None:
                self.action_as_sent()
        elif event.name != self.model.context.strategy or self.model.as_sent is not None:
            self.set_strategy(event.name)

    # -- navigation ----------------------------------------------------------------------------
    @on(Timeline.Selected)
    def _selected(self, event: Timeline.Selected) -> None:
        if "search" in self.__dict__:
            self.search.cursor_moved()
        now = time.monotonic()
        if now - self._last_detail > 0.08:
            self.show_detail()
        else:
            if self._detail_timer is not None:
                self._detail_timer.stop()
            self._detail_timer = self.set_timer(0.08, self.show_detail)

    def show_detail(self) -> None:
        """The detail pane follows the selection: the reply draft, or the selected message."""
        self._detail_timer = None
        if not self._panes_ready:
            return
        try:
            self.timeline  # noqa: B018
        except NoMatches:
            return  # the app is being torn down (a follow update landing as it quits)
        self._last_detail = time.monotonic()
        tl = self.timeline
        self.detail.show_selected(
            self.model, tl.selected_id, marker=tl.selected_marker, on_draft=tl.on_draft
        )

    def action_toggle_evicted(self) -> None:
        self.timeline.toggle_evicted()

    def action_jump_pinned(self) -> None:
        self.timeline.jump_pinned()

    def action_pin(self) -> None:
        self.editor.pin_selected(self.timeline.selected_id)

    def action_next_problem(self) -> None:
        """``n``: the next match while a search is on, else the next protocol problem."""
        if "search" in self.__dict__ and self.search.active:
            self.search.step(1)
        else:
            self.timeline.jump_next_problem()

    def action_previous_match(self) -> None:
        """``N``: the previous match while a search is on, else the previous problem."""
        if "search" in self.__dict__ and self.search.active:
            self.search.step(-1)
        else:
            self.timeline.jump_next_problem(-1)

    def action_search(self) -> None:
        self.search.open()

    @on(Input.Changed, "#search-input")
    def _search_changed(self, event: Input.Changed) -> None:
        self.search.changed(event.value)

    @on(Input.Submitted, "#search-input")
    def _search_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.search.query is None or self.search.query.text != event.value:
            self.search.run(event.value)
        self.timeline.focus()

    def _selected_message(self) -> tuple[int, Any] | None:
        mid = self.timeline.selected_id
        if mid is None:
            self.notify("no message selected", markup=False, timeout=2)
            return None
        return mid, self.model.transcript[mid].message

    def action_copy_message(self) -> None:
        """``y``: the selected message's text to the clipboard."""
        from ctxview.app import copy

        if (sel := self._selected_message()) is not None:
            copy.copy(self, f"#{sel[0]}", copy.message_text(sel[1]))

    def action_copy_json(self) -> None:
        """``Y``: the selected message as JSON (the API's shape) to the clipboard."""
        from ctxview.app import copy
        from ctxview.textfmt import json_text

        if (sel := self._selected_message()) is not None:
            copy.copy(self, f"#{sel[0]} as JSON", json_text(sel[1], indent=2))

    def action_view_message(self) -> None:
        """``v``: the selected message in $PAGER."""
        from ctxview.app import copy

        if (sel := self._selected_message()) is not None:
            copy.page(self, copy.message_page(*sel))

    def action_partner(self) -> None:
        self.timeline.jump_partner()

    def action_jump_back(self) -> None:
        self.timeline.jump_back()

    # -- edits (ctxview/app/editing.py) ---------------------------------------------------------
    def action_repair(self) -> None:
        self.editor.repair_selected(self.timeline.selected_id)

    def action_repair_all(self) -> None:
        self.editor.repair_all(self.timeline.selected_id)

    def action_drop(self) -> None:
        self.editor.drop_selected(self.timeline.selected_id)

    def action_stub(self) -> None:
        self.editor.stub_selected(self.timeline.selected_id)

    def action_undo(self) -> None:
        self.editor.undo(self.timeline.selected_id)

    def action_focus_chat(self) -> None:
        self.query_one("#chat", Input).focus()

    def action_toggle_sidebar(self) -> None:
        screen = self.main_screen
        hidden = screen.has_class("-hide-sidebar")
        self._user_sidebar = hidden
        screen.set_class(not hidden, "-hide-sidebar")

    def action_toggle_detail(self) -> None:
        self.main_screen.toggle_class("-hide-detail")

    def action_requests(self) -> None:
        from ctxview.app import dialogs

        dialogs.show_requests(self, self.model, self.config, self.timeline)

    def action_compare(self) -> None:
        from ctxview.app import dialogs

        dialogs.show_compare(self, self.model, self.config)

    def action_help(self) -> None:
        from ctxview.app import dialogs

        dialogs.show_help(self)

    def action_escape(self) -> None:
        if self._chat_busy():
            self.chat.cancel()
            return
        if "search" in self.__dict__ and (
            self.search.active or getattr(self.focused, "id", None) == "search-input"
        ):
            self.search.close(back=getattr(self.focused, "id", None) == "search-input")
            return
        if isinstance(self.focused, Input):
            self.timeline.focus()
            return
        if "subagents" in self.__dict__:
            self.subagents.back()

    def action_open_subagent(self) -> None:
        self.subagents.open_selected()

    def action_subagent_back(self) -> None:
        if not ("subagents" in self.__dict__ and self.subagents.back()):
            self.notify("this is the main session (no sub-agent opened)", markup=False)

    def action_edit_system(self) -> None:
        from ctxview.app import dialogs

        dialogs.edit_system_prompt(self, self.model)

    # -- files (ctxview/app/files.py) -----------------------------------------------------------
    def action_open(self) -> None:
        self.files.open_dialog()

    def open_path(self, path: str, follow: bool = False) -> None:
        """Open ``path`` (in a worker), and follow it if asked."""
        self.files.load(path, follow)

    @on(messages.SessionOpened)
    def _opened(self, event: messages.SessionOpened) -> None:
        from ctxview.sessions.model import freeze_long_lived

        model = event.model
        if self._following is not None:  # the file followed is no longer shown
            self._following.stop()
            self._following = None
        freeze_long_lived()  # a big session stays out of later GC passes (see launch)
        self.opened_file = True
        if self.chat is not None:
            self.chat.reset()
        if "subagents" in self.__dict__:
            self.subagents.opened(model)
        self._install_model(model, focus=True)
        if event.follow:
            self.action_follow()

    def action_save(self) -> None:
        self.files.save()

    def action_save_as(self) -> None:
        self.files.save_as()

    def save_to(self, path: str) -> bool:
        return self.files.save_to(path)

    @on(messages.NameChanged)
    def _renamed(self, event: messages.NameChanged) -> None:
        if event.count_stale:
            self.exact_tokens = None
        self._update_titles()
        self.query_one("#chat", Input).placeholder = self._chat_placeholder()
        self.update_panes()

    def session_document(self) -> dict[str, Any]:
        return self.model.replay.document(
            self.config.as_defaults(), self.model.model, tools=self.model.tools
        )

    def request_body(self) -> dict[str, Any]:
        return self.model.replay.request_body(
            self.config.as_defaults(), self.model.model, tools=self.model.tools
        )

    def action_export(self) -> None:
        self.files.export()

    # -- chat hooks (the chat controller does the work) ----------------------------------------
    @on(Input.Submitted, "#chat")
    def _chat_submit(self, event: Input.Submitted) -> None:
        if self.chat is None:
            if event.value.strip():
                self.notify("chat is not available in this view", markup=False)
            return
        self.chat.submit_input(event.input)

    def action_retry(self) -> None:
        if self.chat is not None:
            self.chat.retry()

    def action_count_tokens(self) -> None:
        if self.chat is not None:
            self.chat.count_tokens()
        else:
            self.notify("exact counts need the API (set ANTHROPIC_API_KEY)", markup=False)
