"""The config sidebar: max messages, strategy, model, system prompt, window, tokens, cache,
protocol status."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.validation import Integer
from textual.widgets import Input, Label, ProgressBar, Select, Sparkline, Static

from ctxview.app.model import SessionModel, context_size
from ctxview.app.safe import one_line
from ctxview.core.limits import context_problem
from ctxview.core.strategies import STRATEGIES
from ctxview.textfmt import fmt_tokens


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
    ConfigSidebar .value { color: $text; }
    ConfigSidebar #protocol.-ok { color: $success; }
    ConfigSidebar #tokens.-over { color: $error; }
    ConfigSidebar #protocol.-bad { color: $error; }
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

    def __init__(self, initial_strategy: str = "seed", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.initial_strategy = initial_strategy if initial_strategy in STRATEGIES else "seed"
        self._model: SessionModel | None = None

    def compose(self) -> ComposeResult:
        yield Label("Protocol (next request)")
        yield Static(id="protocol")
        yield Label("Window")
        yield Static(id="window", classes="value")
        yield Label("Max messages (+/-)")
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
            [(name, name) for name in STRATEGIES],
            allow_blank=False,
            value=self.initial_strategy,
            id="strategy-select",
        )
        select.compact = True
        yield select
        yield Label("Request tokens (est.)")
        yield Static(id="tokens", classes="value")
        # no percentage of its own: it rounds 0.2% to 0%, the line above has the figure
        yield ProgressBar(total=200_000, show_eta=False, show_percentage=False, id="gauge")
        yield Sparkline([], id="spark")
        yield Label("Cache (last change)")
        yield Static(id="cache", classes="value")
        yield Label("Last API usage")
        yield Static(id="usage", classes="value")
        yield Label("Model (enter to apply)")
        model_input = Input(placeholder="model", id="model-input")
        model_input.compact = True
        yield model_input
        yield Label("System prompt (ctrl+e)")
        yield Static(id="system")

    def on_mount(self) -> None:
        self.query_one(
            "#gauge", ProgressBar
        ).tooltip = "estimated window tokens against the model's context"

    def update_from(self, model: SessionModel, exact_tokens: int | None = None) -> None:
        self._model = model
        ctx = model.context
        inp = self.query_one("#max-input", Input)
        if not inp.has_focus:
            inp.value = str(ctx.max_context_messages)
        sel = self.query_one("#strategy-select", Select)
        if sel.value != ctx.strategy:
            with self.prevent(Select.Changed):
                sel.value = ctx.strategy
        model_input = self.query_one("#model-input", Input)
        if not model_input.has_focus:
            model_input.value = one_line(model.model, 200)  # a model name from the session
        sp = ctx.system_prompt
        self.query_one("#system", Static).update(Text(one_line(sp, 160) if sp else "(none)"))
        n = len(ctx)
        evicted = model.evicted_count()
        sf = ctx.sent_form() if ctx.edits_messages else None
        self.query_one("#window", Static).update(
            Text(
                (
                    f"{n:,} messages · {sf.cleared_units:,} cleared\n"
                    if sf is not None  # context editing: max does not apply, nothing is evicted
                    else f"{n:,} / {ctx.max_context_messages:,} messages\n"
                )
                + f"transcript {len(model.transcript):,} · evicted {evicted:,}"
            )
        )
        size = context_size(model.model)
        if model.tokens_ready:
            total = model.window_tokens
            from ctxview.sessions.request import breakdown_text

            line = (
                f"~{fmt_tokens(total)} / {fmt_tokens(size)} ({100 * total / size:.1f}%)\n"
                f"{breakdown_text(model.token_breakdown())}"
            )
            if exact_tokens is not None:
                line += f"\nexact (count_tokens): {exact_tokens:,}"
            over = (
                context_problem(
                    exact_tokens if exact_tokens is not None else total,
                    model.model,
                    exact=exact_tokens is not None,
                )
                is not None
            )
            if over:
                line += "\n✗ over the model's context: the API would answer 400 prompt is too long"
            tokens = self.query_one("#tokens", Static)
            tokens.update(Text(line))
            tokens.set_class(over, "-over")
            gauge = self.query_one("#gauge", ProgressBar)
            gauge.update(total=size, progress=min(total, size))
            self._update_spark(model)
            self.query_one("#cache", Static).update(
                Text(
                    f"reusable prefix ~{fmt_tokens(model.cache_prefix_tokens)}\n"
                    f"to write again ~{fmt_tokens(model.cache_write_tokens)}"
                )
            )
        else:
            self.query_one("#tokens", Static).update(Text("estimating…"))
            self.query_one("#cache", Static).update(Text("…"))
        usage = model.last_usage()
        if usage is None:
            self.query_one("#usage", Static).update(Text("(no reply with usage yet)"))
        else:
            mid, u = usage

            def g(key: str) -> str:
                v = u.get(key)
                return f"{v:,}" if isinstance(v, int) else "–"

            self.query_one("#usage", Static).update(
                Text(
                    f"#{mid}: in {g('input_tokens')} · out {g('output_tokens')}\n"
                    f"cache read {g('cache_read_input_tokens')} · write {g('cache_creation_input_tokens')}"
                )
            )
        state, short, first = model.verdict()
        status = self.query_one("#protocol", Static)
        shown = one_line(first, 160)
        if len(shown) == 160:
            shown = shown[:159] + "…"  # the full text is in the detail pane (n jumps there)
        # what ctxview notes about the window itself: max+1 tool pair, newest evicted, budget
        notes = "".join(f"\n{one_line(n.message, 160)}" for n in model.context.window_notes())
        status.update(Text((f"{short}\n{shown}" if first else short) + notes))
        status.set_class(state == "ok", "-ok")
        status.set_class(state == "bad", "-bad")

    def _spark_width(self) -> int:
        """The sparkline's width in cells: its own once laid out, else what the CSS gives it."""
        spark = self.query_one("#spark", Sparkline)
        if spark.size.width > 0:
            return spark.size.width
        width = self.styles.width
        cells = int(width.value) if width is not None and width.is_cells else 36
        return max(4, cells - 3)  # padding 0 1 and the border on the right

    def _update_spark(self, model: SessionModel) -> None:
        self._model = model
        spark = self.query_one("#spark", Sparkline)
        data = model.token_series(self._spark_width())
        if spark.data != data:
            spark.data = data

    def on_resize(self, event: Any) -> None:
        # the sparkline follows the sidebar's width (it narrows on smaller terminals)
        if self._model is not None and self._model.tokens_ready:
            self.call_after_refresh(self._update_spark, self._model)

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
            self.query_one("#max-input", Input).value = str(
                self._model.context.max_context_messages
            )

    @on(Select.Changed, "#strategy-select")
    def _strategy(self, event: Select.Changed) -> None:
        event.stop()
        if isinstance(event.value, str):
            self.post_message(self.StrategyChanged(event.value))
