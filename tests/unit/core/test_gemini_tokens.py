"""ctxview.core.providers.gemini's token model: text by its words, function declarations by
their words, and what each model family bills beyond the text (tool-use framing, each call,
Gemini 3's thought signatures), read off recorded usage (benchmarks.gemini_tokens)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxview.core.providers.gemini import (
    FAMILIES,
    PROVIDER,
    REQUEST_OVERHEAD_TOKENS,
    estimate_tools,
    family,
    text_tokens,
)

USER_HI = {"role": "user", "content": [{"type": "text", "text": "Hi"}]}


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Hello", 1),
        ("What is the capital of France?", 7),  # 6 words and "?": billed so
        ("", 0),
        ("internationalisation", 3),  # a long word: one more per 8 letters
    ],
)
def test_text_is_counted_by_its_words(text: str, tokens: int) -> None:
    assert text_tokens(text) == tokens


@given(st.text(max_size=200))
def test_a_text_costs_at_most_a_token_a_character_and_grows_with_it(text: str) -> None:
    n = text_tokens(text)
    assert 0 <= n <= len(text)
    assert text_tokens(text + " word") == n + 1


def test_a_one_word_request_is_billed_its_word_and_one() -> None:
    # recorded: a request of one user text "Hi" is billed 2 prompt tokens
    model = PROVIDER.tokens.of("gemini-3-pro-preview", "gemini")
    assert model.system_tokens(None) + model.estimate(USER_HI) == 2 == REQUEST_OVERHEAD_TOKENS + 1


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("gemini-3-flash-preview", "Gemini 3 and newer"),
        ("models/gemini-3.1-pro-preview", "Gemini 3 and newer"),
        ("gemini-2.5-flash-lite", "Gemini 2.5"),
        ("gemini-2.0-flash-001", "Gemini 2.0 and older"),
        ("gemini-1.5-flash", "Gemini 2.0 and older"),
        (None, "Gemini 3 and newer"),
    ],
)
def test_models_are_told_apart_by_family(model: str | None, name: str) -> None:
    assert family(model).name == name


CALL: dict[str, Any] = {
    "role": "assistant",
    "content": [
        {"type": "tool_use", "id": "a", "name": "f", "input": {}, "signature": "x" * 600},
    ],
}


def test_gemini_3_bills_a_calls_thought_signature_and_2_5_does_not() -> None:
    three = PROVIDER.tokens.of("gemini-3-flash-preview", "gemini").estimate(CALL)
    unsigned = {"role": "assistant", "content": [{**CALL["content"][0], "signature": ""}]}
    assert three - PROVIDER.tokens.of("gemini-3-flash-preview", "gemini").estimate(unsigned) == (
        600 / FAMILIES["3"].signature_chars
    )
    older = PROVIDER.tokens.of("gemini-2.5-flash", "gemini")
    assert older.estimate(CALL) == older.estimate(unsigned)


def test_thought_text_counts_in_a_request_body_not_in_a_cli_session() -> None:
    thought = {"role": "assistant", "content": [{"type": "thinking", "thinking": "a b c d"}]}
    assert PROVIDER.tokens.of("gemini-2.5-pro", "gemini").estimate(thought) == 4
    assert PROVIDER.tokens.of("gemini-2.5-pro", "gemini-cli").estimate(thought) == 0


TOOLS = [
    {
        "functionDeclarations": [
            {
                "name": "get_capital",
                "description": "Get the capital of a country.",
                "parameters": {
                    "type": "OBJECT",
                    "properties": {"country": {"type": "STRING", "description": "The name."}},
                    "required": ["country"],
                },
            }
        ]
    }
]


def test_declarations_are_billed_by_their_words_not_their_json() -> None:
    # get_capital (3) + "Get the capital of a country." (7) + country (1) + "The name." (3),
    # each rounded up: 14, no JSON structure (the JSON is 150 characters)
    assert estimate_tools(TOOLS, FAMILIES["2"]) == 14
    assert estimate_tools(TOOLS, FAMILIES["2.5"]) == 14 + FAMILIES["2.5"].tools
    assert estimate_tools([], FAMILIES["3"]) == 0


def test_a_session_counts_with_its_models_family(tmp_path: Any) -> None:
    import json

    from ctxview.sessions import load_session
    from ctxview.sessions.replay import replay

    body = {"model": "gemini-2.5-flash", "contents": [{"role": "user", "parts": [{"text": "x"}]}]}
    path = tmp_path / "body.json"
    path.write_text(json.dumps({**body, "tools": TOOLS}))
    rep = replay(load_session(path), as_sent=True)
    assert rep.token_model.tools_tokens(rep.session.tools) == 14 + FAMILIES["2.5"].tools
