"""The sidebar's cache line keeps the requests it computed for the Requests view: the requests of
the view with the placeholder "next request" dropped are exactly the requests of the view alone,
and they are reused only for the same inputs."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.app.cacheline import SavedRequests, predict, requests_so_far, with_next_request
from ctxview.core.pricing import Price, PriceTable
from ctxview.core.requests import simulate
from ctxview.core.strategies import STRATEGIES
from ctxview.sessions.model import LoadedSession
from ctxview.sessions.readers import load_session
from tests.support.paths import FIXTURES, ROOT
from tests.support.sessiongen import sessions


def _view(s: LoadedSession, pinned: list[int] | None = None) -> SimpleNamespace:
    view = SimpleNamespace(**vars(s))
    view.pinned = pinned or []
    return view


def _same_as_alone(view: Any, **kw: Any) -> None:
    prices = PriceTable()
    sent = with_next_request(view)
    got = requests_so_far(simulate(sent, prices=prices, **kw), sent is not view)
    alone = simulate(view, prices=prices, **kw)
    assert [asdict(r) for r in got.requests] == [asdict(r) for r in alone.requests]
    assert got.totals() == alone.totals()
    assert got.settings == alone.settings
    assert (got.strategy, got.max_context_messages, got.as_sent, got.model) == (
        alone.strategy,
        alone.max_context_messages,
        alone.as_sent,
        alone.model,
    )
    assert (got.rates, got.static_tokens) == (alone.rates, alone.static_tokens)
    for k, w in got.windows.items():
        assert alone.windows.get(k, w) == w


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    s=sessions(),
    strategy=st.sampled_from([*STRATEGIES, None]),
    max_=st.one_of(st.none(), st.integers(1, 12)),
    budget=st.sampled_from([None, 40, 400, 5000]),
    pins=st.lists(st.integers(0, 30), max_size=3),
)
def test_requests_so_far_are_the_requests_of_the_view_alone(
    s: LoadedSession, strategy: str | None, max_: int | None, budget: int | None, pins: list[int]
) -> None:
    _same_as_alone(
        _view(s, [p for p in pins if p < len(s.messages)]),
        max_context_messages=max_,
        strategy=strategy,
        max_context_tokens=budget,
    )


FILES = sorted(
    [
        *(FIXTURES / "claude_code").glob("*.jsonl"),
        *(FIXTURES / "anthropic_requests").glob("*.json"),
        *(ROOT / "sample_sessions").glob("*.json"),
    ]
)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_requests_so_far_on_real_sessions(path: Path) -> None:
    """Recorded sessions (rewinds, compactions, edits): as sent and under each strategy."""
    s = load_session(path)
    view = _view(s)
    _same_as_alone(view)
    for strategy in STRATEGIES:
        _same_as_alone(view, max_context_messages=3, strategy=strategy)


def test_the_saved_log_is_reused_only_for_the_same_inputs() -> None:
    s = load_session(ROOT / "sample_sessions" / "agent_loop.json")
    view = _view(s)
    cfg: dict[str, Any] = {"max_context_messages": 4, "strategy": "seed"}
    prices = PriceTable()
    pred = predict(view, cfg, prices)
    assert pred is not None and pred.so_far is not None
    saved: SavedRequests = pred.so_far
    alone = simulate(view, prices=prices, **cfg)
    assert saved.log.requests == alone.requests
    assert pred.requests == len(alone.requests)

    # a fresh snapshot of the same session (new lists, the same message objects): reused
    again = SimpleNamespace(**{**vars(view), "messages": list(view.messages)})
    assert saved.log_for(again, dict(cfg), PriceTable()) is saved.log
    # an edited message (the transcript replaces the dict), another setting, other prices,
    # another system prompt, a pin, one more message: computed again
    edited = list(view.messages)
    edited[2] = dict(edited[2])
    assert saved.log_for(SimpleNamespace(**{**vars(view), "messages": edited}), cfg, prices) is None
    assert saved.log_for(view, {**cfg, "strategy": "pair-safe"}, prices) is None
    other = PriceTable({"claude-sonnet-4-5": Price(1.0, 2.0, 3.0, 4.0, 5.0)})
    assert saved.log_for(view, cfg, other) is None
    assert saved.log_for(SimpleNamespace(**{**vars(view), "system": "x"}), cfg, prices) is None
    assert saved.log_for(SimpleNamespace(**{**vars(view), "pinned": [1]}), cfg, prices) is None
    longer = SimpleNamespace(
        **{
            **vars(view),
            "messages": [*view.messages, {"role": "user", "content": "more"}],
            "metas": [*view.metas, {}],
        }
    )
    assert saved.log_for(longer, cfg, prices) is None


def test_the_bundled_samples_record_what_the_api_would_report() -> None:
    """Below the model's minimum cacheable length the API caches nothing: agent_loop.json
    recorded a ~380-token cache write on every request ("predicted 0, recorded 0/382")."""
    from ctxview.core.cache_rules import min_cacheable
    from ctxview.core.requests import simulate
    from ctxview.sessions import load_session
    from tests.support.paths import SAMPLES

    for name in ("agent_loop.json", "long_chat.json", "tool_errors.json"):
        log = simulate(load_session(str(SAMPLES / name)))
        recorded = [r for r in log.requests if r.recorded is not None]
        assert recorded, name
        for r in recorded:
            short = r.input_tokens < min_cacheable(r.model)[0]
            if short:
                assert r.recorded["cache_creation_input_tokens"] == 0, (name, r.index)
                assert r.recorded["cache_read_input_tokens"] == 0, (name, r.index)
            # the recorded prompt is the one predicted (within the estimate's rounding)
            total = sum(r.recorded.values()) - r.recorded.get("output_tokens", 0)
            assert abs(total - r.input_tokens) <= max(5, r.input_tokens // 20), (name, r.index)
