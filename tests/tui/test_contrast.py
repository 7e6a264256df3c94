"""Contrast on the screen as drawn, in every built-in theme the app offers: every text reaches
4.5:1 (WCAG AA) on its background, dimmed (evicted) rows at least 3:1 and less than the kept
ones; kept rows' ids and tokens are not in the evicted rows' colour. The ratios are computed from
the colours of the composed screen (every widget, Textual's own included)."""

from __future__ import annotations

from typing import Any

import pytest
from textual.color import Color

from ctxview.app.colours import (
    MIN_DIM_CONTRAST,
    MIN_TEXT,
    contrast_ratio,
    is_text,
    segment_colours,
)
from tests.support.apphelp import make_app, settle, wait_prediction
from tests.support.paths import SAMPLES

AGENT = str(SAMPLES / "agent_loop.json")


def _themes(app: Any) -> list[str]:
    # ansi-*: the terminal's own palette, which only the terminal knows (no ratio to compute)
    return sorted(t for t in app.available_themes if not t.startswith("ansi"))


def _text_segments(app: Any) -> list[tuple[int, str, Any, float]]:
    """(line, text, style, contrast) of every text segment on the screen."""
    out = []
    background = Color.parse("black")
    for y, strip in enumerate(app.screen._compositor.render_strips()):
        for seg in strip:
            text, style, control = seg
            if control or style is None or not is_text(text):
                continue
            colours = segment_colours(style, background)
            if colours is None:
                continue
            out.append((y, text, style, contrast_ratio(*colours)))
    return out


async def _failures(app: Any, pilot: Any) -> list[str]:
    failures = []
    for name in _themes(app):
        app.theme = name
        await settle(pilot)
        await pilot.pause()
        segments = _text_segments(app)
        assert segments
        for y, text, style, ratio in segments:
            dimmed = style.color in app.contrast_filter.dimmed
            if ratio < (MIN_DIM_CONTRAST if dimmed else MIN_TEXT):
                failures.append(f"{name} line {y} {text.strip()[:30]!r}: {ratio:.2f}")
    return failures


@pytest.mark.slow
async def test_every_text_is_readable_in_every_theme() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        assert not await _failures(app, pilot)


@pytest.mark.slow
async def test_the_requests_view_is_readable_in_every_theme() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        await pilot.press("R")
        await settle(pilot)
        assert len(app.screen_stack) == 2
        assert not await _failures(app, pilot)


def _row(app: Any, mid: int) -> list[Any]:
    """The text segments of the timeline's row of ``mid`` as drawn (not the sidebar's)."""
    tl = app.timeline
    line = app.screen._compositor.render_strips()[
        tl.region.y - int(tl.scroll_offset.y) + app.model.row_of(mid)
    ]
    found, x = [], 0
    for s in line:
        inside = tl.region.x <= x < tl.region.right
        x += s.cell_length
        if inside and is_text(s.text) and s.style is not None:
            found.append(s)
    return found


async def test_evicted_rows_are_dimmer_than_kept_and_kept_ids_are_not_grey() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        for name in ("textual-light", "textual-dark"):
            app.theme = name
            await settle(pilot)
            app.timeline.cursor = 0  # the cursor on neither row
            await pilot.pause()
            kept, evicted = _row(app, 20), _row(app, 5)
            assert app.model.status(20) == "kept" and app.model.status(5) == "evicted"
            ratio = {
                id(s): contrast_ratio(*segment_colours(s.style, Color.parse("black")))  # type: ignore[misc]
                for s in [*kept, *evicted]
            }
            preview = max(kept, key=lambda s: len(s.text))
            for s in evicted:
                assert MIN_DIM_CONTRAST <= ratio[id(s)] < ratio[id(preview)], (name, s.text)
            ids = next(s for s in kept if s.text.strip() == "20")
            assert ids.style.color not in app.contrast_filter.dimmed, name
            assert ratio[id(ids)] >= MIN_TEXT, name
