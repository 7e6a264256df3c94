"""Prices and the prompt cache's minimum length, per model."""

from __future__ import annotations


def test_default_model_has_a_known_minimum_cacheable_length() -> None:
    from ctxview.config import DEFAULTS
    from ctxview.core.cache_rules import min_cacheable

    assert min_cacheable(DEFAULTS["model"])[1]
    assert min_cacheable("claude-sonnet-4-7") == (1024, True)  # the table's "Sonnet 4.x/5"
    assert min_cacheable("claude-opus-4-9")[1] is False  # no guess for another family
