"""The live sources' logic is headless: the proxy, the follower and the sessions list import
neither Textual nor the anthropic SDK (only their views do)."""

from __future__ import annotations

from test_headless import _loaded


def test_live_modules_are_headless() -> None:
    loaded = _loaded(
        [
            "ctxview.live.sse",
            "ctxview.live.recording",
            "ctxview.live.follow",
            "ctxview.live.sessions_list",
            "ctxview.live.proxy",
            "ctxview.cli.live",
        ]
    )
    assert "ctxview.live.proxy" in loaded and "aiohttp" in loaded
    bad = {m for m in loaded if m.split(".")[0] in {"textual", "anthropic", "httpx", "httpx2"}}
    assert not bad, bad
