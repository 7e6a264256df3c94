"""The one Session: what each message is to the next request (status), tool pairs, the
compaction ledger and the message a context-editing strategy sends, on recorded and sample
sessions as sent and simulated; the app's view model asks it and shows the same."""

from __future__ import annotations

import hashlib
import json
from itertools import groupby
from pathlib import Path
from typing import Any

import pytest

from ctxview.sessions import load_session, replay
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


#: per file, (id, partner) of every message with one; per file and setting, the statuses as
#: runs (``kept*3``), a digest of each message a context-editing strategy sends edited, and
#: the ledger's (id, kind, summary id)
FACTS = json.loads((FIXTURES / "session_facts.json").read_text("utf-8"))
SETTING_IDS = ["as-sent", "pair-safe", "clear-tool-uses", "clear-thinking"]


def _runs(statuses: list[str]) -> str:
    return " ".join(f"{k}*{len(list(g))}" for k, g in groupby(statuses))


def _digest(message: Any) -> str:
    return hashlib.sha256(json.dumps(message, sort_keys=True).encode()).hexdigest()[:12]


@pytest.mark.parametrize("settings", SETTINGS, ids=SETTING_IDS)
@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[:30])
def test_session_facts(path: Path, settings: dict[str, object]) -> None:
    from ctxview.app.model import SessionModel

    rep = replay(load_session(str(path)), **settings)
    want = FACTS["cases"][f"{path.name}/{SETTING_IDS[SETTINGS.index(settings)]}"]
    ids = [r.id for r in rep.transcript.records]
    assert _runs([rep.status(i) for i in ids]) == want["status"]
    partners = [[i, p] for i in ids if (p := rep.partner(i)) is not None]
    assert partners == FACTS["partners"][path.name]
    sent = {str(i): _digest(m) for i in ids if (m := rep.sent_message(i)) is not None}
    assert sent == want["sent"]
    assert [[c.id, c.kind, c.summary_id] for c in rep.ledger()] == want["ledger"]
    # the timeline shows the Session's answers
    model = SessionModel(rep, str(path), "claude-sonnet-4-5")
    assert _runs([model.status(i) for i in ids]) == want["status"]


def test_the_cases_cover_every_status_but_edits() -> None:
    """The files and settings above reach compacted, cleared, evicted, pinned and kept."""
    seen = set()
    for path in FILES:
        for settings in SETTINGS:
            rep = replay(load_session(str(path)), **settings)
            seen.update(rep.status(r.id) for r in rep.transcript.records)
    assert {"compacted", "cleared", "evicted", "pinned", "kept"} <= seen


def test_session_facts_follow_the_context() -> None:
    """Added, evicted and edited messages change a status and the tool pairs (the memoised
    answers are dropped on each change, before the view model's listener asks for them), and
    a session dropped is freed at once (its listener makes no reference cycle)."""
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
    ctx.add_message(
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t9", "content": "ok"}]}
    )
    assert rep.partner(first_new) == first_new + 1 and rep.partner(first_new + 1) == first_new
    assert rep.status(first_new + 1) == "kept"
    assert rep.status(first_new - 2) == "evicted"  # the pinned first message and the newest 3 stay
    assert (
        model.row_status(first_new - 2) == "evicted" and model.partner(first_new) == first_new + 1
    )
    ctx.replace_message(first_new, {"role": "assistant", "content": [{**use, "id": "t8"}]})
    assert rep.status(first_new) == "edited" and rep.partner(first_new + 1) is None
    assert model.row_status(first_new) == "edited" and model.partner(first_new + 1) is None
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


def test_the_app_checks_and_counts_the_system_as_sent(tmp_path: Path) -> None:
    """The app's view model checks and counts the system prompt a request sends: a file's
    blocks (an empty text block is a 400, as ``inspect`` says) and their tokens (the sidebar's
    breakdown is ``inspect``'s), until the prompt is changed."""
    from ctxview.app.model import SessionModel

    system = [
        {"type": "text", "text": "You are terse. " * 20, "cache_control": {"type": "ephemeral"}},
        {"type": "text", "text": ""},
    ]
    body = {"model": "claude-sonnet-4-5", "max_tokens": 64, "system": system}
    body["messages"] = [{"role": "user", "content": "hi"}]
    path = tmp_path / "blocks.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    rep = replay(load_session(str(path)), as_sent=True)
    model = SessionModel(rep, str(path), "claude-sonnet-4-5")
    assert model.system == system
    codes = [p.code for p in model.problems]
    assert codes == [p["code"] for p in rep.summary()["problems"]] == ["empty_system_text_block"]
    assert model.verdict()[0] == "bad"
    assert model.token_breakdown() == rep.summary()["window"]["token_breakdown"]
    assert model.token_breakdown()["system"] > 20
    rep.context.system_prompt = "be brief"
    model.after_change()
    assert model.system == "be brief" and model.verdict()[0] == "ok"


def test_a_session_as_sent_is_never_truncated() -> None:
    """Shown as sent, a session grows without ctxview's max cutting it (follow, chat): the
    Session raises its cap as messages come, with or without a view on it."""
    path = FIXTURES / "anthropic_requests"
    rep = replay(
        load_session(str(path / "pai_consecutive_assistant_tool_use_req.json")), as_sent=True
    )
    assert rep.as_sent is not None and rep.context.max_context_messages == len(rep.context) + 1
    window = len(rep.context)
    for k in range(5):
        rep.context.add_message({"role": "user" if k % 2 else "assistant", "content": f"m{k}"})
    assert len(rep.context) == window + 5
    assert rep.status(len(rep.transcript) - 6) == "kept"


