"""The Fleet screen (``ctxview fleet DIR``): a scanned dataset's sessions ranked by cost or by
what their cache breaks lost, and a chart of cost and hit rate per day. Enter opens the
session; ``w`` switches the ranking. The figures come from DuckDB (``ctxview.fleet.query``:
the same SQL as ``ctxview report DIR``), in a worker."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual_plotext import PlotextPlot

from ctxview.app.safe import literal, one_line
from ctxview.textfmt import counted, fmt_usd, tail_text

#: sessions listed
SHOWN = 200
#: the table's columns: heading, width
COLUMNS = (("cost", 10), ("lost", 9), ("hit", 6), ("reqs", 6), ("project", 28), ("title", 60))


#: the chart's title, its legend too
CHART_TITLE = "per day: cost $ (bars, left) · hit rate % (line, right)"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def headline(totals: dict[str, Any], rank: str, width: int) -> str:
    """The title line in ``width`` cells: the sessions, the cost and the ranking's key always;
    the other figures while they fit, the least telling left out first."""
    figures = {  # in the order shown
        "requests": counted(totals.get("requests") or 0, "request"),
        "cost": fmt_usd(totals.get("cost_usd")),
        "saved": f"cache saved {fmt_usd(totals.get('cache_saved_usd'))}",
        "lost": f"breaks lost {fmt_usd(totals.get('break_lost_usd'))}",
        "hit": f"hit {_pct(totals.get('hit_rate'))}",
    }
    head, key = f"Fleet · {counted(totals.get('sessions') or 0, 'session')}", f"by {rank} (w)"

    def line() -> str:
        return " · ".join([head, *figures.values(), key])

    for dropped in ("requests", "hit", "lost", "saved"):
        if len(line()) <= width:
            break
        del figures[dropped]
    return line()


class FleetScreen(Screen[str | None]):
    """Answers the file of the session chosen, or None (escape)."""

    DEFAULT_CSS = """
    FleetScreen #fleet-title { height: 1; text-style: bold; padding: 0 1; }
    FleetScreen #fleet-chart { height: 14; }
    FleetScreen #fleet-sessions { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open", "Open session"),
        Binding("w", "rank", "Cost / waste"),
        Binding("escape", "close", "Close"),
    ]

    def __init__(self, dataset: str) -> None:
        super().__init__()
        self.dataset = dataset
        self.rank = "cost"
        self.files: list[str] = []
        self.days: list[dict[str, Any]] = []
        #: the dataset's totals, once loaded (the title is fitted to the width from them)
        self.totals: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text("Fleet · loading…"), id="fleet-title")
        yield PlotextPlot(id="fleet-chart")
        table: DataTable[Text] = DataTable(
            id="fleet-sessions", cursor_type="row", zebra_stripes=True
        )
        for head, width in COLUMNS:
            table.add_column(head, width=width)
        yield table
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(DataTable).focus()
        self._load()

    @work(thread=True, exclusive=True, description="query the dataset")
    def _load(self) -> None:
        import duckdb

        from ctxview.fleet.manifest import scanned_files
        from ctxview.fleet.query import Filters, connect, query_error, rows

        try:
            con = connect(self.dataset, Filters(top=SHOWN, rank=self.rank))
            try:
                totals = rows(con, "totals")
                sessions = rows(con, "top_sessions")
                days = rows(con, "by_day")
            finally:
                con.close()
        except (duckdb.Error, OSError) as exc:
            self.app.call_from_thread(
                self._failed, f"{self.dataset}: cannot read the dataset ({query_error(exc)})"
            )
            return
        scanned = scanned_files(self.dataset)
        for s in sessions:  # the file to open: as scanned, not as the file column shows it
            s["file"] = scanned.get(s["session_key"]) or s["file"]
        self.app.call_from_thread(self._show, totals[0] if totals else {}, sessions, days)

    def _failed(self, why: str) -> None:
        self.query_one("#fleet-title", Static).update(literal(one_line(why, 300)))

    def _show(
        self, totals: dict[str, Any], sessions: list[dict[str, Any]], days: list[dict[str, Any]]
    ) -> None:
        self.totals = totals
        self._headline()
        table = self.query_one(DataTable)
        table.clear()
        self.files = []
        for s in sessions:
            self.files.append(s["file"] or "")
            table.add_row(
                Text(fmt_usd(s["cost_usd"]), justify="right"),
                Text(fmt_usd(s["lost_usd"]), justify="right"),
                Text(_pct(s["hit_rate"]), justify="right"),
                Text(f"{s['requests']:,}", justify="right"),
                literal(tail_text(one_line(s["project"] or "", 200), 28)),
                literal(one_line(s["title"] or s["session_id"] or "", 120)),
            )
        self.days = days
        self._plot()

    def _headline(self) -> None:
        if self.totals is None:
            return  # (still loading)
        width = self.size.width - 2  # (the title's padding)
        self.query_one("#fleet-title", Static).update(
            Text(headline(self.totals, self.rank, width), no_wrap=True, overflow="ellipsis")
        )

    def on_resize(self) -> None:
        self._headline()

    def _plot(self) -> None:
        chart = self.query_one(PlotextPlot)
        plt = chart.plt
        plt.clear_data()
        plt.clear_figure()
        days = self.days
        if days:
            xs: list[float] = [float(i) for i in range(len(days))]
            # no legend: plotext draws it over the plot's top left corner, on the data
            costs = [d["cost_usd"] or 0 for d in days]
            plt.bar(xs, costs, marker="hd")
            if max(costs) <= 0:
                # nothing priced: plotext would centre the dollar axis on 0 (-1 to 1)
                plt.ylim(0, 1)  # (the left side: the bars')
            # a day without a hit rate (no cached request) is left out, not drawn as 0 %
            rated = [
                (x, d["hit_rate"] * 100)
                for x, d in zip(xs, days, strict=True)
                if d["hit_rate"] is not None
            ]
            if rated:
                plt.plot(
                    [x for x, _ in rated], [r for _, r in rated], yside="right", marker="braille"
                )
            # a fixed 0-100 % scale: an automatic one turns 97 % against 98 % into a cliff
            # (textual-plotext's stub types yside as a number; plotext takes "left"/"right")
            plt.ylim(0, 100, yside="right")  # type: ignore[arg-type]
            step = max(1, len(days) // 6)
            plt.xticks(xs[::step], [d["date"] for d in days][::step])
        plt.title(CHART_TITLE)
        chart.refresh()

    def action_rank(self) -> None:
        self.rank = "waste" if self.rank == "cost" else "cost"
        self._load()

    @on(DataTable.RowSelected)
    def _selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        row = self.query_one(DataTable).cursor_row
        if 0 <= row < len(self.files) and self.files[row]:
            self.dismiss(self.files[row])

    def action_close(self) -> None:
        self.dismiss(None)
