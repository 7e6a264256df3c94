"""The fifth unseen set (``tests/acceptance/unseen5``, INDEX.md there): real public files
measured blind twice (with main as the session began and after its rule changes) before anyone
looked at them, then copied here. Each figure is held at what the second blind run gave (or
better), against the goals of the Claude Code and provider issues; a goal the blind run did not
reach is a strict ``xfail`` (it fails the day it is reached)."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from benchmarks.truth import BLOCK_TYPES, measure, quantile
from tests.support.paths import ACCEPTANCE

SET = ACCEPTANCE / "unseen5"


@pytest.fixture(scope="module")
def claude_code() -> dict[str, Any]:
    _, s = measure([SET / "claude_code"])
    return s


def test_claude_code_estimates_reach_the_goals(claude_code: dict[str, Any]) -> None:
    """21 transcripts, Claude Code 2.1.185 to 2.1.218; blind: 0.5% / 2.7% calibrated, 2.1% /
    9.8% fitted on the first half."""
    # 2,727 blind: 55 responses whose later blocks streamed after earlier calls' results were
    # counted twice (and cut in two, a call apart from its result)
    assert claude_code["recorded_requests"] == 2_672
    t = claude_code["token_error"]
    assert t["median"] <= 0.005 and t["p90"] <= 0.03, t
    th = claude_code["token_error_first_half_fit"]
    assert th["median"] <= 0.021 and th["p90"] <= 0.099, th


def test_claude_code_cache_breaks_hold_the_blind_figure(claude_code: dict[str, Any]) -> None:
    """98.68% blind (36 disagreements of 2,727; 98.64% and 37 with main as the session began),
    98.91% (29 of 2,672) once a response's calls answered while it streamed no longer cut it in
    two; each named, most of them recorded breaks that read only the cached head."""
    s = claude_code
    assert s["break_agreement"] >= 0.9891, s["break_disagreements"]
    for d in s["break_disagreements"]:
        assert d["recorded_reason"] is not None or d["predicted"].startswith("break ("), d


def test_the_api_names_most_of_the_missed_breaks_a_client_change(
    claude_code: dict[str, Any],
) -> None:
    """Claude Code 2.1.18x asked the API for its cache diagnostics: on 21 of the recorded breaks
    ctxview did not predict, the API said ``messages_changed`` (the client changed an earlier
    message, which the transcript records unchanged), on one ``tools_changed``. Each
    disagreement carries the API's word, and the summary counts them by it."""
    s = claude_code
    by = s["break_disagreements_diagnosed_by_api"]
    assert by.get("messages_changed", 0) >= 21 and by.get("tools_changed", 0) >= 1, by
    unexplained = [d for d in s["break_disagreements"] if d["recorded_reason"] == "unexplained"]
    # most breaks ctxview could not explain, the API explained
    assert sum(d["api_reason"] == "messages_changed" for d in unexplained) >= 20, unexplained
    # without the API's client changes, the transcript's own evidence reaches the goal
    client = sum(by.get(k, 0) for k in ("messages_changed", "tools_changed", "system_changed"))
    rest = len(s["break_disagreements"]) - client
    assert 1 - rest / (s["recorded_requests"] - client) >= 0.997


@pytest.mark.xfail(
    strict=True,
    reason="98.9%: 22 of the 29 disagreements are breaks the API's diagnostics put on the "
    "client (messages_changed, tools_changed), a change the transcript does not record",
)
def test_claude_code_cache_breaks_reach_the_goal(claude_code: dict[str, Any]) -> None:
    assert claude_code["break_agreement"] >= 0.997


def test_claude_code_rebuild_loses_no_block(claude_code: dict[str, Any]) -> None:
    """6 text blocks were lost blind in 4 files: 3 were the skill texts of parallel Skill calls
    the reader dropped (each but the last), 3 prompts taken back that the check counted (a slash
    command run again, a prompt given again as ``/goal``)."""
    lost = claude_code["blocks_lost"]
    assert lost == dict.fromkeys(BLOCK_TYPES, 0), claude_code["files_losing_blocks"]


def _openai_errors(folder: str) -> list[float]:
    from benchmarks.truth_openai import rows

    rs = [r for r in rows(SET) if r["file"].startswith(folder + "/") and r["text"]]
    return [abs(r["estimate"] - r["recorded"]) / r["recorded"] for r in rs]


def test_openai_chat_bodies_reach_the_goal() -> None:
    """89 Chat Completions bodies: 3.4% / 9.3% blind."""
    errors = _openai_errors("openai_chat")
    assert len(errors) == 89
    assert statistics.median(errors) <= 0.034 and quantile(errors, 0.9) <= 0.093


def test_openai_responses_bodies_reach_the_goal() -> None:
    """190 Responses bodies: 7.1% / 220.7% blind; 2.6% / 10.8% once a function tool of a
    Responses body is read from its own fields (80 of them nested a Chat-shaped ``function``
    object, which the API ignores)."""
    errors = _openai_errors("openai_responses")
    assert len(errors) == 190
    assert statistics.median(errors) <= 0.05 and quantile(errors, 0.9) <= 0.15


def _gemini_errors() -> list[float]:
    from benchmarks.gemini_tokens import api_error

    found = [api_error(p) for p in sorted((SET / "gemini").glob("*_req*.json"))]
    return [abs(e) for e in found if e is not None]


def test_gemini_api_bodies_hold_the_blind_figure() -> None:
    """141 text-only Gemini API bodies: 7.55% / 22.2% blind, on prompts of 18 tokens (median):
    the median miss is 1 token."""
    errors = _gemini_errors()
    assert len(errors) == 141
    assert statistics.median(errors) <= 0.0756 and quantile(errors, 0.9) <= 0.2223


@pytest.mark.xfail(strict=True, reason="7.55% / 22.2% blind: a few tokens on 18-token prompts")
def test_gemini_api_bodies_reach_the_goal() -> None:
    errors = _gemini_errors()
    assert statistics.median(errors) <= 0.05 and quantile(errors, 0.9) <= 0.15


@pytest.mark.usefixtures("with_gemini_vocabulary")
def test_gemini_api_bodies_counted_by_gemini_s_vocabulary() -> None:
    """The same bodies with the text counted by Gemini's vocabulary: 0.00% / 16.2% (the
    median request exact; the p90 the eleven bodies declaring three functions with an ``enum``,
    billed 142 where 119 are counted)."""
    errors = _gemini_errors()
    assert len(errors) == 141
    assert statistics.median(errors) <= 0.0005 and quantile(errors, 0.9) <= 0.1621
