"""Calibration from recorded usage: the rates stay physical (a rate out of range is held at the
prior and the others solved again), and the tools + system that a transcript does not hold are
fitted per conversation segment and model."""

from __future__ import annotations

from typing import Any

from ctxview.core.calibrate import (
    DEFAULT_RATES,
    POST_COMPACTION_GROWTH,
    Delta,
    fit_rates,
    segment_statics,
)
from ctxview.core.requests import simulate
from ctxview.sessions.model import LoadedSession
from tests.unit.core.test_requests import ts


def _delta(prose: float, results: float, messages: int, recorded: int) -> Delta:
    d = Delta(messages=messages, recorded=recorded)
    d.features[0] = prose
    d.features[3] = results
    return d


def test_a_rate_pushed_out_of_range_is_held_at_the_prior_and_the_rest_refitted() -> None:
    # prose is always a sliver beside two messages of framing: the data cannot tell prose from
    # framing, and prose at 1 token a character would price a long summary 4x over
    deltas = [
        _delta(100 + (k % 3), 3000 * (k % 5 + 1), 2, 2 * 60 + 900 * (k % 5 + 1) + 60)
        for k in range(40)
    ]
    rates = fit_rates(deltas)
    assert rates.calibrated
    assert 1 / 12 <= rates.per_char[0] <= 1.0
    assert rates.per_char[0] < 0.6, rates  # not left at the bound it was pushed to
    assert abs(rates.per_char[3] - 0.3) < 0.02, rates
    assert rates.tokens((10_000.0, 0, 0, 0, 0, 0)) < 6_000


def test_fit_rates_without_enough_deltas_is_the_prior() -> None:
    assert fit_rates([_delta(100, 100, 2, 100)]) is DEFAULT_RATES


def test_segment_statics_own_then_segment_then_earlier_then_file() -> None:
    by = {
        (0, "opus"): [20_000, 20_010, 19_990],
        (0, "haiku"): [12_000],  # too few of its own: the segment's
        (50, "opus"): [26_000, 26_000],
    }
    keys = [(0, "opus"), (0, "haiku"), (50, "opus"), (90, "opus"), (50, "sonnet")]
    out = segment_statics(by, keys, 19_000)
    assert out[(0, "opus")] == 20_000
    assert out[(0, "haiku")] == 19_995  # the segment's median over every model
    assert out[(50, "opus")] == 26_000
    assert out[(90, "opus")] == 26_000  # nothing recorded: the latest segment after a compaction
    assert out[(50, "sonnet")] == 26_000  # the segment's
    only_first = segment_statics({(0, "opus"): [20_000, 20_000]}, [(0, "opus"), (40, "opus")], 0)
    assert only_first[(40, "opus")] == round(20_000 * (1 + POST_COMPACTION_GROWTH))
    assert segment_statics({}, [(0, "x")], 7) == {(0, "x"): 7}


def _compacted_transcript() -> LoadedSession:
    """Two segments; what Claude Code sends besides the messages grows from about 10,000 to
    about 16,000 tokens after the compaction."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    t = 0.0
    for seg, static in ((0, 10_000), (1, 16_000)):
        for k in range(6):
            if seg and k == 0:
                msgs.append({"role": "user", "content": "summary " * 50})
                metas.append({"timestamp": ts(t), "compact_summary": True, "compact_boundary": {}})
            else:
                msgs.append({"role": "user", "content": f"q{k} " + "word " * 400})
                metas.append({"timestamp": ts(t)})
            t += 5
            msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
            n_chars = sum(len(str(m["content"])) for m in msgs[-2 * (k + 1) :])
            total = static + n_chars // 4 + 8 * (k + 1)
            metas.append(
                {
                    "timestamp": ts(t),
                    "model": "claude-opus-4-6",
                    "usage": {
                        "input_tokens": 3,
                        "cache_read_input_tokens": 0,
                        "cache_creation_input_tokens": total - 3,
                    },
                }
            )
    return LoadedSession("t.jsonl", "claude-code", msgs, metas, model="claude-opus-4-6")


def test_the_tools_and_system_are_fitted_per_segment() -> None:
    s = _compacted_transcript()
    log = simulate(s)
    assert any("per segment and model" in n for n in log.notes), log.notes
    after = [r for r in log.requests if r.index >= 6]
    assert after and all(r.recorded_total for r in after)
    for r in log.requests:
        assert r.recorded_total is not None
        assert abs(r.input_tokens - r.recorded_total) / r.recorded_total < 0.03, (
            r.index,
            r.input_tokens,
            r.recorded_total,
        )


def test_a_model_on_the_newer_tokenizer_bills_the_same_text_at_its_own_scale() -> None:
    """Claude Opus 4.7 and later: about 1.3x the tokens for the same text. A transcript that
    switches from Opus 4.6 to 4.7 is fitted in the tokens of the model it used most, and the
    messages of the other are scaled (one scale for both was 20% off on the 4.7 requests)."""
    from ctxview.core.calibrate import NEW_TOKENIZER_SCALE, tokenizer_scale

    assert tokenizer_scale("claude-opus-4-7") == NEW_TOKENIZER_SCALE
    assert tokenizer_scale("claude-opus-4-6[1m]") == 1.0
    assert tokenizer_scale("claude-sonnet-5-20260101") == NEW_TOKENIZER_SCALE
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    chars = 0
    for k in range(14):
        model = "claude-opus-4-6" if k < 9 else "claude-opus-4-7"
        text = f"q{k} " + "word " * (300 + 40 * (k % 4))
        msgs.append({"role": "user", "content": text})
        metas.append({"timestamp": ts(10.0 * k)})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        chars += len(text) + 2
        scale = tokenizer_scale(model)
        total = 12_000 + round((chars / 4 + 8 * (k + 1)) * scale)
        metas.append(
            {
                "timestamp": ts(10.0 * k + 5),
                "model": model,
                "usage": {
                    "input_tokens": total,
                    "cache_read_input_tokens": 0,
                    "cache_creation_input_tokens": 0,
                },
            }
        )
    log = simulate(LoadedSession("t.jsonl", "claude-code", msgs, metas, model="claude-opus-4-6"))
    assert any("tokenizers: claude-opus-4-7 ×1.30" in n for n in log.notes), log.notes
    for r in log.requests[10:]:
        assert r.model == "claude-opus-4-7" and r.recorded_total is not None
        assert abs(r.input_tokens - r.recorded_total) / r.recorded_total < 0.03, r
        assert r.input_tokens == r.cache_read + r.cache_write + r.uncached
