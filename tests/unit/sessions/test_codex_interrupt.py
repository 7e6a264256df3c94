"""A Codex turn interrupted after hosted web searches: the requests from there on are no longer
billed the searches' results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.core.calibrate import DEFAULT_RATES
from ctxview.core.compaction import RESULTS_UNBILLED
from ctxview.core.providers.openai_tokens import (
    WEB_SEARCH_RESULT_TOKENS,
    block_tokens,
    json_tokens,
    search_results,
)
from ctxview.core.requests import simulate
from ctxview.core.requests.points import calibrate, cleared_tokens
from ctxview.sessions import load_session


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-07-01T00:00:00Z", "type": kind, "payload": payload})


def _user(text: str) -> str:
    return _line("response_item", {"type": "message", "role": "user", "content": text})


def _answer(text: str) -> str:
    return _line("response_item", {"type": "message", "role": "assistant", "content": text})


SEARCH = _line(
    "response_item",
    {"type": "web_search_call", "status": "completed", "action": {"type": "search", "query": "q"}},
)
#: a search item that records no action (Codex CLI 0.118): billed as its item alone
BARE_SEARCH = _line("response_item", {"type": "web_search_call", "status": "completed"})
ABORTED = _line("event_msg", {"type": "turn_aborted", "reason": "interrupted"})


def _write(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "rollout-i.jsonl"
    head = [_line("session_meta", {"id": "s"}), _line("turn_context", {"model": "gpt-5.5"})]
    path.write_text("\n".join(head + lines) + "\n")
    return path


def test_the_message_after_an_interrupt_carries_the_unbilled_results(tmp_path: Path) -> None:
    s = load_session(
        _write(
            tmp_path,
            [
                _user("look it up"),
                SEARCH,
                SEARCH,
                _answer("found"),
                _user("more"),
                _answer("working"),
                _user("<turn_aborted>"),
                ABORTED,
                _user("go on"),
                _answer("ok"),
                _user("again"),
                ABORTED,  # no search since the last interrupt: nothing more unbilled
                _user("and"),
            ],
        )
    )
    unbilled = {i: m[RESULTS_UNBILLED] for i, m in enumerate(s.metas) if RESULTS_UNBILLED in m}
    assert unbilled == {7: [1, 2]}  # the two searches' messages
    assert s.messages[7]["content"] == "go on"


def test_an_interrupt_without_searches_since_a_compaction_unbills_nothing(tmp_path: Path) -> None:
    compacted = _line(
        "compacted",
        {
            "message": "",
            "replacement_history": [{"type": "message", "role": "user", "content": "q"}],
        },
    )
    s = load_session(
        _write(tmp_path, [_user("q"), SEARCH, _answer("a"), compacted, _user("x"), ABORTED])
    )
    assert not any(RESULTS_UNBILLED in m for m in s.metas)


def test_a_search_that_records_no_action_is_billed_as_its_item_alone(tmp_path: Path) -> None:
    s = load_session(_write(tmp_path, [_user("q"), SEARCH, BARE_SEARCH, _answer("a")]))
    blocks = [s.messages[1]["content"][0], s.messages[2]["content"][0]]
    assert [search_results(b) for b in blocks] == [WEB_SEARCH_RESULT_TOKENS, 0]
    assert block_tokens(blocks[1]) == json_tokens(blocks[1])


def test_cleared_tokens_send_the_searches_without_their_results(tmp_path: Path) -> None:
    s = load_session(
        _write(
            tmp_path,
            [_user("q"), SEARCH, _answer("a"), _user("<turn_aborted>"), ABORTED, _user("go")],
        )
    )

    def measure(m: Any) -> int:
        return block_tokens(m["content"][0]) if isinstance(m["content"], list) else 1

    assert cleared_tokens(s, DEFAULT_RATES, measure) == {
        4: [(1, json_tokens(s.messages[1]["content"][0]))]
    }


def test_the_requests_after_the_interrupt_send_the_searches_without_results(
    tmp_path: Path,
) -> None:
    """The tools + system stay one figure across the interrupt (never below zero): the
    requests after it count the searches as their items alone."""

    def count(prompt: int, total: int) -> str:
        usage = {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": 5}
        info = {"total_token_usage": {"input_tokens": total}, "last_token_usage": usage}
        return _line("event_msg", {"type": "token_count", "info": info})

    lines = [_user("look it up"), SEARCH, _answer("found"), count(15_000, 15_000)]
    total = 15_000
    for k in range(3):
        total += 15_100 + k
        lines += [_user(f"q{k}"), _answer(f"a{k}"), count(15_100 + k, total)]
    lines += [_user("stop"), _answer("partial"), _user("<turn_aborted>"), ABORTED]
    for k in range(3):
        total += 10_900 + k
        lines += [_user(f"r{k}"), _answer(f"b{k}"), count(10_900 + k, total)]
    s = load_session(_write(tmp_path, lines))
    cal = calibrate(s)
    assert cal.statics is None or len(set(cal.statics.values())) == 1
    assert cal.static is not None and cal.static > 0
    log = simulate(s)
    last = [r for r in log.requests if r.recorded_total][-3:]
    # the messages after the interrupt count the search without its results, as billed
    assert all(abs(r.input_tokens - r.recorded_total) < 300 for r in last), [
        (r.input_tokens, r.recorded_total) for r in last
    ]