def test_a_session_saved_as_sent_grows_without_truncation_once_reopened(tmp_path: Path) -> None:
    """Reopened from its saved window, as sent still means no truncation: a chat or a followed
    transcript adds on without evicting."""
    path = FIXTURES / "anthropic_requests" / "pai_consecutive_assistant_tool_use_req.json"
    rep = replay(load_session(str(path)), as_sent=True)
    saved = tmp_path / "saved.ctxview.json"
    saved.write_text(json.dumps(rep.document({})), encoding="utf-8")
    again = replay(load_session(str(saved)), as_sent=True)
    assert again.as_sent is not None and again.context.window_ids == rep.context.window_ids
    window = len(again.context)
    for k in range(5):
        again.context.add_message({"role": "user" if k % 2 else "assistant", "content": f"m{k}"})
    assert len(again.context) == window + 5 and not again.context.cut


def test_the_app_counts_an_openai_body_as_inspect_does(tmp_path: Path) -> None:
    """The sidebar's breakdown of an OpenAI body uses OpenAI's token model for the system
    prompt and tools too (its reply priming and function-definition rule), as ``inspect``."""
    from ctxview.app.model import SessionModel

    tool = {
        "type": "function",
        "function": {"name": "f", "description": "Do it.", "parameters": {}},
    }
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hi"}],
        "tools": [tool],
    }
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    rep = replay(load_session(str(path)), as_sent=True)
    model = SessionModel(rep, str(path), "gpt-4o")
    breakdown = rep.summary()["window"]["token_breakdown"]
    assert model.token_breakdown() == breakdown
    from ctxview.core.providers.openai_tokens import text_tokens

    # 12 for the list + 7 + "f:Do it"; priming 3 + GPT-4o's framing 4 + "Be terse."
    assert breakdown["tools"] == 12 + 7 + text_tokens("f:Do it")
    assert breakdown["system"] == 3 + 4 + text_tokens("Be terse.")
    # the request's size: the app's overhead (system and tools) is OpenAI's too
    assert model.window_tokens == sum(breakdown.values())


def test_the_context_of_an_openai_session_counts_by_openais_token_model(tmp_path: Path) -> None:
    """The window's own count (the token budget's, ``ctx.estimated_tokens``) of an OpenAI body
    is OpenAI's: its system prompt with the reply priming, GPT-4o's framing of each message."""
    from ctxview.core.context import ConversationContext
    from ctxview.core.counting import ModelEstimate
    from ctxview.core.providers.registry import provider

    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "Answer in one short sentence, please."},
            {"role": "user", "content": "What is the capital of France?"},
        ],
    }
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    rep = replay(load_session(str(path)), as_sent=True)
    breakdown = rep.summary()["window"]["token_breakdown"]
    assert rep.context.estimated_tokens == breakdown["system"] + breakdown["messages"]
    # tools given to a context are counted by the provider's rule too
    tool = {"type": "function", "function": {"name": "f", "description": "Do it."}}
    tokens = provider("openai").tokens
    ctx = ConversationContext(tools=[tool], token_counter=ModelEstimate(tokens, "gpt-4o"))
    gpt4o = tokens.of("gpt-4o")
    assert ctx.estimated_tokens == gpt4o.system_tokens("") + gpt4o.tools_tokens([tool])


def _cut_after_thinking(tmp_path: Path) -> Path:
    """A Claude Code transcript cut right after a response's thinking line (Claude Code writes
    one line per content block: its text line is not written yet)."""
    src = ACCEPTANCE / "claude_code" / "spotter_258c7280-ae70-4798-800f-63464d01a85d.jsonl"
    lines = src.read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"type":"thinking"' in line)
    path = tmp_path / "cut.jsonl"
    path.write_text("".join(lines[: cut + 1]))
    return path


def test_a_transcript_cut_mid_response_has_no_final_thinking_as_sent(tmp_path: Path) -> None:
    """The response that ends a transcript was in no request sent: shown as sent (inspect, the
    TUI, a followed file), its thinking alone is a response still being written, not an error."""
    from ctxview.app.model import SessionModel

    rep = replay(load_session(_cut_after_thinking(tmp_path)), as_sent=True)
    assert rep.as_sent == "claude-code"
    assert rep.window_messages()[-1]["content"][-1]["type"] == "thinking"
    assert [p.code for p in rep.protocol_problems()] == []
    model = SessionModel(rep, None, "claude-sonnet-4-5")
    assert model.problems == []


def test_final_thinking_stays_an_error_in_a_request_body_and_a_simulated_window(
    tmp_path: Path,
) -> None:
    """A request body's last message was sent as it is, and a simulated window will be: a
    trailing thinking block there is the 400 the API answers."""
    session = load_session(_cut_after_thinking(tmp_path))
    simulated = replay(session, as_sent=False, max_context_messages=50)
    assert simulated.as_sent is None
    assert "final_thinking" in [p.code for p in simulated.protocol_problems()]
    body = tmp_path / "body.json"
    body.write_text(
        json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 1000, "messages": session.messages})
    )
    sent = replay(load_session(body), as_sent=True)
    assert sent.as_sent == "request"
    assert "final_thinking" in [p.code for p in sent.protocol_problems()]
