"""The sessions list (``ctrl+l``) on a hostile cache: what an edited cache says is drawn as
visible symbols, an entry of the wrong shape is read again from its transcript."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from textual.widgets import Static, Tree

from ctxview.live.sessions_list import default_cache_path, list_sessions, projects_roots
from tests.support.apphelp import assert_clean, make_app, settle, wait_until
from tests.support.transcripts import rec, text


async def test_a_hostile_cache_is_drawn_safely(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    proj = tmp_path / ".claude" / "projects" / "-work"
    proj.mkdir(parents=True)
    for name in ("a", "b"):
        (proj / f"{name}.jsonl").write_text(
            rec("user", "u0", None, f"prompt {name}") + rec("assistant", "a0", "u0", text("ok"))
        )
    (proj / "empty.jsonl").write_bytes(b"")  # no session: not listed, counted in the hint
    list_sessions(projects_roots())  # writes the cache
    cache = default_cache_path()
    data = json.loads(cache.read_text())
    hostile = "\x1b]0;PWNED\x07\x1b[2J\x9b31m\u202e"
    data["entries"][str(proj / "a.jsonl")].update(first_prompt=hostile, cwd=hostile)
    data["entries"][str(proj / "b.jsonl")]["messages"] = "notint"
    cache.write_text(json.dumps(data))

    app = make_app(None)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: bool(app.screen.query(Tree)))
        tree = app.screen.query_one(Tree)
        await wait_until(pilot, lambda: len(tree.root.children) == 2, timeout=20)
        await settle(pilot)
        drawn = assert_clean(app, "the sessions list")
        assert "␛]0;PWNED␇␛[2J" in drawn and "prompt b" in drawn
        hint = str(app.screen.query_one("#hint", Static).render())
        assert hint.startswith("2 sessions under") and "1 empty or binary file skipped" in hint


def test_a_session_size_reads_as_in_the_cli_table() -> None:
    from ctxview.app.screens.sessions import _label
    from ctxview.live.sessions_list import SessionInfo, size_text

    def shown(size: int) -> str:
        info = SessionInfo("/p/s.jsonl", "s", "/p", "hi", None, 0, True, size, "2026-01-01T00:00")
        return _label(info).plain

    assert [size_text(n) for n in (0, 5000, 3 * 1024**2)] == ["0 B", "5 kB", "3.0 MB"]
    for n in (0, 5000, 3 * 1024**2):
        assert f"0 msgs · {size_text(n)}" in shown(n)


async def test_an_empty_sessions_list_names_every_agents_folder(
    tmp_path: Path, monkeypatch: Any
) -> None:
    """With no session anywhere the hint says where each agent's sessions were looked for,
    Codex's and Gemini CLI's too (it named only Claude Code's folder)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    for var in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME"):
        monkeypatch.delenv(var, raising=False)
    app = make_app(None)
    async with app.run_test(size=(140, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: bool(app.screen.query("#hint")))

        def hint() -> str:
            return str(app.screen.query_one("#hint", Static).render())

        await wait_until(pilot, lambda: hint().startswith("0 sessions"), timeout=20)
        assert "Codex: ~/.codex/sessions (not found)" in hint()
        assert "Gemini CLI: ~/.gemini/tmp (not found)" in hint()
