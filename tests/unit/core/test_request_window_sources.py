"""The window sources of ``ctxview.core.requests`` (the range form, the editing form) give the
same window per request as the context form, and the same requests (every field), on
generated sessions and recorded transcripts; the fast `requests --json` writer gives what
``json.dumps`` gives."""

from __future__ import annotations

import math
import random
import struct
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.cli import requests as cli_requests
from ctxview.cli.requests import requests_json, requests_report
from ctxview.core.protocol import WindowErrors, first_error_code
from ctxview.core.requests import compare, simulate
from ctxview.core.requests.shared import Shared
from ctxview.core.strategies import STRATEGIES
from ctxview.sessions.model import LoadedSession
from ctxview.textfmt import json_text
from tests.support.agentgen import damaged_loops
from tests.support.paths import ACCEPTANCE, FIXTURES
from tests.support.sessiongen import sessions


def _same_windows(session: LoadedSession, **kw: Any) -> None:
    """The rule every window source is held to: each request's window (transcript ids) is the
    one the context form gives."""
    every = range(len(session.messages) + len(session.off_branch or []) + 1)
    fast = simulate(session, **{**kw, "keep_windows": every})
    ref = simulate(session, _reference=True, **{**kw, "keep_windows": every})
    assert fast.windows == ref.windows
    assert sorted(fast.windows) == list(range(len(fast.requests)))


def _both(session: LoadedSession, **kw: Any) -> None:
    """Same window per request as the context form, then every other field of every request
    and of the log (prices, breaks, redundancy, kept windows, notes)."""
    _same_windows(session, **kw)
    fast = simulate(session, **kw)
    ref = simulate(session, _reference=True, **kw)
    assert fast.requests == ref.requests
    assert asdict(fast) == asdict(ref)


_RECORDED = sorted(
    [
        *(ACCEPTANCE / "claude_code").glob("*.jsonl"),
        *(FIXTURES / "anthropic_requests").glob("*.json"),
    ]
)


@pytest.mark.parametrize("path", _RECORDED, ids=lambda p: p.name[:40])
def test_every_window_source_gives_the_context_forms_windows_on_recorded_sessions(
    path: Path,
) -> None:
    """On real transcripts and request bodies, under every built-in strategy: the same window
    per request as the context form, and the same requests."""
    from ctxview.sessions import load_session

    s = load_session(path)
    for strategy in STRATEGIES:
        _both(s, strategy=strategy, max_context_messages=12, check=True)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    s=sessions(),
    strategy=st.sampled_from(["seed", "pair-safe", "token-budget", "low-water", None]),
    max_=st.one_of(st.none(), st.integers(1, 12)),
    budget=st.sampled_from([None, 40, 120, 400, 5000]),
    frac=st.sampled_from([None, 0.25, 0.5, 1.0]),
    check=st.booleans(),
    redundancy=st.booleans(),
    keep=st.lists(st.integers(0, 40), max_size=4),
)
def test_fast_replay_matches_the_reference(
    s: LoadedSession,
    strategy: str | None,
    max_: int | None,
    budget: int | None,
    frac: float | None,
    check: bool,
    redundancy: bool,
    keep: list[int],
) -> None:
    _both(
        s,
        max_context_messages=max_,
        strategy=strategy,
        max_context_tokens=budget,
        low_water_fraction=frac,
        check=check,
        redundancy=redundancy,
        keep_windows=keep,
        defaults={"model": "claude-sonnet-4-5"} if s.model is None else None,
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=sessions(), max_=st.integers(1, 9))
def test_compare_shares_its_work_without_changing_a_row(s: LoadedSession, max_: int) -> None:
    # the same rows, each strategy simulated alone by the reference replay
    _rows_match_the_reference(s, max_)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    s=sessions(),
    max_=st.integers(1, 9),
    strategy=st.sampled_from(
        ["seed", "pair-safe", "token-budget", "low-water", "clear-tool-uses", "clear-thinking"]
    ),
    trigger=st.sampled_from([1, 60, 100_000]),
)
def test_the_replays_sums_are_the_requests_figures(
    s: LoadedSession, max_: int, strategy: str, trigger: int
) -> None:
    """compare's rows from the replay's sums (no Request built) equal the rows counted from
    the requests of the same replay, whichever window source replays it."""
    import ctxview.core.requests as R
    from ctxview.core.clearing import parse_context_editing
    from ctxview.core.requests import Totals
    from ctxview.core.requests.replay import compare_row

    kw: dict[str, Any] = {
        "max_context_messages": max_,
        "strategy": strategy,
        "check": True,
        "redundancy": False,
        "defaults": {"model": "claude-sonnet-4-5"} if s.model is None else None,
        "context_editing": parse_context_editing(
            {
                "clear_tool_uses": {"trigger": trigger, "keep": 1},
                "clear_thinking": {"keep": 1},
            }
        ),
    }
    full = R.simulate(s, **kw)
    summed = R.simulate(s, **kw, _totals=Totals())
    assert summed.summary is not None
    assert summed.requests == [] and summed.summary.requests == len(full.requests)
    assert compare_row(summed) == compare_row(full)
    assert summed.evicted_messages == full.evicted_messages
    assert summed.windows == full.windows  # the last window is kept either way


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    s=sessions(),
    strategy=st.sampled_from([None, "seed", "pair-safe"]),
    path=st.sampled_from(["a.json", 'we"ird\\\u202e\x85\x7f名.json']),
    piece=st.sampled_from([1, 2, 3, 1024]),
)
def test_requests_json_is_the_reports_json(
    s: LoadedSession, strategy: str | None, path: str, piece: int
) -> None:
    """The requests written a piece at a time (``_PIECE`` requests each, here also 1 to 3 so
    the sessions of a test cross the pieces' bounds) are the report's JSON."""
    s.path = path
    cli_requests._PIECE = piece
    log = simulate(s, strategy=strategy)
    for r in log.requests[::3]:
        r.timestamp = (r.timestamp or "") + '\u2066"\x9b'
        r.cost_usd = None if r.cost_usd is None else r.cost_usd / 3
    try:
        assert requests_json(log, s) == json_text(requests_report(log, s))
    finally:
        cli_requests._PIECE = 1024


