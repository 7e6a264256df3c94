"""The timeline's columns."""

from __future__ import annotations


def test_column_titles_never_lose_tokens_and_status() -> None:
    from ctxview.app.widgets.timeline import column_header

    for width in range(45, 200):
        header = column_header(width)
        assert "tokens" in header and "status" in header, (width, header)
