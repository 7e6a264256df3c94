"""The request model against what the API recorded, measured by ``benchmarks/truth.py`` (the
same figures ``python -m benchmarks.truth tests/acceptance/claude_code`` prints), with the goals
of the request model as thresholds:

| measure | goal |
|---|---|
| per-request input tokens, calibrated: median / p90 error | <= 2% / <= 8% |
| the same, fitted on the first half of each file only | <= 4% / <= 12% |
| predicted vs recorded cache break agrees | >= 99.7% |
| tool_use / tool_result / text / thinking blocks lost in the rebuild | 0 |

On the real transcripts of ``claude_code/`` (MANIFEST.md): the held-out ones (``HELD_OUT``: not
looked at while the reader and the model were changed) are measured apart from the others. A goal
not reached yet is a strict ``xfail`` (it fails the day it is reached: then drop the mark), beside
a test that holds today's figure so it cannot get worse. On hand-written files in the shapes no
recorded file here has (``tests/support/claude_code_shapes.py``: a 2.1.2xx ``/compact``, a
compaction that kept messages, a parent missing from the file, a sub-agent folder): nothing is
lost, every compaction is found, no request is sent off the branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.truth import BLOCK_TYPES, FileFigures, measure
from tests.support import claude_code_shapes as shapes
from tests.support.paths import ACCEPTANCE

ACC = ACCEPTANCE / "claude_code"
#: real sessions kept aside: the figures on them are reported apart
HELD_OUT = ("spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46", "ccviewer_fe5e1c67")


def _held_out(p: Path) -> bool:
    return p.name.startswith(HELD_OUT)


@pytest.fixture(scope="module")
def real() -> dict[str, Any]:
    figs, s = measure([p for p in sorted(ACC.glob("*.jsonl")) if not _held_out(p)])
    return {"figs": figs, **s}


@pytest.fixture(scope="module")
def held_out() -> dict[str, Any]:
    figs, s = measure([p for p in sorted(ACC.glob("*.jsonl")) if _held_out(p)])
    return {"figs": figs, **s}


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[FileFigures], dict[str, Any]]:
    d = tmp_path_factory.mktemp("shapes")
    shapes.write(d / "manual_compact.jsonl", shapes.manual_compact())
    shapes.write(d / "preserved_tail.jsonl", shapes.preserved_compact("tail"))
    shapes.write(d / "preserved_before.jsonl", shapes.preserved_compact("before"))
    shapes.write(d / "dangling_progress.jsonl", shapes.dangling_progress())
    shapes.with_subagent(d / "with_subagent", sidecar=True)
    return measure([d])


def test_there_is_enough_to_measure(real: dict[str, Any], held_out: dict[str, Any]) -> None:
    assert real["files"] == 16 and real["recorded_requests"] == 719
    assert held_out["files"] == 5 and held_out["recorded_requests"] == 187


@pytest.mark.parametrize("which", ["real", "held_out"])
def test_no_block_is_lost_in_the_rebuild(which: str, request: pytest.FixtureRequest) -> None:
    s = request.getfixturevalue(which)
    assert s["blocks_lost"] == dict.fromkeys(BLOCK_TYPES, 0), s["files_losing_blocks"]
    assert s["blocks"]["tool_use"] > 250 and s["blocks"]["tool_result"] > 250


def test_token_estimates_hold_todays_figures(real: dict[str, Any]) -> None:
    te, th = real["token_error"], real["token_error_first_half_fit"]
    assert te["median"] <= 0.04 and te["p90"] <= 0.09, te
    assert th["median"] <= 0.055 and th["p90"] <= 0.125, th


def test_token_estimates_reach_the_goal(real: dict[str, Any]) -> None:
    te, th = real["token_error"], real["token_error_first_half_fit"]
    assert te["median"] <= 0.02 and te["p90"] <= 0.08, te
    assert th["median"] <= 0.04 and th["p90"] <= 0.12, th


def test_token_estimates_reach_the_goal_on_the_held_out_sessions(
    held_out: dict[str, Any],
) -> None:
    te, th = held_out["token_error"], held_out["token_error_first_half_fit"]
    assert te["median"] <= 0.02 and te["p90"] <= 0.08, te
    assert th["median"] <= 0.04 and th["p90"] <= 0.12, th


def test_cache_breaks_hold_todays_agreement(real: dict[str, Any], held_out: dict[str, Any]) -> None:
    assert real["break_agreement"] >= 0.994, real["break_disagreements"]
    assert held_out["break_agreement"] >= 0.989, held_out["break_disagreements"]


@pytest.mark.xfail(
    strict=True, reason="goal of the cache diagnostics: unexplained breaks, warm first"
)
def test_cache_breaks_reach_the_goal(real: dict[str, Any], held_out: dict[str, Any]) -> None:
    both = real["recorded_requests"] + held_out["recorded_requests"]
    wrong = len(real["break_disagreements"]) + len(held_out["break_disagreements"])
    assert 1 - wrong / both >= 0.997, [
        *real["break_disagreements"],
        *held_out["break_disagreements"],
    ]


def test_hand_written_shapes_lose_nothing_and_find_every_compaction(
    crafted: tuple[list[FileFigures], dict[str, Any]],
) -> None:
    figs, s = crafted
    assert s["files"] == 6
    assert s["blocks_lost"] == dict.fromkeys(BLOCK_TYPES, 0), s["files_losing_blocks"]
    by_name = {f.name: f for f in figs}
    assert by_name["manual_compact.jsonl"].compactions == 1
    assert by_name["preserved_tail.jsonl"].compactions == 1
    assert by_name["preserved_before.jsonl"].compactions == 1
    assert all(f.off_branch_requests == 0 for f in figs)
    assert s["break_agreement"] == 1.0, s["break_disagreements"]
    dangling = by_name["dangling_progress.jsonl"]
    assert dangling.requests == 32 and max(dangling.errors) < 0.01