def test_window_errors_match_a_full_check_on_every_window() -> None:
    """Every window [first] + [lo, hi) of a damaged conversation: the turn-wise count is the
    full check's."""
    from ctxview.core.protocol import check_protocol
    from tests.support.agentgen import agent_loop

    msgs = agent_loop([[1, 2], [3], [], [1, 1, 1], [2]], seed=3)
    msgs[5]["content"] = [{"type": "text", "text": ""}]
    msgs.insert(9, {"role": "user", "content": "again"})
    msgs.insert(14, {"role": "system", "content": "note"})
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": "end  "}]})
    werr = WindowErrors(msgs, Shared(msgs).roles, None)
    n = len(msgs)
    for first in range(n):
        for lo in range(first + 1, n + 1):
            for hi in range(lo, n + 1):
                window = [msgs[first], *msgs[lo:hi]]
                problems = check_protocol(window)
                full = sum(1 for p in problems if p.severity == "error")
                assert werr.errors(first, lo, hi) == full, (first, lo, hi)
                # and the code of its first error, as the API would name it
                assert werr.error(first, lo, hi) == first_error_code(problems), (first, lo, hi)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(msgs=damaged_loops(compaction=False), data=st.data())
def test_window_errors_match_a_full_check_on_damaged_loops(
    msgs: list[dict[str, Any]], data: Any
) -> None:
    """Windows [first] + [lo, hi) of generated, damaged conversations (orphaned, doubled and
    missing results, empty content, blank texts, thinking and server blocks, consecutive roles,
    system and invalid roles): the count from the message summaries is the full check's. One
    WindowErrors answers all of them (its memos carry over from window to window)."""
    from ctxview.core.protocol import check_protocol

    n = len(msgs)
    werr = WindowErrors(msgs, Shared(msgs).roles, None)
    if n <= 9:
        windows = [
            (f, lo, hi) for f in range(n) for lo in range(f + 1, n + 1) for hi in range(lo, n + 1)
        ]
    else:
        windows = []
        for _ in range(40):
            f = data.draw(st.integers(0, n - 1))
            lo = data.draw(st.integers(f + 1, n))
            windows.append((f, lo, data.draw(st.integers(lo, n))))
    for f, lo, hi in windows:
        window = [msgs[f], *msgs[lo:hi]]
        problems = check_protocol(window)
        full = sum(1 for p in problems if p.severity == "error")
        assert werr.errors(f, lo, hi) == full, (f, lo, hi)
        assert werr.error(f, lo, hi) == first_error_code(problems), (f, lo, hi)


