"""The ctxview Textual app: timeline, block detail, config sidebar, chat input."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, Header, Input

from ctxview.app.commands import CtxviewCommands
from ctxview.app.model import AS_SENT, Eviction, SessionModel, as_sent_possible, compute_tokens
from ctxview.app.safe import one_line, visible
from ctxview.app.widgets.chat_input import ChatInput
from ctxview.app.widgets.timeline import Timeline, TimelineHeader
from ctxview.app.widgets.verdict import VerdictBar
from ctxview.config import Config, ConfigError, save_config_values
from ctxview.core.strategies import STRATEGIES
from ctxview.textfmt import fmt_tokens

if TYPE_CHECKING:
    from ctxview.app.widgets.detail import BlockDetail
    from ctxview.app.widgets.sidebar import ConfigSidebar

# Everything not needed for the first paint (the sidebar, the detail pane with its syntax
# highlighter, the modal screens with TextArea and DirectoryTree) is imported when first used.


def free_session_name(path: str) -> str:
    """``dir/name.ctxview.json`` for ``dir/name.json`` (``name-2.ctxview.json``… when taken)."""
    p = Path(path)
    stem = p.name
    for suffix in (".jsonl", ".json"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    stem = stem.removesuffix(".ctxview")
    candidate = p.with_name(stem + ".ctxview.json")
    n = 2
    while os.path.lexists(candidate) or str(candidate) == path:
        candidate = p.with_name(f"{stem}-{n}.ctxview.json")
        n += 1
    return str(candidate)


NARROW = 100  #: below this width the sidebar collapses (ctrl+b brings it back)
SIDEBAR_MAX, SIDEBAR_MIN = 36, 27  #: the sidebar narrows (between these) before the preview does
TIMELINE_ROOM = 86  #: columns the timeline keeps before the sidebar gives up its own


def sidebar_width(width: int) -> int:
    """The sidebar's width on a terminal ``width`` columns wide."""
    return max(SIDEBAR_MIN, min(SIDEBAR_MAX, width - TIMELINE_ROOM))


KEYS_HELP: list[tuple[str, str]] = [
    ("j / k, ↓ / ↑", "next / previous message"),
    ("PgDn / PgUp", "page down / up"),
    ("Home / g, End / G", "first / last message"),
    ("mouse wheel, click", "scroll, select a row"),
    ("+ / -", "raise / lower max messages (live; from as sent: simulate at the config's max)"),
    ("s", "next eviction strategy (a recorded session: as sent → each strategy → as sent)"),
    ("a", "a recorded session as it was sent (back from a simulation under max / strategy)"),
    ("e", "show / hide evicted rows"),
    ("p", "jump to the first message, then to each pinned message in turn"),
    ("P", "pin / unpin the selected message (and its tool pair): never evicted (preview first)"),
    ("n", "jump to the next message with a protocol error"),
    ("t", "jump from a tool_result to its tool_use (and from a tool_use to its result)"),
    ("backspace", "jump back"),
    ("r", "repair: apply the fix of the selected message's protocol error"),
    ("A", "repair all: every protocol error of the window"),
    ("delete", "drop the selected message pair-safely (preview first)"),
    ("c", "stub the selected message's tool_results or long text (preview first)"),
    ("u", "undo the last edit or repair (as many as you like)"),
    ("tab / shift+tab", "move focus between panes"),
    ("i", "focus the chat input"),
    ("enter (chat input)", "send the message"),
    ("↑ / ↓ (chat input)", "recall the messages you sent"),
    ("escape", "cancel a reply in flight / leave the chat input"),
    ("ctrl+r", "retry the last failed send (without duplicating your message)"),
    ("ctrl+k", "exact window tokens via the API's count_tokens (works in the chat input too)"),
    ("ctrl+o", "open a file"),
    ("ctrl+l", "Claude Code sessions, newest first (enter opens, f opens and follows)"),
    ("f", "follow the open Claude Code transcript as it grows / stop"),
    (
        "ctrl+s",
        "save the session (ctxview format, atomic; asks before overwriting a file "
        "this session did not create)",
    ),
    ("S", "save as… (a new name)"),
    ("x", "export the request body ctxview would send next"),
    ("R", "requests: every API request with its predicted cache, breaks and cost"),
    ("C", "compare: every strategy on this session (errors, context kept, cost); enter applies"),
    ("ctrl+e", "edit the system prompt (works in the chat input too)"),
    ("ctrl+b", "show / hide the config sidebar"),
    ("d", "show / hide the block detail pane"),
    ("ctrl+p", "command palette (every action, themes)"),
    ("? / F1", "this help"),
    ("ctrl+q", "quit"),
]


