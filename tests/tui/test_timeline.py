"""The timeline in the TUI: evicted rows dimmed and coloured words legible in every theme, and
the selected row kept on screen when evicted rows are hidden and shown."""

from __future__ import annotations

import pytest
from textual.color import Color

from ctxview.app.colours import MIN_DIM_CONTRAST, contrast_ratio
from tests.support.apphelp import make_app, settle
from tests.support.paths import SAMPLES

AGENT = str(SAMPLES / "agent_loop.json")


def _fg_bg(segment: object) -> tuple[Color, Color]:
    style = segment.style  # type: ignore[attr-defined]
    return Color.from_rich_color(style.color), Color.from_rich_color(style.bgcolor)


@pytest.mark.slow
async def test_evicted_rows_dim_in_every_theme() -> None:
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        model = app.model
        kept_row = model.row_of(20)
        evicted_row = model.row_of(5)
        assert kept_row is not None and evicted_row is not None
        assert model.status(20) == "kept" and model.status(5) == "evicted"
        app.timeline.cursor = 0  # the cursor on neither row
        failures = []
        for name in app.available_themes:
            app.theme = name
            await pilot.pause()
            tl = app.timeline
            tl.scroll_to(y=0, animate=False)
            await pilot.pause()
            kept = list(tl.render_line(kept_row - int(tl.scroll_offset.y)))
            evicted = list(tl.render_line(evicted_row - int(tl.scroll_offset.y)))
            assert "kept" in "".join(s.text for s in kept)
            assert "evicted" in "".join(s.text for s in evicted)
            # the preview column (plain text) and every other column
            k_fg, k_bg = _fg_bg(kept[4])
            kept_contrast = contrast_ratio(k_fg, k_bg)
            for seg in evicted:
                fg, bg = _fg_bg(seg)
                if fg.ansi is not None:  # ansi-* themes: the terminal's colours, asked to be faint
                    assert seg.style.dim and not kept[4].style.dim, name
                    continue
                ratio = contrast_ratio(fg, bg)
                if not (MIN_DIM_CONTRAST <= ratio < kept_contrast):
                    failures.append(
                        f"{name}: {seg.text!r} {fg.hex} on {bg.hex} = {ratio:.2f}"
                        f" (kept {kept_contrast:.2f})"
                    )
        assert not failures, failures


async def test_toggling_evicted_twice_keeps_the_selected_row_on_screen() -> None:
    app = make_app(str(SAMPLES / "long_chat.json"))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        tl = app.timeline  # the app opens on the last message
        selected = tl.selected_id
        for _ in range(2):
            await pilot.press("e")
            await settle(pilot)
            assert tl.selected_id == selected
            top = int(tl.scroll_offset.y)
            assert top <= tl.cursor < top + tl.scrollable_content_region.height, (top, tl.cursor)
        assert app.model.show_evicted


@pytest.mark.slow
async def test_coloured_words_are_legible_in_every_theme() -> None:
    """Roles, status words, the gap marker and error marks reach 3:1 on their row, whatever
    the theme's accent colours (textual-light's green `kept` was 1.6:1, atom-one-light's 1.1:1)."""
    app = make_app(AGENT)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("home")
        await settle(pilot)
        tl = app.timeline
        tl.cursor = len(app.model.rows) - 1  # the cursor off the rows checked
        rows = [0, 1, app.model.row_of(14), app.model.row_of(15)]  # pinned, gap, kept (error)
        failures = []
        for name in app.available_themes:
            if name.startswith("ansi"):
                continue
            app.theme = name
            await pilot.pause()
            for row in rows:
                assert row is not None
                for seg in tl.render_line(row):
                    if not seg.text.strip():
                        continue
                    fg, bg = _fg_bg(seg)
                    ratio = contrast_ratio(fg, bg)
                    if ratio < 2.95:
                        failures.append(f"{name} row {row} {seg.text.strip()!r}: {ratio:.2f}")
        assert not failures, failures
