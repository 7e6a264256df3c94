"""The one Session: what each message is to the next request (status), tool pairs and the
message a context-editing strategy sends, against the app's SessionModel on the same session
(it answers the same questions until it asks the Session), as sent and simulated."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxview.sessions import Session, load_session, replay
from tests.support.paths import ACCEPTANCE, FIXTURES, SAMPLES

FILES = [
    SAMPLES / "agent_loop.json",
    SAMPLES / "tool_errors.json",
    SAMPLES / "thinking_image.json",
    ACCEPTANCE / "claude_code" / "spotter_8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl",
    FIXTURES / "claude_code" / "cclog_edge_cases.jsonl",
]
#: context editing that clears early (the API's default trigger is 100,000 tokens)
EDITING = {
    "context_editing": {
        "clear_tool_uses": {
            "trigger": {"type": "input_tokens", "value": 50},
            "keep": {"type": "tool_uses", "value": 1},
        },
        "clear_thinking": {"keep": {"type": "thinking_turns", "value": 1}},
    }
}
SETTINGS = [
    {"as_sent": True},
    {"max_context_messages": 6, "strategy": "pair-safe"},
    {"max_context_messages": 50, "strategy": "clear-tool-uses", "defaults": EDITING},
    {"max_context_messages": 50, "strategy": "clear-thinking", "defaults": EDITING},
]


def _both(path: Path, settings: dict[str, object]) -> tuple[Session, object]:
    from ctxview.app.model import SessionModel

    rep = replay(load_session(str(path)), **settings)
    return rep, SessionModel(rep, str(path), "claude-sonnet-4-5")


@pytest.mark.parametrize(
    "settings", SETTINGS, ids=["as-sent", "pair-safe", "clear-tool-uses", "clear-thinking"]
)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:30])
def test_session_facts_match_the_view_model(path: Path, settings: dict[str, object]) -> None:
    rep, model = _both(path, settings)
    ids = [r.id for r in rep.transcript.records]
    assert [rep.status(i) for i in ids] == [model.status(i) for i in ids]  # type: ignore[attr-defined]
    assert [rep.partner(i) for i in ids] == [model.partner(i) for i in ids]  # type: ignore[attr-defined]
    assert [rep.sent_message(i) for i in ids] == [model.sent_message(i) for i in ids]  # type: ignore[attr-defined]
    assert rep.ledger() == model.ledger()  # type: ignore[attr-defined]


def test_the_cases_cover_every_status_but_edits() -> None:
    """The files and settings above reach compacted, cleared, evicted, pinned and kept."""
    seen = set()
    for path in FILES:
        for settings in SETTINGS:
            rep = replay(load_session(str(path)), **settings)
            seen.update(rep.status(r.id) for r in rep.transcript.records)
    assert {"compacted", "cleared", "evicted", "pinned", "kept"} <= seen


def _same(rep: Session, model: Any) -> None:
    ids = [r.id for r in rep.transcript.records]
    assert [rep.status(i) for i in ids] == [model.status(i) for i in ids]
    assert [rep.partner(i) for i in ids] == [model.partner(i) for i in ids]


def test_session_facts_follow_the_context() -> None:
    """Added, evicted and edited messages change a status and the tool pairs (the memoised
    answers are dropped on each change, as the view model's are), and a session dropped is
    freed at once (its listener makes no reference cycle)."""
    import gc
    import weakref

    from ctxview.app.model import SessionModel

    rep = replay(load_session(str(FILES[0])), max_context_messages=4, strategy="seed")
    model = SessionModel(rep, None, "claude-sonnet-4-5")
    ctx = rep.context
    first_new = len(rep.transcript)

    use = {"type": "tool_use", "id": "t9", "name": "x", "input": {}}
    ctx.add_message({"role": "assistant", "content": [use]})
    assert rep.partner(first_new) is None
    _same(rep, model)
    ctx.add_message(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "content": "ok"}]}
    )
    assert rep.partner(first_new) == first_new + 1 and rep.partner(first_new + 1) == first_new
    assert rep.status(first_new + 1) == "kept"
    assert rep.status(first_new - 2) == "evicted"  # the pinned first message and the newest 3 stay
    _same(rep, model)
    ctx.replace_message(first_new, {"role": "assistant", "content": [{**use, "id": "t8"}]})
    assert rep.status(first_new) == "edited" and rep.partner(first_new + 1) is None
    _same(rep, model)
    # the view model holds its own cycle (its listener): the session alone is freed at once
    alone = replay(load_session(str(FILES[0])), max_context_messages=4, strategy="seed")
    alone.context.add_message({"role": "user", "content": "hi"})
    assert alone.status(len(alone.transcript) - 1) == "kept"
    ref = weakref.ref(alone)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del alone
        assert ref() is None
    finally:
        if enabled:
            gc.enable()


def test_a_files_system_blocks_are_sent_and_saved() -> None:
    """A request body's system blocks (cache_control and all) go into the next request and the
    saved session, from the CLI, the chat and the app alike (they all ask the Session); a
    system prompt changed since is sent as the new text."""
    from ctxview.chat.loop import HeadlessSession

    path = FIXTURES / "anthropic_requests"
    rep = replay(load_session(str(path / "pai_consecutive_assistant_tool_use_req.json")))
    blocks = rep.session.system
    assert isinstance(blocks, list) and blocks
    hs = HeadlessSession(rep, "m", 10)
    assert rep.request_body({})["system"] == blocks == hs.request_body()["system"]
    assert hs.session_document()["settings"]["system_prompt"] == blocks
    rep.context.system_prompt = "be brief"
    assert hs.request_body()["system"] == "be brief"
    assert rep.document({})["settings"]["system_prompt"] == "be brief"
