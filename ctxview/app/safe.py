"""Untrusted text, shown literally.

Session files and model replies can hold Rich/Textual markup (``[@click=app.quit]``,
``[$accent]``) and terminal control sequences (ANSI CSI, OSC, bells, carriage returns, bidi
overrides). Everything from them goes through :func:`visible` (control characters become visible
symbols) and is put on screen as ``rich.text.Text`` or ``Content`` objects, never parsed as markup.
"""

from __future__ import annotations

from rich.text import Text

from ctxview.textfmt import one_line, visible

__all__ = ["literal", "one_line", "visible"]


def literal(text: str, style: str = "") -> Text:
    """A rich Text that shows ``text`` exactly (no markup, controls visible)."""
    return Text(visible(text), style=style, no_wrap=False)
