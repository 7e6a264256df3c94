"""The config sidebar: max messages, strategy, model, system prompt, window, tokens, cache,
protocol status."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.validation import Integer
from textual.widgets import Input, Label, ProgressBar, Select, Sparkline, Static

from ctxview.app.model import AS_SENT, SessionModel, as_sent_possible, context_size
from ctxview.app.safe import one_line
from ctxview.core.limits import context_problem, over_context_words
from ctxview.core.strategies import STRATEGIES
from ctxview.core.usage import prompt_terms
from ctxview.textfmt import counted, fmt_tokens, fmt_usd, plural


class ConfigSidebar(VerticalScroll):
    DEFAULT_CSS = """
    ConfigSidebar {
        width: 36;
        background: $panel;
        padding: 0 1;
        border-right: tall $background;
        scrollbar-size-vertical: 1;
    }
    ConfigSidebar Label { color: $text-muted; margin-top: 1; text-style: bold; }
    ConfigSidebar Label:first-of-type { margin-top: 0; }
    ConfigSidebar Input.-textual-compact, ConfigSidebar Select.-textual-compact { margin: 0; }
    ConfigSidebar Input { width: 100%; }
    ConfigSidebar Select { width: 100%; }
    ConfigSidebar #gauge { width: 100%; }
    ConfigSidebar #gauge Bar { width: 1fr; }
    ConfigSidebar #spark { height: 2; margin-top: 1; }
    ConfigSidebar #hit-spark { height: 1; color: $success; }
    ConfigSidebar .caption { color: $text-muted; }
    ConfigSidebar #mode { text-style: bold; }
    ConfigSidebar .value { color: $text; }
    ConfigSidebar #protocol.-ok { color: $text-success; }
    ConfigSidebar #tokens.-over { color: $text-error; }
    ConfigSidebar #protocol.-bad { color: $text-error; }
    ConfigSidebar #system { color: $text-muted; max-height: 4; }
    ConfigSidebar #hint { color: $text-muted; text-style: italic; margin-top: 1; }
    """

    class MaxChanged(Message):
        def __init__(self, value: int) -> None:
            super().__init__()
            self.value = value

    class ModelChanged(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    class StrategyChanged(Message):
        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(
        self, initial_strategy: str = "seed", *, with_as_sent: bool = False, **kwargs: Any
    ) -> None:
        super().__init__(**kwargs)
        self.initial_strategy = (
            initial_strategy
            if initial_strategy in STRATEGIES or initial_strategy == AS_SENT
            else "seed"
        )
        self._model: SessionModel | None = None
        self._with_as_sent = with_as_sent or self.initial_strategy == AS_SENT

    def compose(self) -> ComposeResult:
        yield Label("Protocol (next request)")
        yield Static(id="protocol")
        yield Label("Window", id="window-label")
        yield Static(id="mode", classes="value")
        yield Static(id="window", classes="value")
        yield Label("Max messages (+/-)", id="max-label")
        max_input = Input(
            placeholder="max",
            type="integer",
            id="max-input",
            validators=[Integer(minimum=1)],
            valid_empty=False,
        )
        max_input.compact = True
        yield max_input
        yield Label("Strategy (s)")
        # the initial value is the session's: a Select that starts on another option posts a
        # Changed on mount, which would switch the session's strategy behind the user's back
        select: Select[str] = Select(
            self._options(self._with_as_sent),
            allow_blank=False,
            value=self.initial_strategy,
            id="strategy-select",
        )
        select.compact = True
        yield select
        yield Label("Request tokens (est.)", id="tokens-label")
        yield Static(id="tokens", classes="value")
        # no percentage of its own: it rounds 0.2% to 0%, the line above has the figure
        yield ProgressBar(total=200_000, show_eta=False, show_percentage=False, id="gauge")
        yield Sparkline([], id="spark")
        yield Static(id="spark-caption", classes="caption")
        yield Label("Cache (next request)")
        yield Static(id="cache", classes="value")
        yield Static(id="hit-spark")
        yield Static(id="hit-caption", classes="caption")
        yield Label("Last API usage")
        yield Static(id="usage", classes="value")
        yield Label("Model (enter to apply)")
        model_input = Input(placeholder="model", id="model-input")
        model_input.compact = True
        yield model_input
        yield Label("System prompt (ctrl+e)")
        yield Static(id="system")

    @staticmethod
    def _options(with_as_sent: bool) -> list[tuple[str, str]]:
        names = [(name, name) for name in STRATEGIES]
        return [(AS_SENT, AS_SENT), *names] if with_as_sent else names

    def on_mount(self) -> None:
        self.query_one(
            "#gauge", ProgressBar
        ).tooltip = "the request's tokens against the model's context"
        self.query_one("#hit-spark", Static).tooltip = (
            "predicted cache hit rate (read / input) of each request so far: full = all read "
            "from the cache, blank = a break"
        )

    def update_from(self, model: SessionModel, exact_tokens: int | None = None) -> None:
        self._model = model
        ctx = model.context
        as_sent = model.as_sent is not None
        inp = self.query_one("#max-input", Input)
        if not inp.has_focus:
            inp.value = "" if as_sent else str(ctx.max_context_messages)
            inp.placeholder = "none: as sent" if as_sent else "max"
        sel = self.query_one("#strategy-select", Select)
        with_as_sent = as_sent_possible(model)
        if with_as_sent != self._with_as_sent:
            self._with_as_sent = with_as_sent
            with self.prevent(Select.Changed):
                sel.set_options(self._options(with_as_sent))
        shown = AS_SENT if as_sent else ctx.strategy
        if sel.value != shown:
            with self.prevent(Select.Changed):
                sel.value = shown
        model_input = self.query_one("#model-input", Input)
        if not model_input.has_focus:
            model_input.value = one_line(model.model, 200)  # a model name from the session
        sp = ctx.system_text
        self.query_one("#system", Static).update(Text(one_line(sp, 160) if sp else "(none)"))
        n = len(ctx)
        evicted = model.evicted_count()
        sf = ctx.sent_form() if ctx.edits_messages else None
        # context editing evicts nothing: the max is kept for the other strategies
        self.query_one("#max-label", Label).update(
            "Max messages (not used: context editing)" if sf is not None else "Max messages (+/-)"
        )
        mode = self.query_one("#mode", Static)
        mode.update(Text(model.mode_label()))
        mode.display = with_as_sent  # a recorded session: as sent, or a labelled simulation
        self.query_one("#window-label", Label).update(
            "Window (a: as sent)" if with_as_sent and not as_sent else "Window"
        )
        if as_sent:
            gone = f"compacted {evicted:,}" if evicted else "no ctxview truncation"
            window = f"{counted(n, 'message')} in the request\ntranscript {len(model.transcript):,} · {gone}"
        else:
            # a simulation starts again at each Claude Code compaction: what that replaced is
            # told apart from what the strategy evicted
            compacted = model.compacted_count()
            gone = f"evicted {evicted - compacted:,}" + (
                f" · compacted {compacted:,}" if compacted else ""
            )
            if sf is not None:  # context editing: max does not apply, nothing is evicted
                head = f"{counted(n, 'message')} · {sf.cleared_units:,} cleared"
            else:
                head = f"{n:,} / {ctx.max_context_messages:,} messages" + (
                    f" · {len(ctx.pinned_ids):,} pinned" if ctx.pinned_ids else ""
                )
            window = f"{head}\ntranscript {len(model.transcript):,} · {gone}"
        self.query_one("#window", Static).update(Text(window))
        size = context_size(model.model, model.replay.provider)
        recorded = model.recorded_sizes()[1] if as_sent else None
        self.query_one("#tokens-label", Label).update(
            "Request tokens (rec.)" if recorded is not None else "Request tokens (est.)"
        )
        if recorded is not None:
            self._show_recorded(model, size, recorded, exact_tokens)
        elif model.tokens_ready:
            total = model.window_tokens
            from ctxview.sessions.request import breakdown_text

            line = (
                f"~{fmt_tokens(total)} / {fmt_tokens(size)} ({share(total, size)})\n"
                f"{breakdown_text(model.token_breakdown())}"
            )
            pred = model.cache_prediction
            if pred is not None and with_as_sent:
                # a recorded session has no system prompt or tools in it: the request model
                # calibrates them from the recorded usage
                how = " (calibrated)" if getattr(pred.rates, "calibrated", False) else ""
                line += f"\nrequest model: ~{fmt_tokens(pred.input_tokens)}{how}"
            if exact_tokens is not None:
                line += f"\nexact (count_tokens): {exact_tokens:,}"
            over = (
                context_problem(
                    exact_tokens if exact_tokens is not None else total,
                    model.model,
                    exact=exact_tokens is not None,
                    provider=model.replay.provider,
                )
                is not None
            )
            if over:
                line += (
                    "\n✗ over the model's context: the API would answer 400 "
                    + over_context_words(model.model, model.replay.provider)
                )
            tokens = self.query_one("#tokens", Static)
            tokens.update(Text(line))
            tokens.set_class(over, "-over")
            gauge = self.query_one("#gauge", ProgressBar)
            gauge.update(total=size, progress=min(total, size))
            self._update_spark(model)
        else:
            self.query_one("#tokens", Static).update(Text("estimating…"))
        self.update_cache(model)
        usage = model.last_usage()
        if usage is None:
            self.query_one("#usage", Static).update(Text("(no reply with usage yet)"))
        else:
            mid, u = usage

            def g(key: str) -> str:
                v = u.get(key)
                return f"{v:,}" if isinstance(v, int) else "–"

            terms = prompt_terms(u) if model.session.provider != "anthropic" else None
            self.query_one("#usage", Static).update(
                Text(
                    f"#{mid}: in {g('input_tokens')} · out {g('output_tokens')}\n"
                    f"cache read {g('cache_read_input_tokens')} · write {g('cache_creation_input_tokens')}"
                    if terms is None
                    # the API's own terms: it reports no cache writes
                    else f"#{mid}: prompt {terms[0]:,} · out {terms[2]:,}\n{terms[1]:,} cached"
                )
            )
        state, short, first = model.verdict(wait=False)
        status = self.query_one("#protocol", Static)
        shown = one_line(first, 160)
        if len(shown) == 160:
            shown = shown[:159] + "…"  # the full text is in the detail pane (n jumps there)
        # what ctxview notes about the window itself: max+1 tool pair, newest evicted, budget
        notes = "".join(f"\n{one_line(n.message, 160)}" for n in model.context.window_notes())
        status.update(Text((f"{short}\n{shown}" if first else short) + notes))
        status.set_class(state == "ok", "-ok")
        status.set_class(state == "bad", "-bad")

    def _show_recorded(
        self, model: SessionModel, size: int, recorded: tuple[int, int], exact: int | None
    ) -> None:
        """As sent: the gauge is what the API billed for the newest request with usage."""
        mid, total = recorded
        line = f"{total:,} / {fmt_tokens(size)} recorded ({share(total, size)})\nat #{mid:,}"
        pred = model.cache_prediction
        if pred is not None:
            how = " (calibrated)" if getattr(pred.rates, "calibrated", False) else ""
            line += f" · next ~{fmt_tokens(pred.input_tokens)}{how}"
        if exact is not None:
            line += f"\nexact (count_tokens): {exact:,}"
        over = context_problem(
            exact if exact is not None else total,
            model.model,
            exact=True,
            provider=model.replay.provider,
        )
        if over is not None:
            line += "\n✗ over the model's context: the API would answer 400 " + over_context_words(
                model.model, model.replay.provider
            )
        tokens = self.query_one("#tokens", Static)
        tokens.update(Text(line))
        tokens.set_class(over is not None, "-over")
        self.query_one("#gauge", ProgressBar).update(total=size, progress=min(total, size))
        self._update_spark(model)

    def update_cache(self, model: SessionModel) -> None:
        """The request model's figures (computed off the UI thread; see CtxviewApp)."""
        self._model = model
        pred = model.cache_prediction
        cache = self.query_one("#cache", Static)
        hit_spark = self.query_one("#hit-spark", Static)
        caption = self.query_one("#hit-caption", Static)
        if pred is None:
            cache.update(Text("no request yet" if not len(model.transcript) else "computing…"))
            hit_spark.update("")
            caption.update("")
            return

        def usd(v: float | None) -> str:
            return fmt_usd(v, "n/a")

        def tok(v: int) -> str:
            return f"~{fmt_tokens(v)}" if v else "0"

        lines = [
            f"read {tok(pred.read)} · write {tok(pred.write)}"
            + (f" · uncached {tok(pred.uncached)}" if pred.uncached else ""),
            f"next request {usd(pred.cost_usd)}"
            + (f" · breaks: {pred.cache_break}" if pred.cache_break else ""),
        ]
        if pred.requests:
            hit = "—" if pred.hit_rate is None else f"{100 * pred.hit_rate:.1f}%"
            rec = (
                ""
                if pred.recorded_hit_rate is None
                else f" (recorded {100 * pred.recorded_hit_rate:.1f}%)"
            )
            lines.append(f"{counted(pred.requests, 'request')}: hit {hit}{rec}")
            lines.append(f"cost so far {usd(pred.cost_so_far)}")
            if pred.with_agents is not None:
                lines.extend(with_subagents_lines(pred.with_agents, len(pred.agents), usd))
        if pred.next_window is not None and pred.next_window != model.window_ids:
            # the live window keeps its history (an earlier max or strategy; the evicted stay
            # evicted); the request model replays the session under today's settings
            n = len(pred.next_window)
            lines.append(
                f"(a replay from the start under these settings: its window of {n:,} "
                f"message{'s' if n != 1 else ''} is not the live one)"
            )
        if pred.cost_usd is None:
            # what to do about it: the README says nothing of prices; config.toml takes one
            # (docs/request-model.md#cost), and a file that names no model cannot be priced
            if pred.model:
                name = one_line(pred.model, 60)
                lines.append(f'no price for {name}: add [pricing."{name}"] to config.toml')
            else:
                lines.append("no price: the file names no model")
        cache.update(Text("\n".join(lines)))
        hit_spark.update(Text(hit_bars(pred.hit_series, self._spark_width())))
        caption.update(Text("hit rate per request") if pred.hit_series else Text(""))
        if model.as_sent is not None and not model.recorded_sizes()[0]:
            self._update_spark(model)  # as sent, no usage recorded: the estimate per request

    def _spark_width(self) -> int:
        """The sparkline's width in cells: its own once laid out, else what the CSS gives it."""
        spark = self.query_one("#spark", Sparkline)
        if spark.size.width > 0:
            return spark.size.width
        width = self.styles.width
        cells = int(width.value) if width is not None and width.is_cells else 36
        return max(4, cells - 3)  # padding 0 1 and the border on the right

    def _update_spark(self, model: SessionModel) -> None:
        """The window-size line: the recorded input of each request (as sent), else the
        request model's estimate per request, else the tokens of each window message."""
        self._model = model
        spark = self.query_one("#spark", Sparkline)
        width = self._spark_width()
        sizes = model.recorded_sizes()[0] if model.as_sent is not None else []
        pred = model.cache_prediction
        if sizes:
            data = _peaks([float(v) for v in sizes], width)
            what = f"input per request (recorded) · peak {fmt_tokens(int(max(sizes)))}"
        elif model.as_sent is not None and pred is not None and pred.size_series:
            data = _peaks(pred.size_series, width)
            what = f"input per request (estimated) · peak {fmt_tokens(int(max(data)))}"
        else:
            data = model.token_series(width) if model.tokens_ready else []
            what = "tokens per window message" if data else ""
        if spark.data != data:
            spark.data = data
        self.query_one("#spark-caption", Static).update(Text(what))

    def on_resize(self, event: Any) -> None:
        # the sparkline follows the sidebar's width (it narrows on smaller terminals)
        if self._model is not None:
            self.call_after_refresh(self._update_spark, self._model)
            self.call_after_refresh(self.update_cache, self._model)  # the hit-rate line too

    @on(Input.Submitted, "#max-input")
    def _max_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._apply_max(event.value)

    @on(Input.Submitted, "#model-input")
    def _model_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        name = event.value.strip()
        if name:
            self.post_message(self.ModelChanged(name))

    @on(Input.Blurred, "#max-input")
    def _max_blurred(self, event: Any) -> None:
        self._apply_max(self.query_one("#max-input", Input).value)

    def _apply_max(self, value: str) -> None:
        if not value.strip() and self._model is not None and self._model.as_sent is not None:
            return  # as sent: no max of ctxview's until one is typed
        try:
            n = int(value)
        except ValueError:
            self.notify(
                f"max messages must be an integer >= 1, got {value!r}",
                severity="error",
                markup=False,
            )
            self._restore_max()
            return
        if n < 1:
            self.notify(
                "max messages must be >= 1 (the first message is always kept)",
                severity="error",
                markup=False,
            )
            self._restore_max()
            return
        self.post_message(self.MaxChanged(n))

    def _restore_max(self) -> None:
        """After an invalid entry the field shows the max in force again."""
        if self._model is not None:
            as_sent = self._model.as_sent is not None
            self.query_one("#max-input", Input).value = (
                "" if as_sent else str(self._model.context.max_context_messages)
            )

    @on(Select.Changed, "#strategy-select")
    def _strategy(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.post_message(self.StrategyChanged(event.value))


BARS = "▁▂▃▄▅▆▇█"


def share(part: int, whole: int) -> str:
    """``part`` of ``whole`` in percent, one decimal; ``<0.1%`` for a share that would round to
    0.0% (466 tokens of a 1M context are not nothing)."""
    pct = 100 * part / whole if whole else 0.0
    if 0 < pct < 0.05:
        return "<0.1%"
    return f"{pct:.1f}%"


def hit_bars(rates: Sequence[float], width: int) -> str:
    """Hit rates (0..1) as one line of bars on a fixed scale (a sparkline scales to its own
    minimum, which would make 97% look like 0%): the lowest of each bucket, so that a break
    shows as a blank (nothing read) wherever it falls."""
    vals = list(rates)
    if len(vals) > width > 0:
        step = len(vals) / width
        vals = [
            min(part)
            for k in range(width)
            if (part := vals[int(k * step) : max(int(k * step) + 1, int((k + 1) * step))])
        ]
    return "".join(" " if v <= 0 else BARS[min(len(BARS) - 1, int(v * len(BARS)))] for v in vals)


def _peaks(values: list[float], width: int) -> list[float]:
    """``values`` bucketed to at most ``width`` (the highest of each bucket: a peak shows)."""
    if len(values) <= width or width <= 0:
        return values
    step = len(values) / width
    return [
        max(values[int(k * step) : max(int(k * step) + 1, int((k + 1) * step))])
        for k in range(width)
    ]


def with_subagents_lines(t: dict[str, Any], agents: int, usd: Any) -> list[str]:
    """The totals of the requests so far with the sub-agents' (``totals()``), labelled."""
    hit = "—" if t["hit_rate"] is None else f"{100 * t['hit_rate']:.1f}%"
    n = t["requests"]
    return [
        f"with {plural(agents, 'sub-agent')}:",
        f"  {counted(n, 'request')} · hit {hit}",
        f"  input ~{fmt_tokens(t['input_tokens'])} · cost {usd(t['cost_usd'])}",
    ]
