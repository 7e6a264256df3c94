from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview import check_protocol


def codes(msgs: list[dict[str, Any]]) -> list[str]:
    return [p.code for p in check_protocol(msgs)]


def tu(tid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "f", "input": {}}


def tr(tid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": "x"}


def test_valid_returns_empty() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}, tu("a"), tu("b")]},
        {"role": "user", "content": [tr("a"), tr("b"), {"type": "text", "text": "more"}]},
        {"role": "assistant", "content": [tu("c")]},  # final, awaiting results: fine
    ]
    assert check_protocol(msgs) == []


def test_orphan_tool_result_text() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [{"type": "text", "text": "hi"}]},
        {"role": "user", "content": [{"type": "text", "text": "see"}, tr("gone")]},
    ]
    [p] = check_protocol(msgs)
    assert p.code == "orphan_tool_result" and p.index == 2 and p.severity == "error"
    assert p.message == (
        "messages.2.content.1: unexpected `tool_use_id` found in `tool_result` blocks: gone. "
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
    )


def test_orphan_after_pinned_user() -> None:
    msgs = [{"role": "user", "content": "go"}, {"role": "user", "content": [tr("x")]}]
    assert codes(msgs) == ["consecutive_same_role", "orphan_tool_result"]
    assert [p.severity for p in check_protocol(msgs)] == ["warning", "error"]


def test_unanswered_tool_use_text() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a"), tu("b")]},
        {"role": "user", "content": [tr("a")]},
    ]
    [p] = check_protocol(msgs)
    assert p.code == "unanswered_tool_use" and p.index == 1
    assert p.message == (
        "messages.1: `tool_use` ids were found without `tool_result` blocks immediately after: b. "
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
    )


def test_unanswered_when_merged_assistant_turn_is_followed_by_text() -> None:
    # the two assistant messages are one turn for the API; the next user turn has no result
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a")]},
        {"role": "assistant", "content": [{"type": "text", "text": "x"}]},
        {"role": "user", "content": "next"},
    ]
    assert "unanswered_tool_use" in codes(msgs)


def test_tool_result_not_first_text() -> None:
    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a")]},
        {"role": "user", "content": [{"type": "text", "text": "first"}, tr("a")]},
    ]
    [p] = check_protocol(msgs)
    assert p.code == "tool_result_not_first" and p.index == 2
    assert p.message == (
        "messages.2: Did not find 1 `tool_result` block(s) at the beginning of this message. "
        "Messages following `tool_use` blocks must begin with a matching number of `tool_result` blocks."
    )


def test_first_not_user_and_no_messages() -> None:
    [p] = check_protocol([{"role": "assistant", "content": "x"}])
    assert p.code == "first_not_user"
    assert p.message == 'messages: first message must use the "user" role'
    assert codes([]) == ["no_messages"]


def test_empty_content_and_text_block() -> None:
    msgs = [
        {"role": "user", "content": ""},
        {"role": "assistant", "content": [{"type": "text", "text": ""}]},
        {"role": "user", "content": []},
        {"role": "assistant", "content": []},  # optional final assistant may be empty
    ]
    got = check_protocol(msgs)
    assert [(p.index, p.code) for p in got] == [
        (0, "empty_content"),
        (1, "empty_text_block"),
        (2, "empty_content"),
    ]
    assert got[0].message == (
        "messages.0: all messages must have non-empty content except for the optional final "
        "assistant message"
    )
    assert got[1].message == "messages: text content blocks must be non-empty"


def test_consecutive_same_role_is_warning_only() -> None:
    msgs = [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]
    [p] = check_protocol(msgs)
    assert p.code == "consecutive_same_role" and p.severity == "warning"


def test_final_assistant_trailing_whitespace() -> None:
    msgs = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [{"type": "text", "text": "b "}]},
    ]
    assert codes(msgs) == ["final_assistant_trailing_whitespace"]


