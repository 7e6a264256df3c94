"""The timeline's columns."""

from __future__ import annotations


def test_column_titles_never_lose_tokens_and_status() -> None:
    from ctxview.app.widgets.timeline import column_header

    for width in range(45, 200):
        header = column_header(width)
        assert "tokens" in header and "status" in header, (width, header)


def test_the_longest_status_word_keeps_a_space_before_the_scrollbar() -> None:
    """`compacted` (9 letters) filled the status column and ran into the scrollbar."""
    from ctxview.app.widgets.timeline import STATUS_WIDTH

    longest = max(
        ["pinned", "kept", "evicted", "compacted", "edited", "dropped", "cleared"], key=len
    )
    assert len(longest) < STATUS_WIDTH


def test_a_compaction_that_replaced_one_message_names_it_once() -> None:
    from ctxview.app.widgets.detail import compaction_text
    from ctxview.core.ledger import Compaction

    one = Compaction(1, "block", None, None, None, None, 0)
    text = str(compaction_text(one))
    assert "replaced #0 (1 message)" in text and "#0–#0" not in text
    three = Compaction(3, "block", None, None, None, None, 0)
    assert "replaced #0–#2 (3 messages)" in str(compaction_text(three))
