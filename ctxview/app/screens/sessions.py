"""The sessions list in the TUI (``ctrl+l``): Claude Code, Codex and Gemini CLI sessions, newest
first, each with its provider, sub-agents under their session. Enter opens, ``f`` opens and
follows."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static, Tree

from ctxview.live.sessions_all import SessionRoots, list_all, session_roots
from ctxview.live.sessions_list import SessionInfo, messages_label, size_text
from ctxview.textfmt import counted, one_line, visible


def _label(info: SessionInfo) -> Text:
    t = Text(no_wrap=True, overflow="ellipsis")
    t.append(info.last_activity.replace("T", " ")[:16], style="bold")
    t.append(f"  {info.provider}", style="italic")
    t.append(
        f"  {messages_label(info.messages, info.messages_exact)} msgs · {size_text(info.size)}"
    )
    if info.subagents:
        t.append(f" · {len(info.subagents)} sub-agent{'s' if len(info.subagents) > 1 else ''}")
    t.append("  ")
    t.append(one_line(info.first_prompt or info.title or "(no prompt)", 100))
    t.append("  ")
    t.append(one_line(info.project, 60), style="dim")
    return t


class SessionsTree(Vertical):
    """The sessions list as a widget (the ``ctrl+l`` screen and the open dialog's tab): loads in
    a worker once shown; enter posts ``Chosen(path, False)``, ``f`` ``Chosen(path, True)``."""

    DEFAULT_CSS = """
    SessionsTree { height: 1fr; }
    SessionsTree Tree { height: 1fr; }
    SessionsTree .hint { color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "follow", "Open and follow"),
        Binding("right", "expand(True)", "Sub-agents", show=False, priority=True),
        Binding("left", "expand(False)", "Collapse", show=False, priority=True),
    ]

    class Chosen(Message):
        def __init__(self, path: str, follow: bool) -> None:
            super().__init__()
            self.path = path
            self.follow = follow

    def __init__(self, *, load_now: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self._load_now = load_now
        self._loaded = False

    def compose(self) -> ComposeResult:
        tree: Tree[str] = Tree("sessions", id="sessions")
        tree.show_root = False
        yield tree
        yield Static(Text("loading…"), id="hint", classes="hint")

    def on_mount(self) -> None:
        if self._load_now:
            self.load()

    def load(self) -> None:
        """Start listing (once)."""
        if not self._loaded:
            self._loaded = True
            self._load()

    @work(thread=True, exclusive=True, description="list sessions")
    def _load(self) -> None:
        roots = session_roots()
        unreadable: dict[str, str] = {}
        infos = list_all(roots, unreadable=unreadable)
        self.app.call_from_thread(self._show, infos, roots, len(unreadable))

    def _show(self, infos: list[SessionInfo], roots: SessionRoots, unreadable: int = 0) -> None:
        tree = self.query_one(Tree)
        for info in infos:
            if info.subagents:
                node = tree.root.add(_label(info), data=info.path, expand=False)
                for a in info.subagents:
                    label = Text(no_wrap=True, overflow="ellipsis")
                    label.append(one_line(Path(a.path).name, 60))
                    label.append(f"  {messages_label(a.messages, a.messages_exact)} msgs  ")
                    label.append(one_line(a.first_prompt or "", 120), style="dim")
                    node.add_leaf(label, data=a.path)
            else:
                tree.root.add_leaf(_label(info), data=info.path)
        where = (
            ", ".join(visible(str(r)) for r in [*roots.claude, *roots.codex, *roots.gemini])
            or "~/.claude/projects (not found)"
        )
        if not infos:
            # every agent's folder, found or not: where to put sessions for this list to show
            where = visible(roots.describe())
        hint = (
            f"{counted(len(infos), 'session')} under {where} · "
            + (f"{counted(unreadable, 'empty or binary file')} skipped · " if unreadable else "")
            + "enter: open · f: open and follow · "
            "→/←: show/hide sub-agents · escape: cancel"
        )
        self.query_one("#hint", Static).update(Text(hint))
        tree.cursor_line = 0

    def _chosen(self) -> str | None:
        node = self.query_one(Tree).cursor_node
        return node.data if node is not None and isinstance(node.data, str) else None

    @on(Tree.NodeSelected)
    def _selected(self, event: Tree.NodeSelected[Any]) -> None:
        event.stop()
        if isinstance(event.node.data, str):
            self.post_message(self.Chosen(event.node.data, False))

    def action_follow(self) -> None:
        path = self._chosen()
        if path:
            self.post_message(self.Chosen(path, True))

    def action_expand(self, expand: bool) -> None:
        node = self.query_one(Tree).cursor_node
        if node is None:
            return
        if expand and node.allow_expand:
            node.expand()
        elif not expand:
            (node if node.is_expanded else node.parent or node).collapse()


class SessionsScreen(ModalScreen[tuple[str, bool] | None]):
    """Answers (path, follow) or None."""

    DEFAULT_CSS = """
    SessionsScreen { align: center middle; }
    SessionsScreen > Vertical {
        width: 95%; height: 85%; background: $panel; border: thick $primary; padding: 0 1;
    }
    SessionsScreen .title { text-style: bold; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text("Claude Code, Codex and Gemini CLI sessions, newest first"), classes="title"
            )
            yield SessionsTree()

    def on_mount(self) -> None:
        self.query_one(Tree).focus()

    @on(SessionsTree.Chosen)
    def _chosen(self, event: SessionsTree.Chosen) -> None:
        event.stop()
        self.dismiss((event.path, event.follow))

    def action_cancel(self) -> None:
        self.dismiss(None)