def test_final_assistant_string_content_ending_in_whitespace() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "the answer is\n"},
    ]
    [p] = check_protocol(msgs)
    assert (p.index, p.code, p.severity) == (1, "final_assistant_trailing_whitespace", "error")
    assert p.message == "messages: final assistant content cannot end with trailing whitespace"
    # not the final message: sent as history, accepted
    assert check_protocol([*msgs, {"role": "user", "content": "go on"}]) == []
    # blank is another rule (empty content is allowed last, whitespace alone is not content)
    assert codes([msgs[0], {"role": "assistant", "content": "x  "}, msgs[0]]) == []


def test_garbage_does_not_crash() -> None:
    msgs: list[Any] = [
        {"role": "user", "content": [1, None, "x", {"type": "tool_result"}]},
        {"role": "robot"},
        5,
    ]
    assert check_protocol(msgs)  # reports, never raises


def test_memoised_checker_equals_check_protocol() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ctxview import ConversationContext
    from ctxview.core.protocol import ProtocolChecker
    from tests.support.agentgen import agent_loop, turns_strategy

    @settings(max_examples=80, deadline=None)
    @given(
        turns=turns_strategy,
        maxes=st.lists(st.integers(1, 15), min_size=1, max_size=4),
        seed=st.integers(0, 99),
    )
    def run(turns: list[list[int]], maxes: list[int], seed: int) -> None:
        checker = ProtocolChecker()
        ctx = ConversationContext(max_context_messages=maxes[0])
        for k, m in enumerate(agent_loop(turns, seed)):
            ctx.add_message(m)
            if k % 5 == 0:
                ctx.max_context_messages = maxes[k % len(maxes)]
            # the real check on the window, and the memoised one on (id, message) entries
            assert checker.check(ctx.entries(), "sys") == check_protocol(ctx.messages, "sys")

    run()


def test_memoised_checker_reindexes_texts() -> None:
    from ctxview.core.protocol import ProtocolChecker

    msgs = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a")]},
        {"role": "user", "content": [tr("a")]},
        {"role": "user", "content": [tr("zz")]},
    ]
    checker = ProtocolChecker()
    entries = list(enumerate(msgs))
    assert checker.check(entries) == check_protocol(msgs)
    # the same pairs at other positions: cached problems must carry the new indexes
    shifted = [
        (10, {"role": "user", "content": "x"}),
        (11, {"role": "assistant", "content": "y"}),
        *[(i + 20, m) for i, m in entries[1:]],
    ]
    assert checker.check(shifted) == check_protocol([m for _, m in shifted])


def _full_check(messages: list[Any], system: Any = None) -> list[Any]:
    """check_protocol with the plain-turn shortcut switched off (every turn checked in full)."""
    from ctxview.core import protocol

    original = protocol._plain_turn
    protocol._plain_turn = lambda *a: False  # type: ignore[assignment]
    try:
        return check_protocol(messages, system)
    finally:
        protocol._plain_turn = original


@pytest.mark.slow
def test_plain_turn_shortcut_agrees_with_the_full_check_on_damaged_loops() -> None:
    """``_plain_turn`` (a one-message turn of the usual shape with nothing wrong, told without
    building problems) never hides a problem: on generated loops broken by every kind of damage,
    on every window of them, the check with it is the check without it."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.support.agentgen import damaged_loops

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(msgs=damaged_loops(), data=st.data())
    def run(msgs: list[Any], data: Any) -> None:
        n = len(msgs)
        lo = data.draw(st.integers(0, n))
        hi = data.draw(st.integers(lo, n))
        # the random window, and every window ending at each message (the last turn has
        # rules of its own)
        for window in (msgs[lo:hi], *(msgs[:k] for k in range(1, n + 1))):
            assert check_protocol(window) == _full_check(window)

    run()


def test_plain_turn_shortcut_covers_the_usual_loop() -> None:
    """The shortcut serves the usual turns (else it is not worth its code): every turn of a
    clean tool loop but the first (a warning rule applies to the first turn only when it is an
    assistant's) is told plain."""
    from ctxview.core.protocol import _plain_turn

    msgs: list[Any] = [{"role": "user", "content": "go"}]
    for k in range(3):
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "reading"},
                    {"type": "tool_use", "id": f"t{k}", "name": "read", "input": {}},
                ],
            }
        )
        msgs.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{k}"}]})
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    n = len(msgs)
    for i in range(n):
        prev = msgs[i - 1 : i] if i else None
        nxt = msgs[i + 1 : i + 2] if i < n - 1 else None
        assert _plain_turn(prev, msgs[i : i + 1], nxt, i == 0, i == n - 1)
    assert check_protocol(msgs) == []
    # and not a tool_use left unanswered, nor trailing whitespace at the end
    assert not _plain_turn(None, msgs[1:2], [{"role": "user", "content": "hi"}], False, False)
    tail = [{"role": "assistant", "content": [{"type": "text", "text": "done "}]}]
    assert not _plain_turn(msgs[-2:-1], tail, None, False, True)


