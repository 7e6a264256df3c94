"""One line with the verdict on the next request (``✓ valid`` / ``✗ N problems``), for when the
sidebar is hidden: the protocol status is the point of the app, at every terminal size."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ctxview.app.model import SessionModel
from ctxview.app.safe import one_line
from ctxview.textfmt import fmt_tokens


class VerdictBar(Static):
    DEFAULT_CSS = """
    VerdictBar { height: 1; background: $surface; padding: 0 1; color: $text-muted; }
    VerdictBar.-ok { color: $success; }
    VerdictBar.-bad { color: $error; text-style: bold; }
    """

    def update_from(self, model: SessionModel) -> None:
        state, short, first = model.verdict()
        ctx = model.context
        window = f"window {len(ctx):,}/{ctx.max_context_messages:,}"
        if ctx.edits_messages:  # context editing: max does not apply
            window = f"window {len(ctx):,} ({ctx.strategy})"
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
