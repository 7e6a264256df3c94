"""The provider interface: the registry, the Anthropic provider built on the existing modules,
the cache step rule, the canonical usage and a rule set's filtering and wording."""

from __future__ import annotations

import pytest

from ctxview.core.cache_rules import Minimum
from ctxview.core.protocol import Problem, Rule, RuleSet, check_protocol
from ctxview.core.providers.base import BodyParts, CacheModel, Usage
from ctxview.core.providers.registry import price_table, provider


def test_registry_names_the_default_and_refuses_an_unknown_provider() -> None:
    assert provider().name == "anthropic"
    assert provider("anthropic") is provider(None)
    with pytest.raises(KeyError, match="unknown provider 'nope'"):
        provider("nope")


def test_anthropic_usage_is_already_canonical() -> None:
    u = provider("anthropic").usage(
        {
            "input_tokens": 3,
            "cache_read_input_tokens": 1000,
            "cache_creation_input_tokens": 200,
            "cache_creation": {"ephemeral_1h_input_tokens": 200},
            "output_tokens": 9,
        }
    )
    assert u == Usage(3, 1000, 200, 200, 9)
    assert u.prompt == 1203
    assert u.as_meta()["cache_creation_input_tokens"] == 200
    assert provider("anthropic").usage({"input_tokens": -1}) is None


def test_anthropic_body_is_the_messages_api_body() -> None:
    msgs = [{"role": "user", "content": "hi"}]
    body = provider("anthropic").write_body(
        BodyParts("claude-opus-4-6", msgs, system="be brief", max_tokens=5, params={"x": 1})
    )
    assert body == {
        "model": "claude-opus-4-6",
        "max_tokens": 5,
        "x": 1,
        "system": "be brief",
        "messages": msgs,
    }


def test_a_prefix_cache_holds_its_minimum_then_whole_steps() -> None:
    cache = CacheModel("prefix", lambda m: Minimum(1024), 128, False, {"5m": 300}, "k", "s", "d")
    assert cache.cached_length(1023, None) == 0
    assert cache.cached_length(1024, None) == 1024
    assert cache.cached_length(1151, None) == 1024
    assert cache.cached_length(1152, None) == 1152
    assert provider("anthropic").cache.cached_length(1151, "claude-opus-4-1") == 1151


def test_the_price_table_reads_every_book_and_names_its_source() -> None:
    table = price_table()
    assert table.get("claude-opus-4-6") is not None
    assert table.get("no-such-model") is None
    assert "pricing" in table.source("claude-opus-4-6")


def test_a_rule_set_drops_the_rules_its_api_lacks_and_words_the_rest() -> None:
    msgs = [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "f", "input": {}}],
        },
        {"role": "assistant", "content": "  "},
        {"role": "user", "content": "next"},
    ]
    anthropic = {p.code for p in check_protocol(msgs)}
    assert "unanswered_tool_use" in anthropic and "first_not_user" in anthropic
    rules = RuleSet(
        "test",
        {"unanswered_tool_use": Rule("unanswered_tool_use", "msg {index}: no answer for {ids}")},
    )
    found = check_protocol(msgs, rules=rules)
    assert [(p.code, p.message) for p in found] == [
        ("unanswered_tool_use", "msg 0: no answer for c1")
    ]
    assert rules.apply([Problem(0, "first_not_user", "warning", "x")]) == []
