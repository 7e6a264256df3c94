"""Pilot tests of the compaction ledger in the timeline: a marker row before each compaction
(trigger, tokens before → after, what it replaced), the summary's row says ``summary``, the
messages it replaced say ``compacted``."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Static

from ctxview.app.model import GAP, marker_row
from tests.support.apphelp import assert_clean, make_app, row_texts, settle
from tests.support.paths import ACCEPTANCE, ROOT

ACCEPT = ACCEPTANCE / "claude_code"
MANUAL = ACCEPT / "spotter_ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"  # compacted at #276
BLOCK = ACCEPTANCE / "anthropic_requests" / "pai_compaction_end_to_end_req2.json"


def _row_text(app: object, row: int) -> str:
    tl = app.timeline  # type: ignore[attr-defined]
    tl.scroll_to(y=max(0, row - 2), animate=False)
    return str(tl.render_line(row - int(tl.scroll_offset.y)).text)


async def test_claude_code_compaction_marker_summary_and_compacted_rows() -> None:
    # nothing evicted by the strategy: the simulation starts again at the summary, as the
    # agent did (and as ``requests --max 1000`` prices it)
    app = make_app(str(MANUAL), max_=1000)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        m = app.model
        rows = m.rows
        mark = rows.index(marker_row(276))
        assert rows[mark + 1] == 276 and rows[mark - 1] == 275
        # one compaction: its marker, and the gap of what it replaced
        assert [r for r in rows if r < 0] == [GAP, marker_row(276)] and rows[0] == GAP
        assert "gap: #0–#275 compacted (276 messages, dimmed below)" in _row_text(app, 0)
        line = _row_text(app, mark)
        assert "compaction (manual)" in line
        assert "142k → 45k tokens" in line
        assert "replaced #0–#275 (276 messages)" in line
        assert "summary #276" in line
        await pilot.pause()
        assert _row_text(app, mark + 1).rstrip().endswith("summary")
        assert "compaction summary" in _row_text(app, mark + 1)
        assert _row_text(app, mark - 1).rstrip().endswith("compacted")
        assert _row_text(app, mark + 2).rstrip().endswith("kept")
        assert m.status(10) == "compacted" and m.status(300) == "kept"
        assert m.status(0) == "compacted"  # the summary replaced the first message too
        assert m.window_ids[0] == 276 and m.status(276) == "pinned"
        # the sidebar tells what the compaction replaced from what the strategy evicted
        window_text = str(app.query_one("#window").render())  # type: ignore[attr-defined]
        assert "transcript 434 · evicted 0 · compacted 276" in window_text
        # the cursor moves over the marker like any row; the detail pane shows the entry
        app.timeline.select_id(276)
        await pilot.press("k")
        await settle(pilot)
        assert app.timeline.selected_id is None
        assert app.timeline.selected_marker == 276
        text = assert_clean(app, "ledger detail")
        assert "Claude Code compaction before #276 · trigger: manual" in text
        assert "tokens before: 142k" in text and "after (the next request's recorded" in text
        # a compacted message's detail says what replaced it
        app.timeline.select_id(275)
        await settle(pilot)
        assert_clean(app, "compacted")
        head = str(app.detail.query(".head").first().render())
        assert "#275 assistant · compacted" in head
        assert "replaced by Claude Code's compaction at #276" in head


async def test_marker_with_evicted_rows_hidden_and_shown() -> None:
    app = make_app(str(MANUAL), max_=20)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        m = app.model
        window = m.window_ids
        # the simulation starts again at the summary (pinned); seed evicted after it
        assert window[0] == 276 and window[1] > 277
        assert m.row_status(276) == "summary"
        # shown: the compacted run, the marker, the summary, the run seed evicted since
        assert m.rows[:2] == [GAP, 0]
        k = m.rows.index(marker_row(276))
        assert m.rows[k - 1 : k + 3] == [275, marker_row(276), 276, GAP]
        # seed had evicted most of #1–#275 before the compaction came; it replaced the rest
        assert "gap: #0–#275 evicted or compacted" in _row_text(app, 0)
        assert f"gap: #277–#{window[1] - 1} evicted" in _row_text(app, k + 2)
        compacted = sum(m.status(i) == "compacted" for i in range(len(m.transcript)))
        evicted = len(m.transcript) - len(window) - compacted
        assert 0 < compacted < 276 and m.compacted_count() == compacted
        window_text = str(app.query_one("#window").render())  # type: ignore[attr-defined]
        assert f"evicted {evicted:,} · compacted {compacted:,}" in window_text
        assert [m.status(i) for i in (0, 10, 275, 300)] == [
            "compacted",
            "evicted",
            "compacted",
            "evicted",
        ]
        await pilot.press("e")  # hide evicted rows: the marker stays, after the gap
        await settle(pilot)
        assert m.rows[:5] == [GAP, marker_row(276), 276, GAP, window[1]]
        assert "#0–#275 evicted or compacted (276 messages hidden" in _row_text(app, 0)
        assert "compaction (manual)" in _row_text(app, 1)
        assert f"#277–#{window[1] - 1} evicted" in _row_text(app, 3)
        assert m.row_of(window[1]) == 4 and m.row_of(10) is None
        assert app.timeline.select_id(window[-1])
        assert_clean(app, "80x24 hidden")
        await pilot.press("e")
        await settle(pilot)
        assert m.row_of(276) == m.rows.index(marker_row(276)) + 1
        assert app.timeline.select_id(10)


async def test_compaction_block_marker() -> None:
    app = make_app(str(BLOCK))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        m = app.model
        assert m.rows[:3] == [0, marker_row(1), 1]
        line = _row_text(app, 1)
        assert "compaction block (server)" in line and "replaced #0 (1 message)" in line
        assert "tokens" not in line  # a request body records no usage: no sizes shown
        assert m.row_status(0) == "compacted"
        assert m.row_status(1) == "summary"


async def test_a_compaction_added_live_gets_its_marker() -> None:
    app = make_app(str(ROOT / "sample_sessions" / "agent_loop.json"), max_=100)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        m = app.model
        n = len(m.transcript)
        assert not m.ledger()
        ctx = m.context
        ctx.add_message({"role": "user", "content": "compact please"})
        ctx.add_message(
            {
                "role": "assistant",
                "content": [
                    {"type": "compaction", "content": "what happened so far"},
                    {"type": "text", "text": "done"},
                ],
            },
            meta={"usage": {"input_tokens": 9000, "output_tokens": 3}},
        )
        app.context_changed()
        await settle(pilot)
        assert marker_row(n + 1) in m.rows
        ctx.add_message({"role": "user", "content": "next"})
        ctx.add_message(
            {"role": "assistant", "content": "ok"},
            meta={"usage": {"input_tokens": 700, "output_tokens": 3}},
        )
        app.context_changed()
        await settle(pilot)
        (c,) = m.ledger()
        assert (c.tokens_before, c.tokens_after) == (9000, 700)
        assert m.rows.count(marker_row(n + 1)) == 1
        assert "9.0k → 700 tokens" in _row_text(app, m.rows.index(marker_row(n + 1)))
        assert m.row_status(n) == "compacted" and m.row_status(n + 1) == "summary"


async def test_hostile_compact_metadata_is_drawn_as_visible_text(tmp_path: Path) -> None:
    lines = MANUAL.read_text().splitlines()
    out = []
    for s in lines:
        rec = json.loads(s)
        if rec.get("subtype") == "compact_boundary":
            rec["compactMetadata"]["trigger"] = "\x1b]0;pwned\x07auto\u202e[bold red]x[/]"
        out.append(json.dumps(rec))
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(out) + "\n")
    app = make_app(str(path), max_=1000)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        mark = app.model.rows.index(marker_row(276))
        app.timeline.cursor = mark
        app.timeline.scroll_to(y=mark - 3, animate=False)
        await settle(pilot)
        text = assert_clean(app, "hostile trigger")
        assert "[bold red]x[/]" in text  # shown as text, never parsed as markup


async def test_a_session_continued_from_a_summary_starts_with_it(tmp_path: Path) -> None:
    """A Claude Code session continued after a compaction starts with the summary: its row
    says ``summary`` (not ``pinned``) and keeps the pin mark of the first message."""

    def line(**rec: object) -> str:
        return json.dumps({"sessionId": "s", "timestamp": "2026-01-01T10:00:00.000Z", **rec})

    usage = {"input_tokens": 10, "cache_read_input_tokens": 0, "output_tokens": 5}
    lines = [
        line(
            type="system",
            subtype="compact_boundary",
            uuid="b1",
            parentUuid=None,
            content="Conversation compacted",
            compactMetadata={"trigger": "auto", "preTokens": 150000},
        ),
        line(
            type="user",
            uuid="u1",
            parentUuid="b1",
            isCompactSummary=True,
            message={"role": "user", "content": "Continued from a previous conversation: ..."},
        ),
        line(
            type="assistant",
            uuid="a1",
            parentUuid="u1",
            message={
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "Continuing."}],
                "usage": {**usage, "cache_creation_input_tokens": 3000},
            },
        ),
    ]
    path = tmp_path / "continued.jsonl"
    path.write_text("\n".join(lines) + "\n")
    app = make_app(str(path))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        m = app.model
        assert m.status(0) == "pinned"
        assert m.row_status(0) == "summary"
        text = _row_text(app, m.rows.index(0))
        assert "summary" in text and "⚑" in text and "pinned" not in text
        # the compaction that started it has its marker: trigger, sizes, nothing replaced here
        assert m.rows[:2] == [marker_row(0), 0]
        marker = _row_text(app, 0)
        assert "compaction (auto) · 150k → 3.0k tokens · summary #0" in marker
        assert "replaced" not in marker


async def test_compacted_rows_and_window_notes(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "a long start"},
        {"role": "assistant", "content": [{"type": "text", "text": "old answer"}]},
        {"role": "user", "content": "more"},
        {
            "role": "assistant",
            "content": [
                {"type": "compaction", "content": "summary"},
                {"type": "text", "text": "ok"},
            ],
        },
        {"role": "user", "content": "next"},
    ]
    p = tmp_path / "c.json"
    p.write_text(json.dumps(messages))
    app = make_app(str(p), max_=50)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("home")
        await pilot.pause()
        rows = row_texts(app)
        status = [r.split()[-1] for r in rows[:6]]
        # the compaction ledger's marker row stands before the message holding the block, whose
        # row says it is the summary
        assert status[:3] == ["compacted", "compacted", "compacted"]
        assert "compaction block (server)" in rows[3]
        assert status[4:] == ["summary", "kept"]
        # the gauge counts what the API reads: the compaction block and what follows
        from ctxview.core.tokens import estimate_window

        assert app.model.message_tokens() == estimate_window(messages)
        assert app.model.message_tokens() < app.model.sum_ids(app.model.window_ids)

    # seed at max 1 evicts the question just typed: the sidebar says so
    app = make_app(str(p), max_=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        text = str(app.query_one("#protocol", Static).render())
        assert "is not in the window" in text
