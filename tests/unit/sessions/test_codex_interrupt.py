"""A Codex turn interrupted after hosted web searches: the requests from there on are no longer
billed the searches' results."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.core.calibrate import segment_statics
from ctxview.core.compaction import RESULTS_UNBILLED
from ctxview.core.providers.openai_tokens import WEB_SEARCH_RESULT_TOKENS
from ctxview.core.requests.points import calibrate
from ctxview.sessions import load_session


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-07-01T00:00:00Z", "type": kind, "payload": payload})


def _user(text: str) -> str:
    return _line("response_item", {"type": "message", "role": "user", "content": text})


def _answer(text: str) -> str:
    return _line("response_item", {"type": "message", "role": "assistant", "content": text})


SEARCH = _line("response_item", {"type": "web_search_call", "status": "completed"})
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
    assert unbilled == {7: 2 * WEB_SEARCH_RESULT_TOKENS}
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


def test_the_static_falls_below_zero_by_the_unbilled_results() -> None:
    """Fitted on requests before the interrupt only, the requests after it take the static
    before it less the results (the messages still count them); with requests of its own, the
    key takes their median, below zero too."""
    by = {(0, "m"): [10_000, 10_000, 10_000]}
    keys = {(0, "m"), (40, "m")}
    out = segment_statics(by, keys, 10_000, drops={40: 30_000}, unbilled={40})
    assert out[(40, "m")] == -20_000
    assert segment_statics(by, keys, 10_000, drops={40: 30_000})[(40, "m")] == 0
    by[(40, "m")] = [-19_000, -19_500, -19_200]
    assert segment_statics(by, keys, 10_000, drops={40: 30_000}, unbilled={40})[(40, "m")] == (
        -19_200
    )


def test_the_calibration_keys_the_static_apart_after_the_interrupt(tmp_path: Path) -> None:
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
    assert cal.statics is not None
    start = next(i for i, m in enumerate(s.metas) if RESULTS_UNBILLED in m)
    before, after = cal.statics[(0, "gpt-5.5")], cal.statics[(start, "gpt-5.5")]
    assert 4_000 <= before - after <= 4_600  # the one search's results, as the recorded fall
