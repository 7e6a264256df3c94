"""The proxy's live view: requests through the proxy appear as rows with verdict and cache use."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path

import anthropic
import pytest
from textual.widgets import DataTable, Static

from ctxview.app.proxy import ProxyApp
from tests.support.apphelp import wait_until
from tests.support.fake_api import FakeAPI, Response, error, text_events


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_requests_appear_live(fake_api: FakeAPI, tmp_path: Path) -> None:
    port = _free_port()
    rec = tmp_path / "rec.json"
    app = ProxyApp(host="127.0.0.1", port=port, upstream=fake_api.url, record=str(rec))
    async with app.run_test(size=(140, 30)) as pilot:
        await wait_until(pilot, lambda: app._address != "")
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-TUIKEY-000000000000", base_url=app._address, max_retries=0
        )
        fake_api.queue(Response("sse", text_events("hi \x1b[31mthere")))
        body = {
            "model": "claude-\x1b]0;evil\x07x",
            "max_tokens": 10,
            "messages": [
                {"role": "user", "content": "a"},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}],
                },
            ],
        }
        async with client.messages.stream(**body) as s:  # type: ignore[arg-type]
            await s.get_final_message()
        fake_api.queue(error(529, "overloaded_error", "busy"))
        with pytest.raises(anthropic.APIStatusError):
            await client.messages.create(**body)  # type: ignore[arg-type]
        table = app.query_one("#requests", DataTable)
        await wait_until(pilot, lambda: table.row_count == 2)
        first = [str(c) for c in table.get_row_at(0)]
        assert first[2] == "200" and first[3] == "stream" and first[4] == "2"
        assert first[6].startswith("✗")  # the orphaned tool_result
        assert first[10] == "7" and first[11] == "3"  # cache read / write
        assert "\x1b" not in first[12]
        second = [str(c) for c in table.get_row_at(1)]
        assert second[2] == "529" and second[13] == "overloaded_error"
        # at 140 columns the error's type is on screen whole
        ends = sum(c.get_render_width(table) for c in table.columns.values())
        last = list(table.columns.values())[-1]
        assert ends - last.get_render_width(table) + len("overloaded_error") <= 140
        detail = str(app.query_one("#detail", Static).render())
        assert "overloaded_error" in detail and "\x1b" not in detail
        await pilot.press("up")
        await pilot.pause()
        detail = str(app.query_one("#detail", Static).render())
        assert "tool_result" in detail and "cache read 7" in detail
        assert "\x1b" not in detail
    assert rec.exists() and "sk-ant-TUIKEY" not in rec.read_text()


async def test_port_in_use_is_one_clear_error(fake_api: FakeAPI) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        app = ProxyApp(host="127.0.0.1", port=port, upstream=fake_api.url, record=None)
        async with app.run_test() as pilot:
            await wait_until(pilot, lambda: app.start_error is not None)
            await asyncio.sleep(0)
    assert app.start_error is not None and f"127.0.0.1:{port}" in app.start_error


async def test_narrow_table_keys_count_tokens_and_cuts(fake_api: FakeAPI) -> None:
    """At 80×24: status, kind, protocol and ms are on screen; j/k step through the requests and
    the detail follows; a count_tokens call says what it counted; a cut stream is marked."""
    app = ProxyApp(host="127.0.0.1", port=_free_port(), upstream=fake_api.url, record=None)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_until(pilot, lambda: app._address != "")
        client = anthropic.AsyncAnthropic(
            api_key="sk-ant-TUIKEY-000000000000", base_url=app._address, max_retries=0
        )
        body = {
            "model": "claude-test",
            "max_tokens": 10,
            "messages": [{"role": "user", "content": "a"}],
        }
        await client.messages.create(**body)  # type: ignore[arg-type]
        await client.messages.count_tokens(**{k: body[k] for k in ("model", "messages")})  # type: ignore[arg-type]
        fake_api.queue(Response("sse", text_events("cut here", cut=True)))
        async with client.messages.stream(**body) as s:  # type: ignore[arg-type]
            await s.get_final_message()
        table = app.query_one("#requests", DataTable)
        await wait_until(pilot, lambda: table.row_count == 3)
        shown = 0
        for col in table.columns.values():
            shown += col.get_render_width(table)
            if str(col.label) == "ms":
                break
        assert shown <= table.size.width  # the ms column ends on screen
        count = [str(c) for c in table.get_row_at(1)]
        assert count[3] == "count" and count[8] == "1.2k"
        assert count[13] == "counted 1,234"
        cut = [str(c) for c in table.get_row_at(2)]
        assert cut[2] == "200 ✂" and cut[13] == "cut: stream ended before message_stop"
        detail = app.query_one("#detail", Static)
        table.focus()
        await pilot.press("k")
        await wait_until(pilot, lambda: table.cursor_row == 1)
        assert "count_tokens: 1,234 input tokens" in str(detail.render())
        await pilot.press("k", "k")
        await wait_until(pilot, lambda: table.cursor_row == 0)
        await pilot.press("j")
        await wait_until(pilot, lambda: table.cursor_row == 1)
        await pilot.press("G")
        await wait_until(pilot, lambda: table.cursor_row == 2)
        assert "incomplete: stream ended before message_stop" in str(detail.render())
