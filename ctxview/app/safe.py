"""Untrusted text, shown literally.

Session files and model replies can hold Rich/Textual markup (``[@click=app.quit]``,
``[$accent]``) and terminal control sequences (ANSI CSI, OSC, bells, carriage returns, bidi
overrides). Everything from them goes through :func:`visible` (control characters become visible
symbols) and is put on screen as ``rich.text.Text`` or ``Content`` objects, never parsed as markup.

A redaction marker in it (``[REDACTED:kind]``, left by ``--redact`` or a proxy recording) is
shown in :data:`REDACTED_STYLE`, so a redacted span stands out from the text it was cut from.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.content import Content

from ctxview.core.redact import MARKER_RE
from ctxview.textfmt import one_line, visible

__all__ = ["REDACTED_STYLE", "literal", "marked", "marked_segments", "one_line", "visible"]

#: a redaction marker: reversed (the text's own colours swapped), readable in every theme
REDACTED_STYLE = "bold reverse"
_REDACTED = Style.parse(REDACTED_STYLE)
#: what every marker starts with (a quick test before the regex)
_HEAD = "[REDACTED:"


def literal(text: str, style: str = "") -> Text:
    """A rich Text that shows ``text`` exactly (no markup, controls visible), its redaction
    markers in :data:`REDACTED_STYLE`."""
    shown = Text(visible(text), style=style, no_wrap=False)
    if _HEAD in text:
        shown.highlight_regex(MARKER_RE, REDACTED_STYLE)
    return shown


def marked(content: Content) -> Content:
    """``content`` (already made visible) with its redaction markers in :data:`REDACTED_STYLE`."""
    if _HEAD not in content.plain:
        return content
    return content.highlight_regex(MARKER_RE, style=REDACTED_STYLE)


def marked_segments(text: str, style: Style, top: Style) -> list[Segment]:
    """A line of a list (already made visible) as segments in ``style``, its redaction markers
    in :data:`REDACTED_STYLE`; ``top`` (a cursor's colours) goes over both."""
    if _HEAD not in text:
        return [Segment(text, style + top)]
    out: list[Segment] = []
    at = 0
    for m in MARKER_RE.finditer(text):
        if m.start() > at:
            out.append(Segment(text[at : m.start()], style + top))
        out.append(Segment(m.group(), style + _REDACTED + top))
        at = m.end()
    if at < len(text):
        out.append(Segment(text[at:], style + top))
    return out
