"""Open and save dialogs."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import (
    DirectoryTree,
    Input,
    OptionList,
    Static,
    TabbedContent,
    TabPane,
    Tabs,
)
from textual.widgets.option_list import Option

from ctxview.app.messages import OpenRequested
from ctxview.app.safe import one_line, visible
from ctxview.app.screens.sessions import SessionsTree


class SessionTree(DirectoryTree):
    """Folders and .json / .jsonl files only; file names shown literally (no markup, control
    characters visible)."""

    def process_label(self, label: str | Text) -> Text:
        plain = label if isinstance(label, str) else label.plain
        return Text(one_line(plain, 500))

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        out = []
        for p in paths:
            try:
                if p.name.startswith(".") and p.name not in (".claude",):
                    continue
                if p.is_dir() or p.suffix.lower() in (".json", ".jsonl"):
                    out.append(p)
            except OSError:
                continue
        return out


class PathScreen(ModalScreen[str | None]):
    """A modal that answers with a path typed in its ``#path`` input (None on escape)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def on_mount(self) -> None:
        self.query_one("#path", Input).focus()

    @on(Input.Submitted, "#path")
    def _submit(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if value:
            self.submit_path(value)

    def submit_path(self, value: str) -> None:
        """Answer with the path typed (a dialog that checks it first overrides this)."""
        self.dismiss(str(Path(value).expanduser()))

    def action_cancel(self) -> None:
        self.dismiss(None)


class OpenFileScreen(PathScreen):
    DEFAULT_CSS = """
    OpenFileScreen { align: center middle; }
    OpenFileScreen > Vertical {
        width: 90%; max-width: 110; height: 80%;
        background: $panel; border: thick $primary; padding: 0 1;
    }
    OpenFileScreen .title { text-style: bold; margin: 0 0 1 0; }
    OpenFileScreen SessionTree { height: 1fr; }
    OpenFileScreen TabbedContent { height: 1fr; }
    OpenFileScreen TabPane { height: 1fr; padding: 0; }
    OpenFileScreen #files-tab > * { margin: 0; }
    OpenFileScreen #subagents { height: auto; max-height: 8; margin: 0 0 1 0; }
    OpenFileScreen .hint { color: $text-muted; }
    OpenFileScreen #open-error { height: auto; color: $text-error; text-style: bold; }
    """

    def __init__(self, start: Path | None = None, subagents: list[str] | None = None) -> None:
        super().__init__()
        self.start = start or Path.cwd()
        #: the open Claude Code session's sub-agent transcripts, offered first
        self.subagents = list(subagents or [])

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text("Open a session, a request body, an agent's transcript or a trace"),
                classes="title",
            )
            with TabbedContent(id="open-tabs"):
                with TabPane("Files", id="files-tab"):
                    yield Input(placeholder="path to a .json or .jsonl file", id="path")
                    if self.subagents:
                        yield Static(Text("Sub-agents of this session:"))
                        yield OptionList(
                            *[
                                Option(Text(one_line(Path(p).name, 100)), id=str(k))
                                for k, p in enumerate(self.subagents)
                            ],
                            id="subagents",
                        )
                    yield SessionTree(self.start, id="tree")
                    yield Static("", id="open-error")
                    yield Static(
                        Text("enter: open · tab: to the tree · escape: cancel"), classes="hint"
                    )
                with TabPane("Agent sessions", id="sessions-tab"):
                    # listed only when the tab is first shown (ctrl+l opens the same list)
                    yield SessionsTree(load_now=False, id="cc-sessions")

    def submit_path(self, value: str) -> None:
        """Open a file; a folder shows in the tree; a path that is neither is said here, the
        dialog left open with the path to correct (closing it would lose what was typed)."""
        path = Path(value).expanduser()
        try:
            is_dir, exists = path.is_dir(), path.exists()
        except OSError as exc:
            self._error(f"{value}: {exc.strerror or exc}")
            return
        if is_dir:
            self.query_one("#tree", SessionTree).path = path
            self._error("")
        elif not exists:
            self._error(f"{value}: no such file")
        else:
            self.dismiss(str(path))

    def _error(self, text: str) -> None:
        self.query_one("#open-error", Static).update(Text(one_line(text, 300)))

    @on(TabbedContent.TabActivated, "#open-tabs")
    def _tab(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "sessions-tab":
            self.query_one("#cc-sessions", SessionsTree).load()
        # the pane that was shown hides after a refresh, taking the focus with it: enter would
        # then do nothing. Focus the shown pane's list or path unless the tab bar has the focus
        # (a user stepping through the tabs with the keys).
        self._focus_tries = 20
        self.call_after_refresh(self._focus_pane)

    _focus_tries = 0

    def _focus_pane(self) -> None:
        # the pane shown now (a tab's activation can be heard after the next one's); tried again
        # a few times: on a busy machine the hiding of the old pane can land after the focus
        pane = self.query_one("#open-tabs", TabbedContent).active_pane
        focused = self.focused
        if pane is None or isinstance(focused, Tabs):
            return
        if focused is None or pane not in focused.ancestors:
            target = "#path" if pane.id == "files-tab" else "#cc-sessions Tree"
            for widget in pane.query(target):
                widget.focus()
                break
        self._focus_tries -= 1
        if self._focus_tries > 0:
            self.set_timer(0.05, self._focus_pane)

    @on(SessionsTree.Chosen)
    def _session_chosen(self, event: SessionsTree.Chosen) -> None:
        event.stop()
        app = self.app
        self.dismiss(None)
        app.post_message(OpenRequested(event.path, follow=event.follow))

    @on(OptionList.OptionSelected, "#subagents")
    def _subagent(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.subagents[int(event.option.id or 0)])

    @on(DirectoryTree.FileSelected)
    def _file(self, event: DirectoryTree.FileSelected) -> None:
        self.dismiss(str(event.path))

    @on(DirectoryTree.DirectorySelected)
    def _dir(self, event: DirectoryTree.DirectorySelected) -> None:
        self.query_one("#path", Input).value = one_line(str(event.path), 1000) + "/"


class SavePathScreen(PathScreen):
    DEFAULT_CSS = """
    SavePathScreen { align: center middle; }
    SavePathScreen > Vertical {
        width: 80%; max-width: 100; height: auto;
        background: $panel; border: thick $primary; padding: 1 2;
    }
    SavePathScreen .hint { color: $text-muted; }
    """

    def __init__(self, title: str, default: str) -> None:
        super().__init__()
        self.title_text = title
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(visible(self.title_text)))
            yield Input(value=one_line(self.default, 1000), id="path")
            yield Static(
                Text(
                    "enter: save (atomic: temp file + rename) · a folder: the file goes inside "
                    "it · escape: cancel"
                ),
                classes="hint",
            )


