"""Prices and the prompt cache's minimum length, per model."""

from __future__ import annotations


def test_default_model_has_a_known_minimum_cacheable_length() -> None:
    from ctxview.config import DEFAULTS
    from ctxview.core.cache_rules import min_cacheable

    assert min_cacheable(DEFAULTS["model"])[1]
    assert min_cacheable("claude-sonnet-4-7") == (1024, True)  # the table's "Sonnet 4.x/5"
    assert min_cacheable("claude-opus-4-9")[1] is False  # no guess for another family


def test_bedrock_model_ids_are_priced_as_their_anthropic_model() -> None:
    from ctxview.core.pricing import PRICES, PriceTable, bedrock_profile, normalise_model

    table = PriceTable()
    # one Region, an older model, a gateway's route and an ARN: the list price
    for model, name in (
        ("anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet"),
        ("bedrock/anthropic.claude-sonnet-4-20250514-v1:0", "claude-sonnet-4"),
        (
            "arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku-20240307-v1:0",
            "claude-3-haiku",
        ),
        ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"),
    ):
        assert normalise_model(model) == name
        assert table.get(model) == PRICES[name]
    # a geographic inference profile of Sonnet/Haiku 4.5 and later: 10% above the global price
    jp = "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert bedrock_profile(jp) == "jp"
    assert normalise_model(jp) == "claude-haiku-4-5"
    price = table.get(jp)
    assert price is not None
    assert (price.input, price.cache_read, price.output) == (1.1, 0.11, 5.5)
    assert "Amazon Bedrock" in table.source(jp)
    assert "Amazon Bedrock" not in table.source("claude-haiku-4-5")
    # not Bedrock's: untouched
    assert bedrock_profile("claude-haiku-4-5-20251001") is None
    assert table.get("sonnet") is None


def test_bedrock_model_ids_take_their_models_cache_minimum_and_tokenizer() -> None:
    from ctxview.core.cache_rules import min_cacheable
    from ctxview.core.calibrate import tokenizer_scale

    assert min_cacheable("us.anthropic.claude-haiku-4-5-20251001-v1:0") == (4096, True)
    assert tokenizer_scale("eu.anthropic.claude-opus-4-7") == tokenizer_scale("claude-opus-4-7")
