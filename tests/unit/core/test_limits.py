"""The context window of each model, and the problem a window over it is."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_context_sizes_and_the_over_context_problem() -> None:
    """The one rule the sidebar's verdict, inspect and compare call."""
    from ctxview.core.limits import context_problem, context_size

    # the table, by the names sessions carry (dated ids, Claude Code's [1m] variant)
    sizes = {
        "claude-sonnet-5-5": 1_000_000,
        "claude-opus-4-6": 1_000_000,
        "claude-opus-4-8-20260528": 1_000_000,
        "claude-haiku-4-5-20251001": 200_000,
        "claude-sonnet-4-5": 200_000,
        "claude-sonnet-4-5[1m]": 1_000_000,
        "claude-opus-4-0": 200_000,
        "some-new-model": 200_000,
        None: 200_000,
    }
    assert {m: context_size(m) for m in sizes} == sizes

    size = context_size("claude-sonnet-5-5")
    assert context_problem(size, "claude-sonnet-5-5") is None
    p = context_problem(size + 1, "claude-sonnet-5-5")
    assert p is not None and (p.code, p.severity) == ("over_context_window", "error")


def test_openai_models_have_their_own_input_limit_and_the_apis_words() -> None:
    """An OpenAI model's limit is its own (GPT-4o 128k, GPT-4.1 about 1M, GPT-5 272k input),
    not Anthropic's 200k default; the problem is worded as OpenAI's and Gemini's 400s are."""
    from ctxview.core.limits import context_problem, context_size, over_context_words

    sizes = {
        "gpt-4o": 128_000,
        "gpt-4o-2024-08-06": 128_000,
        "openai/gpt-4o-mini": 128_000,
        "gpt-4.1": 1_047_576,
        "gpt-5": 272_000,
        "gpt-5.3-codex": 272_000,
        "o3": 200_000,
    }
    assert {m: context_size(m) for m in sizes} == sizes
    # 250k: over GPT-4o's context, under GPT-4.1's and GPT-5's input limit
    assert context_problem(250_000, "gpt-4.1") is None
    assert context_problem(250_000, "gpt-5") is None
    p = context_problem(140_008, "gpt-4o")
    assert p is not None and p.code == "over_context_window"
    assert p.message == (
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 140008 tokens. Please reduce the length of the messages. (estimated)"
    )
    p = context_problem(300_000, "gpt-5", exact=True)
    assert p is not None and p.message.startswith(
        "Input tokens exceed the configured limit of 272000 tokens. Your messages resulted in "
        "300000 tokens."
    )
    p = context_problem(1_100_000, "gemini-2.5-flash", exact=True)
    assert p is not None and p.message == (
        "The input token count (1100000) exceeds the maximum number of tokens allowed (1048576)."
    )
    assert over_context_words("gpt-4o") == "context_length_exceeded"
    assert over_context_words("claude-sonnet-4-5") == "prompt is too long"


def test_a_newer_openai_model_is_held_to_its_generations_limit_not_anthropics_default() -> None:
    """Codex rollouts of GPT-5.5 recorded prompts of up to 229,617 tokens that the API
    answered: a model missing from the table must not get the 200k default."""
    from ctxview.core.limits import context_problem, context_size

    assert context_size("gpt-5.5") == 922_000
    assert context_size("gpt-5.3-codex-spark") == 128_000
    # a model of a known generation the table does not name: its generation's largest
    assert context_size("gpt-5.6-terra", "openai") == 922_000
    assert context_problem(229_617, "gpt-5.5", exact=True, provider="openai") is None
    p = context_problem(1_000_000, "gpt-5.6-terra", exact=True, provider="openai")
    assert p is not None and p.message.startswith("Input tokens exceed the configured limit")
    # no generation to go by: the default stands
    assert context_size("gpt-4o-foo") == 200_000


def test_a_session_that_names_no_model_is_sized_by_its_provider(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Gemini API body names its model in the URL, not the body: its requests are checked
    against Gemini's context and worded as Gemini's 400, not Anthropic's 200k default."""
    import json

    from ctxview.core.limits import context_problem, context_size
    from tests.support.cli import run

    assert context_size(None, "gemini") == 1_048_576
    assert context_size(None) == 200_000
    p = context_problem(1_100_000, None, provider="gemini")
    assert p is not None and p.message.startswith("The input token count (1100000) exceeds")
    body = tmp_path / "gemini.json"
    text = "hello world " * 100_000  # ~300k tokens: over 200k, under Gemini's 1,048,576
    body.write_text(json.dumps({"contents": [{"role": "user", "parts": [{"text": text}]}]}))
    for command in ("inspect", "requests", "compare"):
        code, out, _ = run(capsys, command, str(body), "--json")
        assert code == 0, (command, out[:400])
