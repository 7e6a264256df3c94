"""The thinking blocks the API strips at a new prompt (``thinking`` breaks): Anthropic's rule per
model, kept as data with its source (``cache_rules.strips_thinking``), and the request model
breaking the cache where the stripped thinking was, for a session whose client does not ask the
API to keep it; never in a Claude Code transcript (Claude Code asks to keep every block)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from ctxview.core import cache_rules
from ctxview.core.cache_rules import API_REASON, strips_thinking
from ctxview.core.requests import BREAK_REASONS, simulate
from ctxview.core.requests.points import history_resends, thinking_strips
from ctxview.sessions.model import LoadedSession
from tests.unit.core.test_requests import BIG


@pytest.mark.parametrize(
    ("model", "strips"),
    [
        ("claude-3-7-sonnet-20250219", True),
        ("claude-sonnet-4-20250514", True),
        ("claude-sonnet-4-5-20250929", True),
        ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", True),  # Amazon Bedrock's id
        ("claude-opus-4-20250514", True),
        ("claude-opus-4-1-20250805", True),
        ("claude-haiku-4-5-20251001", True),
        ("claude-3-5-haiku-20241022", True),
        ("claude-opus-4-5-20251101", False),
        ("claude-opus-4-6", False),
        ("claude-sonnet-4-6", False),
        ("claude-sonnet-5", False),
        ("claude-haiku-5-5", False),
        ("claude-fable-5-1", False),
        (None, False),
    ],
)
def test_which_models_strip_the_thinking_of_earlier_turns(model: str | None, strips: bool) -> None:
    assert strips_thinking(model) is strips


def test_the_rule_names_its_source_and_date() -> None:
    assert "prompt-caching" in cache_rules.THINKING_SOURCE
    assert "2026" in cache_rules.THINKING_DATE
    assert "thinking" in BREAK_REASONS and API_REASON["thinking"] == "messages_changed"


def _thinking(text: str) -> dict[str, Any]:
    return {"type": "thinking", "thinking": text, "signature": "c2ln"}


def _loop(model: str, tool_loop: bool = True, fmt: str = "messages") -> LoadedSession:
    """A prompt, a turn that thinks (with a tool call and its result when ``tool_loop``),
    then the next prompt and its answer."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": f"Fix the build. {BIG}"}]
    if tool_loop:
        msgs += [
            {
                "role": "assistant",
                "content": [
                    _thinking("read the log first"),
                    {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"p": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": BIG}],
            },
        ]
    msgs += [
        {
            "role": "assistant",
            "content": [_thinking("the fix is one line"), {"type": "text", "text": "Fixed."}],
        },
        {"role": "user", "content": "Now run the tests."},
        {"role": "assistant", "content": [{"type": "text", "text": "They pass."}]},
    ]
    return LoadedSession("mem.json", fmt, msgs, [{} for _ in msgs], model=model)


def test_a_prompt_after_a_thinking_tool_loop_breaks_where_the_thinking_was() -> None:
    s = _loop("claude-sonnet-4-5-20250929")
    assert thinking_strips(s) == {4: 1}
    assert history_resends(s) == {4: "thinking"}
    log = simulate(s, cache="automatic")
    first, after_tool, prompt = log.requests
    assert after_tool.cache_break is None and after_tool.cache_read == first.input_tokens
    brk = prompt.cache_break
    assert brk is not None and (brk.reason, brk.position) == ("thinking", 1)
    assert brk.api_reason == "messages_changed"
    # it reads the first prompt (the tools, system and message 0) and writes the rest again
    assert prompt.cache_read == first.input_tokens
    assert prompt.cache_write == prompt.input_tokens - first.input_tokens


def test_a_model_that_keeps_thinking_reads_the_whole_previous_prompt() -> None:
    log = simulate(_loop("claude-opus-4-5-20251101"), cache="automatic")
    prompt = log.requests[-1]
    assert prompt.cache_break is None
    assert prompt.cache_read == log.requests[-2].input_tokens


def test_thinking_no_request_sent_again_breaks_nothing() -> None:
    """A turn of one answer: its thinking was never part of a cached prompt."""
    s = _loop("claude-sonnet-4-5-20250929", tool_loop=False)
    assert thinking_strips(s) == {}
    assert simulate(s, cache="automatic").requests[-1].cache_break is None


def test_claude_code_transcripts_keep_their_thinking() -> None:
    s = replace(_loop("claude-sonnet-4-5-20250929"), format="claude-code")
    assert thinking_strips(s) == {}


def test_every_window_source_predicts_it_alike() -> None:
    s = _loop("claude-sonnet-4-5-20250929")
    fast = simulate(s, cache="automatic")
    ref = simulate(s, cache="automatic", _reference=True)
    assert fast.requests == ref.requests
    assert fast.requests[-1].cache_break is not None
    assert fast.requests[-1].cache_break.reason == "thinking"
