"""In the TUI: r repairs the selected problem, R everything, delete drops pair-safely and
c stubs (both previewed), u undoes every edit; edits are saved, reopened and exported."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from textual.widgets import Static

from ctxview.app.editing import EditPreviewScreen
from ctxview.core.protocol import check_protocol, errors
from ctxview.core.repair import INTERRUPTED
from tests.support.apphelp import make_app, row_texts, screen_after, settle
from tests.support.paths import ROOT

AGENT = ROOT / "sample_sessions" / "agent_loop.json"


def _detail_text(app: object) -> str:
    detail = app.detail  # type: ignore[attr-defined]
    return "\n".join(str(w.render()) for w in detail.query(Static))


def _row(app: object, mid: int) -> str:
    return next(r for r in row_texts(app) if r[1:8].strip() == str(mid))  # type: ignore[arg-type]


async def test_r_repairs_the_selected_problem_and_u_undoes(tmp_path: Path) -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        assert app.model.error_ids() == [14]
        await pilot.press("n")
        await settle(pilot)
        assert app.timeline.selected_id == 14
        text = _detail_text(app)
        assert "fix (r): drop the orphaned tool_result for toolu_010013run_" in text
        assert "fix (r): drop the orphaned tool_result for toolu_010014read" in text
        before = app.model.context.messages
        await pilot.press("r")
        await settle(pilot)
        assert errors(check_protocol(app.model.context.messages)) == []
        notice = [m for m, t, _ in app.notice_log][-1]
        assert notice.startswith("repaired (2 fixes)") and "next request -$" in notice
        assert "below the minimum cacheable length" in notice  # a small session
        assert 14 not in app.model.context.window_ids
        assert app.model.status(14) == "dropped"
        assert app.model.error_ids() == []
        await pilot.press("home")
        await settle(pilot)
        assert "dropped" in _row(app, 14)
        await pilot.press("u")
        await settle(pilot)
        assert app.model.context.messages == before
        assert app.model.status(14) == "kept" and app.model.error_ids() == [14]
        await pilot.press("u")  # nothing left to undo: a notice, no change
        await settle(pilot)
        assert app.model.context.messages == before


async def test_drop_pair_safely_with_preview_and_cancel(tmp_path: Path) -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        app.timeline.select_id(17)  # assistant text + tool_use; #18 holds its result
        await settle(pilot)
        await screen_after(pilot, "delete", EditPreviewScreen)
        shown = "\n".join(str(w.render()) for w in app.screen.query(Static))
        assert "drop #17 with 1 paired block in 1 other message" in shown
        assert "rejected after this edit: orphan_tool_result" in shown  # #14 is still orphaned
        assert "saves ~49" in shown
        # the messages' tokens (the sidebar's "messages" figure), not the request's total
        before = app.model.sum_ids(app.model.window_ids)
        assert f"message tokens: ~{before} → ~{before - 49} (saves ~49)" in shown
        # a small session: below the minimum cacheable length, priced as uncached input
        assert "prompt cache: below the model's minimum cacheable length" in shown
        assert "next request: $0.0008 instead of $0.0009 (-$0.0001" in shown
        await pilot.press("escape")
        await settle(pilot)
        assert 17 in app.model.context.window_ids
        await pilot.press("delete")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        ids = app.model.context.window_ids
        assert 17 not in ids and 18 not in ids
        assert app.model.status(17) == "dropped" and app.model.status(18) == "dropped"
        await pilot.press("u")
        await settle(pilot)
        assert {17, 18} <= set(app.model.context.window_ids)


async def test_stub_is_saved_reopened_and_exported(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    shutil.copy(AGENT, path)
    app = make_app(str(path))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        app.timeline.select_id(18)
        await settle(pilot)
        original = app.model.transcript[18].message
        await screen_after(pilot, "c", EditPreviewScreen)
        await pilot.press("enter")
        await settle(pilot)
        sent = app.model.transcript[18].message
        assert sent["content"][0]["content"].startswith("[stubbed by ctxview:")
        assert sent["content"][0]["tool_use_id"] == original["content"][0]["tool_use_id"]
        assert app.model.status(18) == "edited" and "edited" in _row(app, 18)
        assert "original (as recorded, not sent)" in str(
            [w.title for w in app.detail.query("Collapsible")]
        )
        body = app.request_body()
        assert sent in body["messages"] and original not in body["messages"]
        await pilot.press("ctrl+s")  # saves in place, once allowed to (o: overwrite)
        await pilot.pause()
        await pilot.press("o")
        await settle(pilot)
        saved = json.loads(path.read_text())
        assert saved["transcript"][18]["message"] == sent
        assert saved["transcript"][18]["meta"]["original"] == original
        app.open_path(str(path))
        await settle(pilot)
        assert app.model.status(18) == "edited"
        assert app.model.transcript[18].meta["original"] == original
        await pilot.press("u")  # the undo stack belongs to the session it was made in
        await settle(pilot)
        assert app.model.transcript[18].message == sent


async def test_repair_all_answers_an_interrupted_tool_call(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
        },
        {"role": "user", "content": "are you there?"},
        {"role": "assistant", "content": [{"type": "text", "text": "yes"}]},
    ]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(messages))
    app = make_app(str(p))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.model.error_ids() == [1]
        await pilot.press("A")
        await settle(pilot)
        assert app.model.error_ids() == []
        first = app.model.context.messages[2]["content"][0]
        assert first["content"] == INTERRUPTED and first["is_error"] is True
        assert app.model.status(2) == "edited"
        await pilot.press("u")
        await settle(pilot)
        assert app.model.error_ids() == [1] and app.model.status(2) == "kept"


async def test_a_stub_longer_than_a_tiny_result_says_it_adds_tokens() -> None:
    app = make_app(str(AGENT))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.timeline.select_id(24)  # a 14-token tool_result: the placeholder is longer
        await settle(pilot)
        await screen_after(pilot, "c", EditPreviewScreen)
        shown = "\n".join(str(w.render()) for w in app.screen.query(Static))
        assert "~-" not in shown and "(adds ~" in shown, shown
        await pilot.press("enter")
        await settle(pilot)
        notice = [m for m, t, _ in app.notice_log][-1]
        assert "~-" not in notice and "added ~" in notice, notice
        # let the debounced cache prediction the edit started finish before the app exits
        for _ in range(40):
            await settle(pilot)
            if app._predict_timer is None:
                break
            await pilot.pause(0.05)


async def test_a_gap_holding_a_repaired_message_says_dropped() -> None:
    """The gap marker called a message a repair took out 'evicted' (its row says dropped)."""
    app = make_app(str(AGENT))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await pilot.press("e")  # evicted rows hidden: a gap marker stands for them
        await settle(pilot)
        gaps = [r for r in row_texts(app) if "gap:" in r]
        assert gaps and all("dropped" not in g for g in gaps)
        await pilot.press("n", "r")
        await settle(pilot)
        assert app.model.status(14) == "dropped"
        gaps = [r for r in row_texts(app) if "gap:" in r]
        assert any("evicted or dropped" in g and "#14" in g for g in gaps), gaps
        await pilot.press("u")
        await settle(pilot)
        assert all("dropped" not in g for g in row_texts(app) if "gap:" in g)


async def test_a_repair_notice_names_the_timeline_row_it_fixed() -> None:
    """The window of agent_loop.json is #0, #14…#26: its messages.1 is the row #14. The notice
    (and the undo's) names that row, then the place in the request body."""
    app = make_app(str(AGENT))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await pilot.press("n", "r")
        await settle(pilot)
        notice = [m for m, t, _ in app.notice_log][-1]
        assert "(#14 = messages.1.content.1)" in notice
        assert "#14 = messages.1 had nothing else" in notice
        await pilot.press("u")
        await settle(pilot)
        undone = [m for m, t, _ in app.notice_log][-1]
        assert undone.startswith("undone:") and "(#14 = messages.1.content.0)" in undone
