"""What issue 8 shows in the TUI: sub-agents reachable from the open dialog, compacted rows, the
window's own notes in the sidebar."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from textual.widgets import OptionList, Static

from tests.support.apphelp import make_app, row_texts, settle
from tests.support.paths import FIXTURES

CC = FIXTURES / "claude_code"


async def test_subagents_are_offered_in_the_open_dialog(tmp_path: Path) -> None:
    session = tmp_path / "6c2214d7.jsonl"
    shutil.copy(CC / "spotter_short.jsonl", session)
    folder = tmp_path / "6c2214d7" / "subagents"
    folder.mkdir(parents=True)
    shutil.copy(
        CC / "spotter_6c2214d7_subagent_agent-afc096d.jsonl", folder / "agent-afc096d.jsonl"
    )
    app = make_app(str(session))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await pilot.pause()
        options = app.screen.query_one("#subagents", OptionList)
        assert options.option_count == 1
        options.focus()
        await pilot.press("enter")
        await settle(pilot)
        assert app.model.name == "agent-afc096d.jsonl"
        assert len(app.model.transcript) > 10


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


async def test_tool_loop_at_small_max_never_sends_an_orphan_or_crashes() -> None:
    """The loop reads the tool calls from the reply it just added (never ``messages[-1]``), and
    the safe strategies keep the newest message with its tool_use partner (max+1 at max 2): the
    offline model, which checks every request as the API does, answers every round."""
    from textual.widgets import Input

    for strategy in ("pair-safe", "token-budget", "low-water"):
        for max_ in (2, 3):
            app = make_app(None, max_=max_, strategy=strategy)
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot)
                chat = app.query_one("#chat", Input)
                chat.focus()
                chat.value = "calculate 6*7"
                await pilot.press("enter")
                await settle(pilot)
                records = [r.message for r in app.model.transcript.records]
                assert [m["role"] for m in records] == ["user", "assistant", "user", "assistant"], (
                    strategy,
                    max_,
                )
                assert "42" in records[3]["content"][0]["text"]
                assert app.model.draft is None  # no failed reply
                assert app.model.context.window_ids[-1] == 3


async def test_seed_tool_round_is_checked_before_it_is_sent_and_pair_safe_is_offered_only_if_it_helps() -> (
    None
):
    """At max 2 the seed strategy orphans the tool results of a round: that request is not sent
    (the API would answer 400); retrying asks, and pair-safe is not offered, since the newest
    message is the orphan and what was evicted never comes back."""
    from textual.widgets import Input

    from ctxview.app.screens.modals import ConfirmSendScreen

    app = make_app(None, max_=2, strategy="seed")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chat = app.query_one("#chat", Input)
        chat.focus()
        chat.value = "calculate 6*7"
        await pilot.press("enter")
        await settle(pilot)
        # the tool round was answered locally but not sent: two requests would be one too many
        assert len(app.chat.requests) == 1
        assert any("not sent" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ConfirmSendScreen)
        assert screen.pair_safe_helps is False
        assert screen.check_action("choose", ("pair-safe",)) is False


def test_pair_safe_would_fix_when_the_orphan_is_not_the_newest() -> None:
    from ctxview.chat.presend import pair_safe_would_fix
    from ctxview.core.context import ConversationContext

    ctx = ConversationContext(max_context_messages=3, strategy="seed")
    ctx.add_user_message("go")
    ctx.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        }
    )
    ctx.add_tool_results([{"tool_use_id": "t", "content": "r"}])
    ctx.add_message({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    # seed at max 3: [go, tool_result (orphan), done]; pair-safe drops the orphan
    assert pair_safe_would_fix(ctx.entries(), 3, True)
    ctx2 = ConversationContext(max_context_messages=2, strategy="seed")
    ctx2.add_user_message("go")
    ctx2.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        }
    )
    ctx2.add_tool_results([{"tool_use_id": "t", "content": "r"}])
    # seed at max 2: [go, tool_result]: the orphan is the newest, pair-safe keeps it
    assert not pair_safe_would_fix(ctx2.entries(), 2, True)
