"""The lines of the open file that could not be used, each with why (``L``)."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxview.app.safe import one_line, visible

#: rows drawn at most (a file of garbage can have millions of skipped lines); the rest counted
SHOWN = 2000


class SkippedLinesScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,L", "close", "Close")]
    DEFAULT_CSS = """
    SkippedLinesScreen { align: center middle; }
    SkippedLinesScreen > VerticalScroll {
        width: 90%; max-width: 120; height: 90%;
        background: $panel; border: thick $primary; padding: 0 1;
    }
    """

    def __init__(self, name: str, skipped: list[dict[str, Any]]) -> None:
        super().__init__()
        self.file_name = name
        self.skipped = skipped

    def compose(self) -> ComposeResult:
        n = len(self.skipped)
        table = Table(
            title=f"{one_line(self.file_name, 80)}: {n:,} skipped line{'' if n == 1 else 's'}",
            expand=True,
            show_edge=False,
        )
        table.add_column("line", justify="right", no_wrap=True)
        table.add_column("why it was skipped")
        for s in self.skipped[:SHOWN]:
            table.add_row(Text(f"{s['line']:,}"), Text(visible(str(s["reason"]))))
        with VerticalScroll():
            yield Static(table)
            if n > SHOWN:
                yield Static(
                    Text(f"and {n - SHOWN:,} more: `ctxview inspect FILE --json` lists them all")
                )
            yield Static(Text("escape closes", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)
