"""Context editing in the TUI: a cleared tool result shows the status word ``cleared``
in the timeline, the detail pane shows what is sent against the original, and the request body
(and the server-side form) follow the strategy."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from textual.widgets import Collapsible, Static

from ctxview.core.clearing import PLACEHOLDER
from tests.support.agentgen import agent_loop
from tests.support.apphelp import make_app, row_texts, settle


def _session(tmp_path: Path) -> str:
    msgs = agent_loop([[1, 1, 1, 1, 1, 1]])
    for m in msgs:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                b["content"] = "line of output\n" * 40
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(msgs))
    Path(os.environ["CTXVIEW_CONFIG"]).write_text(
        "[context_editing.clear_tool_uses]\ntrigger = 1000\nkeep = 2\n"
    )
    return str(path)


def _row(app: Any, mid: int) -> str:
    return next(r for r in row_texts(app) if r[1:8].strip() == str(mid))


async def test_cleared_status_and_original_vs_sent(tmp_path: Path) -> None:
    app = make_app(_session(tmp_path), strategy="clear-tool-uses")
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        model = app.model
        # 6 tool uses, the 2 most recent kept: the results in #2, #4, #6, #8 are cleared
        assert [m for m in range(len(model.transcript)) if model.status(m) == "cleared"] == [
            2,
            4,
            6,
            8,
        ]
        assert len(model.context.window_ids) == len(model.transcript)  # nothing evicted
        await pilot.press("home")
        await settle(pilot)
        assert _row(app, 2).rstrip().endswith("cleared")
        assert _row(app, 10).rstrip().endswith("kept")
        app.timeline.select_id(2)
        await settle(pilot)
        text = "\n".join(str(w.render()) for w in app.detail.query(Static))
        assert "cleared by context editing (clear-tool-uses)" in text
        assert PLACEHOLDER in text  # the sent block
        originals = [c for c in app.detail.query(Collapsible) if "original" in str(c.title)]
        assert originals and not originals[0].collapsed
        assert "line of output" in "\n".join(str(w.render()) for w in originals[0].query(Static))
        body = app.request_body()
        assert body["messages"][2]["content"][0]["content"] == PLACEHOLDER
        assert "context_management" not in body
        # the gauge counts what is sent
        assert model.message_tokens() < model.sum_ids(model.window_ids)
        # the sidebar says the max does not apply (nothing is evicted), and says so no more
        # under an eviction strategy
        from textual.widgets import Label

        label = app.query_one("#max-label", Label)
        assert "not used: context editing" in str(label.render())
        app.set_strategy("seed")
        await settle(pilot)
        assert str(label.render()) == "Max messages (+/-)"


async def test_server_side_form_in_the_request_body(tmp_path: Path) -> None:
    path = _session(tmp_path)
    Path(os.environ["CTXVIEW_CONFIG"]).write_text(
        "[context_editing]\nserver_side = true\n[context_editing.clear_tool_uses]\ntrigger = 1000\n"
    )
    app = make_app(path, strategy="clear-tool-uses")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        body = app.request_body()
        assert body["context_management"]["edits"][0]["type"] == "clear_tool_uses_20250919"
        assert all(PLACEHOLDER not in json.dumps(m) for m in body["messages"])
        assert app.model.status(2) == "cleared"  # the timeline still shows what the API clears
