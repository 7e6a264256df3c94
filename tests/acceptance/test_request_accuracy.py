"""The request model's accuracy goals on the held-out real transcripts (files never looked at
while the cache and calibration rules were tuned: ``benchmarks/request_accuracy.py`` names the
split): per-request input tokens against what the API billed, calibrated on the whole file and
fitted on its first half only, and predicted against recorded cache breaks, each disagreement
named. A goal not reached yet is a strict xfail beside the figure that holds today."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.request_accuracy import HELD_OUT, files, measure
from ctxview.core.requests import simulate
from ctxview.sessions import load_session


@pytest.fixture(scope="module")
def held_out() -> dict[str, Any]:
    paths = files(HELD_OUT)
    assert len(paths) >= 10, paths
    return measure(paths, listing=False)


def test_calibrated_estimates_meet_the_goal(held_out: dict[str, Any]) -> None:
    assert held_out["requests"] >= 400
    assert held_out["median"] <= 0.02 and held_out["p90"] <= 0.08, held_out


def test_estimates_fitted_on_the_first_half(held_out: dict[str, Any]) -> None:
    assert held_out["half_requests"] >= 150
    assert held_out["half_median"] <= 0.04, held_out
    assert held_out["half_p90"] <= 0.15, held_out  # today's figure; the goal is below


@pytest.mark.xfail(
    strict=True, reason="one session's post-compaction growth is above the 18% assumed"
)
def test_estimates_fitted_on_the_first_half_meet_the_p90_goal(held_out: dict[str, Any]) -> None:
    assert held_out["half_p90"] <= 0.12, held_out


def test_breaks_agree_and_every_disagreement_is_named(held_out: dict[str, Any]) -> None:
    assert held_out["agree"] / held_out["requests"] >= 0.995, held_out
    named = ("unexplained", "growth")
    assert all(any(n in why for n in named) for why in held_out["disagreements"]), held_out


@pytest.mark.xfail(strict=True, reason="the API broke the cache after background-task notices")
def test_breaks_meet_the_agreement_goal(held_out: dict[str, Any]) -> None:
    assert held_out["agree"] / held_out["requests"] >= 0.997, held_out


def test_no_recorded_break_is_a_silent_hit() -> None:
    """Every request whose recorded read fell well short of the previous prompt carries a
    recorded break with a reason: the predicted one, or ``unexplained``."""
    for path in files(HELD_OUT):
        log = simulate(load_session(path))
        prev: dict[Any, int] = {}
        for r in log.requests:
            if r.recorded is None:
                continue
            total = r.recorded_total or 0
            p = prev.get(r.model)
            if p is not None and r.recorded["cache_read_input_tokens"] < 0.5 * p:
                assert r.recorded_miss is not None, (path.name, r.index)
                assert r.recorded_miss.reason == (
                    r.cache_break.reason if r.cache_break else "unexplained"
                )
            prev[r.model] = total
