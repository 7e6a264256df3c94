"""The sixth unseen set (``tests/acceptance/unseen6``, INDEX.md there): real public files
measured blind once before anyone looked at them, then copied here. Each figure is held at what
the blind run gave (or better), against the goals of the Claude Code and provider issues; a goal
the blind run did not reach is a strict ``xfail`` (it fails the day it is reached)."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from benchmarks.truth import BLOCK_TYPES, measure, quantile
from tests.support.paths import ACCEPTANCE

SET = ACCEPTANCE / "unseen6"


@pytest.fixture(scope="module")
def claude_code() -> dict[str, Any]:
    _, s = measure([SET / "claude_code"])
    return s


def test_claude_code_estimates_reach_the_goals(claude_code: dict[str, Any]) -> None:
    """3 transcripts of Claude Code 2.1.232 (Opus 4.6, one with two compactions); blind: 0.4% /
    1.7% calibrated, 0.7% / 3.3% fitted on the first half."""
    assert claude_code["recorded_requests"] == 354
    t = claude_code["token_error"]
    assert t["median"] <= 0.004 and t["p90"] <= 0.017, t
    th = claude_code["token_error_first_half_fit"]
    assert th["median"] <= 0.007 and th["p90"] <= 0.033, th


def test_claude_code_cache_breaks_reach_the_goal(claude_code: dict[str, Any]) -> None:
    """99.72% blind (1 disagreement of 354: a restart predicted to break read 187,739 tokens)."""
    s = claude_code
    assert s["break_agreement"] >= 0.997, s["break_disagreements"]
    for d in s["break_disagreements"]:
        assert d["recorded_reason"] is not None or d["predicted"].startswith("break ("), d


def test_claude_code_rebuild_loses_no_block(claude_code: dict[str, Any]) -> None:
    """2 text blocks counted lost blind: the two ``/compact`` lines as typed, which Claude Code
    2.1.232 writes before the command's own lines and no request sent (the check now knows)."""
    lost = claude_code["blocks_lost"]
    assert lost == dict.fromkeys(BLOCK_TYPES, 0), claude_code["files_losing_blocks"]


def _openai_errors(folder: str) -> list[float]:
    from benchmarks.truth_openai import rows

    rs = [r for r in rows(SET) if r["file"].startswith(folder + "/") and r["text"]]
    return [abs(r["estimate"] - r["recorded"]) / r["recorded"] for r in rs]


def test_openai_chat_bodies_reach_the_goal() -> None:
    """306 Chat Completions bodies with text to measure: 0.1% / 8.9% blind."""
    errors = _openai_errors("openai_chat")
    assert len(errors) == 306
    assert statistics.median(errors) <= 0.001 and quantile(errors, 0.9) <= 0.089


def test_openai_responses_bodies_reach_the_goal() -> None:
    """209 Responses bodies with text to measure: 1.25% / 14.6% blind."""
    errors = _openai_errors("openai_responses")
    assert len(errors) == 209
    assert statistics.median(errors) <= 0.0125 and quantile(errors, 0.9) <= 0.146


def _gemini_errors() -> list[float]:
    from benchmarks.gemini_tokens import api_error

    found = [api_error(p) for p in sorted((SET / "gemini").glob("*_req*.json"))]
    return [abs(e) for e in found if e is not None]


def test_gemini_api_bodies_hold_the_blind_figure() -> None:
    """129 text-only Gemini API bodies: 7.69% / 16.7% blind (median prompt 102 tokens)."""
    errors = _gemini_errors()
    assert len(errors) == 129
    assert statistics.median(errors) <= 0.0770 and quantile(errors, 0.9) <= 0.1667


@pytest.mark.xfail(strict=True, reason="7.69% / 16.7% blind")
def test_gemini_api_bodies_reach_the_goal() -> None:
    errors = _gemini_errors()
    assert statistics.median(errors) <= 0.05 and quantile(errors, 0.9) <= 0.15


@pytest.mark.usefixtures("with_gemini_vocabulary")
def test_gemini_api_bodies_counted_by_gemini_s_vocabulary_reach_the_goal() -> None:
    """The same bodies with the text counted by Gemini's vocabulary: every one exact
    (0.00% / 0.00%), where counting words missed the median one by a token."""
    errors = _gemini_errors()
    assert len(errors) == 129
    assert statistics.median(errors) <= 0.0005 and quantile(errors, 0.9) <= 0.0005