def _turn_error_codes() -> set[str]:
    """Every error code a rule of ``core/protocol.py`` reports: its turn rules' ``add(r, code,
    ...)`` calls and its message rules' ``_local(code, ...)`` calls."""
    import ast

    import ctxview.core.protocol as protocol

    codes: set[str] = set()
    for node in ast.walk(ast.parse(Path(protocol.__file__).read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None)
        if name in ("add", "_local"):
            code, *rest = node.args[1:] if name == "add" else node.args
            warning = any(isinstance(a, ast.Constant) and a.value == "warning" for a in rest)
            if isinstance(code, ast.Constant) and not warning:
                codes.add(code.value)
    return codes


def _use(tid: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": "f", "input": {}}


def _result(tid: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": tid, "content": "r"}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


#: a conversation breaking each error rule of ``core/protocol.py`` (with turns around it)
_RULE_CASES: dict[str, list[dict[str, Any]]] = {
    "invalid_role": [
        {"role": "user", "content": "hi"},
        {"role": "tool", "content": "x"},
        {"role": "assistant", "content": "ok"},
    ],
    "empty_content": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": []},
        {"role": "user", "content": ""},
        {"role": "assistant", "content": "ok"},
    ],
    "empty_text_block": [
        {"role": "user", "content": [_text("")]},
        {"role": "assistant", "content": [_text("a"), _text("")]},
    ],
    "whitespace_text_block": [
        {"role": "user", "content": [_text("  ")]},
        {"role": "assistant", "content": [_text(" ")]},
        {"role": "assistant", "content": [_text(" "), _use("a")]},
        {"role": "user", "content": [_result("a")]},
    ],
    "tool_result_in_assistant": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_text("a"), _result("a")]},
        {"role": "user", "content": "more"},
    ],
    "tool_use_in_user": [
        {"role": "user", "content": [_use("a")]},
        {"role": "assistant", "content": "ok"},
    ],
    "final_thinking": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [{"type": "thinking", "thinking": "t", "signature": "s"}]},
        {"role": "user", "content": "more"},
    ],
    "thinking_not_first": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_text("a")]},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "t", "signature": "s"}, _text("b")],
        },
        {"role": "user", "content": "more"},
    ],
    "final_assistant_trailing_whitespace": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_text("end  ")]},
        {"role": "user", "content": "more"},
        {"role": "assistant", "content": [_text("end ")]},
        {"role": "user", "content": "and as a string?"},
        {"role": "assistant", "content": "end\n"},
    ],
    "orphan_server_tool_result": [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "web_search_tool_result", "tool_use_id": "s1", "content": []},
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}},
                _text("a"),
            ],
        },
        {"role": "user", "content": "more"},
    ],
    "unanswered_tool_use": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_use("a"), _use("b")]},
        {"role": "user", "content": [_result("b")]},
        {"role": "assistant", "content": [_use("c")]},
        {"role": "user", "content": "no result"},
    ],
    "tool_result_not_first": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_use("a")]},
        {"role": "user", "content": [_text("x"), _result("a")]},
        {"role": "assistant", "content": "ok"},
    ],
    "orphan_tool_result": [
        {"role": "user", "content": [_result("z")]},
        {"role": "assistant", "content": [_use("a")]},
        {"role": "user", "content": [_result("a"), _result("b")]},
    ],
    "duplicate_tool_result": [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": [_use("a"), _use("b")]},
        {"role": "user", "content": [_result("a"), _result("a"), _result("b")]},
    ],
}


_RULE_CASES.update(
    {
        "duplicate_tool_use_id": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [_use("a")]},
            {"role": "user", "content": [_result("a")]},
            # an id again in a later message: accepted (a recorded 200); twice in one: not
            {"role": "assistant", "content": [_use("a"), _use("b"), _use("b")]},
            {"role": "user", "content": [_result("a"), _result("b")]},
            {"role": "assistant", "content": [_use("c")]},
            {"role": "user", "content": [_result("c")]},
            {"role": "assistant", "content": [_text("again"), _use("c"), _use("a")]},
            {"role": "user", "content": [_result("c"), _result("a")]},
        ],
        "invalid_message": [
            {"role": "user", "content": "hi"},
            "not a message",  # type: ignore[dict-item]
            {"role": "assistant", "content": "ok"},
        ],
        "invalid_message_key": [
            {"role": "user", "content": "hi", "cache_control": {"type": "ephemeral"}},
            {"role": "assistant", "content": "ok", "id": "msg_1"},
        ],
        "invalid_content": [
            {"role": "user", "content": 5},
            {"role": "assistant"},
            {"role": "user", "content": {"type": "text", "text": "an object"}},
        ],
        "invalid_block": [
            {"role": "user", "content": ["just a string", _text("x")]},
            {"role": "assistant", "content": [_text("a"), 3]},
        ],
        "invalid_block_type": [
            {"role": "user", "content": [{"type": {"nested": 1}, "text": "x"}]},
            {"role": "assistant", "content": [{"text": "untyped"}]},
        ],
        "invalid_block_field": [
            {"role": "user", "content": [_text("hi"), {"type": "text", "text": {}}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "a", "input": "x"},
                    {"type": "tool_use", "name": "f", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "a", "content": {"text": "obj"}},
                    {"type": "tool_result", "tool_use_id": "None", "content": [{"type": "x"}]},
                    {"type": "image"},
                ],
            },
            {"role": "assistant", "content": "ok"},
        ],
    }
)


