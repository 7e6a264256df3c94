"""Untrusted text, shown literally.

Session files and model replies can hold Rich/Textual markup (``[@click=app.quit]``,
``[$accent]``) and terminal control sequences (ANSI CSI, OSC, bells, carriage returns, bidi
overrides). Everything from them goes through :func:`visible` (control characters become visible
symbols) and is put on screen as ``rich.text.Text`` or ``Content`` objects, never parsed as markup.
"""

from __future__ import annotations

from rich.text import Text

_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_TABLE[0x7F] = "␡"
_TABLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
# bidi embedding/override/isolate controls can reorder what is displayed: show them
_TABLE.update(
    {c: f"⟨U+{c:04X}⟩" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}
)
_ONE_LINE = dict(_TABLE)
_ONE_LINE[0x0A] = "⏎"
_ONE_LINE[0x09] = " "


def visible(text: str) -> str:
    """Control characters made visible (newline and tab kept)."""
    return text.translate(_TABLE)


def one_line(text: str, limit: int = 200) -> str:
    """A single-line preview: newlines shown as ⏎, runs of spaces collapsed."""
    s = text[: limit * 2].translate(_ONE_LINE)
    s = " ".join(s.split())
    return s[:limit]


def literal(text: str, style: str = "") -> Text:
    """A rich Text that shows ``text`` exactly (no markup, controls visible)."""
    return Text(visible(text), style=style, no_wrap=False)
