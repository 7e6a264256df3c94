"""Colour arithmetic for dimmed text: WCAG contrast and a blend that stays readable.

Textual's ``$text-disabled``/``$text-muted`` are translucent and a partial component style drops
their alpha (white evicted rows on a light theme); so the dim colour is blended here, explicitly,
from the real foreground and background.
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from textual.color import Color

MIN_DIM_CONTRAST = 2.5  #: dimmed text stays at least this readable (WCAG ratio)
DIM_TARGET = 3.0  #: aim a little above the minimum


def _channel(c: int) -> float:
    s = c / 255
    return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4


def luminance(c: Color) -> float:
    r, g, b = c.rgb
    return 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)


def contrast_ratio(a: Color, b: Color) -> float:
    """The WCAG 2 contrast ratio of two opaque colours (1 to 21)."""
    la, lb = luminance(a), luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def dim_colour(fg: Color, bg: Color) -> Color:
    """``fg`` blended towards ``bg``: less contrast than ``fg`` but at least ``DIM_TARGET``
    (or as close to ``fg`` as needed when ``fg`` itself is barely readable)."""
    fg = bg + fg  # composite a translucent foreground over the background
    full = contrast_ratio(fg, bg)
    if full <= MIN_DIM_CONTRAST:
        return fg.blend(bg, 0.15)  # nothing to spare: dim a little, keep it readable
    target = min(DIM_TARGET, MIN_DIM_CONTRAST + (full - MIN_DIM_CONTRAST) * 0.6)
    # the most faded blend that still reaches the target (contrast grows with t)
    lo, hi = 0.0, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        if contrast_ratio(bg.blend(fg, mid), bg) >= target:
            hi = mid
        else:
            lo = mid
    # never as strong as the kept text
    return bg.blend(fg, min(hi, 0.95))


MIN_LEGIBLE = 3.0  #: coloured words (roles, status, gap marker) reach at least this ratio


def legible(fg: Color, bg: Color, text: Color, minimum: float = MIN_LEGIBLE) -> Color:
    """``fg`` if it reads on ``bg``, else ``fg`` blended towards the theme's text colour just
    enough to reach ``minimum`` (some themes' accent colours barely show on their surfaces)."""
    fg = bg + fg
    if contrast_ratio(fg, bg) >= minimum:
        return fg
    text = bg + text
    for step in range(1, 21):
        c = fg.blend(text, step / 20)
        if contrast_ratio(c, bg) >= minimum:
            return c
    return text


def readable_style(style: Style, over: Style, base: Style, cache: dict[Any, Any]) -> Style:
    """``style`` with its colour made legible (:func:`legible`) on ``over``'s background (else
    ``base``'s), against ``base``'s text colour; ``cache`` keeps the computed colours of one
    widget (a render_line runs per visible row)."""
    bgc = over.bgcolor or base.bgcolor
    if style.color is None or bgc is None or base.color is None:
        return style
    key = (style.color, bgc, base.color)
    cached = cache.get(key)
    if cached is None:
        fg, bg, text = (Color.from_rich_color(c) for c in key)
        if fg.ansi is not None or bg.ansi is not None or text.ansi is not None:
            cached = style.color  # the terminal's own palette: nothing to compute
        else:
            cached = legible(fg, bg, text).rich_color
        if len(cache) > 256:
            cache.clear()
        cache[key] = cached
    return style + Style(color=cached)