def test_every_error_rule_of_the_protocol_has_a_case() -> None:
    """A new error rule in ``core/protocol.py`` needs a case here, and with it the window index
    is held to the rule (the next test)."""
    assert set(_RULE_CASES) == _turn_error_codes()


@pytest.mark.parametrize("code", sorted(_RULE_CASES))
def test_the_window_index_counts_each_error_rule_as_the_full_check(code: str) -> None:
    """Each rule broken: the full check reports it, and every window [first] + [lo, hi) of the
    conversation gets the full check's error count from :class:`WindowErrors`."""
    from ctxview.core.protocol import check_protocol

    msgs = _RULE_CASES[code]
    assert code in {p.code for p in check_protocol(msgs) if p.severity == "error"}
    roles = [m.get("role") if isinstance(m, dict) else None for m in msgs]
    werr = WindowErrors(msgs, roles, None)
    n = len(msgs)
    for first in range(n):
        for lo in range(first + 1, n + 1):
            for hi in range(lo, n + 1):
                window = [msgs[first], *msgs[lo:hi]]
                problems = check_protocol(window)
                full = sum(1 for p in problems if p.severity == "error")
                assert werr.errors(first, lo, hi) == full, (first, lo, hi)
                # and the code of its first error, as the API would name it
                assert werr.error(first, lo, hi) == first_error_code(problems), (first, lo, hi)


def test_the_window_index_rejects_as_the_request_rules() -> None:
    """The rules of the request as a whole: no messages, an empty system text block."""
    msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}]
    assert WindowErrors(msgs, Shared(msgs).roles, None).rejected(-1, 0, 0)
    assert WindowErrors(msgs, Shared(msgs).roles, None).error(-1, 0, 0) == "no_messages"
    assert not WindowErrors(msgs, Shared(msgs).roles, None).rejected(0, 1, 2)
    assert WindowErrors(msgs, Shared(msgs).roles, None).error(0, 1, 2) is None
    system = [{"type": "text", "text": ""}]
    assert WindowErrors(msgs, Shared(msgs).roles, system).rejected(0, 1, 2)
    assert WindowErrors(msgs, Shared(msgs).roles, system).error(0, 1, 2) == (
        "empty_system_text_block"
    )


def test_a_strategy_registered_under_a_builtin_name_is_replayed_the_reference_way() -> None:
    from ctxview.core.requests.range_form import strategy_kind

    assert strategy_kind("seed") == 0 and strategy_kind("nope") is None
    original = STRATEGIES["seed"]

    class Other:
        name = "seed"
        description = "not the seed"

        def truncate(self, window: Any) -> None:
            original.truncate(window)

    STRATEGIES["seed"] = Other()  # type: ignore[assignment]
    try:
        assert strategy_kind("seed") is None
    finally:
        STRATEGIES["seed"] = original


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=60),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_texts = st.one_of(
    st.text(max_size=80), st.just("def f(x):\n    return {x[0]: y_1 for y in z}; " * 3)
)
_blocks = st.one_of(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.one_of(_texts, _json_values)}),
    st.fixed_dictionaries(
        {"type": st.just("tool_use"), "id": st.just("t"), "name": st.text(max_size=8)},
        optional={"input": _json_values},
    ),
    st.fixed_dictionaries(
        {"type": st.just("tool_result"), "tool_use_id": st.just("t")},
        optional={
            "content": st.one_of(
                _texts, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": _texts}))
            )
        },
    ),
    st.fixed_dictionaries({"type": st.sampled_from(["thinking", "compaction", "other"])}),
    _texts,
    _json_values,
)