class CtxviewApp(App[int]):
    TITLE = "ctxview"
    COMMANDS = App.COMMANDS | {CtxviewCommands}
    CSS = """
    Screen { layout: vertical; }
    #main { height: 1fr; }
    #center { width: 1fr; }
    Timeline { height: 3fr; min-height: 5; }
    BlockDetail { height: 2fr; border-top: tall $primary 40%; }
    #chat { margin: 0 0; border: tall $primary 30%; }
    #chat:focus { border: tall $primary; }
    .-hide-sidebar ConfigSidebar { display: none; }
    #verdict { display: none; }
    .-hide-sidebar #verdict { display: block; }
    /* small terminals: notices at the top, over the timeline, never over the detail pane */
    .-narrow ToastRack {
        dock: top; align: right top; margin-top: 2; margin-bottom: 0; max-height: 9;
    }
    .-narrow Toast { padding: 0 1; margin-top: 0; margin-bottom: 1; }
    .-hide-detail BlockDetail { display: none; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("ctrl+o", "open", "Open"),
        Binding("ctrl+s", "save", "Save"),
        Binding("S", "save_as", "Save as", show=False),
        Binding("plus,equals_sign", "max_delta(1)", "+max", key_display="+"),
        Binding("minus", "max_delta(-1)", "-max", key_display="-"),
        Binding("e", "toggle_evicted", "Evicted"),
        Binding("s", "cycle_strategy", "Strategy", show=False),
        Binding("p", "jump_pinned", "Pinned", show=False),
        Binding("P", "pin", "Pin", show=False),
        Binding("n", "next_problem", "Problem", show=False),
        Binding("t", "partner", "Tool pair", show=False),
        Binding("backspace", "jump_back", "Back", show=False),
        Binding("r", "repair", "Repair", show=False),
        Binding("A", "repair_all", "Repair all", show=False),
        Binding("delete", "drop", "Drop", show=False),
        Binding("c", "stub", "Stub", show=False),
        Binding("u", "undo", "Undo", show=False),
        Binding("x", "export", "Export", show=False),
        Binding("R", "requests", "Requests", show=False),
        Binding("C", "compare", "Compare", show=False),
        Binding("a", "as_sent", "As sent", show=False),
        Binding("d", "toggle_detail", "Detail", show=False),
        Binding("i", "focus_chat", "Chat", show=False),
        Binding("ctrl+b", "toggle_sidebar", "Sidebar", show=False),
        # priority: the chat input would eat these (go to end / delete to end of line)
        Binding("ctrl+e", "edit_system", "System", show=False, priority=True),
        Binding("ctrl+k", "count_tokens", "Count", show=False, priority=True),
        Binding("ctrl+r", "retry", "Retry", show=False),
        Binding("escape", "escape", "Cancel", show=False),
        Binding("f", "follow", "Follow", show=False),
        Binding("ctrl+l", "sessions", "Sessions", show=False),
        Binding("question_mark,f1", "help", "Help"),
    ]

    #: actions that are plain keys: not while typing in an input
    TYPING_SENSITIVE: ClassVar[set[str]] = {
        "max_delta",
        "toggle_evicted",
        "cycle_strategy",
        "as_sent",
        "jump_pinned",
        "pin",
        "next_problem",
        "partner",
        "jump_back",
        "repair",
        "repair_all",
        "drop",
        "stub",
        "undo",
        "export",
        "save_as",
        "toggle_detail",
        "focus_chat",
        "help",
        "follow",
        "compare",
    }

    #: priority-bound actions: everywhere on the main screen, the chat input included
    MAIN_SCREEN_ONLY: ClassVar[set[str]] = {"edit_system", "count_tokens"}

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
        self._back: list[int] = []
        self._last_detail = 0.0
        #: the switch (as sent or a simulation) being replayed: (as_sent, strategy, max), and a
        #: counter so that only the newest switch is installed (keys pressed faster than a replay)
        self._pending_view: tuple[bool, str | None, int | None] | None = None
        self._switch_gen = 0
        self._detail_timer: Any = None
        self.exact_tokens: int | None = None
        self._user_sidebar: bool | None = None
        self._panes_ready = False
        self._detail_key: tuple[Any, ...] | None = None
        self._evict_buffer: list[Eviction] = []
        self._evict_timer: Any = None
        from ctxview.app.editing import Editor

        self.editor = Editor(self)
        #: files this session wrote (or was allowed to overwrite): ctrl+s saves over them quietly
        self._owned: set[str] = set()
        self._told_per_file = False
        #: ``--follow``: start following the opened transcript once mounted (ctxview.live)
        self.follow_on_start = False
        self._predict_key: tuple[Any, ...] | None = None
        self._checking: SessionModel | None = None
        self._predict_timer: Any = None
        #: seconds the last cache prediction took in its worker (for benchmarks)
        self.last_prediction_seconds = 0.0

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
        self._schedule_check()
        self.sidebar.update_from(self.model, self.exact_tokens)
        self.show_detail()
        self._schedule_prediction()

    def _schedule_check(self) -> None:
        """A big window's first protocol check, in a worker (SessionModel.problems_pending)."""
        model = self.model
        if model.problems_pending and self._checking is not model:
            self._checking = model
            self._check_window(model, model.check_entries(), model.system, model.context.step)

    @work(thread=True, exclusive=True, group="check", description="protocol check")
    def _check_window(self, model: SessionModel, entries: Any, system: Any, step: int) -> None:
        from ctxview.core.protocol import ProtocolChecker

        checker = ProtocolChecker()  # the model's own may be used on the UI thread meanwhile
        problems = checker.check(entries, system)
        self.call_from_thread(self._checked_window, model, checker, problems, step)

    def _checked_window(self, model: SessionModel, checker: Any, problems: Any, step: int) -> None:
        self._checking = None
        if model is not self.model:
            return
        if model.install_check(checker, problems, step):
            self.timeline.refresh()
            self.update_panes()
        else:
            self._schedule_check()  # the window changed meanwhile: check it again

    # -- the request model's cache figures (ctxview/app/cacheline.py), off the UI thread --------
    def _prediction_key(self) -> tuple[Any, ...]:
        model, ctx = self.model, self.model.context
        return (
            id(model),
            len(model.transcript),
            ctx.step,
            model.model,
            ctx.max_context_messages,
            ctx.strategy,
            ctx.max_context_tokens,
            ctx.low_water_fraction,
            ctx.system_prompt,
        )

    def _schedule_prediction(self) -> None:
        """Recompute the sidebar's cache figures when what they depend on changed: at once for
        a newly shown session, else after a quiet spell (a tool loop or a followed transcript
        changes the context many times a second) of at least twice the last run, so that on a
        big session the worker takes at most about a third of the time."""
        key = self._prediction_key()
        if key == self._predict_key:
            return
        self._predict_key = key
        if self._predict_timer is not None:
            self._predict_timer.stop()
        delay = 0.05
        if self.model.cache_prediction is not None:
            delay = max(0.3, 2 * self.last_prediction_seconds)
        self._predict_timer = self.set_timer(delay, self._start_prediction)

    def _start_prediction(self) -> None:
        from ctxview.app.cacheline import session_view
        from ctxview.app.request_inputs import price_table

        self._predict_timer = None
        model = self.model
        found = session_view(model)  # the snapshot, on this thread
        if found is None:
            model.cache_prediction = None
            if self._panes_ready:
                self.sidebar.update_cache(model)
            return
        self._predict(model, self._predict_key, *found, price_table(self.config))

    @work(thread=True, exclusive=True, group="cache", description="cache line")
    def _predict(
        self, model: SessionModel, key: Any, view: Any, settings: dict[str, Any], prices: Any
    ) -> None:
        from ctxview.app.cacheline import predict

        try:
            pred = predict(view, settings, prices)
        except (ValueError, RecursionError) as exc:
            self.call_from_thread(
                self.notify, f"cache figures: {exc}", severity="warning", markup=False
            )
            return
        self.call_from_thread(self._predicted, model, key, pred)

    def _predicted(self, model: SessionModel, key: Any, pred: Any) -> None:
        if model is not self.model or not self.is_running or self._is_exiting():
            return  # another session, or the app is closing (its panes may be gone)
        model.cache_prediction = pred
        self.last_prediction_seconds = pred.seconds if pred is not None else 0.0
        if self._panes_ready:
            try:
                self.sidebar.update_from(model, self.exact_tokens)
            except NoMatches:
                return  # the panes are being torn down (the app is closing)

    def _is_exiting(self) -> bool:
        """True once the app has begun to exit (a worker's late result is dropped)."""
        return bool(getattr(self, "_exit", False))

    @property
    def timeline(self) -> Timeline:
        return self.query_one(Timeline)

    @property
    def detail(self) -> BlockDetail:
        widget: Any = self.query_one("#detail")
        return widget  # type: ignore[no-any-return]

    @property
    def sidebar(self) -> ConfigSidebar:
        widget: Any = self.query_one("#sidebar")
        return widget  # type: ignore[no-any-return]

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
        """SIGTERM and SIGHUP: autosave the chat, leave the terminal as it was, exit 143 / 129."""
        import asyncio
        import signal

        try:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP):
                loop.add_signal_handler(sig, self._on_signal, int(sig))
        except (NotImplementedError, RuntimeError, ValueError, AttributeError):
            pass  # not the main thread (tests) or no signals here (Windows)

    def _on_signal(self, signum: int) -> None:
        if self.chat is not None and hasattr(self.chat, "autosave_now"):
            self.chat.autosave_now()
        self.exit(return_code=128 + signum)

    def on_mount(self) -> None:
        self._install_signal_handlers()
        theme = self.config.get("theme")
        if isinstance(theme, str) and theme in self.available_themes:
            self.theme = theme
        elif theme:
            self.notify(
                f"{self.config.path}: theme: unknown theme {theme!r}; using {self.theme}",
                title="config",
                severity="warning",
                markup=False,
            )
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.timeline.animation = str(self.config.get("animation", "full"))
        for err in self.config.errors:
            self.notify(err, title="config", severity="warning", markup=False, timeout=10)
        self._apply_width(self.size.width)
        self._install_model(self.model, focus=True)
        self.call_after_refresh(self._mount_panes)
        if self.follow_on_start:
            self.call_after_refresh(self.action_follow)

    def action_follow(self) -> None:
        """Follow the open Claude Code transcript as it grows (or stop): ctxview.live.follow."""
        from ctxview.live.follow_view import toggle_follow

        toggle_follow(self)

    def action_sessions(self) -> None:
        """The Claude Code sessions list (ctxview.live.sessions_screen)."""
        from ctxview.live.sessions_screen import show_sessions

        show_sessions(self)

    def _install_model(self, model: SessionModel, focus: bool = False) -> None:
        self.model = model
        self._told_per_file = False
        self.exact_tokens = None
        self._back.clear()
        self.editor.reset()
        self._update_titles()
        self.timeline.set_model(model)
        self.update_panes()
        chat = self.query_one("#chat", Input)
        chat.placeholder = self._chat_placeholder()
        if not model.tokens_ready:
            self._estimate_tokens(model)
        if focus:
            if self.opened_file:
                self.timeline.focus()
            else:
                chat.focus()

    def _chat_placeholder(self) -> str:
        if self.offline:
            return "Message the offline demo model · enter to send · try: calculate 6*7"
        return f"Message {one_line(self.model.model, 60)} · enter to send · escape cancels a reply"

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

    def _update_titles(self) -> None:
        self.title = f"ctxview · {self.model.name}"  # validate_title makes it visible text
        mode = "offline" if self.offline else "online"
        self.sub_title = f"{self.model.model} · {mode}"

    @work(thread=True, exclusive=True, group="tokens", description="count tokens")
    def _estimate_tokens(self, model: SessionModel) -> None:
        toks = compute_tokens([r.message for r in model.transcript.records])
        self.call_from_thread(self._tokens_done, model, toks)

    def _tokens_done(self, model: SessionModel, toks: list[int]) -> None:
        if model is not self.model:
            return
        model.install_tokens(toks)
        self.update_panes()
        self.timeline.refresh()

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

    def _theme_changed(self, theme: Any) -> None:
        if self.save_config and getattr(theme, "name", None):
            self._persist({"theme": theme.name})

    def get_system_commands(self, screen: Any) -> Any:
        yield from super().get_system_commands(screen)
        yield SystemCommand("Help: every key", "Show the key reference", self.action_help)

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

    # -- after every change to the context -----------------------------------------------------
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
            # one notification per burst (a tool loop evicts on every add)
            self._evict_buffer.extend(evictions)
            if self._evict_timer is None:
                self._evict_timer = self.set_timer(0.3, self._flush_evictions)
        self.update_panes()

    def _flush_evictions(self) -> None:
        if self.chat is not None and getattr(self.chat, "busy", False):
            # one notice per turn: a tool loop evicts on every add, over many seconds
            self._evict_timer = self.set_timer(0.3, self._flush_evictions)
            return
        self._evict_timer = None
        buf, self._evict_buffer = self._evict_buffer, []
        if not buf:
            return
        merged = Eviction(
            sorted(i for e in buf for i in e.ids), sum(e.tokens for e in buf), buf[-1].reason
        )
        self.notify(merged.describe(), title="eviction", markup=False, timeout=4)

    def _persist_setting(self, updates: dict[str, Any]) -> None:
        """Max, strategy and model: a new chat's become the defaults; an open file's stay with
        that session (saved with it) unless made the default from the palette."""
        if self.model.path is None:
            self._persist(updates)
            return
        if not self._told_per_file:
            self._told_per_file = True
            self.notify(
                f"applies to {self.model.name} only (saved with it); to keep it for new chats: "
                "ctrl+p → Make these settings the default",
                markup=False,
                timeout=6,
            )

    def action_make_default(self) -> None:
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
        if not self.save_config:
            return
        try:
            path = save_config_values(updates, self.config.path)
        except (ConfigError, OSError) as exc:
            self.notify(f"not saved to config: {exc}", severity="warning", markup=False)
            return
        self.config.values.update(updates)
        saved = (
            f"model {self.model.model} (as sent: no max or strategy to save)"
            if len(updates) == 1
            else f"max {ctx.max_context_messages}, {ctx.strategy}, {self.model.model}"
        )
        self.notify(f"defaults saved to {path}: {saved}", markup=False)

    def _persist(self, updates: dict[str, Any]) -> None:
        if not self.save_config:
            return
        try:
            save_config_values(updates, self.config.path)
        except (ConfigError, OSError) as exc:
            self.notify(f"not saved to config: {exc}", severity="warning", markup=False)

    # -- as sent or simulated ------------------------------------------------------------------
    def _default(self, key: str, fallback: Any) -> Any:
        value = self.config.as_defaults().get(key)
        return fallback if value is None else value

    def action_as_sent(self) -> None:
        """Show the recorded session as it was sent again (after a simulation)."""
        model = self.model
        if model.as_sent is not None:
            self.notify("already shown as sent (no ctxview truncation)", markup=False, timeout=3)
            return
        from ctxview.sessions.replay import as_sent_format

        if as_sent_format(model.session) is None:
            self.notify(
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
        if self.chat is not None and getattr(self.chat, "busy", False):
            self.notify("a reply is in flight: wait, or press escape to cancel it", markup=False)
            return
        if self.model.draft is not None:
            self.model.set_draft(None)
        if not as_sent:
            max_messages = max_messages or int(self._default("max_context_messages", 20))
            strategy = strategy or str(self._default("strategy", "seed"))
        from dataclasses import replace

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
        self._switch_gen += 1
        self._pending_view = (as_sent, strategy, max_messages)
        self._switch(old, session, as_sent, max_messages, strategy, edited, note, self._switch_gen)

    @work(thread=True, exclusive=True, group="open", description="replay")
    def _switch(
        self,
        old: SessionModel,
        session: Any,
        as_sent: bool,
        max_messages: int | None,
        strategy: str | None,
        edited: bool,
        note: str | None,
        gen: int = 0,
    ) -> None:
        from ctxview.sessions import replay

        try:
            rep = replay(
                session,
                max_context_messages=max_messages,
                strategy=strategy,
                defaults=self.config.as_defaults(),
                as_sent=as_sent,
            )
        except ValueError as exc:
            self.call_from_thread(self._switch_failed, gen)
            self.call_from_thread(self.notify, str(exc), severity="error", markup=False)
            return
        model = SessionModel(rep, old.path, old.model, tools=old.tools)
        model.show_evicted = old.show_evicted
        self.call_from_thread(self._switched, old, model, edited, note, gen)

    def _switch_failed(self, gen: int) -> None:
        if gen == self._switch_gen:
            self._pending_view = None

    def _switched(
        self,
        old: SessionModel,
        model: SessionModel,
        edited: bool,
        note: str | None,
        gen: int | None = None,
    ) -> None:
        if gen is not None and gen != self._switch_gen:
            return  # a newer switch was asked for meanwhile: it installs its own replay
        self._pending_view = None
        if self.model is not old:
            return  # another file was opened meanwhile
        if len(old.transcript) != len(model.transcript):
            # messages arrived meanwhile (following): replay again with them
            simulated = model.as_sent is None
            ctx = model.context
            self.replay_as(
                as_sent=not simulated,
                max_messages=ctx.max_context_messages if simulated else None,
                strategy=ctx.strategy if simulated else None,
                note=note,
            )
            return
        selected = self.timeline.selected_id
        following = getattr(self, "_following", None)
        self._install_model(model)
        if following is not None and following.model is old:
            following.model = model
        if selected is not None and selected < len(model.transcript):
            self.timeline.select_id(selected)
        if note is not None:
            self.notify(note, markup=False, timeout=5)
            return
        lost = " (edits and repairs are not carried over)" if edited else ""
        back = "" if model.as_sent is not None else " · a: back to as sent"
        self.notify(f"{model.mode_label()}{back}{lost}", markup=False, timeout=5)

    # -- max and strategy ----------------------------------------------------------------------
    def set_max(self, n: int) -> None:
        ctx = self.model.context
        old = ctx.max_context_messages
        if n < 1:
            self.notify(
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
        self.exact_tokens = None
        self.context_changed()
        if n > old and self.model.evicted_count():
            self.notify(
                f"max raised to {n}: evicted messages do not come back (the seed's semantics); "
                "the window refills with new messages",
                markup=False,
            )
        self._persist_setting({"max_context_messages": n})

    def set_strategy(self, name: str) -> None:
        if name == AS_SENT:
            self.action_as_sent()
            return
        if name not in STRATEGIES:
            return
        if self.model.as_sent is not None:
            # choosing a strategy leaves "as sent": a simulation under it and the config's max
            self.replay_as(as_sent=False, strategy=name)
            return
        self.model.context.set_strategy(name)
        self.exact_tokens = None
        self.context_changed()
        self.notify(f"strategy: {name} — {STRATEGIES[name].description}", markup=False, timeout=4)
        self._persist_setting({"strategy": name})

    def on_config_sidebar_max_changed(self, event: ConfigSidebar.MaxChanged) -> None:
        if event.value != self.model.context.max_context_messages or self.model.as_sent:
            self.set_max(event.value)

    def on_config_sidebar_model_changed(self, event: ConfigSidebar.ModelChanged) -> None:
        self.set_model_name(event.name)

    def set_model_name(self, name: str) -> None:
        if name in (self.model.model, one_line(self.model.model, 200)):
            return  # the Model input shows a hostile name made visible: unchanged, not renamed
        self.model.model = name
        self.exact_tokens = None
        self._update_titles()
        self.query_one("#chat", Input).placeholder = self._chat_placeholder()
        self.update_panes()
        self.notify(f"model: {name}", markup=False, timeout=3)
        self._persist_setting({"model": name})

    def on_config_sidebar_strategy_changed(self, event: ConfigSidebar.StrategyChanged) -> None:
        if event.name == AS_SENT:
            if self.model.as_sent is None:
                self.action_as_sent()
        elif event.name != self.model.context.strategy or self.model.as_sent is not None:
            self.set_strategy(event.name)

    def action_max_delta(self, delta: int) -> None:
        pending = self._pending_view
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
            self.notify("max is already 1: only the pinned first message is kept", markup=False)
            return
        self.set_max(n)

    def action_cycle_strategy(self) -> None:
        names = list(STRATEGIES)
        pending = self._pending_view
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
            self.action_as_sent()  # s cycles through "as sent" for a recorded session
            return
        self.set_strategy(names[(names.index(cur) + 1) % len(names)] if cur in names else names[0])

    # -- navigation ----------------------------------------------------------------------------
    @on(Timeline.Selected)
    def _selected(self, event: Timeline.Selected) -> None:
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
        if self.timeline.on_draft and self.model.draft is not None:
            self._detail_key = None
            self.detail.show_draft(self.model.draft)
            return
        mid = self.timeline.selected_id
        model = self.model
        marked = self.timeline.selected_marker
        if marked is not None:  # a compaction ledger marker: what the compaction did
            key_m = (id(model), "ledger", marked, len(model.transcript))
            if key_m != self._detail_key:
                self._detail_key = key_m
                self.detail.show_compaction(model.compaction_at(marked))
            return
        # rebuilding the pane costs a remount: skip it when what it shows has not changed
        key = (
            id(model),
            mid,
            model.status(mid) if mid is not None else None,
            tuple(p.message for p in model.problems_for(mid)) if mid is not None else (),
            model.context.system_prompt if mid is None else None,
            id(model.transcript[mid].message) if mid is not None else None,  # edits
        )
        if key == self._detail_key:
            return
        self._detail_key = key
        self.detail.show(model, mid)

    def action_toggle_evicted(self) -> None:
        sel = self.timeline.selected_id
        self.model.show_evicted = not self.model.show_evicted
        self.model.rebuild_rows()
        self.timeline.refresh_rows()
        if sel is not None and not self.timeline.select_id(sel):
            # the selection was hidden: go to the first kept message after the gap
            ids = self.model.context.window_ids
            later = [i for i in ids if i > sel]
            self.timeline.select_id(later[0] if later else ids[-1])
        # the row count changed: once the new virtual size is laid out, bring the selected row
        # back on screen (scrolling before that is clamped to the old size)
        self.timeline.call_after_refresh(self.timeline.scroll_to_cursor_centered)
        state = "shown (dimmed)" if self.model.show_evicted else "hidden"
        self.notify(f"evicted rows {state}", markup=False, timeout=2)

    def action_jump_pinned(self) -> None:
        pid = self.model.transcript.pinned_id
        if pid is None:
            return
        # the first message, then each pinned one in turn
        targets = [pid, *(i for i in self.model.context.pinned_ids if i != pid)]
        cur = self.timeline.selected_id
        nxt = next((i for i in targets if cur is not None and i > cur), targets[0])
        self._jump(nxt)

    def action_pin(self) -> None:
        self.editor.pin_selected()

    def _jump(self, mid: int) -> None:
        cur = self.timeline.selected_id
        if not self.timeline.select_id(mid):
            self.model.show_evicted = True
            self.model.rebuild_rows()
            self.timeline.refresh_rows()
            self.timeline.select_id(mid)
        if cur is not None and cur != mid:
            self._back.append(cur)
        self.timeline.focus()

    def action_next_problem(self) -> None:
        ids = self.model.error_ids()
        if not ids:
            self.notify("no protocol errors in the window: the API will accept it", markup=False)
            return
        cur = self.timeline.selected_id
        after = [i for i in ids if cur is None or i > cur]
        self._jump(after[0] if after else ids[0])

    def action_partner(self) -> None:
        cur = self.timeline.selected_id
        if cur is None:
            return
        p = self.model.partner(cur)
        if p is None:
            self.notify(
                "this message has no tool_use / tool_result partner in the transcript", markup=False
            )
            return
        self._jump(p)

    def action_jump_back(self) -> None:
        if self._back:
            mid = self._back.pop()
            self.timeline.select_id(mid)

    # -- edits (ctxview/app/editing.py) ---------------------------------------------------------
    def action_repair(self) -> None:
        self.editor.repair_selected()

    def action_repair_all(self) -> None:
        self.editor.repair_all()

    def action_drop(self) -> None:
        self.editor.drop_selected()

    def action_stub(self) -> None:
        self.editor.stub_selected()

    def action_undo(self) -> None:
        self.editor.undo()

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
        """The Requests view of the open session: as sent, or under the current max and
        strategy (labelled as the sidebar says)."""
        from ctxview.app.cacheline import session_view
        from ctxview.app.request_inputs import price_table
        from ctxview.app.screens.requests import RequestsScreen

        m = self.model
        found = session_view(m)
        if found is None:
            self.notify("no requests yet: nothing has been sent", markup=False)
            return
        view, settings = found
        prices = price_table(self.config)
        # the cache line's worker ran the same request model: its log, if still current
        saved = m.cache_prediction.so_far if m.cache_prediction is not None else None
        log = saved.log_for(view, settings, prices) if saved is not None else None
        settings["prices"] = prices
        label = m.mode_label()

        def chosen(mid: int | None) -> None:
            if mid is not None:
                self.timeline.select_id(mid)
                self.timeline.focus()

        self.push_screen(RequestsScreen(view, settings, label, log), chosen)

    def action_compare(self) -> None:
        """The Compare screen: every strategy replayed on this session at the current max;
        enter applies the chosen one to the live context."""
        from ctxview.app.screens.compare import CompareScreen

        def chosen(name: str | None) -> None:
            # as sent, any choice (seed too) switches to a simulation under it
            if name is not None and (
                name != self.model.context.strategy or self.model.as_sent is not None
            ):
                self.set_strategy(name)

        self.push_screen(CompareScreen.for_app(self), chosen)

    def action_help(self) -> None:
        from ctxview.app.screens.modals import HelpScreen

        self.push_screen(HelpScreen(KEYS_HELP))

    def action_escape(self) -> None:
        if self.chat is not None and getattr(self.chat, "busy", False):
            self.chat.cancel()
            return
        if isinstance(self.focused, Input):
            self.timeline.focus()

    # -- system prompt -------------------------------------------------------------------------
    def action_edit_system(self) -> None:
        from ctxview.app.screens.modals import SystemPromptScreen

        def done(text: str | None) -> None:
            if text is None or text == self.model.context.system_prompt:
                return
            self.model.context.system_prompt = text
            self.context_changed()
            self.notify(f"system prompt set ({len(text):,} characters)", markup=False)

        self.push_screen(SystemPromptScreen(self.model.context.system_prompt), done)

    # -- files ---------------------------------------------------------------------------------
    def action_open(self) -> None:
        from ctxview.app.screens.files import OpenFileScreen

        start = Path(self.model.path).parent if self.model.path else Path.cwd()

        def chosen(path: str | None) -> None:
            if path:
                self.open_path(path)

        self.push_screen(
            OpenFileScreen(
                start if start.is_dir() else Path.cwd(), subagents=self.model.session.subagents
            ),
            chosen,
        )

    @work(thread=True, exclusive=True, group="open", description="open a file")
    def open_path(self, path: str) -> None:
        from ctxview.sessions import SessionError, load_session, replay

        try:
            session = load_session(path)
            rep = replay(session, defaults=self.config.as_defaults(), as_sent=True)
        except SessionError as exc:
            self.call_from_thread(
                self.notify,
                str(exc),
                title="cannot open",
                severity="error",
                markup=False,
                timeout=10,
            )
            return
        except ValueError as exc:
            self.call_from_thread(
                self.notify,
                f"{path}: {exc}",
                title="cannot open",
                severity="error",
                markup=False,
                timeout=10,
            )
            return
        model = SessionModel(rep, path, session.model or self.model.model)
        self.call_from_thread(self._opened, model)

    def _opened(self, model: SessionModel) -> None:
        from ctxview.sessions.model import freeze_long_lived

        freeze_long_lived()  # a big session stays out of later GC passes (see launch)
        self.opened_file = True
        if self.chat is not None:
            self.chat.reset()
        self._install_model(model, focus=True)
        skipped = model.session.skipped_lines
        note = f" · skipped lines {', '.join(map(str, skipped[:10]))}" if skipped else ""
        self.notify(
            f"opened {model.name}: {len(model.transcript):,} messages ({model.session.format}){note}",
            markup=False,
        )

    def _session_path_default(self) -> str:
        if self.model.path and self.model.session.format == "ctxview":
            return self.model.path
        if self.model.path:
            return free_session_name(self.model.path)
        return str(Path.cwd() / time.strftime("chat-%Y%m%d-%H%M%S.ctxview.json"))

    def _owns(self, path: str) -> bool:
        """True when saving to ``path`` overwrites nothing this session did not write."""
        return not os.path.lexists(path) or os.path.abspath(path) in self._owned

    def action_save(self) -> None:
        from ctxview.app.screens.files import SavePathScreen

        if self.model.path and self.model.session.format == "ctxview":
            self.save_checked(self.model.path)
            return

        def chosen(path: str | None) -> None:
            if path:
                self.save_checked(path)

        self.push_screen(
            SavePathScreen("Save the session (ctxview format)", self._session_path_default()),
            chosen,
        )

    def action_save_as(self) -> None:
        from ctxview.app.screens.files import SavePathScreen

        default = (
            free_session_name(self.model.path) if self.model.path else self._session_path_default()
        )

        def chosen(path: str | None) -> None:
            if path:
                self.save_checked(path)

        self.push_screen(SavePathScreen("Save the session as… (ctxview format)", default), chosen)

    def save_checked(self, path: str) -> None:
        """Save, but never silently over a file this session did not create: ask first."""
        if self._owns(path):
            self.save_to(path)
            return
        from ctxview.app.screens.files import OverwriteScreen, SavePathScreen

        suggestion = free_session_name(path)

        def again(other: str | None) -> None:
            if other:
                self.save_checked(other)

        def answered(choice: str | None) -> None:
            if choice == "overwrite":
                self.save_to(path)
            elif choice == "new":
                self.save_checked(suggestion)
            elif choice == "choose":
                self.push_screen(
                    SavePathScreen("Save the session as… (ctxview format)", suggestion), again
                )

        self.push_screen(OverwriteScreen(path, suggestion), answered)

    def session_document(self) -> dict[str, Any]:
        return self.model.replay.document(
            self.config.as_defaults(), self.model.model, tools=self.model.tools
        )

    def save_to(self, path: str) -> bool:
        from ctxview.sessions.store import save_session

        try:
            save_session(path, self.session_document(), make_parents=False)  # a typed path
            self._owned.add(os.path.abspath(path))
        except (OSError, ValueError) as exc:
            self.notify(
                f"{path}: not saved: {exc}",
                title="save failed",
                severity="error",
                markup=False,
                timeout=10,
            )
            return False
        if self.model.path != path:
            self.model.path = path
            self.model.session.format = "ctxview"
            self._update_titles()
        self.notify(f"saved {path}", markup=False, timeout=3)
        return True

    def request_body(self) -> dict[str, Any]:
        return self.model.replay.request_body(
            self.config.as_defaults(), self.model.model, tools=self.model.tools
        )

    def action_export(self) -> None:
        from ctxview.app.screens.files import SavePathScreen

        if self.model.path:
            p = Path(self.model.path)
            default = str(p.with_name(p.stem.removesuffix(".ctxview") + ".request.json"))
        else:
            default = str(Path.cwd() / "request.json")

        def chosen(path: str | None) -> None:
            if not path:
                return
            from ctxview.sessions.store import save_request

            body = self.request_body()
            try:  # like autosave: never the API key; controls escaped; atomic
                save_request(path, body)
            except (OSError, ValueError) as exc:
                self.notify(
                    f"{path}: not written: {exc}",
                    title="export failed",
                    severity="error",
                    markup=False,
                    timeout=10,
                )
                return
            self.notify(
                f"wrote {path}: {len(body['messages'])} messages, ~{fmt_tokens(self.model.window_tokens)} tokens",
                markup=False,
            )
            state, short, first = self.model.verdict()
            if state == "bad":  # the same contract as `ctxview export`: written, but said
                self.notify(
                    f"the API would reject this request ({short.removeprefix('✗ ')}): {first}",
                    title="exported a request the API will reject",
                    severity="warning",
                    markup=False,
                    timeout=10,
                )

        self.push_screen(SavePathScreen("Export the next request body (JSON)", default), chosen)

    # -- chat hooks (the chat controller does the work) ----------------------------------------
    @on(Input.Submitted, "#chat")
    def _chat_submit(self, event: Input.Submitted) -> None:
        text = event.value
        if not text.strip():
            return
        if self.chat is None:
            self.notify("chat is not available in this view", markup=False)
            return
        event.input.value = ""
        if isinstance(event.input, ChatInput):
            event.input.remember(text)
        self.chat.submit(text)

    def action_retry(self) -> None:
        if self.chat is not None:
            self.chat.retry()

    def action_count_tokens(self) -> None:
        if self.chat is not None:
            self.chat.count_tokens()
        else:
            self.notify("exact counts need the API (set ANTHROPIC_API_KEY)", markup=False)
