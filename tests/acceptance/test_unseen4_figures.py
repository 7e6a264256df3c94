"""The fourth unseen set (``tests/acceptance/unseen4``, INDEX.md there): real public files
measured blind twice (as the set arrived and after the changes made beside it) before anyone
looked at them, then copied here. Each figure is held at what that second blind run gave (or
better), against the goals of the Claude Code and provider issues: Claude Code calibrated
median <= 2% / p90 <= 8%, fitted on the first half <= 4% / 12%, cache breaks agreeing >= 99.7%
with every disagreement named, no block lost; every other format median <= 5% / p90 <= 15%.
A goal the blind run did not reach is a strict ``xfail`` (it fails the day it is reached)."""

from __future__ import annotations

import statistics
from typing import Any

import pytest

from benchmarks.truth import BLOCK_TYPES, measure, quantile
from tests.support.paths import ACCEPTANCE

SET = ACCEPTANCE / "unseen4"


@pytest.fixture(scope="module")
def claude_code() -> dict[str, Any]:
    _, s = measure([SET / "claude_code"])
    return s


def test_claude_code_estimates_reach_the_goals(claude_code: dict[str, Any]) -> None:
    """63 transcripts, Claude Code 2.1.39 to 2.1.218; blind: 0.5% / 4.6% calibrated, 1.1% / 3.5%
    fitted on the first half."""
    # 7,471 blind: two responses whose later call streamed after earlier calls' results were
    # counted twice
    assert claude_code["recorded_requests"] == 7_469
    t = claude_code["token_error"]
    assert t["median"] <= 0.02 and t["p90"] <= 0.08, t
    th = claude_code["token_error_first_half_fit"]
    assert th["median"] <= 0.04 and th["p90"] <= 0.12, th


def test_claude_code_cache_breaks_hold_the_blind_figure(claude_code: dict[str, Any]) -> None:
    """99.4% blind (43 disagreements of 7,471; 99.3% and 50 as the set arrived), each named."""
    s = claude_code
    assert s["break_agreement"] >= 0.9942, s["break_disagreements"]
    for d in s["break_disagreements"]:
        assert d["recorded_reason"] is not None or d["predicted"].startswith("break ("), d


def test_claude_code_cache_breaks_reach_the_goal_since_diagnosed(
    claude_code: dict[str, Any],
) -> None:
    """99.71% (22 disagreements of 7,471), no longer blind: seven rules read from these files'
    recorded usage after both blind runs (a cold conversation's tools change reads nothing,
    Remote Control changes the tools, the request after a tools-and-system-only first one reads
    what that one cached, a ``turn_duration`` line closes a turn, Claude Code 2.1.101-2.1.110's
    first tool search keeps the tools, from 2.1.101 an expired 5-minute session still reads the
    warm head, an MCP server removal that removed no tool changes nothing); every other set
    unchanged."""
    assert claude_code["break_agreement"] >= 0.997, claude_code["break_disagreements"]


def test_claude_code_rebuild_loses_no_block(claude_code: dict[str, Any]) -> None:
    """6 text blocks were counted lost blind: each a prompt taken back (Esc) before its reply
    and sent again off the same parent, which no request carried; the check no longer counts
    them."""
    lost = claude_code["blocks_lost"]
    assert lost == dict.fromkeys(BLOCK_TYPES, 0), claude_code["files_losing_blocks"]


@pytest.fixture(scope="module")
def codex() -> list[Any]:
    from benchmarks.truth_codex import measure_file

    paths = sorted((SET / "codex").glob("*.jsonl"))
    assert len(paths) == 41
    return [measure_file(p) for p in paths]


def test_codex_estimates_reach_the_goal(codex: list[Any]) -> None:
    """41 rollouts, Codex CLI 0.118 to 0.145, 4,363 requests with usage; blind: 0.1% / 6.0%
    calibrated, 1.0% / 8.4% fitted on the first half (0.5% / 16.8% and 1.4% / 21.0% as the
    set arrived)."""
    errors = [e for f in codex for e in f.errors]
    assert len(errors) == 4_363
    assert quantile(errors, 0.5) <= 0.005 and quantile(errors, 0.9) <= 0.07
    half = [e for f in codex for e in f.half_errors]
    assert quantile(half, 0.5) <= 0.015 and quantile(half, 0.9) <= 0.10


def _openai_errors(folder: str) -> list[float]:
    from benchmarks.truth_openai import rows

    rs = [r for r in rows(SET) if r["file"].startswith(folder + "/") and r["text"]]
    return [abs(r["estimate"] - r["recorded"]) / r["recorded"] for r in rs]


@pytest.mark.parametrize(
    ("folder", "bodies", "median", "p90"),
    # blind: Chat 3.2% / 6.6% (5.2% / 13.7% as the set arrived), Responses 2.2% / 8.7% (6.3% /
    # 13.5%)
    [("openai_chat", 101, 0.035, 0.07), ("openai_responses", 75, 0.025, 0.09)],
)
def test_openai_text_bodies_reach_the_goal(
    folder: str, bodies: int, median: float, p90: float
) -> None:
    errors = _openai_errors(folder)
    assert len(errors) == bodies
    assert statistics.median(errors) <= median and quantile(errors, 0.9) <= p90


def _gemini_errors(vertex: bool) -> list[float]:
    from benchmarks.gemini_tokens import api_error, on_vertex

    bodies = sorted((SET / "gemini").glob("*_req*.json"))
    found = [api_error(p) for p in bodies if on_vertex(p) is vertex]
    return [abs(e) for e in found if e is not None]


def test_gemini_api_bodies_reach_the_goal() -> None:
    """64 bodies sent to the Gemini API: 2.7% / 11.4% blind."""
    errors = _gemini_errors(vertex=False)
    assert len(errors) == 64
    assert statistics.median(errors) <= 0.03 and quantile(errors, 0.9) <= 0.12


@pytest.mark.xfail(
    strict=True,
    reason="Vertex AI: 45.2% / 136.8% blind with the route known (one client's multi-tool "
    "bodies billed far below their declarations, streamed or not)",
)
def test_vertex_ai_bodies_reach_the_goal() -> None:
    errors = _gemini_errors(vertex=True)
    assert len(errors) == 25
    assert statistics.median(errors) <= 0.05 and quantile(errors, 0.9) <= 0.15