def test_the_request_shape_in_the_apis_words() -> None:
    """The shape the API validates before its own rules: fields and types of each block kind,
    a message's keys and content, in the API's validation-error form."""
    msgs: list[Any] = [
        {"role": "user", "content": "go", "cache_control": {"type": "ephemeral"}},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "a", "input": "x"}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "a", "content": {"text": "an object"}},
                {"type": "text", "text": {}},
                "a string",
                {"type": "image"},
            ],
        },
        {"role": "assistant", "content": 5},
    ]
    got = [(p.index, p.code, p.block, p.message) for p in check_protocol(msgs)]
    assert got == [
        (
            0,
            "invalid_message_key",
            None,
            "messages.0.cache_control: Extra inputs are not permitted",
        ),
        (1, "invalid_block_field", 0, "messages.1.content.0.tool_use.name: Field required"),
        (
            1,
            "invalid_block_field",
            0,
            "messages.1.content.0.tool_use.input: Input should be a valid dictionary",
        ),
        (
            2,
            "invalid_block_field",
            0,
            "messages.2.content.0.tool_result.content: Input should be a valid list",
        ),
        (
            2,
            "invalid_block_field",
            1,
            "messages.2.content.1.text.text: Input should be a valid string",
        ),
        (2, "invalid_block", 2, "messages.2.content.2: Input does not match the expected shape."),
        (2, "invalid_block_field", 3, "messages.2.content.3.image.source: Field required"),
        (3, "invalid_content", None, "messages.3.content: Input should be a valid list"),
    ]
    assert (
        check_protocol(["hello"])[0].message
        == "messages.0: Input does not match the expected shape."
    )
    no_type = check_protocol([{"role": "user", "content": [{"text": "x"}]}])
    assert [p.message for p in no_type] == ["messages.0.content.0.type: Field required"]
    # the usual shapes pass: tool_result content as a string or a list of content blocks
    ok = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a"), tu("b")]},
        {
            "role": "user",
            "content": [
                tr("a"),
                {
                    "type": "tool_result",
                    "tool_use_id": "b",
                    "content": [
                        {"type": "text", "text": "seen"},
                        {"type": "image", "source": {"type": "base64", "data": "AA=="}},
                    ],
                },
            ],
        },
    ]
    assert check_protocol(ok) == []


@pytest.mark.parametrize(
    ("value", "said"),
    [
        (None, "got None"),
        ("not a list", "got a str"),
        (5, "got a int"),
        ({"model": "m", "messages": []}, "pass its 'messages'"),
    ],
)
def test_what_is_not_a_list_of_messages_is_a_type_error(value: Any, said: str) -> None:
    with pytest.raises(TypeError, match="expected a list of messages") as caught:
        check_protocol(value)
    assert said in str(caught.value)


