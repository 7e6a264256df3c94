"""One line with the verdict on the next request (``✓ valid`` / ``✗ N problems``), for when the
sidebar is hidden: the protocol status is the point of the app, at every terminal size."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ctxview.app.model import SessionModel, as_sent_possible
from ctxview.app.safe import one_line
from ctxview.textfmt import fmt_tokens


class VerdictBar(Static):
    DEFAULT_CSS = """
    VerdictBar { height: 1; background: $surface; padding: 0 1; color: $text-muted; }
    VerdictBar.-ok { color: $text-success; }
    VerdictBar.-bad { color: $text-error; text-style: bold; }
    """

    def update_from(self, model: SessionModel) -> None:
        state, short, first = model.verdict(wait=False)
        ctx = model.context
        if model.as_sent is not None:
            window = f"as sent · window {len(ctx):,}"
            recorded = model.recorded_sizes()[1]
            if recorded is not None:
                window += f" · {recorded[1]:,} tokens recorded"
            elif model.tokens_ready:
                window += f" · ~{fmt_tokens(model.window_tokens)} tokens"
        else:
            window = f"window {len(ctx):,}/{ctx.max_context_messages:,}"
            if ctx.edits_messages:  # context editing: max does not apply
                window = f"window {len(ctx):,} ({ctx.strategy})"
            if as_sent_possible(model):
                window = f"{model.mode_label()} · {window}"  # a recorded session, simulated
            if model.tokens_ready:
                window += f" · ~{fmt_tokens(model.window_tokens)} tokens"
        text = Text(short)
        text.append(f" · {window}", style="not bold")
        if first:
            text.append(f" · {one_line(first, 200)}", style="not bold")
        text.no_wrap = True
        text.overflow = "ellipsis"
        self.update(text)
        self.set_class(state == "ok", "-ok")
        self.set_class(state == "bad", "-bad")
