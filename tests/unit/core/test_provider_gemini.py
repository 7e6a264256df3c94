"""ctxview.core.providers.gemini: usage, cache minimums, prices and the request body."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxview.core.providers.base import BodyParts, Usage
from ctxview.core.providers.gemini import (
    NO_IMPLICIT,
    PRICE_BOOK,
    minimum,
    normalise,
    usage,
    write_body,
)
from ctxview.core.providers.registry import price_table, provider


def test_the_registry_knows_gemini() -> None:
    gemini = provider("gemini")
    assert (gemini.name, gemini.label) == ("gemini", "Gemini")
    assert gemini.formats == {"gemini", "gemini-cli"}
    assert price_table().get("gemini-2.5-flash") == PRICE_BOOK.get("gemini-2.5-flash")


def test_cached_tokens_are_a_part_of_the_prompt() -> None:
    found = usage(
        {
            "usageMetadata": {
                "promptTokenCount": 1200,
                "cachedContentTokenCount": 1000,
                "candidatesTokenCount": 30,
                "thoughtsTokenCount": 70,
                "totalTokenCount": 1300,
            }
        }
    )
    assert found == Usage(200, 1000, 0, 0, 100)
    assert found is not None and found.prompt == 1200


@given(
    prompt=st.integers(0, 10**7),
    cached=st.integers(0, 10**7),
    out=st.integers(0, 10**6),
)
def test_the_canonical_counts_add_up_to_the_prompt(prompt: int, cached: int, out: int) -> None:
    found = usage(
        {"promptTokenCount": prompt, "cachedContentTokenCount": cached, "candidatesTokenCount": out}
    )
    if cached > prompt:
        assert found is None  # a cached part larger than the prompt is not believed
    else:
        assert found is not None and (found.prompt, found.cache_write) == (prompt, 0)


@pytest.mark.parametrize(
    "wire",
    [{}, {"promptTokenCount": -1}, {"promptTokenCount": "12"}, {"promptTokenCount": True}],
)
def test_usage_that_cannot_be_believed_is_none(wire: dict[str, object]) -> None:
    assert usage(wire) is None


@pytest.mark.parametrize(
    ("model", "name"),
    [
        ("models/gemini-2.0-flash-001", "gemini-2.0-flash"),
        ("gemini-2.5-pro-preview-05-06", "gemini-2.5-pro"),
        ("gemini-flash-latest", "gemini-flash"),
        ("gemini-3-flash-preview", "gemini-3-flash-preview"),
    ],
)
def test_model_names_normalise_to_the_price_rows(model: str, name: str) -> None:
    assert normalise(model) == name


def test_implicit_caching_minimums_per_model() -> None:
    assert minimum("gemini-2.5-pro").tokens == 2048
    assert minimum("gemini-3-pro-preview").tokens == 4096
    assert minimum("gemini-3-flash-preview").tokens == 1024
    assert minimum("gemini-2.0-flash") is NO_IMPLICIT
    assert not minimum("gemini-9-ultra").documented


def test_a_built_window_becomes_gemini_contents() -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "t", "signature": "sig"},
                {"type": "tool_use", "id": "f#1.1", "name": "f", "input": {"a": 1}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "f#1.1", "content": "ok"}],
        },
    ]
    body = write_body(
        BodyParts("gemini-2.5-pro", messages, system="be brief", params={"generationConfig": {}})
    )
    assert body == {
        "contents": [
            {"role": "user", "parts": [{"text": "hi"}]},
            {
                "role": "model",
                "parts": [
                    {"text": "t", "thought": True, "thoughtSignature": "sig"},
                    # an id ctxview made up is not sent: the API pairs by order and name
                    {"functionCall": {"name": "f", "args": {"a": 1}}},
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "f", "response": {"output": "ok"}}}],
            },
        ],
        "systemInstruction": {"parts": [{"text": "be brief"}]},
        "generationConfig": {},
    }


def test_an_edited_system_prompt_is_written_not_the_one_read() -> None:
    read = {"role": "user", "parts": [{"text": "old"}]}
    same = write_body(
        BodyParts(
            None, [], system=[{"type": "text", "text": "old"}], params={"systemInstruction": read}
        )
    )
    assert same["systemInstruction"] is read
    edited = write_body(BodyParts(None, [], system="new", params={"systemInstruction": read}))
    assert edited["systemInstruction"] == {"parts": [{"text": "new"}]}


def test_prices_say_where_they_come_from() -> None:
    assert "ai.google.dev/gemini-api/docs/pricing" in PRICE_BOOK.describe("gemini-2.5-pro")
    assert PRICE_BOOK.effective_date("gemini-3-pro-preview") == "2025-11-18"


def test_gemini_models_have_a_million_token_window() -> None:
    from ctxview.core.limits import context_size

    assert context_size("gemini-3.1-pro-preview") == 1_048_576
    assert context_size("models/gemini-2.5-flash") == 1_048_576
