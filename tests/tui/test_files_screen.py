"""The open dialog (ctrl+o): files, and the sub-agents of a Claude Code session."""

from __future__ import annotations

import shutil
from pathlib import Path

from textual.widgets import OptionList

from tests.support.apphelp import make_app, settle
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
