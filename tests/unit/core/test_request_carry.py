"""ctxview.core.requests.types.TurnCarry: what each request window's messages carry while in
the current turn, in O(1) a window, is what the provider's token model gives that window
(``TokenModel.carried_tokens``: one rule)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxview.core.providers.base import carried_by
from ctxview.core.requests.types import TurnCarry


def _carry(message: Any) -> tuple[bool, int]:
    return message["starts"], 0 if message["starts"] else message["tokens"]


MESSAGES = st.lists(
    st.fixed_dictionaries({"starts": st.booleans(), "tokens": st.integers(0, 50)}),
    min_size=1,
    max_size=30,
)


@given(MESSAGES, st.data())
def test_a_first_plus_run_window_carries_what_the_token_model_gives_it(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    n = len(messages)
    hi = data.draw(st.integers(1, n))
    lo = data.draw(st.integers(0, hi))
    first = data.draw(st.integers(-1, lo - 1))
    window = ([messages[first]] if first >= 0 else []) + messages[lo:hi]
    assert TurnCarry(messages, _carry).window(first, lo, hi) == carried_by(_carry, window)


@given(MESSAGES, st.data())
def test_any_window_of_ids_carries_what_the_token_model_gives_it(
    messages: list[dict[str, Any]], data: st.DataObject
) -> None:
    hi = data.draw(st.integers(1, len(messages)))
    ids = sorted(data.draw(st.sets(st.integers(0, hi - 1))))
    expected = carried_by(_carry, [messages[x] for x in ids])
    assert TurnCarry(messages, _carry).ids(ids, hi) == expected


ACCEPTANCE = Path(__file__).resolve().parents[2] / "acceptance"


@pytest.mark.parametrize(
    "path",
    [
        # the current turn's encrypted reasoning item is billed as input
        "openai_responses/pai_mixed_content_ordering_openai_responses_req2.json",
        # the current turn's call carries joined signature records
        "unseen2/gemini/rubyllm_chat_function_calling_gemini_gemini_2_5_flash_can_use_tools_"
        "without_parameters_i_bfc6ab81_req2.json",
    ],
)
def test_a_requests_window_carries_what_inspect_counts_for_it(path: str) -> None:
    from ctxview.core.providers.registry import provider
    from ctxview.core.requests import simulate
    from ctxview.sessions import load_session
    from ctxview.sessions.replay import replay

    session = load_session(ACCEPTANCE / path)
    tokens = provider(session.provider).tokens.of(session.model, session.format)
    assert tokens.carried_tokens(session.messages) > 0
    window = replay(session, as_sent=True).summary()["window"]
    (request,) = simulate(session).requests
    assert request.input_tokens == window["estimated_tokens"]
