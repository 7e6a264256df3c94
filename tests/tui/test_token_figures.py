"""One estimate of the next request's size on a Claude Code transcript: the sidebar, the cache
line's request model, ctrl+k's fallback and `inspect` give the same figure, with the system
prompt and tools the request model calibrated from the recorded usage (`requests` says them)."""

from __future__ import annotations

import json
import re

import pytest

from ctxview.textfmt import fmt_tokens
from tests.support.apphelp import make_app, settle, text_of, wait_prediction
from tests.support.cli import run
from tests.support.paths import ACCEPTANCE

TRANSCRIPT = str(ACCEPTANCE / "claude_code" / "spotter_subagent.jsonl")


def _calibrated_static(capsys: pytest.CaptureFixture[str]) -> int:
    code, out, _ = run(capsys, "requests", TRANSCRIPT, "--json")
    assert code == 0
    note = next(n for n in json.loads(out)["notes"] if n.startswith("system prompt and tools"))
    found = re.search(r": ([\d,]+) tokens, calibrated", note)
    assert found is not None
    return int(found.group(1).replace(",", ""))


async def test_sidebar_request_model_ctrl_k_and_inspect_agree(
    capsys: pytest.CaptureFixture[str],
) -> None:
    static = _calibrated_static(capsys)
    # inspect checks a transcript as sent; --max/--strategy ask for the simulation `s` shows
    _, out, _ = run(capsys, "inspect", TRANSCRIPT, "--json", "--max", "20", "--strategy", "seed")
    window = json.loads(out)["window"]
    app = make_app(TRANSCRIPT, as_sent=True)
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        pred = app.model.cache_prediction
        assert pred.static_tokens == static
        assert app.model.window_tokens == pred.input_tokens  # as sent
        await pilot.press("s")  # a simulation: inspect's default max and strategy
        await settle(pilot)
        await wait_prediction(pilot)
        pred = app.model.cache_prediction
        total = app.model.window_tokens
        assert total == pred.input_tokens == window["estimated_tokens"]
        assert pred.read + pred.write + pred.uncached == total
        assert window["token_breakdown"]["system_and_tools_calibrated"] == static
        shown = text_of(app, "#tokens")
        assert shown.startswith(f"~{fmt_tokens(total)} / ")
        assert f"system + tools ~{fmt_tokens(static)} (calibrated)" in shown
        assert "system 0" not in shown
        await pilot.press("ctrl+k")  # offline: the API's count is not there, the estimate is
        await settle(pilot)
        assert any(f"(estimate: ~{total:,})" in str(n.message) for n in app._notifications)


async def test_a_big_transcript_is_calibrated_in_the_worker_to_the_same_figure(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ctxview.app.model as model_module

    monkeypatch.setattr(model_module, "SYNC_CALIBRATION_LIMIT", 0)  # as above 5,000 messages
    app = make_app(TRANSCRIPT, as_sent=True)
    assert not app.model.tokens_ready  # the fit over every request waits for the worker
    async with app.run_test(size=(140, 45)) as pilot:
        await wait_prediction(pilot)
        await settle(pilot)
        assert app.model.tokens_ready and app.model.calibrated_static is not None
        assert app.model.window_tokens == app.model.cache_prediction.input_tokens