@settings(max_examples=300, deadline=None)
@given(content=st.one_of(_texts, st.lists(_blocks, max_size=4), _json_values))
def test_message_features_fast_shapes_match_the_block_walk(content: Any) -> None:
    from ctxview.core.calibrate import (
        DEFAULT_RATES,
        Rates,
        _block_features,
        _text_features,
        message_features,
    )
    from ctxview.core.tokens import _json_len

    acc = [0.0] * 6
    if isinstance(content, str):
        _text_features(content, acc, False)
    elif isinstance(content, list):
        for b in content:
            _block_features(b, acc)
    else:
        acc[2] += _json_len(content)
    got = message_features({"role": "user", "content": content})
    assert got == tuple(acc) and all(type(x) is float for x in got)
    for rates in (DEFAULT_RATES, Rates((0.3, 0.21, 0.33, 0.27, 0.19), 3.7)):
        assert rates.tokens_many([got, got]) == [rates.tokens(got)] * 2
    # without telling code from prose (what the replay does under uniform rates): the same
    # tokens, code counted as prose
    plain = message_features({"role": "user", "content": content}, classify=False)
    assert plain[1] == 0.0 and plain[0] == got[0] + got[1] and plain[2:] == got[2:]
    for rates in (DEFAULT_RATES, Rates((0.5,) * 5, 2.0), Rates((0.125,) * 5, 4.0)):
        assert rates.uniform
        assert rates.tokens_many([plain]) == rates.tokens_many([got])
    assert not Rates((0.3, 0.21, 0.33, 0.27, 0.19), 3.7).uniform
    assert not Rates((0.3,) * 5, 4.0).uniform  # 0.3 * n is rounded: the split could matter


@settings(max_examples=300, deadline=None)
@given(
    contents=st.lists(st.one_of(_texts, st.lists(_blocks, max_size=4), _json_values), max_size=4),
    role=st.sampled_from(["user", "assistant", None]),
)
def test_the_uniform_walk_is_the_features_and_the_keys(contents: list[Any], role: Any) -> None:
    """Shared.uniform_tokens (one walk: tokens, redundancy keys, roles, the messages that may
    hold a compaction block) is what the features, the keys and the roles give, under every
    uniform rate."""
    from ctxview.core.calibrate import DEFAULT_RATES, Rates, message_features
    from ctxview.core.compaction import has_compaction
    from ctxview.core.requests.points import _content_keys

    msgs: list[dict[str, Any]] = [{"role": role, "content": c} for c in contents]
    msgs.append({"role": "assistant"})  # no content at all
    long = "the same result " * 10
    for _ in range(2):  # repeated results; one whose text is not a string (unhashable as is)
        msgs.append({"role": "user", "content": [{"type": "tool_result", "content": long}]})
        msgs.append({"role": "user", "content": [{"type": "text", "text": long}]})
        inner = [{"type": "text", "text": long}, {"type": "text", "text": {"a": [1]}}]
        msgs.append({"role": "user", "content": [{"type": "tool_result", "content": inner}]})
    msgs.append({"role": "assistant", "content": [{"type": "compaction", "content": "s"}]})
    for rates in (DEFAULT_RATES, Rates((0.5,) * 5, 2.0), Rates((0.125,) * 5, 4.0)):
        sh = Shared(msgs)
        tok = sh.uniform_tokens(rates, keys=True, estimates=True)
        assert tok == rates.tokens_many([message_features(m) for m in msgs])
        assert sh.est_prefix == Shared(msgs).est_prefix  # token-budget's, from the same walk
        want = [_content_keys(m, rates) for m in msgs]
        for got in (sh.content_keys(rates), Shared(msgs).content_keys(rates)):
            # the same keys, each as an int: equal keys get equal ints, distinct ones distinct
            assert [[t for _, t in ks] for ks in got] == [[t for _, t in ks] for ks in want]
            pairs = [
                (k, g)
                for ks, gs in zip(want, got, strict=True)
                for (k, _), (g, _) in zip(ks, gs, strict=True)
            ]
            assert all(type(g) is int for _, g in pairs)
            assert len({k for k, _ in pairs}) == len({g for _, g in pairs}) == len(set(pairs))
        assert sh.roles == [m.get("role") for m in msgs]
        assert sh._unusual is not None
        assert {i for i in range(len(msgs)) if has_compaction(msgs[i])} <= set(sh._unusual)
        assert sh.has_compaction()
    with pytest.raises(ValueError):
        Shared(msgs).uniform_tokens(Rates((0.3, 0.21, 0.33, 0.27, 0.19), 3.7), keys=False)


@settings(max_examples=100, deadline=None)
@given(s=sessions(damaged=True))
def test_the_layout_from_the_walk_is_the_full_layout(s: LoadedSession) -> None:
    """Request points from the walk's roles and compaction starts from its unusual messages are
    the ones found by walking every message."""
    from ctxview.core.calibrate import DEFAULT_RATES
    from ctxview.core.requests.points import _layout

    sh = Shared(s.messages)
    sh.uniform_tokens(DEFAULT_RATES, keys=False)
    assert sh.layout(s) == _layout(s)


