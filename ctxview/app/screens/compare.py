"""The Compare screen: the open session's requests replayed under every registered strategy at
the current max (``ctxview compare``'s rows, from ``ctxview.core.requests.iter_compare``).

The replays run in a worker thread, one strategy after another; each row appears as its replay
ends, with a progress line meanwhile. Escape closes the screen and stops the worker after the
strategy in progress. Enter on a row dismisses the screen with that strategy's name (the app
applies it to the live context).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, ProgressBar, Static
from textual.worker import get_current_worker

from ctxview.app.safe import one_line
from ctxview.textfmt import fmt_tokens, fmt_usd, plural

if TYPE_CHECKING:
    from ctxview.app.model import SessionModel
    from ctxview.config import Config

#: (key of the compare row, column title, right-aligned)
COLUMNS: list[tuple[str, str, bool]] = [
    ("name", "strategy", False),
    ("requests", "requests", True),
    ("rejected_requests", "rejected", True),
    ("first_rejected", "1st rej.", True),
    ("newest_dropped", "newest drop", True),
    ("mean_window", "mean win", True),
    ("input_tokens", "input", True),
    ("cache_read", "read", True),
    ("cache_write", "write", True),
    ("hit_rate", "hit rate", True),
    ("cost_usd", "cost", True),
    ("evicted_messages", "evicted", True),
]


def cell_text(key: str, value: Any) -> str:
    """How one value of a compare row is shown."""
    if value is None:
        return "—"
    if key == "name":
        return one_line(str(value), 40)
    if key == "first_rejected":
        return f"#{value}"
    if key == "mean_window":
        return f"{value:.1f}"
    if key in ("input_tokens", "cache_read", "cache_write"):
        return fmt_tokens(int(value))
    if key == "hit_rate":
        return f"{100 * value:.1f}%"
    if key == "cost_usd":
        return fmt_usd(value)
    return f"{value:,}"


class CompareScreen(ModalScreen[str | None]):
    """Every strategy on the open session; dismissed with the strategy to apply, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        # as in the timeline and the Requests view (the table binds only the arrows)
        Binding("j", "move(1)", "Down", show=False),
        Binding("k", "move(-1)", "Up", show=False),
        # sideways a few columns at a time, as in the Requests view: in a narrow terminal the
        # cost columns are past the edge (the table's own arrows move one character)
        Binding("left,h", "sideways(-10)", "Left", show=False, priority=True),
        Binding("right,l", "sideways(10)", "Right", show=False, priority=True),
    ]
    DEFAULT_CSS = """
    CompareScreen { align: center middle; }
    CompareScreen > Vertical {
        width: 96%; height: 90%; background: $panel; border: thick $primary; padding: 0 1;
    }
    CompareScreen #progress-line { color: $text-muted; }
    CompareScreen ProgressBar { height: 1; }
    CompareScreen DataTable { height: 1fr; }
    CompareScreen .hint { color: $text-muted; }
    """

    def __init__(
        self,
        session: Any,
        *,
        strategies: list[str],
        current: str,
        max_context_messages: int,
        defaults: dict[str, Any],
        prices: Any,
        label: str,
        context_editing: Any = None,
        as_sent: tuple[Any, dict[str, Any]] | None = None,
    ) -> None:
        """``as_sent``: a recorded session's (view, simulate settings) as it was sent: the
        baseline row."""
        super().__init__()
        self.as_sent = as_sent
        self.session = session
        self.strategies = strategies
        self.current = current
        self.max_context_messages = max_context_messages
        self.defaults = defaults
        self.prices = prices
        self.label = label
        self.context_editing = context_editing
        #: the rows computed so far (``compare --json`` rows), in strategy order
        self.rows: list[dict[str, Any]] = []
        self.done = False
        self.error: str | None = None

    @classmethod
    def for_session(cls, m: SessionModel, config: Config) -> CompareScreen:
        """The Compare screen of the open session ``m`` at its current max and settings."""
        from ctxview.app.model import AS_SENT
        from ctxview.app.request_inputs import context_settings, price_table, session_view
        from ctxview.core.strategies import STRATEGIES
        from ctxview.sessions.replay import as_sent_format

        settings = context_settings(m)
        n = len(m.transcript)
        baseline: tuple[Any, dict[str, Any]] | None = None
        recorded = m.as_sent or as_sent_format(m.session)
        if recorded is not None:
            view = session_view(m)
            if recorded == "proxy":  # every request of a proxy recording held the whole chat
                sent = {"max_context_messages": len(view.messages) + 1, "strategy": "seed"}
            else:
                view.format = recorded
                sent = {"max_context_messages": None, "strategy": None}
            baseline = (view, sent)
        how = f"max {settings['max_context_messages']:,} (simulated)"
        if m.as_sent is not None:
            # shown as sent (max = every message): compare the strategies at the max a
            # simulation would start from, the config's
            configured = config.as_defaults().get("max_context_messages")
            settings["max_context_messages"] = int(20 if configured is None else configured)
            how = f"max {settings['max_context_messages']:,} (the config's; shown as sent)"
        return cls(
            session_view(m),
            strategies=list(STRATEGIES),
            current=AS_SENT if m.as_sent is not None else settings["strategy"],
            max_context_messages=settings["max_context_messages"],
            defaults={
                "max_context_tokens": settings["max_context_tokens"],
                "low_water_fraction": settings["low_water_fraction"],
                "model": m.model,
            },
            prices=price_table(config),
            context_editing=settings["context_editing"],
            as_sent=baseline,
            label=(f"{one_line(m.name, 60)} · {plural(n, 'message', f'{n:,}')} · {how}"),
        )

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Compare strategies · {self.label}"), id="title")
            yield Static(Text(self._progress_text()), id="progress-line")
            yield ProgressBar(total=self._total, show_eta=False, id="progress")
            # the strategy column stays while the figures scroll sideways (at 80 columns the
            # cost and evicted columns are past the edge): every figure beside its row's name
            table: DataTable[Text] = DataTable(
                cursor_type="row", zebra_stripes=True, fixed_columns=1, id="table"
            )
            yield table
            yield Static(
                Text(
                    "each row replays the session from the start (mean win: over its requests;"
                    " evicted: the whole replay) · enter: replay under it, the live window "
                    "becomes its last · escape: close · ←/→ (h/l): the columns past the edge · "
                    "● current"
                ),
                classes="hint",
            )

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, title, right in COLUMNS:
            table.add_column(Text(title, justify="right" if right else "left"), key=key)
        table.focus()
        self.compute()

    @property
    def _total(self) -> int:
        """The rows to come: every strategy, and the as-sent baseline of a recorded session."""
        return len(self.strategies) + (self.as_sent is not None)

    def _progress_text(self) -> str:
        total = self._total
        if self.error is not None:
            return self.error
        if self.done:
            if not any(r.get("requests") for r in self.rows):
                return "no requests yet: this session has sent nothing to compare"
            base = " beside the requests as sent" if self.as_sent is not None else ""
            return (
                f"{len(self.strategies)} strategies replayed on the same requests{base}: the "
                "API's rejections, the context kept and the money spent"
            )
        k = len(self.rows)
        if k >= total:  # every row is in; the worker is ending
            return f"{total} of {total} replayed…"
        names = (["as sent"] if self.as_sent is not None else []) + self.strategies
        return f"replaying {one_line(names[k], 40)} ({k + 1} of {total})… escape stops"

    @work(thread=True, exclusive=True, group="compare", description="compare")
    def compute(self) -> None:
        from ctxview.core.requests import iter_compare

        worker = get_current_worker()
        try:
            if self.as_sent is not None:
                row = self._as_sent_row(*self.as_sent)
                if worker.is_cancelled:
                    return
                self.app.call_from_thread(self._add_row, row)
            for row in iter_compare(
                self.session,
                self.strategies,
                max_context_messages=self.max_context_messages,
                defaults=self.defaults,
                prices=self.prices,
                context_editing=self.context_editing,
            ):
                if worker.is_cancelled:
                    return
                self.app.call_from_thread(self._add_row, row)
        except (ValueError, RecursionError, MemoryError) as exc:
            if not worker.is_cancelled:
                self.app.call_from_thread(self._failed, f"cannot compare: {exc}")
            return
        if not worker.is_cancelled:
            self.app.call_from_thread(self._finished)

    def _as_sent_row(self, view: Any, settings: dict[str, Any]) -> dict[str, Any]:
        """The baseline: the recorded requests as they were sent, in a compare row's figures."""
        from ctxview.app.model import AS_SENT
        from ctxview.core.requests import simulate
        from ctxview.core.requests.replay import compare_row

        log = simulate(
            view,
            defaults=self.defaults,
            prices=self.prices,
            check=True,
            redundancy=False,
            **settings,
        )
        return {"name": AS_SENT, **compare_row(log), "evicted_messages": log.evicted_messages}

    def _add_row(self, row: dict[str, Any]) -> None:
        if not self.is_attached:
            return
        self.rows.append(row)
        table = self.query_one(DataTable)
        cells = []
        for key, _title, right in COLUMNS:
            text = cell_text(key, row.get(key))
            if key == "name":
                text = ("● " if row["name"] == self.current else "  ") + text
            style = ""
            if key == "rejected_requests" and row.get(key):
                style = "bold red"
            cells.append(Text(text, style=style, justify="right" if right else "left"))
        table.add_row(*cells, key=str(row["name"]))
        if row["name"] == self.current:
            table.move_cursor(row=table.row_count - 1)
        self.query_one(ProgressBar).advance(1)
        self.query_one("#progress-line", Static).update(Text(self._progress_text()))

    def _finished(self) -> None:
        if not self.is_attached:
            return
        self.done = True
        self.query_one(ProgressBar).display = False
        self.query_one("#progress-line", Static).update(Text(self._progress_text()))

    def _failed(self, msg: str) -> None:
        if not self.is_attached:
            return
        self.error = one_line(msg, 300)
        self.query_one(ProgressBar).display = False
        self.query_one("#progress-line", Static).update(Text(self.error))

    @on(DataTable.RowSelected)
    def _chosen(self, event: DataTable.RowSelected) -> None:
        event.stop()
        name = event.row_key.value
        self.workers.cancel_group(self, "compare")
        self.dismiss(name)

    def action_sideways(self, columns: int) -> None:
        table = self.query_one(DataTable)
        table.scroll_to(x=max(0, table.scroll_offset.x + columns), animate=False)

    def action_move(self, step: int) -> None:
        table = self.query_one(DataTable)
        if step > 0:
            table.action_cursor_down()
        else:
            table.action_cursor_up()

    def action_close(self) -> None:
        self.workers.cancel_group(self, "compare")
        self.dismiss(None)
