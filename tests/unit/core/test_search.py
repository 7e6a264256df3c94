"""The timeline's query language and matcher (ctxview.core.search)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.core.search import Matcher, QueryError, find, parse_query, searchable_text


def _use(tid: str, name: str, **inp: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
    }


def _result(tid: str, text: str, error: bool = False) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": tid, "content": text, "is_error": error}
        ],
    }


MESSAGES: list[dict[str, Any]] = [
    {"role": "user", "content": "Fix the Timeout in the loader"},
    _use("t1", "Bash", command="pytest -q tests/test_loader.py"),
    _result("t1", "1 failed: test_timeout", error=True),
    _use("t2", "Read", file_path="src/loader.py"),
    _result("t2", "def load(path): ..."),
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "the timeout moved to [network]", "signature": "s"},
            {"type": "text", "text": "Found it."},
        ],
    },
    _use("t3", "mcp__github__search", query="timeout"),
]


def ids(text: str, errors: frozenset[int] = frozenset()) -> list[int]:
    return [i for chunk in find(MESSAGES, parse_query(text), errors) for i in chunk]


def test_words_match_every_block_kind_in_any_case() -> None:
    assert ids("timeout") == [0, 2, 5, 6]  # text, a result, thinking, a tool input
    assert ids("pytest loader") == [1]  # every word, anywhere in the message
    assert ids('"the timeout"') == [0, 5]  # a phrase
    assert ids('"timeout in"') == [0]


def test_a_capital_letter_makes_a_term_match_case() -> None:
    assert ids("Timeout") == [0]
    assert ids("found") == [5] and ids("Found") == [5] and ids("FOUND") == []


def test_tool_matches_calls_and_their_results_by_name_or_pattern() -> None:
    assert ids("tool:Bash") == [1, 2]
    assert ids("tool:bash") == [1, 2]
    assert ids("tool:mcp__*") == [6]
    assert ids("tool:Read tool:Bash") == [1, 2, 3, 4]
    assert ids("tool:Read def") == [4]


def test_is_error_takes_error_results_and_the_callers_protocol_errors() -> None:
    assert ids("is:error") == [2]
    assert ids("is:errors", frozenset({4})) == [2, 4]
    assert ids("is:error timeout") == [2]


def test_role() -> None:
    assert ids("role:user") == [0, 2, 4]
    assert ids("role:assistant tool:Read") == [3]


@pytest.mark.parametrize(
    "text, message",
    [
        ("is:open", "is:open: the one value is is:error"),
        ("role:system", "role:system: role:user or role:assistant"),
        ("tool:", "tool: needs a tool name"),
    ],
)
def test_a_bad_qualifier_says_what_it_takes(text: str, message: str) -> None:
    with pytest.raises(QueryError, match=message.split(":")[0]):
        parse_query(text)
    with pytest.raises(QueryError) as exc:
        parse_query(text)
    assert str(exc.value).startswith(message)


def test_other_words_with_a_colon_and_an_open_quote_are_text() -> None:
    q = parse_query('http://x "unclosed')
    assert q.terms == ("http://x", '"unclosed')
    assert parse_query("   ").empty


messages = st.lists(
    st.one_of(
        st.builds(lambda t: {"role": "user", "content": t}, st.text(max_size=20)),
        st.builds(_use, st.sampled_from(["a", "b", "c"]), st.sampled_from(["Bash", "Read"])),
        st.builds(_result, st.sampled_from(["a", "b", "c"]), st.text(max_size=10), st.booleans()),
    ),
    max_size=30,
)


@settings(max_examples=100, deadline=None)
@given(
    messages, st.sampled_from(["x", "tool:Bash", "is:error", "role:user a", "A"]), st.integers(1, 7)
)
def test_chunks_find_what_one_pass_over_each_message_finds(
    msgs: list[dict[str, Any]], text: str, chunk: int
) -> None:
    query = parse_query(text)
    one = Matcher(query)
    expected = [i for i, m in enumerate(msgs) if one.matches(i, m)]
    assert [i for c in find(msgs, query, chunk=chunk) for i in c] == expected
    if query.terms and not query.tools and not query.roles and not query.errors:
        term = query.terms[0]
        fold = term == term.lower()
        assert expected == [
            i
            for i, m in enumerate(msgs)
            if (term.lower() in searchable_text(m).lower() if fold else term in searchable_text(m))
        ]
