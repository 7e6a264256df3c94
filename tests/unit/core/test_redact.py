"""Redaction: every secret of the corpus found, no look-alike touched, JSON structure kept."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxview.core.redact import Redactions, RedactMemo, redact_text, redact_value
from tests.support.secrets import lookalikes, secrets

SECRETS = secrets()
LOOKALIKES = lookalikes()


@pytest.mark.parametrize("entry", SECRETS, ids=[f"{s.kind}-{i}" for i, s in enumerate(SECRETS)])
def test_every_secret_of_the_corpus_is_replaced_by_its_kind_and_nothing_else_changes(entry):
    text, found = redact_text(entry.text)
    assert text == entry.redacted
    assert found.counts == {entry.kind: 1}


@pytest.mark.parametrize("entry", LOOKALIKES, ids=[what for what, _ in LOOKALIKES])
def test_no_lookalike_is_redacted(entry):
    _, text = entry
    assert redact_text(text) == (text, Redactions())


def test_the_corpus_covers_the_kinds_the_docs_promise():
    kinds = {s.kind for s in SECRETS}
    promised = {
        "anthropic-key",
        "openai-key",
        "aws-access-key",
        "aws-secret-key",
        "github-token",
        "slack-token",
        "stripe-key",
        "google-api-key",
        "jwt",
        "private-key",
        "url-password",
        "secret-assignment",
        "bearer-token",
    }
    assert promised <= kinds


def test_secrets_among_text_are_all_counted():
    text = "\n".join(s.text for s in SECRETS[:6])
    redacted, found = redact_text(text)
    assert redacted == "\n".join(s.redacted for s in SECRETS[:6])
    assert found.total == 6


def test_a_text_without_secrets_is_returned_as_it_is():
    text = "nothing to see here"
    redacted, found = redact_text(text)
    assert redacted is text
    assert found.total == 0 and found.counts == {}


def test_redactions_merge_sums_counts_in_place_and_returns_itself():
    a = Redactions({"jwt": 1})
    b = Redactions({"jwt": 2, "openai-key": 1})
    assert a.merge(b) is a
    assert a.counts == {"jwt": 3, "openai-key": 1}
    assert a.total == 4
    assert b.counts == {"jwt": 2, "openai-key": 1}


def test_redactions_note_is_one_line_with_the_counts_most_first():
    assert Redactions({"jwt": 1, "openai-key": 2}).note() == (
        "redacted 3 secrets (2 openai-key, 1 jwt)"
    )
    assert Redactions({"jwt": 1}).note() == "redacted 1 secret (1 jwt)"
    assert Redactions().note() == "redacted 0 secrets: none found"


def test_redactions_json_field():
    assert Redactions({"jwt": 1}).to_json() == {
        "total": 1,
        "counts": {"jwt": 1},
        "note": "redacted 1 secret (1 jwt)",
    }


def test_redact_value_walks_strings_keeps_keys_and_other_values():
    key, other = SECRETS[0], next(s for s in SECRETS if s.kind != SECRETS[0].kind)
    value = {
        "role": "user",
        key.text: 3,  # a key is kept even when it looks like a secret: it is structure
        "content": [
            {"type": "text", "text": key.text},
            {"type": "tool_use", "input": {"cmd": other.text, "n": 2, "ok": True, "x": None}},
        ],
    }
    before = copy.deepcopy(value)
    redacted, found = redact_value(value)
    assert value == before
    assert redacted == {
        "role": "user",
        key.text: 3,
        "content": [
            {"type": "text", "text": key.redacted},
            {
                "type": "tool_use",
                "input": {"cmd": other.redacted, "n": 2, "ok": True, "x": None},
            },
        ],
    }
    assert found.counts == {key.kind: 1, other.kind: 1}


def test_a_marker_already_in_the_text_is_kept():
    text = 'key [REDACTED:openai-key] and password = "[REDACTED:secret-assignment]"'
    assert redact_text(text) == (text, Redactions())


# -- properties: idempotent; only string values change


_pieces = st.one_of(
    st.text(max_size=30),
    st.sampled_from([s.text for s in SECRETS]),
    st.sampled_from([text[:300] for _, text in LOOKALIKES]),
    st.sampled_from(["\n", " ", "=", ":", '"', "'", "[", "]", "REDACTED:", "-----", "sk-"]),
)
texts = st.lists(_pieces, max_size=6).map("".join)
# keys that name a secret (their string values are redacted whole) among any others
_keys = st.one_of(texts, st.sampled_from(["password", "api_key", "access_token", "secret_type"]))
json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), texts),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(texts)
# two secrets written without a separator: the second overlapped the first one's match
@example(
    "aws_access_key_id = AKIAXG5U2TWXK1UEMA6Rsq0csp-P7JPAI934oUXWXBL4ZgWqpIvBHr2JJoIts9KWbaeNGB"
)
def test_redacting_twice_gives_what_redacting_once_gave(text):
    once, _ = redact_text(text)
    twice, found = redact_text(once)
    assert twice == once
    assert found.total == 0


def _same_shape(a: Any, b: Any) -> bool:
    """Same structure, same keys, same non-string values; strings may differ."""
    if isinstance(a, str):
        return isinstance(b, str)
    if isinstance(a, dict):
        return (
            isinstance(b, dict) and list(a) == list(b) and all(_same_shape(a[k], b[k]) for k in a)
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(_same_shape, a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=150, deadline=None)
@given(json_values)
def test_redact_value_changes_only_strings_and_is_idempotent(value):
    before = json.dumps(value)
    once, found = redact_value(value)
    assert json.dumps(value) == before  # the input is not changed
    assert _same_shape(value, once)
    twice, again = redact_value(once)
    assert twice == once
    assert again.total == 0
    assert found.total == json.dumps(once).count("[REDACTED:") - before.count("[REDACTED:")


def test_a_memo_gives_what_a_scan_gives_and_holds_no_more_than_its_bound():
    long_texts = [f"{'x' * 300} {s.text} {i}" for i, s in enumerate(SECRETS)]
    value = [{"text": t, "again": t} for t in long_texts]
    memo = RedactMemo(max_chars=2_000)
    for _ in range(2):
        assert redact_value(value, memo) == redact_value(value)
    assert sum(map(len, memo._texts)) <= 2_000
    assert memo._held == sum(map(len, memo._texts))


def test_a_value_under_a_key_that_names_a_secret_is_redacted():
    value = {
        "password": "Xk29fjq8LmQ2",
        "x": {"client_secret": "zz9Qx7Lm2Pq", "access_token": "tok3nV4lue99"},
        # about a secret, a reference to one, a placeholder, not one
        "password_min_length": "12",
        "secret_type": "Stripe Access Key",
        "api_key": "OPENAI_API_KEY",
        "token": "${GH_TOKEN}",
        "tokenizer": "cl100k_base",
        "token_type": "Bearer",
        "user": "bob",
        "pw": ["hunter2hunter"],  # in a list: no name says what it is
    }
    redacted, found = redact_value(value)
    marker = "[REDACTED:secret-assignment]"
    assert redacted == value | {
        "password": marker,
        "x": {"client_secret": marker, "access_token": marker},
    }
    assert found.counts == {"secret-assignment": 3}


def test_a_value_named_a_secret_is_redacted_when_the_memo_has_seen_it():
    memo = RedactMemo()
    value = {"password": "Q" + "x9" * 200}  # long enough to be remembered
    for _ in range(2):
        assert redact_value(value, memo) == redact_value(value)
        assert redact_value(value, memo)[0] == {"password": "[REDACTED:secret-assignment]"}
