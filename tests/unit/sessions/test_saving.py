"""``ctxview.save`` / ``ctxview.load``: a library user's context saved in the session format and
reopened as it was; the app's ``inspect`` reads the file."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxview
from ctxview import Budget, ConversationContext, Transcript, register_strategy
from ctxview.core.strategies import STRATEGIES
from ctxview.sessions import SessionError
from tests.support.cli import run

TOOL = {"name": "read", "input_schema": {"type": "object", "properties": {}}}


def _loop(ctx: ConversationContext, turns: int) -> None:
    ctx.add_user_message("go")
    for n in range(turns):
        tid = f"toolu_{n}"
        ctx.add_assistant_message([{"type": "tool_use", "id": tid, "name": "read", "input": {}}])
        ctx.add_tool_results([{"tool_use_id": tid, "content": f"r{n}"}])
    ctx.add_assistant_message("done")


def _state(ctx: ConversationContext) -> dict[str, Any]:
    history = ctx.transcript
    assert isinstance(history, Transcript)
    return {
        "window": ctx.window_ids,
        "messages": ctx.messages,
        "step": ctx.step,
        "next_id": ctx.next_id,
        "strategy": ctx.strategy,
        "max": ctx.max_context_messages,
        "system": ctx.system_prompt,
        "tools": ctx.tools,
        "pinned": ctx.pinned_ids,
        "records": [
            (r.id, r.message, r.added_step, r.evicted_step, r.meta) for r in history.records
        ],
    }


@pytest.fixture
def registry() -> Iterator[None]:
    saved = dict(STRATEGIES)
    yield
    STRATEGIES.clear()
    STRATEGIES.update(saved)


def test_saved_and_loaded_identically(tmp_path: Path) -> None:
    system = [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}]
    ctx = ConversationContext(6, system, "pair-safe", tools=[TOOL])
    Transcript(ctx)
    _loop(ctx, 5)
    ctx.pin(ctx.window_ids[-1])
    ctx.add_user_message("more")
    path = tmp_path / "run.json"
    ctxview.save(ctx, path, model="claude-x", max_tokens=512)
    back = ctxview.load(path)
    assert _state(back) == _state(ctx)
    # the reopened context goes on as the original would
    for c in (ctx, back):
        c.add_assistant_message("again")
    assert _state(back) == _state(ctx)
    settings = json.loads(path.read_text())["settings"]
    assert settings["model"] == "claude-x" and settings["max_tokens"] == 512


def test_a_transcript_saves_its_context(tmp_path: Path) -> None:
    ctx = ConversationContext(4)
    history = Transcript(ctx)
    _loop(ctx, 3)
    ctxview.save(history, tmp_path / "run.json")
    assert ctxview.load(tmp_path / "run.json").window_ids == ctx.window_ids


def test_saving_without_a_history_says_how(tmp_path: Path) -> None:
    ctx = ConversationContext()
    ctx.add_user_message("hi")
    with pytest.raises(ValueError, match=r"Transcript\(ctx\) before the first add"):
        ctxview.save(ctx, tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_a_transcript_attached_after_the_first_add_is_refused() -> None:
    ctx = ConversationContext()
    ctx.add_user_message("hi")
    with pytest.raises(ValueError, match="before the first message is added"):
        Transcript(ctx)


def test_a_custom_strategy_is_saved_by_name(tmp_path: Path, registry: None) -> None:
    def keep_last_6(messages: list[dict[str, Any]], budget: Budget) -> int:
        return max(0, len(messages) - 7)

    register_strategy("keep-last-6", keep_last_6)
    ctx = ConversationContext(100, strategy="keep-last-6")
    Transcript(ctx)
    for n in range(10):
        ctx.add_user_message(f"m{n}")
    path = tmp_path / "custom.json"
    ctxview.save(ctx, path)
    assert ctxview.load(path).window_ids == ctx.window_ids
    del STRATEGIES["keep-last-6"]
    with pytest.raises(SessionError) as err:
        ctxview.load(path)
    assert "unknown strategy 'keep-last-6'" in str(err.value)
    assert "register_strategy" in str(err.value)


def test_inspect_opens_a_saved_context(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ctx = ConversationContext(5, "be brief", "pair-safe")
    Transcript(ctx)
    _loop(ctx, 4)
    path = tmp_path / "saved.json"
    ctxview.save(ctx, path, model="claude-x", max_tokens=100)
    code, out, _ = run(capsys, "inspect", str(path), "--json")
    assert code == 0
    summary = json.loads(out)
    assert summary["window"]["ids"] == ctx.window_ids
    assert summary["strategy"] == "pair-safe"