def test_the_report_says_whether_the_api_accepts() -> None:
    from ctxview import check_request

    warned = check_request([{"role": "assistant", "content": "hi"}])
    assert warned.ok and [p.code for p in warned] == ["first_not_user"]
    assert warned.errors == [] and len(warned.warnings) == 1 and len(warned) == 1
    rejected = check_request([{"role": "user", "content": ""}])
    assert not rejected.ok and [p.code for p in rejected.errors] == ["empty_content"]
    assert rejected[0] is rejected.problems[0] and list(rejected) == check_protocol(
        [{"role": "user", "content": ""}]
    )
    assert rejected.to_dict()["ok"] is False
    assert check_request([{"role": "user", "content": "hi"}]).ok


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)
_block_like = st.one_of(
    _json,
    st.fixed_dictionaries(
        {
            "type": st.one_of(
                st.sampled_from(["text", "tool_use", "tool_result", "thinking", "image"]), _json
            )
        },
        optional={
            "text": _json,
            "id": st.one_of(st.just("t"), _json),
            "tool_use_id": st.one_of(st.just("t"), _json),
            "name": _json,
            "input": _json,
            "content": _json,
            "source": _json,
        },
    ),
)
_message_like = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"role": st.one_of(st.sampled_from(["user", "assistant", "system"]), _json)},
        optional={"content": st.one_of(_json, st.lists(_block_like, max_size=3)), "extra": _json},
    ),
)


@settings(max_examples=300, deadline=None)
@given(msgs=st.lists(_message_like, max_size=6), system=_json)
def test_any_json_is_checked_without_raising_and_counted_alike(
    msgs: list[Any], system: Any
) -> None:
    """Any JSON value in ``messages`` (and ``system``): the check reports, never raises, and the
    replays' count of every window is the check's error count."""
    from ctxview.core.protocol import WindowErrors, errors

    problems = check_protocol(msgs, system)
    assert all(isinstance(p.message, str) for p in problems)
    roles = [m.get("role") if isinstance(m, dict) else None for m in msgs]
    werr = WindowErrors(msgs, roles, None)
    n = len(msgs)
    for first in range(n):
        for lo in range(first + 1, n + 1):
            for hi in range(lo, n + 1):
                window = [msgs[first], *msgs[lo:hi]]
                assert werr.errors(first, lo, hi) == len(errors(check_protocol(window)))


def test_tool_use_ids_repeated_in_one_message() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": [tu("a"), {"type": "text", "text": "and"}, tu("a")]},
        {"role": "user", "content": [tr("a")]},
    ]
    [p] = check_protocol(msgs)
    assert (p.index, p.code, p.block, p.ids) == (1, "duplicate_tool_use_id", 2, ("a",))
    assert p.message == "messages.1.content.2: `tool_use` ids must be unique"
    # the same id in a later message, answered each time: the API accepted it (a recorded 200,
    # tests/acceptance/anthropic_requests/pai_gemini_history_replay_11msgs_req5.json)
    again = [*msgs[:1], {"role": "assistant", "content": [tu("a")]}, msgs[2]]
    assert check_protocol([*again, *again[1:]]) == []


@pytest.mark.parametrize("tid", ["call 1", "mcp.server:tool", "toolu_\x1b[31m", "a/b", ""])
def test_a_tool_use_id_outside_the_apis_pattern_is_an_error(tid: str) -> None:
    """The API takes tool_use ids of letters, digits, ``_`` and ``-`` only (recorded 400s:
    tests/acceptance/error_texts.md); an id from another provider or an MCP server is refused."""
    msgs = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": tid, "name": "f", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "x"}]},
    ]
    got = [(p.index, p.code, p.block, p.message) for p in check_protocol(msgs)]
    assert got == [
        (
            1,
            "invalid_block_field",
            0,
            "messages.1.content.0.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'",
        )
    ]


def test_tool_use_ids_of_the_apis_pattern_pass() -> None:
    for tid in ("toolu_01AbC", "call_9-x", "0usajhl5"):
        msgs = [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": tid, "name": "f", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid}]},
        ]
        assert check_protocol(msgs) == []