def test_session_features_classify_only_where_the_rates_can_tell() -> None:
    from ctxview.core.calibrate import Rates, message_features
    from ctxview.core.requests.points import session_features

    code = "def f(x):\n    return {'a': [x, x]}  # " + "(x) = [y]; " * 10
    msgs = [{"role": "user", "content": code}, {"role": "assistant", "content": "fine " * 20}]
    s = LoadedSession("x.json", "messages", msgs, [{}, {}])
    full = [message_features(m) for m in msgs]
    assert full[0][1] > 0  # it is code
    plain = session_features(s)
    assert plain[0][1] == 0.0 and plain[0][0] == full[0][1]
    assert session_features(s, Rates((0.3, 0.21, 0.33, 0.27, 0.19), 3.7)) == full
    s.format = "claude-code"  # calibrated from recorded usage: per kind
    assert session_features(s) == full


_GC_CHECK = """
import gc
from ctxview.sessions.model import freeze_long_lived, gc_paused

class Node:
    pass

assert gc.isenabled() and gc.get_freeze_count() == 0
started = []

def seen(phase, info):
    if phase == "start":
        started.append(info["generation"])

gc.callbacks.append(seen)
try:
    with gc_paused():
        kept = [[k] for k in range(50_000)]
        a, b = Node(), Node()
        a.other, b.other = b, a
    # all of it went to the oldest generation at once: the allocations that follow do not
    # start a young collection over the 50,000 lists (without the ageing, the first did)
    after = [[k] for k in range(max(1, gc.get_threshold()[0] // 2))]
finally:
    gc.callbacks.remove(seen)
assert started == [] and after, started
assert gc.get_freeze_count() == 0
assert gc.isenabled()
del a, b
assert gc.collect() >= 2  # the cycle is still garbage to a full collection
# something frozen on purpose (the app's loaded session) stays frozen
freeze_long_lived()
frozen = gc.get_freeze_count()
with gc_paused():
    more = [[k] for k in range(1000)]
assert gc.get_freeze_count() == frozen
print("ok", len(kept), len(more))
"""


