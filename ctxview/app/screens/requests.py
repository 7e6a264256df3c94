"""The Requests view: one row per API request of the session (the request model of
``ctxview.core.requests``), with bars for read / written / uncached tokens, the recorded usage
beside the prediction, the cache break and the cost. Rows are drawn with the Line API, so a
session of 50,000 requests scrolls like one of 10. Enter selects the request's newest message in
the timeline. Space marks a request; space on another one compares the two (the diff of
``ctxview diff``: ``ctxview.core.diff.diff_logged_requests``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.geometry import Size
from textual.reactive import reactive
from textual.screen import ModalScreen
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from ctxview.app.colours import readable_style
from ctxview.app.safe import one_line
from ctxview.core.providers.base import TOKEN_NOTE
from ctxview.core.requests import Request, RequestLog
from ctxview.textfmt import fmt_tokens, fmt_total_usd

if TYPE_CHECKING:
    from ctxview.app.model import SessionModel
    from ctxview.config import Config

BAR = 20


def request_row(r: Request, scale: int, as_sent: bool = True) -> str:
    """The text of one row (without the bar); ``as_sent``: the log is the requests as sent
    (:meth:`Request.recorded_label`)."""
    ts = one_line(r.timestamp or "", 40)[11:19]
    rec = (
        f"{fmt_tokens(r.recorded['cache_read_input_tokens'])}/"
        f"{fmt_tokens(r.recorded['cache_creation_input_tokens'])}"
        if r.recorded
        else "—"
    )
    brk = f"{r.cache_break.reason}@{r.cache_break.position}" if r.cache_break else ""
    said = r.recorded_label(as_sent)  # (a documented reason or ctxview's name: no file text)
    if said is not None:
        brk = f"{brk} {said}".lstrip()
    if r.off_branch:
        brk = f"⎇ {brk}".rstrip()  # sent on a branch the conversation left (a rewind)
    if r.kind != "turn":  # a compaction's summarising request, sent before request #index
        brk = f"{brk} {r.kind} request".lstrip()
    cost = "—" if r.cost_usd is None else f"${r.cost_usd:.4f}"
    return (
        f"{r.index:>6} {ts:8} {r.window_size:>6} {fmt_tokens(r.input_tokens):>6} "
        f"{fmt_tokens(r.cache_read):>6} {fmt_tokens(r.cache_write):>6} {rec:>13} "
        f"{brk:<22} {cost:>9}"
    )


def with_subagents_line(log: RequestLog, agents: list[Any]) -> str:
    """The totals of ``log``'s requests with the sub-agents' (``AgentLog``), labelled."""
    from ctxview.sessions.subagents import totals_with_agents

    t = totals_with_agents(log, agents)
    n = sum(1 for a in agents if a.log is not None)
    hit = "—" if t["hit_rate"] is None else f"{100 * t['hit_rate']:.1f}%"
    rec = (
        "" if t["recorded_hit_rate"] is None else f" (recorded {100 * t['recorded_hit_rate']:.1f}%)"
    )
    unread = len(agents) - n
    return (
        f"with {n} sub-agent{'' if n == 1 else 's'}: "
        f"{t['requests']:,} request{'' if t['requests'] == 1 else 's'} · "
        f"input {fmt_tokens(t['input_tokens'])} · hit rate {hit}{rec} · cost {fmt_total_usd(t)}"
        + (f" · {unread} not read" if unread else "")
    )


def header_row() -> str:
    return (
        f"{'#':>6} {'time':8} {'window':>6} {'input':>6} {'read':>6} {'write':>6} "
        f"{'rec read/wr':>13} {'break':<22} {'cost':>9}  read▕write▕uncached"
    )


class RequestList(ScrollView, can_focus=True):
    """Rows of requests (virtualised)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "jump(0)", "First", show=False),
        Binding("end,G", "jump(-1)", "Last", show=False),
        # a column at a time took 20 presses to reach the cost at 80 columns
        Binding("left,h", "sideways(-10)", "Left", show=False),
        Binding("right,l", "sideways(10)", "Right", show=False),
    ]
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "requests--read",
        "requests--write",
        "requests--uncached",
    }
    DEFAULT_CSS = """
    RequestList { height: 1fr; }
    RequestList > .requests--read { color: $success; }
    RequestList > .requests--write { color: $warning; }
    RequestList > .requests--uncached { color: $error; }
    """
    cursor: reactive[int] = reactive(0)

    def __init__(self, log: RequestLog, **kw: Any) -> None:
        super().__init__(**kw)
        self.reqlog = log
        #: every request in the order sent: the turns and the compactions' own requests (the
        #: totals count both)
        self.rows = log.in_order()
        self.scale = max((r.input_tokens for r in self.rows), default=1) or 1
        self.virtual_size = Size(120, len(self.rows))
        #: the request marked with space (compared with the next one marked)
        self.marked: int | None = None
        self._legible_cache: dict[Any, Any] = {}

    def bar_style(self, part: str, over: Style) -> Style:
        """The theme's colour of a bar part (read: success, write: warning, uncached: error),
        made legible on the row's background (yellow on a light theme would hardly show)."""
        own = self.get_component_rich_style(f"requests--{part}", partial=True)
        return readable_style(own, over, self.rich_style, self._legible_cache)

    def render_line(self, y: int) -> Strip:
        idx = self.scroll_offset.y + y
        reqs = self.rows
        # the theme's colours (a light theme too), not the terminal's defaults
        themed = self.rich_style
        if idx >= len(reqs):
            return Strip.blank(self.size.width, themed)
        r = reqs[idx]
        base = themed + (Style(reverse=True) if idx == self.cursor else Style())
        text = request_row(r, self.scale, self.reqlog.as_sent)
        if idx == self.marked:
            text = "●" + text[1:]
            base += Style(bold=True)
        segs = [Segment(text + "  ", base)]
        n_read = round(BAR * r.cache_read / self.scale)
        n_write = round(BAR * r.cache_write / self.scale)
        n_unc = round(BAR * r.uncached / self.scale)
        segs.append(Segment("█" * n_read, base + self.bar_style("read", base)))
        segs.append(Segment("█" * n_write, base + self.bar_style("write", base)))
        segs.append(Segment("█" * n_unc, base + self.bar_style("uncached", base)))
        if r.redundancy:
            segs.append(Segment(f" ⟳{r.redundancy.items}", base + Style(dim=True)))
        strip = Strip(segs).extend_cell_length(self.scroll_offset.x + self.size.width, themed)
        return strip.crop(self.scroll_offset.x, self.scroll_offset.x + self.size.width)

    def watch_cursor(self, old: int, new: int) -> None:
        self.scroll_to_region_cursor()
        self.refresh()

    @property
    def rows_shown(self) -> int:
        """Rows in view: the height less a horizontal scrollbar's row (at 80 columns the rows
        are wider than the view, and the last one sat under the scrollbar)."""
        return max(1, self.scrollable_content_region.height)

    def scroll_to_region_cursor(self) -> None:
        top = self.scroll_offset.y
        h = self.rows_shown
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False)

    def _move(self, to: int) -> None:
        n = len(self.rows)
        if n:
            self.cursor = max(0, min(n - 1, to))

    def action_cursor(self, delta: int) -> None:
        self._move(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self._move(self.cursor + direction * max(1, self.rows_shown - 1))

    def action_sideways(self, columns: int) -> None:
        self.scroll_to(x=max(0, self.scroll_offset.x + columns), animate=False)

    def action_jump(self, where: int) -> None:
        self._move(where if where >= 0 else len(self.rows) - 1)

    def on_click(self, event: events.Click) -> None:
        self._move(self.scroll_offset.y + event.y)


class RequestsScreen(ModalScreen[int | None]):
    """Requests of the open session; dismissed with the transcript id to select, or None."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("enter", "choose", "Show in timeline"),
        Binding("space", "mark", "Mark / compare"),
    ]
    DEFAULT_CSS = """
    RequestsScreen { align: center middle; }
    RequestsScreen > Vertical {
        width: 96%; height: 90%; background: $panel; border: thick $primary; padding: 0 1;
    }
    RequestsScreen .head {
        color: $text-muted; text-style: bold; text-wrap: nowrap; text-overflow: clip;
    }
    RequestsScreen .hint { color: $text-muted; }
    """

    @classmethod
    def for_session(cls, m: SessionModel, config: Config) -> RequestsScreen | None:
        """The Requests view of the open session ``m``: as sent, or under the current max and
        strategy (labelled as the sidebar says); None before the first request."""
        from ctxview.app.cacheline import session_view
        from ctxview.app.request_inputs import price_table

        found = session_view(m)
        if found is None:
            return None
        view, settings = found
        prices = price_table(config)
        # the cache line's worker ran the same request model: its log, if still current
        saved = m.cache_prediction.so_far if m.cache_prediction is not None else None
        log = saved.log_for(view, settings, prices) if saved is not None else None
        settings["prices"] = prices
        screen = cls(view, settings, m.mode_label(), log)
        if m.cache_prediction is not None and m.cache_prediction.with_agents is not None:
            # as sent: the sub-agents' requests count in the totals (as in ``ctxview requests``)
            screen.agents = m.cache_prediction.agents
        if m.session.format == "proxy" and m.session.exchanges:
            from ctxview.sessions.proxylog import recorded_counts

            screen.recorded = (
                f"recorded in conversation #{m.session.conversation}: "
                f"{recorded_counts(m.session.exchanges)} · every one: ctxview requests FILE"
            )
        return screen

    def __init__(
        self,
        session: Any,
        settings: dict[str, Any],
        label: str,
        log: RequestLog | None = None,
    ) -> None:
        """``log``: the requests already computed for these inputs (the sidebar's cache line
        runs the same request model), shown at once instead of replaying the session."""
        super().__init__()
        self.session = session
        self.settings = settings
        self.label = label
        self.reqlog: RequestLog | None = None
        self._ready = log
        #: a proxy recording: what its recorded requests came to (errors, cuts and
        #: count_tokens calls are not requests the model replays)
        self.recorded: str | None = None
        #: the sub-agents' requests as they sent them (``sessions.subagents.AgentLog``): their
        #: totals with the session's are shown on top (their rows are in their own views)
        self.agents: list[Any] = []

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Requests · {self.label}"), id="title")
            yield Static(Text("computing the requests…"), id="summary")
            yield Static(Text(header_row(), no_wrap=True, overflow="crop"), classes="head")
            yield Static(
                Text(
                    "⟳N: N repeated contents (a copy of text or a result already in the request) · "
                    "enter: show in the timeline · space: mark, then space on another: diff · "
                    "escape: close · j/k PgUp/PgDn g/G ←/→ (h/l)"
                ),
                classes="hint",
            )

    def on_mount(self) -> None:
        if self._ready is not None:
            self._show(self._ready)
        else:
            self.compute()

    @work(thread=True, exclusive=True, description="requests")
    def compute(self) -> None:
        from ctxview.core.requests import simulate

        try:
            log = simulate(self.session, **self.settings)
        except ValueError as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        self.app.call_from_thread(self._show, log)

    def _failed(self, msg: str) -> None:
        self.query_one("#summary", Static).update(Text(one_line(msg, 200)))

    def _show(self, log: RequestLog) -> None:
        self.reqlog = log
        t = log.totals()
        cost = fmt_total_usd(t)
        hit = "—" if t["hit_rate"] is None else f"{100 * t['hit_rate']:.1f}%"
        rec = (
            ""
            if t["recorded_hit_rate"] is None
            else f" (recorded {100 * t['recorded_hit_rate']:.1f}%)"
        )
        breaks: dict[str, int] = {}
        for r in log.requests:
            if r.cache_break:
                breaks[r.cache_break.reason] = breaks.get(r.cache_break.reason, 0) + 1
        line = (
            f"{t['requests']:,} request{'' if t['requests'] == 1 else 's'} · input {fmt_tokens(t['input_tokens'])} · hit rate "
            f"{hit}{rec} · cost {cost} · breaks: "
            + (", ".join(f"{k} {v}" for k, v in breaks.items()) or "none")
        )
        unexplained = sum(
            1 for r in log.requests if r.recorded_miss and r.recorded_miss.reason == "unexplained"
        )
        if unexplained:
            line += f" · recorded, not predicted: {unexplained}"
        err = t.get("token_error")
        if err:
            line += f" · token error median {100 * err['median']:.1f}%"
        if self.agents:
            line += "\n" + with_subagents_line(log, self.agents)
        if self.recorded:
            line += "\n" + self.recorded
        # how the tokens were counted, where it is not the default (Gemini's own vocabulary in
        # use, or a vocabulary file that could not be used): the figures above depend on it
        for note in log.notes:
            if note.startswith(TOKEN_NOTE):
                line += "\n" + one_line(note, 200)
        self.query_one("#summary", Static).update(Text(line))
        lst = RequestList(log, id="requests")
        self.query_one(Vertical).mount(lst, before=self.query_one(".hint"))
        lst.focus()
        # the column header scrolls sideways with the rows (a narrow terminal crops them)
        self.watch(lst, "scroll_x", self._scroll_head)
        self.call_after_refresh(lst.action_jump, -1)

    def _scroll_head(self, x: float) -> None:
        self.query_one(".head", Static).update(
            Text(header_row()[round(x) :], no_wrap=True, overflow="crop")
        )

    def action_close(self) -> None:
        self.dismiss(None)

    def action_choose(self) -> None:
        if self.reqlog is None or not self.reqlog.requests:
            self.dismiss(None)
            return
        lst = self.query_one(RequestList)
        r = lst.rows[lst.cursor]
        target = r.message_ids[-1] if r.message_ids else r.response_id
        self.dismiss(target)

    def action_mark(self) -> None:
        if self.reqlog is None or not self.reqlog.requests:
            return
        lst = self.query_one(RequestList)
        cur = lst.cursor
        if lst.rows[cur].kind != "turn":
            # its body is the compact instruction after the history it summarises: no window of
            # the replay to compare
            self.notify("a compaction request is not compared", markup=False, timeout=4)
            return
        if lst.marked is None or lst.marked == cur:
            lst.marked = None if lst.marked == cur else cur
            lst.refresh()
            if lst.marked is not None:
                self.notify(
                    f"request #{lst.rows[cur].index} marked: space on another request compares"
                    " them",
                    markup=False,
                    timeout=4,
                )
            return
        a, b = sorted((lst.rows[lst.marked].index, lst.rows[cur].index))
        lst.marked = None
        lst.refresh()
        self.compare(a, b)

    @work(thread=True, exclusive=True, group="diff", description="diff")
    def compare(self, a: int, b: int) -> None:
        from ctxview.core.diff import diff_logged_requests
        from ctxview.sessions.diffio import render

        assert self.reqlog is not None
        try:
            diff = diff_logged_requests(self.session, self.reqlog, a, b)
        except (ValueError, IndexError) as exc:
            self.app.call_from_thread(self._failed, str(exc))
            return
        lines = render(diff)
        self.app.call_from_thread(self.app.push_screen, RequestDiffScreen(a, b, lines))


class RequestDiffScreen(ModalScreen[None]):
    """Two requests compared, as ``ctxview diff`` prints them."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,space", "close", "Close")]
    DEFAULT_CSS = """
    RequestDiffScreen { align: center middle; }
    RequestDiffScreen > Vertical {
        width: 94%; height: 86%; background: $panel; border: thick $accent; padding: 0 1;
    }
    RequestDiffScreen .title { text-style: bold; }
    RequestDiffScreen .hint { color: $text-muted; }
    RequestDiffScreen .add { color: $text-success; }
    RequestDiffScreen .del { color: $text-error; }
    RequestDiffScreen .chg { color: $text-warning; }
    RequestDiffScreen .cache { text-style: bold; }
    """

    def __init__(self, a: int, b: int, lines: list[str]) -> None:
        super().__init__()
        self.a, self.b, self.lines = a, b, lines

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Request #{self.a} (A) → request #{self.b} (B)"), classes="title")
            with VerticalScroll(id="diff-lines"):
                for line in self.lines:
                    stripped = line.lstrip()
                    cls = (
                        "add"
                        if stripped.startswith("+") or "added" in stripped[:40]
                        else "del"
                        if stripped.startswith("-")
                        else "chg"
                        if stripped.startswith("~")
                        else "cache"
                        if stripped.startswith("prompt cache")
                        else ""
                    )
                    yield Static(Text(line, no_wrap=True, overflow="ellipsis"), classes=cls)
            yield Static(Text("escape: back to the requests · ↑/↓ scroll"), classes="hint")

    def on_mount(self) -> None:
        self.query_one("#diff-lines", VerticalScroll).focus()

    def action_close(self) -> None:
        self.dismiss(None)
