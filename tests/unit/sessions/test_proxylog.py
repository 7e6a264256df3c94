"""The grouping rule of proxy recordings and the redaction of a record, as properties."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.live.recording import REDACTED, redact
from ctxview.sessions.proxylog import Conversations


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=3), min_size=1, max_size=30),
    st.data(),
)
def test_requests_interleaved_from_several_conversations_are_kept_apart(
    order: list[int], data: st.DataObject
) -> None:
    """Conversations (distinct first messages) sending in any interleaving, each request
    extending its own previous one or repeating it (a retry): the keys tell them apart exactly,
    numbered in the order the conversations started."""
    sent: dict[int, list[dict[str, Any]]] = {}
    keys = Conversations()
    started: list[int] = []
    for who in order:
        msgs = sent.setdefault(who, [{"role": "user", "content": f"conversation {who} starts"}])
        if who in started and not data.draw(st.booleans()):  # a retry sends the same again
            msgs += [
                {"role": "assistant", "content": f"reply {len(msgs)}"},
                {"role": "user", "content": f"turn {len(msgs)}"},
            ]
        if who not in started:
            started.append(who)
        assert keys.key(list(msgs)) == started.index(who) + 1


def test_a_request_that_extends_none_starts_a_conversation_and_no_messages_has_none() -> None:
    keys = Conversations()
    a = [{"role": "user", "content": "a"}]
    assert keys.key(a) == 1
    assert keys.key([{"role": "user", "content": "a, edited"}]) == 2  # not an extension
    assert (
        keys.key([*a, {"role": "assistant", "content": "x"}, {"role": "user", "content": "y"}]) == 1
    )
    assert keys.key([]) is None and keys.key("not a list") is None


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    secret=st.text(min_size=8, max_size=24).filter(lambda s: s.strip() == s and len(set(s)) > 3),
    data=json_values,
    where=st.sampled_from(["value", "key", "inside"]),
)
def test_a_secret_is_never_written_however_it_is_spelled(
    secret: str, data: Any, where: str
) -> None:
    """A credential anywhere in a record (a value, a key, inside a longer string), holding
    quotes, backslashes or any character: the line written holds neither it nor its JSON
    form, and decodes to the record with the secret replaced."""
    record = {
        "value": {"data": data, "echo": secret},
        "key": {secret: data},
        "inside": {"data": data, "text": f"my key is {secret}!"},
    }[where]
    line, clean = redact(record, [secret])
    assert secret not in line and json.dumps(secret, ensure_ascii=False)[1:-1] not in line
    assert json.loads(line) == clean
    assert REDACTED in line
