"""The OpenAI window indexes (``RuleSet.windows``: what the request replays ask for every
request) answer every window of a conversation as the full check of that window does, on
valid and damaged Chat Completions and Responses conversations."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.core.protocol import RuleSet, check_protocol, errors
from ctxview.core.providers import openai
from ctxview.core.providers.openai_wire import chat_message, responses_item
from tests.support.openaigen import chat_conversation, responses_conversation


@st.composite
def damaged(draw: st.DrawFn, valid: st.SearchStrategy[list[Any]]) -> list[Any]:
    """A valid conversation with items dropped, moved, or stripped of their id, and odd items
    (an output of no call, a value that is not an object) put in."""
    items = list(draw(valid))
    for _ in range(draw(st.integers(0, 4))):
        if not items:
            break
        k = draw(st.integers(0, len(items) - 1))
        what = draw(st.sampled_from(["drop", "move", "strip", "orphan", "junk"]))
        if what == "drop":
            del items[k]
        elif what == "move":
            items.insert(draw(st.integers(0, len(items) - 1)), items.pop(k))
        elif what == "strip" and isinstance(items[k], dict):
            items[k] = {key: v for key, v in items[k].items() if key != "id"}
        elif what == "orphan":
            items.insert(k, {"type": "function_call_output", "call_id": "nobody", "output": "?"})
            items.insert(k, {"role": "tool", "tool_call_id": "nobody", "content": "?"})
        elif what == "junk":
            items.insert(k, draw(st.sampled_from([None, 3, "text"])))
    return items


def _all_windows_agree(messages: list[Any], rules: RuleSet, firsts: list[int]) -> None:
    """Every window ``[first] + messages[lo:hi]`` of the given firsts (all of them would cost
    n³ full checks)."""
    assert rules.windows is not None
    index = rules.windows(messages)
    n = len(messages)
    for first in sorted({f % n for f in firsts} if n else ()):
        for lo in range(first + 1, n + 1):
            for hi in range(lo, n + 1):
                window = [messages[first], *messages[lo:hi]]
                want = bool(errors(check_protocol(window, rules=rules)))
                assert index.rejected(first, lo, hi) is want, (first, lo, hi, window)


def _chat(m: Any) -> Any:
    return chat_message(m) if isinstance(m, dict) and "type" not in m else m


@settings(max_examples=50, deadline=None)
@given(damaged(chat_conversation()), st.lists(st.integers(0, 40), min_size=1, max_size=3))
def test_the_chat_index_answers_every_window_as_the_full_check(
    wire: list[Any], firsts: list[int]
) -> None:
    messages = [_chat(m) for m in wire if not (isinstance(m, dict) and "type" in m)]
    _all_windows_agree(messages[:24], openai.CHAT_RULES, [0, *firsts])


@settings(max_examples=50, deadline=None)
@given(
    damaged(responses_conversation()),
    st.booleans(),
    st.lists(st.integers(0, 40), min_size=1, max_size=3),
)
def test_the_responses_index_answers_every_window_as_the_full_check(
    items: list[Any], continued: bool, firsts: list[int]
) -> None:
    messages = [
        responses_item(i) for i in items if not (isinstance(i, dict) and "tool_call_id" in i)
    ]
    rules = openai.CONTINUED_RULES if continued else openai.RESPONSES_RULES
    _all_windows_agree(messages[:24], rules, [0, *firsts])
