"""The live view of ``ctxview proxy``: one row per request (window, protocol verdict, cache use).

The proxy runs on its own asyncio loop in its own thread, so drawing never delays a stream. It
hands each finished :class:`RequestRecord` to a queue; a reader thread of this app turns it into
a frozen :class:`RequestSummary` (the protocol check runs there) and queues it for the view; a
10 Hz timer on the app's loop takes the snapshots and posts them as messages. The view only ever
sees those snapshots; it never reaches back into the proxy.

(A message posted straight from another thread is delivered through the app loop's wake-up; with
an aiohttp server running on a second loop in the process it was seen to wait for the next key
press, so snapshots are handed over through a queue the app drains itself.)
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import DataTable, Footer, Static

from ctxview.app.shell import ShellApp
from ctxview.live.recording import RequestRecord, RequestSummary, summarise
from ctxview.sessions.proxylog import kind_of
from ctxview.textfmt import fmt_tokens, one_line, plural, visible

_STOP = object()


class ProxyStarted(Message):
    def __init__(self, host: str, port: int) -> None:
        super().__init__()
        self.host, self.port = host, port


class ProxyFailed(Message):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class RequestDone(Message):
    """A frozen snapshot of one finished request (and the recording's save state)."""

    def __init__(self, summary: RequestSummary, save_error: str | None) -> None:
        super().__init__()
        self.summary = summary
        self.save_error = save_error


def _n(v: int | None) -> str:
    return "" if v is None else fmt_tokens(v)


#: the table's columns: what tells requests apart first (at 80 columns the first eight show:
#: status, kind, protocol and ms among them), the model and the stop reason or error (the
#: longest) last
COLUMNS: tuple[tuple[str, int | None], ...] = (
    ("#", 3),
    ("time", 8),
    ("status", 6),
    ("kind", 6),
    ("msgs", 4),
    ("~tokens", 7),
    ("protocol", 11),
    ("ms", 6),
    ("in", 6),
    ("out", 6),
    ("read", 6),
    ("write", 6),
    ("model", 14),
    ("stop / error", None),  # as wide as its text: the detail below shows it whole too
)


class ProxyApp(ShellApp):
    TITLE = "ctxview proxy"
    CSS = """
    #status { height: auto; padding: 0 1; background: $panel; }
    #requests { height: 1fr; }
    #detail { height: auto; max-height: 40%; padding: 0 1; border-top: solid $primary; }
    """
    #: replace secrets in the recording (``--no-redact``: False); what was, once it closes
    redact_secrets = True
    redactions: Any = None

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "quit"),
        Binding("j", "step(1)", "next"),
        Binding("k", "step(-1)", "previous"),
        Binding("g", "top", "first", show=False),
        Binding("G", "bottom", "newest"),
    ]

    def __init__(
        self,
        *,
        host: str,
        port: int,
        upstream: str,
        record: str | None,
        upstream_timeout: float | None = None,
        openai_upstream: str | None = None,
        gemini_upstream: str | None = None,
    ) -> None:
        super().__init__()
        from ctxview.live.proxy import DEFAULT_UPSTREAMS, UPSTREAM_TIMEOUT, split_userinfo

        self.host, self.port, self.record = host, port, record
        self.upstream_timeout = upstream_timeout or UPSTREAM_TIMEOUT
        #: the upstream to use (credentials in it included) and as shown (without them)
        self._upstream_url = upstream
        self.upstream = split_userinfo(upstream)[0]
        #: OpenAI's and Gemini's upstreams (credentials included)
        self._openai_upstream = openai_upstream or DEFAULT_UPSTREAMS["openai"]
        self._gemini_upstream = gemini_upstream or DEFAULT_UPSTREAMS["gemini"]
        self.start_error: str | None = None
        self._records: queue.SimpleQueue[Any] = queue.SimpleQueue()
        #: snapshots for the view (frozen summaries and start/failure notes), drained by a timer
        self._snapshots: queue.SimpleQueue[Message] = queue.SimpleQueue()
        self._summaries: dict[int, RequestSummary] = {}
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._save_error: str | None = None
        self._proxy: Any = None
        self._address = ""

    def compose(self) -> ComposeResult:
        yield Static(Text("starting the proxy…"), id="status")
        table: DataTable[Any] = DataTable(id="requests", cursor_type="row", zebra_stripes=True)
        yield table
        yield Static(Text("no request yet"), id="detail")
        yield Footer()

    def on_mount(self) -> None:
        from ctxview.config import ConfigError, check_theme, load_config

        self._install_signal_handlers()
        cfg = load_config()
        try:  # the main app's rule (ShellApp.use_theme): an unknown theme is said, not ignored
            check_theme(cfg.get("theme"), self.available_themes)
            self.theme = cfg.get("theme")
        except ConfigError as exc:
            self.notify(f"{cfg.path}: {exc}; using {self.theme}", severity="warning", markup=False)
        table = self.query_one("#requests", DataTable)
        for label, width in COLUMNS:
            table.add_column(label, key=label, width=width)
        self._thread = threading.Thread(target=self._serve, name="ctxview-proxy", daemon=True)
        self._thread.start()
        self._reader()
        self.set_interval(0.1, self._drain)

    def _drain(self) -> None:
        while True:
            try:
                msg = self._snapshots.get_nowait()
            except queue.Empty:
                return
            self.post_message(msg)

    # -- the proxy's thread -----------------------------------------------------------------------
    def _serve(self) -> None:
        asyncio.run(self._serve_async())

    async def _serve_async(self) -> None:
        from ctxview.live.proxy import Proxy

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        proxy = Proxy(
            self._upstream_url,
            openai_upstream=self._openai_upstream,
            gemini_upstream=self._gemini_upstream,
            record_path=self.record,
            on_record=self._records.put,
            upstream_timeout=self.upstream_timeout,
            recent=0,
        )
        self._proxy = proxy
        proxy.log.redact_secrets = self.redact_secrets
        try:
            host, port = await proxy.start(self.host, self.port)
        except OSError as exc:
            await proxy.close()
            where = (
                f"--record {exc.filename}"
                if exc.filename is not None
                else f"cannot listen on {self.host}:{self.port}"
            )
            self._snapshots.put(ProxyFailed(f"{where} ({exc.strerror or exc})"))
            return
        self._snapshots.put(ProxyStarted(host, port))
        await self._stop.wait()
        await proxy.close()
        self.redactions = proxy.log.redactions

    # -- the reader: records in, frozen snapshots out ---------------------------------------------
    @work(thread=True, exclusive=True, group="reader", description="proxy reader")
    def _reader(self) -> None:
        while True:
            item = self._records.get()
            if item is _STOP:
                return
            assert isinstance(item, RequestRecord)
            summary = summarise(item)
            proxy = self._proxy
            self._snapshots.put(RequestDone(summary, getattr(proxy, "save_error", None)))

    # -- the view ---------------------------------------------------------------------------------
    def _status(self) -> Text:
        from ctxview.live.proxy import Upstream

        t = Text()
        t.append("ctxview proxy ", style="bold")
        t.append(self._address or "starting…")
        t.append(" → ")
        t.append(one_line(visible(self.upstream), 120))
        if self.record:
            t.append("  recording to ")
            t.append(one_line(visible(self.record), 120))
        others = " · ".join(
            f"{name} → {one_line(visible(Upstream(url, provider).url), 80)}"
            for name, provider, url in (
                ("OpenAI", "openai", self._openai_upstream),
                ("Gemini", "gemini", self._gemini_upstream),
            )
        )
        t.append(f"\n{others}", style="dim")
        if self._address:
            t.append(
                f"\npoint your agent at it: ANTHROPIC_BASE_URL={self._address} · "
                f"OPENAI_BASE_URL={self._address}/v1 · GOOGLE_GEMINI_BASE_URL={self._address}",
                style="dim",
            )
        n = len(self._summaries)
        t.append(f"\n{plural(n, 'request')}", style="bold")
        if self._save_error:
            t.append("  ✗ " + one_line(self._save_error, 200), style="bold red")
        return t

    @on(ProxyStarted)
    def _started(self, msg: ProxyStarted) -> None:
        host = f"[{msg.host}]" if ":" in msg.host else msg.host
        self._address = f"http://{host}:{msg.port}"
        self.query_one("#status", Static).update(self._status())

    @on(ProxyFailed)
    def _failed(self, msg: ProxyFailed) -> None:
        self.start_error = msg.reason
        self.exit(2)

    @on(RequestDone)
    def _request_done(self, msg: RequestDone) -> None:
        s = msg.summary
        self._summaries[s.id] = s
        self._save_error = msg.save_error
        table = self.query_one("#requests", DataTable)
        at_bottom = table.cursor_row >= table.row_count - 1
        status_style = "green" if s.status is not None and s.status < 400 else "bold red"
        verdict_style = (
            "green" if s.verdict.startswith("✓") else "red" if s.verdict.startswith("✗") else ""
        )
        # short enough to be read whole at 140 columns; the detail below has the rest
        stop = s.stop_reason or ""
        if s.error:
            stop = s.error.split(":", 1)[0]  # the error's type
        elif s.incomplete:
            stop = f"cut: {s.incomplete}"
        elif s.counted_tokens is not None:
            stop = f"counted {s.counted_tokens:,}"
        status = "---" if s.status is None else str(s.status)
        if s.incomplete and not s.error:
            status += " ✂"  # cut: visible in the narrowest view
        table.add_row(
            Text(str(s.id)),
            Text(s.time),
            Text(status, style=status_style if s.complete or s.error else "bold yellow"),
            Text(kind_of(s)),
            Text("" if s.messages is None else str(s.messages)),
            Text(_n(s.estimated_tokens)),
            Text(s.verdict, style=verdict_style),
            Text("" if s.duration_ms is None else f"{s.duration_ms:.0f}"),
            Text(_n(s.input_tokens if s.counted_tokens is None else s.counted_tokens)),
            Text(_n(s.output_tokens)),
            Text(_n(s.cache_read)),
            Text(_n(s.cache_write)),
            Text(one_line(s.model, 30)),
            Text(one_line(stop, 200), style="yellow" if s.incomplete or s.error else ""),
            key=str(s.id),
        )
        if at_bottom:
            table.move_cursor(row=table.row_count - 1)
        self.query_one("#status", Static).update(self._status())
        if at_bottom or table.row_count == 1:
            self._show(s)

    @on(DataTable.RowHighlighted)
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        if key is not None and int(key) in self._summaries:
            self._show(self._summaries[int(key)])

    def _show(self, s: RequestSummary) -> None:
        t = Text()
        t.append(f"#{s.id} {s.method} ", style="bold")
        t.append(one_line(s.path, 200))
        t.append(f"  {kind_of(s)}")
        if s.provider != "anthropic":
            t.append(f" · {s.provider}")
        if s.conversation is not None:
            t.append(f" · conversation {s.conversation}")
        if s.model:
            t.append(" · " + one_line(s.model, 60))
        if s.duration_ms is not None:
            t.append(f" · {s.duration_ms:.0f} ms")
        if s.messages is not None:
            noun = "message" if s.messages == 1 else "messages"
            if s.estimated_tokens is None and s.verdict == "—":
                t.append(f"\nwindow: {s.messages} {noun} (not checked)")
            else:
                t.append(f"\nwindow: {s.messages} {noun}, ~{fmt_tokens(s.estimated_tokens or 0)} ")
                t.append("tokens · protocol ")
                t.append(s.verdict, style="green" if s.verdict.startswith("✓") else "red")
        for p in s.problems[:5]:
            t.append("\n  " + one_line(p, 300), style="red")
        if len(s.problems) > 5:
            t.append(f"\n  … {len(s.problems) - 5} more", style="red")
        if s.input_tokens is not None:
            cached = s.cache_read or 0
            total_in = (s.input_tokens or 0) + cached + (s.cache_write or 0)
            share = f" ({cached * 100 // total_in}% of the prompt from cache)" if total_in else ""
            t.append(
                f"\nusage: input {s.input_tokens} · output {s.output_tokens} · "
                f"cache read {s.cache_read or 0} · cache write {s.cache_write or 0}{share}"
            )
        if s.counted_tokens is not None:
            t.append(f"\ncount_tokens: {s.counted_tokens:,} input tokens (not sent to a model)")
        if s.incomplete:
            t.append("\nincomplete: " + one_line(s.incomplete, 300), style="yellow")
        if s.error:
            t.append("\nerror: " + one_line(s.error, 300), style="bold red")
        if s.reply_preview:
            t.append("\nreply: ", style="bold")
            t.append(one_line(s.reply_preview, 300))
        self.query_one("#detail", Static).update(t)

    def action_step(self, delta: int) -> None:
        table = self.query_one("#requests", DataTable)
        if table.row_count:
            row = min(max(table.cursor_row + delta, 0), table.row_count - 1)
            table.move_cursor(row=row)

    def action_top(self) -> None:
        table = self.query_one("#requests", DataTable)
        if table.row_count:
            table.move_cursor(row=0)

    def action_bottom(self) -> None:
        table = self.query_one("#requests", DataTable)
        if table.row_count:
            table.move_cursor(row=table.row_count - 1)

    def _stop_proxy(self) -> None:
        self._records.put(_STOP)
        loop, stop = self._loop, self._stop
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stop.set)
        if self._thread is not None:
            self._thread.join(10)

    async def on_unmount(self) -> None:
        await asyncio.to_thread(self._stop_proxy)