class OverwriteScreen(ModalScreen[str]):
    """Saving over a file this session did not create: a new name, overwrite, or cancel.

    Answers ``"new"``, ``"overwrite"``, ``"choose"`` (type another name) or ``"cancel"``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n,enter", "choose('new')", "Save as the new name"),
        Binding("o", "choose('overwrite')", "Overwrite"),
        Binding("a", "choose('choose')", "Another name…"),
        Binding("escape,c", "choose('cancel')", "Cancel"),
    ]
    DEFAULT_CSS = """
    OverwriteScreen { align: center middle; }
    OverwriteScreen > Vertical {
        width: 80%; max-width: 100; height: auto;
        background: $panel; border: thick $warning; padding: 1 2;
    }
    OverwriteScreen .path { text-style: bold; }
    OverwriteScreen .hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, path: str, suggestion: str) -> None:
        super().__init__()
        self.path = path
        self.suggestion = suggestion

    def compose(self) -> ComposeResult:
        from ctxview.app.safe import visible

        with Vertical():
            yield Static(Text("This file exists and was not created by this session:"))
            yield Static(Text(visible(self.path)), classes="path")
            yield Static(Text("Save under a new name instead?"))
            yield Static(Text(visible(self.suggestion)), classes="path")
            yield Static(
                Text(
                    "n / enter: save as the new name · o: overwrite · a: another name… · "
                    "escape: cancel"
                ),
                classes="hint",
            )

    def action_choose(self, choice: str) -> None:
        self.dismiss(choice)
