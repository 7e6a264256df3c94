"""The request model against the real transcripts kept for acceptance
(tests/acceptance/claude_code/, MANIFEST.md there) and the shared fixtures.

* the predicted cache break / no-break agrees with the recorded one (a recorded break: cache
  creation above half of the request's input) for >= 95% of the requests of every long
  transcript, and over all of them;
* the calibrated token estimate is within a median 5% and a p90 15% of what the API billed,
  pooled over every request with recorded usage;
* every predicted break names a known reason and a position; a request that wrote more than half
  of its input with no break read the whole previous prompt (it grew: a big tool result).
"""

from __future__ import annotations

import pytest

from ctxview.core.requests import BREAK_REASONS, RequestLog, simulate
from ctxview.sessions import load_session
from tests.support.paths import ACCEPTANCE

ACC = ACCEPTANCE / "claude_code"
TRANSCRIPTS = sorted(ACC.glob("*.jsonl"))
LONG = 100  #: requests: a "long" transcript


def _logs() -> dict[str, RequestLog]:
    return {p.name: simulate(load_session(p)) for p in TRANSCRIPTS}


@pytest.fixture(scope="module")
def logs() -> dict[str, RequestLog]:
    return _logs()


def _agreement(log: RequestLog) -> tuple[int, int]:
    rec = [r for r in log.requests if r.recorded is not None]
    return sum(r.predicted_break == r.recorded_break for r in rec), len(rec)


def test_the_long_transcripts_are_there(logs: dict[str, RequestLog]) -> None:
    long = [n for n, log in logs.items() if len(log.requests) >= LONG]
    assert len(long) >= 5, long


def test_predicted_breaks_agree_with_recorded_on_every_long_transcript(
    logs: dict[str, RequestLog],
) -> None:
    total_ok = total = 0
    for name, log in logs.items():
        assert log.as_sent, name
        ok, n = _agreement(log)
        total_ok += ok
        total += n
        if len(log.requests) >= LONG:
            assert n == len(log.requests), name
            assert ok / n >= 0.95, (name, ok, n)
    assert total >= 800 and total_ok / total >= 0.95, (total_ok, total)


def test_calibrated_token_estimates_are_within_the_goal(logs: dict[str, RequestLog]) -> None:
    errs = sorted(
        abs(r.input_tokens - t) / t
        for log in logs.values()
        for r in log.requests
        if (t := r.recorded_total)
    )
    assert len(errs) >= 800
    median = errs[len(errs) // 2]
    p90 = errs[int(0.9 * (len(errs) - 1))]
    assert median <= 0.05 and p90 <= 0.15, (median, p90)
    for name, log in logs.items():
        if len(log.requests) >= LONG:
            err = log.token_error()
            assert err is not None and err["median"] <= 0.05 and err["p90"] <= 0.15, (name, err)


def test_every_predicted_break_has_a_reason_and_position(logs: dict[str, RequestLog]) -> None:
    for name, log in logs.items():
        prev = None
        for r in log.requests:
            if r.cache_break is not None:
                assert r.cache_break.reason in BREAK_REASONS, (name, r.index)
                assert r.cache_break.position >= 0, (name, r.index)
            elif r.predicted_break and prev is not None:
                # no break, yet most of it written: it read all the previous request had
                assert r.cache_read >= prev.cache_read + prev.cache_write - 1, (name, r.index)
            prev = r