def test_gc_paused_ages_what_it_built_and_freezes_nothing() -> None:
    """In a fresh interpreter: the test process's own GC state (an app test froze its session)
    must not decide it."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-c", _GC_CHECK], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.split() == ["ok", "50000", "1000"], r.stderr


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    s=sessions(),
    strategy=st.sampled_from(["clear-tool-uses", "clear-thinking"]),
    max_=st.one_of(st.none(), st.integers(1, 12)),
    trigger=st.sampled_from([1, 60, 400, 100_000]),
    keep=st.integers(0, 3),
    least=st.sampled_from([0, 50]),
    check=st.booleans(),
    pins=st.lists(st.integers(0, 30), max_size=2),
)
def test_context_editing_replay_matches_the_reference(
    s: LoadedSession,
    strategy: str,
    max_: int | None,
    trigger: int,
    keep: int,
    least: int,
    check: bool,
    pins: list[int],
) -> None:
    """The context-editing strategies check each window (all of its segment's messages) with
    the shared window check: the same rejections as the reference's incremental check."""
    from ctxview.core.clearing import parse_context_editing

    editing = parse_context_editing(
        {
            "clear_tool_uses": {"trigger": trigger, "keep": keep, "clear_at_least": least},
            "clear_thinking": {"keep": max(1, keep)},
        }
    )
    s.saved_pinned = [p for p in pins if p < len(s.messages)]
    _both(
        s,
        max_context_messages=max_,
        strategy=strategy,
        context_editing=editing,
        check=check,
        redundancy=check,
        keep_windows=[0, 3],
        defaults={"model": "claude-sonnet-4-5"} if s.model is None else None,
    )


def _money_values() -> list[float]:
    """Values of every kind the rule must hold for, seeded (a failure names its values): any
    magnitude and any mantissa, six decimals exactly, whole numbers, a tie at the seventh decimal, and the
    ends of the range. A plain loop checks ten times the values hypothesis drew in 3000 examples
    (they cost 2 ms each, the check microseconds)."""
    rnd = random.Random(6)
    values = [1e-4, math.nextafter(1e-4, 1), math.nextafter(1e9, 0), 0.5, 1.0000005, 2.675]
    for _ in range(6000):
        values.append(10 ** rnd.uniform(-4, 9))  # any magnitude
        values.append(rnd.uniform(1e-4, 1e9))  # mostly large: 15 and more significant digits
        values.append(rnd.randint(1, 999_999_999) / 1_000_000)  # exactly six decimals
        values.append(float(rnd.randint(1, 999_999_999)))  # whole: "12.0", as repr writes it
        values.append(rnd.randint(1, 10**15) / 1e6 + 5e-7)  # a tie at the seventh decimal
        values.append(struct.unpack("<d", rnd.randbytes(8))[0])  # any bit pattern in range
    return [v for v in values if 1e-4 <= v < 1e9]


def test_money_text_is_repr_of_round() -> None:
    from ctxview.cli.requests import money_text

    values = _money_values()
    assert len(values) > 30_000
    wrong = [v for v in values if money_text(v) != repr(round(v, 6))]
    assert not wrong, wrong[:10]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    s=sessions(damaged=True),
    strategy=st.sampled_from(["clear-tool-uses", "clear-thinking"]),
    max_=st.one_of(st.none(), st.integers(1, 12)),
    trigger=st.sampled_from([("input_tokens", 1), ("input_tokens", 300), ("tool_uses", 2)]),
    keep=st.integers(0, 3),
    least=st.sampled_from([0, 50]),
    inputs=st.sampled_from([False, True, ["read_file"]]),
    exclude=st.sampled_from([[], ["read_file"], ["web_search"]]),
    check=st.booleans(),
    pins=st.lists(st.integers(0, 30), max_size=2),
)
def test_context_editing_fast_replay_matches_the_reference_on_damaged_sessions(
    s: LoadedSession,
    strategy: str,
    max_: int | None,
    trigger: tuple[str, int],
    keep: int,
    least: int,
    inputs: Any,
    exclude: list[str],
    check: bool,
    pins: list[int],
) -> None:
    """range_form.replay_editing (no ConversationContext; the shared window check) gives
    every field of every request the reference replay gives, on sessions broken in every way
    the protocol check knows, with compactions, thinking and server blocks."""
    from ctxview.core.clearing import parse_context_editing

    editing = parse_context_editing(
        {
            "clear_tool_uses": {
                "trigger": {"type": trigger[0], "value": trigger[1]},
                "keep": keep,
                "clear_at_least": least,
                "clear_tool_inputs": inputs,
                "exclude_tools": exclude,
            },
            "clear_thinking": {"keep": "all" if keep == 3 else max(1, keep)},
        }
    )
    s.saved_pinned = [p for p in pins if p < len(s.messages)]
    _both(
        s,
        max_context_messages=max_,
        strategy=strategy,
        context_editing=editing,
        check=check,
        redundancy=not check,
        keep_windows=[0, 2, 5],
        defaults={"model": "claude-sonnet-4-5"} if s.model is None else None,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(s=sessions(damaged=True), max_=st.integers(1, 9))
def test_compare_matches_the_reference_on_damaged_sessions(s: LoadedSession, max_: int) -> None:
    """compare's rows (the shared window check, the fast replays of all six strategies) are the
    reference replay's, strategy by strategy, on damaged sessions."""
    _rows_match_the_reference(s, max_)


@settings(max_examples=300, deadline=None)
@given(content=st.one_of(_texts, st.lists(_blocks, max_size=4), _json_values))
def test_the_shared_estimate_is_estimate_message(content: Any) -> None:
    """token-budget's per-message estimate (Shared.est_prefix, the usual shapes inline)."""
    from ctxview.core.tokens import estimate_message

    msgs = [{"role": "user", "content": content}, {"role": "assistant"}]
    assert Shared(msgs).est_prefix == [
        0,
        estimate_message(msgs[0]),
        estimate_message(msgs[0]) + estimate_message(msgs[1]),
    ]


def test_context_editing_with_a_pinned_tool_pair_is_the_references() -> None:
    """A pinned message at the front of the window's tail is held apart from it, where the
    edits do not see it (hypothesis found: the pinned tool_use's result was cleared by the fast
    replay, not by the reference). Pinned sessions take the reference replay."""
    from ctxview.core.clearing import parse_context_editing

    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": [{"type": "text", "text": ""}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "calling"},
                {"type": "tool_use", "id": "toolu_0000", "name": "read_file", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_0000"}]},
        {"role": "user", "content": [{"type": "text", "text": ""}]},
        {"role": "assistant", "content": [{"type": "text", "text": ""}]},
    ]
    metas: list[dict[str, Any]] = [{}, {"model": "<synthetic>"}, {}, {}, {}]
    s = LoadedSession("gen.json", "claude-code", msgs, metas, model="claude-sonnet-4-5")
    s.saved_pinned = [2]
    editing = parse_context_editing({"clear_tool_uses": {"trigger": 1, "keep": 0}})
    _both(s, strategy="clear-tool-uses", context_editing=editing, keep_windows=[0])


def _rows_match_the_reference(s: LoadedSession, max_: int) -> None:
    """compare's rows are the reference replay's, strategy by strategy: every figure of the
    row, summed by the fast replays or counted from the reference's requests."""
    import ctxview.core.requests as R
    from ctxview.core.requests.replay import compare_row

    rows = compare(s, max_context_messages=max_)
    assert [r["name"] for r in rows] == list(STRATEGIES)
    for row in rows:
        ref = R.simulate(
            s,
            max_context_messages=max_,
            strategy=row["name"],
            check=True,
            redundancy=False,
            _reference=True,
        )
        assert row["requests"] == len(ref.requests)
        assert row["rejected_requests"] == sum(r.rejected for r in ref.requests)
        rejected = [r.index for r in ref.requests if r.rejected]
        assert row["first_rejected"] == (rejected[0] if rejected else None)
        assert row["evicted_messages"] == ref.evicted_messages
        assert row["cache_read"] == ref.totals()["cache_read"]
        assert row["cost_usd"] == ref.totals()["cost_usd"]
        assert {k: v for k, v in row.items() if k != "name"} == {
            **compare_row(ref),
            "evicted_messages": ref.evicted_messages,
        }
        assert ref.summary is None


@settings(max_examples=200, deadline=None)
@given(
    roles=st.lists(
        st.sampled_from(["user", "assistant", "system", "tool", None, 3, ("x",), ["x"]]),
        max_size=12,
    ),
    alternate=st.booleans(),
)
def test_window_errors_turns_are_protocol_turns(roles: list[Any], alternate: bool) -> None:
    """The one-message-turns shortcut gives what ``protocol._turns`` gives, on any roles."""
    from ctxview.core.protocol import _turns

    if alternate:  # the usual conversation (the shortcut's case)
        roles = ["user" if k % 2 == 0 else "assistant" for k in range(len(roles))]
    msgs = [{"role": r, "content": "x"} for r in roles]
    w = WindowErrors(msgs, roles, None)
    turns = _turns(roles)
    assert w.turns == turns
    assert w.turn_of == [t for t, (a, b) in enumerate(turns) for _ in range(b - a)]


@pytest.mark.parametrize("least", [0, 300, 1500])
@pytest.mark.parametrize("keep", [0, 1, 3])
@pytest.mark.parametrize("two_models", [False, True])
def test_clearing_replay_reads_a_prefix_inside_the_savings_as_the_reference(
    least: int, keep: int, two_models: bool
) -> None:
    """A session long enough to be cached (the generated ones stay under the model's minimum,
    where every read is 0). With ``clear_at_least`` holding back uses until several results
    clear at once, the cache breaks at the oldest of them, a prefix that ends before the
    newest saving; with two models taking turns, each reads its own entry, written two
    requests ago, again a prefix inside the savings. The fast replay asks its tree of
    savings what such a prefix saved."""
    from ctxview.core.clearing import parse_context_editing

    msgs: list[dict[str, Any]] = [{"role": "user", "content": "read every file"}]
    for k in range(24):
        tid = f"toolu_{k:04d}"
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"reading f{k}"},
                    {"type": "tool_use", "id": tid, "name": "read_file", "input": {"p": k}},
                ],
            }
        )
        body = f"line {k} of the file " * (40 + 7 * (k % 5))
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": tid, "content": body}],
            }
        )
    msgs.append({"role": "assistant", "content": "done"})
    metas: list[dict[str, Any]] = [{} for _ in msgs]
    if two_models:  # a Claude Code transcript: a request per response, of its model
        for i in range(1, len(msgs), 2):
            metas[i]["model"] = "claude-opus-4-1" if i % 4 == 1 else "claude-sonnet-4-5"
    s = LoadedSession(
        "long.json",
        "claude-code" if two_models else "messages",
        msgs,
        metas,
        system="Read what is asked and report. " * 200,  # past the minimum: a prefix is read
        model="claude-sonnet-4-5",
    )
    editing = parse_context_editing(
        {"clear_tool_uses": {"trigger": 1, "keep": keep, "clear_at_least": least}}
    )
    kw: dict[str, Any] = {"cache": "automatic"}  # a bare list is cached as a chat sends it
    _both(s, strategy="clear-tool-uses", context_editing=editing, keep_windows=[0, 5, 9], **kw)
    log = simulate(s, strategy="clear-tool-uses", context_editing=editing, **kw)
    # the rule under test is reached: prefixes are read, and they end at an edit or a switch
    assert any(r.cache_read for r in log.requests)
    reason = "model" if two_models else "edited"
    assert any(r.cache_break and r.cache_break.reason == reason for r in log.requests)
