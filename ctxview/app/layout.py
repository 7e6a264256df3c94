"""How the panes share the terminal's width."""

from __future__ import annotations

NARROW = 100  #: below this width the sidebar collapses (ctrl+b brings it back)
SIDEBAR_MAX, SIDEBAR_MIN = 36, 27  #: the sidebar narrows (between these) before the preview does
TIMELINE_ROOM = 86  #: columns the timeline keeps before the sidebar gives up its own


def sidebar_width(width: int) -> int:
    """The sidebar's width on a terminal ``width`` columns wide."""
    return max(SIDEBAR_MIN, min(SIDEBAR_MAX, width - TIMELINE_ROOM))
