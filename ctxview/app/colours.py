"""Colour arithmetic for dimmed text: WCAG contrast and a blend that stays readable.

Textual's ``$text-disabled``/``$text-muted`` are translucent and a partial component style drops
their alpha (white evicted rows on a light theme); so the dim colour is blended here, explicitly,
from the real foreground and background.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.filter import LineFilter

#: every text reaches this WCAG contrast ratio on its background (WCAG 2 AA, normal text)
MIN_TEXT = 4.5
#: dimmed text (evicted rows) stays at least this readable, and below :data:`MIN_TEXT`: visibly
#: fainter than the kept rows
MIN_DIM_CONTRAST = 3.0
DIM_TARGET = 3.3  #: aim a little above the minimum
#: muted text (ids, token counts of kept rows): fainter than the body text, still AA
MUTED_TARGET = 5.0


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
        return fg.blend(bg, 0.15)  # nothing to spare: dim a little (the filter lifts it)
    target = min(DIM_TARGET, MIN_DIM_CONTRAST + (full - MIN_DIM_CONTRAST) * 0.6)
    # never as strong as the kept text
    return bg.blend(fg, min(_faded(fg, bg, target), 0.95))


def _faded(fg: Color, bg: Color, target: float) -> float:
    """The smallest t for which ``bg.blend(fg, t)`` reaches ``target`` on ``bg`` (contrast grows
    with t; 1 when even ``fg`` does not)."""
    lo, hi = 0.0, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        if contrast_ratio(bg.blend(fg, mid), bg) >= target:
            hi = mid
        else:
            lo = mid
    return hi


def muted_colour(fg: Color, bg: Color) -> Color:
    """``fg`` blended towards ``bg`` to :data:`MUTED_TARGET`: fainter than body text, still
    readable as text (ids and token counts), never the dimmed rows' colour."""
    fg = bg + fg
    if contrast_ratio(fg, bg) <= MUTED_TARGET:
        return fg
    return bg.blend(fg, _faded(fg, bg, MUTED_TARGET))


def lifted(fg: Color, bg: Color, minimum: float) -> Color:
    """``fg`` if it reaches ``minimum`` on ``bg``, else ``fg`` moved towards black or white
    (whichever stands out more on ``bg``) just far enough: its hue kept where it can be."""
    if contrast_ratio(fg, bg) >= minimum:
        return fg
    black, white = Color(0, 0, 0), Color(255, 255, 255)
    pole = white if contrast_ratio(white, bg) >= contrast_ratio(black, bg) else black
    lo, hi = 0.0, 1.0
    for _ in range(20):
        mid = (lo + hi) / 2
        if contrast_ratio(fg.blend(pole, mid), bg) >= minimum:
            hi = mid
        else:
            lo = mid
    return fg.blend(pole, hi)


#: block elements and box drawing: borders, bars, rules (not text; their contrast is not text's)
_GRAPHICS = range(0x2500, 0x25A0)


def is_text(text: str) -> bool:
    """Does ``text`` hold a character read as text (not space, not a border or bar glyph)?"""
    return any(not ch.isspace() and ord(ch) not in _GRAPHICS for ch in text)


def segment_colours(style: Style, background: Color) -> tuple[Color, Color] | None:
    """(foreground, background) a segment is drawn in, or None when the terminal picks them
    (no colour, or the terminal's own palette)."""
    if style.color is None:
        return None
    fg = Color.from_rich_color(style.color)
    bg = Color.from_rich_color(style.bgcolor) if style.bgcolor is not None else background
    if fg.ansi is not None or bg.ansi is not None:
        return None
    return (bg, fg) if style.reverse else (fg, bg)


def required_contrast(style: Style, dimmed: Collection[Any]) -> float:
    """The contrast a text segment must reach: :data:`MIN_TEXT`, or :data:`MIN_DIM_CONTRAST`
    for text dimmed on purpose (in one of the ``dimmed`` colours)."""
    return MIN_DIM_CONTRAST if style.color in dimmed else MIN_TEXT


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


class ContrastFilter(LineFilter):
    """The app's last line filter: every text segment reaches :func:`required_contrast` on its
    background, in every theme and every widget (Textual's own included), its colour moved
    towards black or white as little as needed. Borders and bars are left as they are."""

    def __init__(self) -> None:
        super().__init__()
        self._fixed: dict[tuple[Any, ...], Style | None] = {}
        #: the colours this app dims on purpose (evicted rows, see :meth:`dim`): held to
        #: :data:`MIN_DIM_CONTRAST`; never forgotten (a widget keeps the colour it was given)
        self.dimmed: set[Any] = set()

    def dim(self, fg: Color, bg: Color) -> Color:
        """:func:`dim_colour`, remembered as dimmed on purpose."""
        colour = dim_colour(fg, bg)
        if colour.rich_color not in self.dimmed:
            self.dimmed.add(colour.rich_color)
            self._fixed.clear()
        return colour

    def apply(self, segments: list[Segment], background: Color) -> list[Segment]:
        out: list[Segment] = []
        for seg in segments:
            text, style, control = seg
            if control or style is None or style.color is None or not is_text(text):
                out.append(seg)
                continue
            key = (style.color, style.bgcolor, style.reverse, background)
            if key in self._fixed:
                fix = self._fixed[key]
            else:
                fix = self._fix(style, background)
                if len(self._fixed) > 4096:
                    self._fixed.clear()
                self._fixed[key] = fix
            out.append(seg if fix is None else Segment(text, style + fix, control))
        return out

    def _fix(self, style: Style, background: Color) -> Style | None:
        colours = segment_colours(style, background)
        if colours is None:
            return None
        fg, bg = colours
        minimum = required_contrast(style, self.dimmed)
        if contrast_ratio(fg, bg) >= minimum:
            return None
        new = lifted(fg, bg, minimum).rich_color
        return Style(bgcolor=new) if style.reverse else Style(color=new)
