"""The timeline: one row per message of the full transcript, virtualised with the Line API.

Only the visible rows are rendered (``render_line``), so a 100,000-message session opens and
scrolls as fast as a 10-message one. Rows that leave the window flash and fade into the evicted
style.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.color import Color as RichColor
from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Static

from ctxview.app.colours import dim_colour, muted_colour, readable_style
from ctxview.app.model import DRAFT, GAP, SessionModel, marker_id
from ctxview.app.safe import marked_segments, one_line
from ctxview.textfmt import fmt_tokens, id_ranges, plural

FLASH_SECONDS = {"full": 0.8, "basic": 0.5, "none": 0.0}

#: the status column: its longest word ("compacted") and a space before the scrollbar
STATUS_WIDTH = 10


def summary_width(width: int) -> int:
    """The blocks column narrows with the timeline, so the tokens and status columns always fit
    (down to a 45-cell timeline: the sidebar forced on at 80 columns and less)."""
    if width >= 100:
        return 26
    if width >= 76:
        return 22
    return max(8, min(15, width - 38))


def column_header(width: int) -> str:
    """Column titles aligned with the rows for a timeline ``width`` cells wide."""
    sum_w = summary_width(width)
    fixed = 1 + 7 + 10 + sum_w + 1 + 8 + STATUS_WIDTH
    prev_w = max(0, width - fixed)
    preview = "preview"[:prev_w]  # never pushes the tokens and status titles off the edge
    text = f" {'#':>6} {'role':<10}{'blocks':<{sum_w}} {preview:<{prev_w}} {'tokens':>6}  {'status':<{STATUS_WIDTH}}"
    return text[:width]


class TimelineHeader(Static):
    DEFAULT_CSS = """
    TimelineHeader { height: 1; background: $surface; color: $text-muted; text-style: bold; }
    """

    def set_width(self, width: int) -> None:
        self.update(Text(column_header(width)))


class Timeline(ScrollView, can_focus=True):
    """Rows of the transcript: position, role, blocks, preview, tokens, status."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,g", "jump_home", "First", show=False),
        Binding("end,G", "jump_end", "Last", show=False),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--cursor",
        "timeline--pinned",
        "timeline--evicted",
        "timeline--gap",
        "timeline--compaction",
        "timeline--flash",
        "timeline--status-pinned",
        "timeline--status-kept",
        "timeline--status-evicted",
        "timeline--status-compacted",
        "timeline--status-edited",
        "timeline--status-dropped",
        "timeline--status-cleared",
        "timeline--status-summary",
        "timeline--user",
        "timeline--assistant",
        "timeline--error",
        "timeline--dim",
        "timeline--match",
    }

    DEFAULT_CSS = """
    Timeline {
        background: $surface;
        scrollbar-gutter: stable;
    }
    Timeline > .timeline--cursor { background: $block-cursor-blurred-background; }
    Timeline:focus > .timeline--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
    }
    Timeline > .timeline--pinned { background: $accent 25%; text-style: bold; }
    Timeline > .timeline--evicted { color: $text-disabled; }
    Timeline > .timeline--gap { color: $warning; background: $warning 10%; }
    Timeline > .timeline--compaction { color: $text; background: $accent 20%; text-style: bold; }
    Timeline > .timeline--flash { background: $error 70%; color: $text; }
    Timeline > .timeline--status-pinned { color: $accent; text-style: bold; }
    Timeline > .timeline--status-kept { color: $success; }
    Timeline > .timeline--status-evicted { color: $text-disabled; text-style: italic; }
    Timeline > .timeline--status-compacted { color: $warning; text-style: italic; }
    Timeline > .timeline--status-edited { color: $secondary; text-style: bold; }
    Timeline > .timeline--status-dropped { color: $text-disabled; text-style: italic strike; }
    Timeline > .timeline--status-cleared { color: $warning; }
    Timeline > .timeline--status-summary { color: $accent; text-style: bold; }
    Timeline > .timeline--user { color: $secondary; }
    Timeline > .timeline--assistant { color: $primary; }
    Timeline > .timeline--error { color: $error; text-style: bold; }
    Timeline > .timeline--dim { color: $text-muted; }
    Timeline > .timeline--match { background: $secondary 30%; }
    """

    cursor: reactive[int] = reactive(0, always_update=True)

    class Selected(Message):
        """The cursor is on a message (``mid``), or on the gap marker (``None``)."""

        def __init__(self, mid: int | None) -> None:
            super().__init__()
            self.mid = mid

    def __init__(self, model: SessionModel | None = None, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.model = model
        self._flash: dict[int, float] = {}
        self._flash_timer: object | None = None
        self.animation = "full"
        self._dim_cache: tuple[object, Style] | None = None
        self._legible_cache: dict[tuple[object, object, object], RichColor] = {}
        self._muted_cache: dict[tuple[object, object], Style] = {}
        self.clock = time.monotonic  #: the animation's clock (tests drive their own)
        #: where each jump (``p``, ``n``, ``t``) came from: backspace goes back
        self._back: list[int] = []
        #: the messages that match the search (``ctxview.app.search``): marked rows
        self.search_matches: frozenset[int] = frozenset()

    # -- data --------------------------------------------------------------------------------------
    def set_model(self, model: SessionModel, select: int | None = None) -> None:
        self.model = model
        self._flash.clear()
        self._back.clear()
        self.refresh_rows()
        n = len(model.rows)
        if select is not None:
            row = model.row_of(select)
            self.cursor = row if row is not None else max(0, n - 1)
        else:
            self.cursor = max(0, n - 1)
        self.call_after_refresh(self._bring_cursor_into_view, 3)

    def _bring_cursor_into_view(self, tries: int) -> None:
        """The cursor's row on screen after a new model: where the previous one fitted without a
        scrollbar, the first scroll is clamped to the old layout's range (0), so try again after
        the layout has caught up."""
        self._scroll_to_cursor(True)
        h = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_target_y)
        if tries > 1 and not top <= self.cursor < top + h:
            self.call_after_refresh(self._bring_cursor_into_view, tries - 1)

    def refresh_rows(self) -> None:
        rows = len(self.model.rows) if self.model else 0
        self.virtual_size = Size(self.size.width, rows)
        if self.cursor >= rows:
            self.cursor = max(0, rows - 1)
        self.refresh()

    @property
    def selected_id(self) -> int | None:
        if self.model is None or not self.model.rows:
            return None
        mid = self.model.rows[min(self.cursor, len(self.model.rows) - 1)]
        return None if mid < 0 else mid

    @property
    def selected_marker(self) -> int | None:
        """On a compaction ledger marker: the id of the message it stands before."""
        if self.model is None or not self.model.rows:
            return None
        return marker_id(self.model.rows[min(self.cursor, len(self.model.rows) - 1)])

    @property
    def on_draft(self) -> bool:
        return bool(
            self.model
            and self.model.rows
            and self.model.rows[min(self.cursor, len(self.model.rows) - 1)] == DRAFT
        )

    def select_id(self, mid: int) -> bool:
        if self.model is None:
            return False
        row = self.model.row_of(mid)
        if row is None:
            return False
        self.cursor = row
        self._scroll_to_cursor()
        return True

    def flash(self, ids: list[int]) -> None:
        """Animate rows that just left the window (honours the animation setting)."""
        duration = FLASH_SECONDS.get(self.animation, 0.8)
        if self.app.animation_level == "none" or duration <= 0:
            self.refresh()
            return
        now = self.clock()
        visible = set(self._visible_ids())
        for mid in ids:
            if mid in visible or len(ids) < 2000:
                self._flash[mid] = now
        if self._flash and self._flash_timer is None:
            self._flash_timer = self.set_interval(1 / 30, self._tick)
        self.refresh()

    def _tick(self) -> None:
        duration = FLASH_SECONDS.get(self.animation, 0.8)
        now = self.clock()
        for mid, t0 in list(self._flash.items()):
            if now - t0 >= duration:
                del self._flash[mid]
        if not self._flash and self._flash_timer is not None:
            self._flash_timer.stop()  # type: ignore[attr-defined]
            self._flash_timer = None
        self.refresh()

    @property
    def flashing(self) -> bool:
        return bool(self._flash)

    def _visible_ids(self) -> list[int]:
        if self.model is None:
            return []
        top = int(self.scroll_offset.y)
        return [m for m in self.model.rows[top : top + self.size.height] if m >= 0]

    # -- navigation: jumps (with a way back) and the evicted rows ----------------------------------
    def jump_to(self, mid: int) -> None:
        """Select ``mid``, showing the evicted rows if it is one; backspace comes back here."""
        if self.model is None:
            return
        cur = self.selected_id
        if not self.select_id(mid):
            self.model.show_evicted = True
            self.model.rebuild_rows()
            self.refresh_rows()
            self.select_id(mid)
        if cur is not None and cur != mid:
            self._back.append(cur)
        self.focus()

    def jump_back(self) -> None:
        if self._back:
            self.select_id(self._back.pop())

    def jump_pinned(self) -> None:
        """The first message, then each pinned one in turn."""
        model = self.model
        if model is None or model.transcript.pinned_id is None:
            return
        pid = model.transcript.pinned_id
        targets = [pid, *(i for i in model.context.pinned_ids if i != pid)]
        cur = self.selected_id
        self.jump_to(next((i for i in targets if cur is not None and i > cur), targets[0]))

    def jump_next_problem(self, direction: int = 1) -> None:
        """The next (``direction`` -1: previous) message with a protocol error, round the end."""
        ids = self.model.error_ids() if self.model is not None else []
        if not ids:
            self.notify("no protocol errors in the window: the API will accept it", markup=False)
            return
        cur = self.selected_id
        if direction < 0:
            before = [i for i in ids if cur is None or i < cur]
            self.jump_to(before[-1] if before else ids[-1])
            return
        after = [i for i in ids if cur is None or i > cur]
        self.jump_to(after[0] if after else ids[0])

    def jump_partner(self) -> None:
        """From a tool_result to its tool_use, and back."""
        cur = self.selected_id
        if cur is None or self.model is None:
            return
        p = self.model.partner(cur)
        if p is None:
            self.notify(
                "this message has no tool_use / tool_result partner in the transcript", markup=False
            )
            return
        self.jump_to(p)

    def toggle_evicted(self) -> None:
        if self.model is None:
            return
        model = self.model
        sel = self.selected_id
        model.show_evicted = not model.show_evicted
        model.rebuild_rows()
        self.refresh_rows()
        if sel is not None and not self.select_id(sel):
            # the selection was hidden: go to the first kept message after the gap
            ids = model.context.window_ids
            later = [i for i in ids if i > sel]
            self.select_id(later[0] if later else ids[-1])
        # the row count changed: once the new virtual size is laid out, bring the selected row
        # back on screen (scrolling before that is clamped to the old size)
        self.call_after_refresh(self.scroll_to_cursor_centered)
        state = "shown (dimmed)" if model.show_evicted else "hidden"
        self.notify(f"evicted rows {state}", markup=False, timeout=2)

    # -- cursor --------------------------------------------------------------------------------
    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        self.post_message(self.Selected(self.selected_id))

    def validate_cursor(self, value: int) -> int:
        n = len(self.model.rows) if self.model else 0
        return max(0, min(value, n - 1)) if n else 0

    def _scroll_to_cursor(self, center: bool = False) -> None:
        h = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_offset.y)
        if center and not (top <= self.cursor < top + h):
            self.scroll_to(y=max(0, self.cursor - h // 2), animate=False)
        elif self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + h:
            self.scroll_to(y=self.cursor - h + 1, animate=False)

    def scroll_to_cursor_centered(self) -> None:
        """Bring the cursor's row on screen, centred if it was off it."""
        self._scroll_to_cursor(center=True)

    def action_cursor(self, delta: int) -> None:
        self.cursor += delta
        self._scroll_to_cursor()

    def action_page(self, direction: int) -> None:
        h = max(1, self.scrollable_content_region.height)
        self.cursor += direction * (h - 1)
        self._scroll_to_cursor(center=False)

    def action_jump_home(self) -> None:
        self.cursor = 0
        self.scroll_to(y=0, animate=False)

    def action_jump_end(self) -> None:
        n = len(self.model.rows) if self.model else 0
        self.cursor = n - 1
        self._scroll_to_cursor()

    def on_click(self, event: events.Click) -> None:
        if self.model is None:
            return
        row = int(self.scroll_offset.y) + event.y
        if 0 <= row < len(self.model.rows):
            self.cursor = row

    def on_resize(self, event: events.Resize) -> None:
        self.virtual_size = Size(self.size.width, len(self.model.rows) if self.model else 0)
        for header in self.screen.query(TimelineHeader):
            header.set_width(self.scrollable_content_region.width)
        self.call_after_refresh(self._scroll_to_cursor)  # the cursor stays in view

    # -- rendering -----------------------------------------------------------------------------
    def _style(self, name: str) -> Style:
        """A component's own style (colours it sets, nothing inherited)."""
        return self.get_component_rich_style(name, partial=True)

    def _bg_style(self, name: str) -> Style:
        """A component's full style: a translucent background (``$accent 25%``) comes blended
        over the timeline's own, where the partial style would paint it opaque."""
        return self.get_component_rich_style(name)

    def evicted_style(self) -> Style:
        """Evicted rows: the row's own foreground blended towards its background (less contrast
        than kept text, at least 2.5:1 in every theme), italic status."""
        base = self.rich_style
        key = (base.color, base.bgcolor)
        if self._dim_cache is None or self._dim_cache[0] != key:
            fg = Color.from_rich_color(base.color) if base.color else None
            bg = Color.from_rich_color(base.bgcolor) if base.bgcolor else None
            if fg is None or bg is None or fg.ansi is not None or bg.ansi is not None:
                # the terminal's own colours (ansi themes): only the terminal knows them, so
                # ask it for faint text
                style = Style(dim=True)
            else:
                contrast = getattr(self.app, "contrast_filter", None)
                dim = contrast.dim(fg, bg) if contrast is not None else dim_colour(fg, bg)
                style = Style(color=dim.rich_color)
            self._dim_cache = (key, style)
        return self._dim_cache[1]

    def muted_style(self, over: Style) -> Style:
        """Kept rows' ids and token counts: the text colour faded to :data:`MUTED_TARGET` on
        the row's background (``$text-muted`` loses its alpha in a partial style)."""
        fg_c, bg_c = self.rich_style.color, over.bgcolor or self.rich_style.bgcolor
        if fg_c is None or bg_c is None:
            return Style()
        key = (fg_c, bg_c)
        cached = self._muted_cache.get(key)
        if cached is None:
            fg, bg = Color.from_rich_color(fg_c), Color.from_rich_color(bg_c)
            if fg.ansi is not None or bg.ansi is not None:
                cached = Style()
            else:
                cached = Style(color=muted_colour(fg, bg).rich_color)
            if len(self._muted_cache) > 256:
                self._muted_cache.clear()
            self._muted_cache[key] = cached
        return cached

    def _readable(self, style: Style, over: Style) -> Style:
        """``style`` with its colour made legible on ``over``'s background (see ``legible``)."""
        return readable_style(style, over, self.rich_style, self._legible_cache)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        model = self.model
        row = int(self.scroll_offset.y) + y
        if model is None or row >= len(model.rows):
            return Strip.blank(width, base)
        mid = model.rows[row]
        cursor = row == self.cursor
        if mid == DRAFT:
            return self._draft_strip(cursor, width, base)
        marked = marker_id(mid)
        if mid == GAP or marked is not None:
            segs = (
                self._gap_segments(row, width)
                if marked is None
                else self._compaction_segments(marked, width)
            )
            style = base + self._bg_style(
                "timeline--gap" if marked is None else "timeline--compaction"
            )
            if cursor:
                style += self._style("timeline--cursor")
            style = self._readable(style, style)
            return Strip([Segment(t, style + s) for t, s in segs]).crop_extend(0, width, style)
        return self._row_strip(mid, cursor, width, base)

    def _gap_segments(self, row: int, width: int) -> list[tuple[str, Style]]:
        assert self.model is not None
        first, last = self.model.gap_run(row)
        n = last - first + 1
        span = id_ranges(list(range(first, last + 1))) if n < 3 else f"#{first}–#{last}"
        plural = "s" if n != 1 else ""
        gone = self.model.gap_gone(first, last)  # a compaction replaced it, or the strategy
        if self.model.show_evicted:
            label = f" ┄┄ gap: {span} {gone} ({n:,} message{plural}, dimmed below) ┄┄"
        else:
            label = f" ┄┄ gap: {span} {gone} ({n:,} message{plural} hidden, press e to show) ┄┄"
        return [(label.ljust(width, "┄")[:width], Style())]

    def _compaction_segments(self, mid: int, width: int) -> list[tuple[str, Style]]:
        """The ledger marker before message ``mid``: trigger, tokens before → after (where
        recorded) and the messages the compaction replaced."""
        assert self.model is not None
        c = self.model.compaction_at(mid)
        if c is None:
            return [("".ljust(width, "━"), Style())]
        what = "compaction" if c.kind == "claude-code" else "compaction block"
        trigger = f" ({one_line(c.trigger, 20)})" if c.trigger else ""
        parts = [f" ━━ {what}{trigger}"]
        if c.tokens_before is not None or c.tokens_after is not None:
            before = "?" if c.tokens_before is None else fmt_tokens(c.tokens_before)
            after = "?" if c.tokens_after is None else fmt_tokens(c.tokens_after)
            parts.append(f"{before} → {after} tokens")
        gone = c.replaced
        if len(gone):
            n = len(gone)
            span = f"#{gone[0]}" if n == 1 else f"#{gone[0]}–#{gone[-1]}"
            parts.append(f"replaced {span} ({plural(n, 'message')})")
        if c.summary_id is not None:
            parts.append(f"summary #{c.summary_id}")
        label = " · ".join(parts) + " ━━"
        return [(label.ljust(width, "━")[:width], Style())]

    def _row_strip(self, mid: int, cursor: bool, width: int, base: Style) -> Strip:
        assert self.model is not None
        info = self.model.info(mid)
        status = self.model.row_status(mid)
        # a compaction summary that is the first message reads "summary" and stays pinned
        pinned = status == "pinned" or (status == "summary" and self.model.status(mid) == "pinned")
        out = status in ("evicted", "dropped")
        problems = self.model.problems_for(mid) if not out else []
        has_error = any(p.severity == "error" for p in problems)
        row_style = base
        matched = mid in self.search_matches
        if pinned:
            row_style += self._bg_style("timeline--pinned")
        elif out:
            row_style += self.evicted_style()
        if matched:
            row_style += self._bg_style("timeline--match")
        flash_t0 = self._flash.get(mid)
        if flash_t0 is not None:
            row_style = self._flash_style(row_style, flash_t0)
        # the cursor's colours go on top of every column's own (a blue role on a blue cursor
        # would vanish)
        top = self._style("timeline--cursor") if cursor else Style()
        dim = out and flash_t0 is None
        role_style = (
            Style()
            if dim
            else self._style(f"timeline--{info.role}")
            if info.role in ("user", "assistant")
            else Style()
        )
        over = row_style + top
        role_style = self._readable(role_style, over)
        mark = "⚑" if pinned else ("!" if has_error else ("›" if matched else " "))
        mark_style = self._style("timeline--error") if has_error and not dim else Style()
        status_style = (
            Style(italic=True)
            if dim
            else self._readable(self._style(f"timeline--status-{status}"), over)
        )
        mark_style = self._readable(mark_style, over)
        # ids and token counts: fainter than the text, never the evicted rows' grey
        muted = Style() if dim else self.muted_style(over)
        tokens = fmt_tokens(info.tokens)
        left = f"{mid:>6} "
        role = f"{info.role[:9]:<10}"
        summary = info.summary
        sum_w = summary_width(width)
        summary = (summary[: sum_w - 1] + "…") if len(summary) > sum_w else summary.ljust(sum_w)
        right = f" {tokens:>6} {status:<{STATUS_WIDTH}}"
        fixed = 1 + len(left) + len(role) + sum_w + 1 + len(right)
        prev_w = max(0, width - fixed)
        preview = info.preview[:prev_w].ljust(prev_w)
        sum_style = (
            self._readable(self._style("timeline--error"), over)
            if info.error and not dim
            else Style()
        )
        lead = Strip(
            [
                Segment(mark, row_style + mark_style + top),
                Segment(left, row_style + muted + top),
                Segment(role, row_style + role_style + top),
                Segment(summary + " ", row_style + sum_style + top),
                *marked_segments(preview, row_style, top),
            ]
        )
        # the tokens and the status word are never cut: on a narrow timeline the preview goes
        # first, then the block summary and the role
        tail = [
            Segment(f" {tokens:>6} ", row_style + muted + top),
            Segment(f"{status:<{STATUS_WIDTH}}", row_style + status_style + top),
        ]
        lead = lead.crop_extend(0, max(0, width - len(right)), row_style)
        return Strip([*lead, *tail]).crop_extend(0, width, row_style)

    def _draft_strip(self, cursor: bool, width: int, base: Style) -> Strip:
        assert self.model is not None and self.model.draft is not None
        d = self.model.draft
        style = base + (
            self.evicted_style() if d.state == "streaming" else self._style("timeline--error")
        )
        if cursor:
            style += self._style("timeline--cursor")
        thinking_only = d.state == "streaming" and d.thinking and not d.text
        label = {
            "streaming": "thinking ▍" if thinking_only else "streaming ▍",
            "incomplete": "✗ incomplete",
            "cancelled": "✗ cancelled",
            "failed": "✗ failed",
        }.get(d.state, d.state)
        status = "(reply)" if d.state == "streaming" else "not sent"
        tail = one_line((d.thinking if thinking_only else d.text)[-400:], 400)
        text = f"{'':>1}{'…':>6} {'assistant':<10}{label:<26} {tail}"
        right = f" {status:<{STATUS_WIDTH}}"
        body = text[: max(0, width - len(right))].ljust(max(0, width - len(right)))
        return Strip([Segment(body, style), Segment(right, style)]).crop_extend(0, width, style)

    def _flash_style(self, style: Style, t0: float) -> Style:
        duration = FLASH_SECONDS.get(self.animation, 0.8) or 0.8
        progress = min(1.0, (self.clock() - t0) / duration)
        base_bg = self.styles.background
        flash = base_bg + self.get_component_styles("timeline--flash").background  # composited
        # basic: a flash that snaps to the evicted style; full: a fade from the flash colour
        bg: Color = flash if self.animation == "basic" else flash.blend(base_bg, progress)
        return style + Style(bgcolor=bg.rich_color)
