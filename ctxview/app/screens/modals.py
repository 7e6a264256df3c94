"""System prompt editor, send-anyway confirmation and the help screen."""

from __future__ import annotations

from typing import ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static, TextArea

from ctxview.app.safe import visible


class SystemPromptScreen(ModalScreen[str | None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "save", "Apply"),
        Binding("escape", "cancel", "Cancel"),
    ]
    DEFAULT_CSS = """
    SystemPromptScreen { align: center middle; }
    SystemPromptScreen > Vertical {
        width: 90%; max-width: 120; height: 80%;
        background: $panel; border: thick $primary; padding: 0 1;
    }
    SystemPromptScreen TextArea { height: 1fr; }
    SystemPromptScreen .hint { color: $text-muted; }
    """

    def __init__(self, text: str) -> None:
        super().__init__()
        self.original = text
        # shown (and edited) with control characters made visible; unchanged, nothing is applied
        self.text = visible(text)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("System prompt"))
            yield TextArea(self.text, id="prompt", soft_wrap=True, show_line_numbers=False)
            yield Static(Text("ctrl+s: apply · escape: cancel"), classes="hint")

    def on_mount(self) -> None:
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        text = self.query_one(TextArea).text
        self.dismiss(self.original if text == self.text else text)

    def action_cancel(self) -> None:
        self.dismiss(None)


class UnsavedScreen(ModalScreen[str]):
    """The shown session has changes not saved: save them first, discard them, or cancel
    (``"save"``, ``"discard"``, ``"cancel"``) before ``what`` (quit, open another file)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s,enter", "choose('save')", "Save"),
        Binding("d", "choose('discard')", "Discard"),
        # escape only: a word typed into the wrong window ("cd …") must not cancel the question
        # and then act on the session key by key
        Binding("escape", "choose('cancel')", "Cancel"),
    ]
    DEFAULT_CSS = """
    UnsavedScreen { align: center middle; }
    UnsavedScreen > Vertical {
        width: 80%; max-width: 80; height: auto;
        background: $panel; border: thick $warning; padding: 1 2;
    }
    UnsavedScreen .name { text-style: bold; }
    UnsavedScreen .hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, name: str, what: str) -> None:
        super().__init__()
        self.name_shown = name
        self.what = what

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(visible(self.name_shown)), classes="name")
            yield Static(
                Text(
                    f"has changes that are not saved (edits, pins or settings). Save them "
                    f"before you {visible(self.what)}?"
                )
            )
            yield Static(
                Text("s / enter: save · d: discard the changes · escape: cancel"), classes="hint"
            )

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class ConfirmSendScreen(ModalScreen[str]):
    """The window has protocol errors, or no longer holds the message just typed: send anyway,
    switch to pair-safe, raise max, or cancel."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "choose('send')", "Send anyway"),
        Binding("p", "choose('pair-safe')", "Switch to pair-safe"),
        Binding("m", "choose('raise')", "Raise max"),
        Binding("escape,c", "choose('cancel')", "Cancel"),
    ]
    DEFAULT_CSS = """
    ConfirmSendScreen { align: center middle; }
    ConfirmSendScreen > Vertical {
        width: 80%; max-width: 100; height: auto;
        background: $panel; border: thick $error; padding: 1 2;
    }
    ConfirmSendScreen .error { color: $text-error; margin-bottom: 1; }
    ConfirmSendScreen .missing { color: $text-warning; text-style: bold; margin-bottom: 1; }
    """

    def __init__(
        self,
        messages: list[str],
        missing: str | None = None,
        raise_to: int | None = None,
        pair_safe_helps: bool = True,
    ) -> None:
        super().__init__()
        self.messages = messages
        self.missing = missing
        self.raise_to = raise_to
        #: offered only when switching would make the window valid (evictions never come back)
        self.pair_safe_helps = pair_safe_helps

    def compose(self) -> ComposeResult:
        options = ["s: send anyway"]
        with Vertical():
            if self.missing:
                yield Static(Text(visible(self.missing)), classes="missing")
                if self.raise_to is not None:
                    options.append(f"m: raise max to {self.raise_to} and add it again")
            if self.messages:
                yield Static(
                    Text(
                        "The API will reject this request (400 invalid_request_error):",
                        style="bold",
                    )
                )
                for m in self.messages[:5]:
                    yield Static(Text(visible(m)), classes="error")  # tool ids from the session
                if self.pair_safe_helps:
                    options.append("p: switch to pair-safe and send")
                else:
                    options.append("(pair-safe cannot fix this window: what was evicted is gone)")
            options.append("escape: cancel")
            yield Static(Text(" · ".join(options)))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "choose" and parameters:
            if parameters[0] == "raise":
                return self.missing is not None and self.raise_to is not None
            if parameters[0] == "pair-safe":
                return bool(self.messages) and self.pair_safe_helps
        return True

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)


class HelpScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark,f1", "close", "Close")]
    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 100; height: 90%;
        background: $panel; border: thick $primary; padding: 0 1;
    }
    """

    def __init__(self, keys: list[tuple[str, str]]) -> None:
        super().__init__()
        self.keys = keys

    def compose(self) -> ComposeResult:
        table = Table(title="ctxview keys", expand=True, show_edge=False)
        table.add_column("key", style="bold", no_wrap=True)
        table.add_column("what it does")
        for k, d in self.keys:
            table.add_row(Text(k), Text(d))
        with VerticalScroll():
            yield Static(table)
            yield Static(
                Text(
                    "Status words: pinned = the first message, or one you pinned (P): always kept · "
                    "kept = in the window · "
                    "evicted = dropped by the strategy (the API never sees it again) · "
                    "edited = sent as edited (the detail pane shows the original) · "
                    "dropped = taken out by an edit or a repair (u undoes) · "
                    "added · (the summary) = a message a repair inserted (u undoes).\n"
                    "Raising max never brings evicted messages back: the seed's semantics.\n"
                    "ctrl+p opens the command palette (open, save, export, max, strategy, themes…).\n"
                    "escape (or ?) closes this help · ↑/↓ PgUp/PgDn scroll it"
                )
            )

    def action_close(self) -> None:
        self.dismiss(None)
