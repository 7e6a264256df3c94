"""The request model: prefix cache, TTL, minimum length, break reasons, pricing, calibration,
redundancy, and the `requests` / `compare` commands' JSON."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from ctxview.core.cache_rules import TTL_GRACE_SECONDS, min_cacheable
from ctxview.core.calibrate import Delta, Rates, fit_rates, message_features
from ctxview.core.pricing import (
    PRICES,
    Price,
    PriceTable,
    cost,
    normalise_model,
    parse_price,
)
from ctxview.core.requests import compare, simulate, window_of
from ctxview.sessions.model import LoadedSession
from tests.support import paths
from tests.support.cli import run

FIXTURES = paths.FIXTURES / "claude_code"
SAMPLES = paths.SAMPLES
T0 = "2026-01-01T10:00:00.000Z"


def ts(seconds: float) -> str:
    from datetime import UTC, datetime, timedelta

    base = datetime(2026, 1, 1, 10, 0, 0, tzinfo=UTC)
    return (base + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


BIG = "word " * 2000  # ~10k chars: well above every minimum cacheable length


def convo(
    turns: int,
    *,
    gap: float = 10.0,
    gaps: dict[int, float] | None = None,
    model: str = "claude-sonnet-4-5",
    text: str = BIG,
    usage: dict[str, Any] | None = None,
    fmt: str = "claude-code",
) -> LoadedSession:
    """user, assistant, user, assistant... with a timestamp and model on every response."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    t = 0.0
    for k in range(turns):
        msgs.append({"role": "user", "content": f"question {k}: {text}"})
        metas.append({"timestamp": ts(t)})
        t += (gaps or {}).get(k, gap)
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]})
        meta: dict[str, Any] = {"timestamp": ts(t), "model": model}
        if usage is not None:
            meta["usage"] = usage
        metas.append(meta)
    return LoadedSession("mem.jsonl", fmt, msgs, metas, model=model)


# -- prefix, TTL, minimum length ---------------------------------------------------------------
def test_each_request_reads_the_previous_prompt_and_writes_the_rest() -> None:
    log = simulate(convo(4))
    r = log.requests
    assert len(r) == 4
    assert r[0].cache_read == 0 and r[0].cache_write == r[0].input_tokens
    for prev, cur in itertools.pairwise(r):
        assert cur.cache_read == prev.input_tokens
        assert cur.cache_write == cur.input_tokens - prev.input_tokens
        assert cur.uncached == 0
        assert cur.cache_break is None
    assert [q.window_size for q in r] == [1, 3, 5, 7]
    assert r[1].message_ids == [1, 2]  # the previous response and the new question


def test_gap_longer_than_five_minutes_and_the_grace_expires_the_cache() -> None:
    log = simulate(convo(3, gaps={2: 300.0 + TTL_GRACE_SECONDS + 1}))
    r = log.requests
    assert r[1].cache_break is None
    assert r[2].cache_break is not None and r[2].cache_break.reason == "ttl"
    assert r[2].cache_read == 0 and r[2].cache_write == r[2].input_tokens


def test_a_gap_just_past_five_minutes_still_reads_the_cache() -> None:
    """The timestamps are when a response was logged, the entry is timed by the API from when
    it processed the request: a 5-minute entry was read after 314.4 s between logged
    responses (the grace of cache_rules)."""
    log = simulate(convo(3, gaps={2: 314.0}))
    r = log.requests[2]
    assert r.cache_break is None and r.cache_read == log.requests[1].input_tokens


def test_a_gap_of_five_minutes_and_23_seconds_expires_the_cache() -> None:
    """Real 5-minute entries were missed after 322.7 s and 323.7 s between logged responses:
    the tolerance for the client's timestamps is shorter than that."""
    log = simulate(convo(3, gaps={2: 323.0}))
    r = log.requests[2]
    assert r.cache_break is not None and r.cache_break.reason == "ttl"
    assert r.cache_read == 0


def test_gap_within_ttl_keeps_it() -> None:
    log = simulate(convo(3, gaps={2: 299.0}))
    assert log.requests[2].cache_break is None


def test_one_hour_writes_in_the_usage_give_a_one_hour_ttl() -> None:
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 0,
        "cache_creation_input_tokens": 100,
        "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 100},
    }
    log = simulate(convo(3, gaps={2: 1800.0}, usage=usage))
    assert log.requests[2].cache_break is None
    assert log.requests[2].ttl == "1h"
    log = simulate(convo(3, gaps={2: 3700.0}, usage=usage))
    assert log.requests[2].cache_break is not None
    assert log.requests[2].cache_break.reason == "ttl"


def test_reading_refreshes_the_entry() -> None:
    # three gaps of 4 minutes: 12 minutes after the first write, still read (refreshed each time)
    log = simulate(convo(4, gap=240.0))
    assert all(r.cache_break is None for r in log.requests[1:])


def test_below_the_minimum_cacheable_length_nothing_is_cached() -> None:
    log = simulate(convo(3, text="short", model="claude-haiku-4-5"))
    for r in log.requests:
        assert r.cache_read == 0 and r.cache_write == 0
        assert r.uncached == r.input_tokens
    assert [r.cache_break.reason if r.cache_break else None for r in log.requests] == [
        "first",
        None,
        None,
    ]


def test_minimum_table() -> None:
    assert min_cacheable("claude-opus-4-6") == (4096, True)
    assert min_cacheable("claude-opus-4-7") == (2048, True)
    assert min_cacheable("claude-opus-5") == (512, True)
    assert min_cacheable("claude-sonnet-4-5-20250929") == (1024, True)
    assert min_cacheable("claude-3-5-haiku-20241022") == (2048, True)
    assert min_cacheable("made-up-model") == (1024, False)
    log = simulate(convo(2, model="made-up-model"))
    assert any("minimum cacheable length" in n for n in log.notes)


# -- break reasons ------------------------------------------------------------------------------
def reasons(log: Any) -> list[str | None]:
    return [r.cache_break.reason if r.cache_break else None for r in log.requests]


def test_break_first() -> None:
    log = simulate(convo(2))
    assert log.requests[0].cache_break is not None
    assert log.requests[0].cache_break.to_dict() == {
        "reason": "first",
        "position": 0,
        "api_reason": None,
    }


def test_break_evicted_at_the_first_differing_position() -> None:
    log = simulate(
        convo(4, fmt="messages"), max_context_messages=4, strategy="seed", cache="automatic"
    )
    rs = log.requests
    # windows: [0] [0,1,2] [0,2,3,4]... seed evicts #1 when #4 arrives: position 1 differs
    brk = [r.cache_break for r in rs]
    assert brk[0] is not None and brk[0].reason == "first"
    evicted = [b for b in brk[1:] if b is not None]
    assert evicted and all(b.reason == "evicted" for b in evicted)
    assert evicted[0].position == 1
    later = next(r for r in rs if r.cache_break and r.cache_break.reason == "evicted")
    # only the pinned first message is shared with the previous request
    first_tokens = log.requests[0].input_tokens
    assert later.cache_read == first_tokens
    assert later.cache_write == later.input_tokens - first_tokens


def test_break_compaction() -> None:
    s = convo(4)
    s.metas[4] = {**s.metas[4], "compact_summary": True, "compact_boundary": {"trigger": "auto"}}
    log = simulate(s)
    assert reasons(log)[2] == "compaction"
    assert log.requests[2].cache_break is not None
    assert log.requests[2].cache_break.position == 0
    # after a compaction a request holds only the summary and what followed
    assert log.requests[2].window_size == 1
    assert log.requests[3].window_size == 3
    assert window_of(s, log, 3) == [4, 5, 6]


def test_break_model() -> None:
    s = convo(3)
    s.metas[3] = {**s.metas[3], "model": "claude-opus-4-1"}
    log = simulate(s)
    assert reasons(log)[1] == "model"


def test_break_system_and_tools() -> None:
    s = convo(3)
    s.metas[3] = {**s.metas[3], "system": "a different system prompt"}
    assert reasons(simulate(s))[1] == "system"
    s = convo(3)
    s.metas[5] = {**s.metas[5], "tools": [{"name": "t", "input_schema": {"type": "object"}}]}
    assert reasons(simulate(s))[2] == "tools"


def test_predicted_breaks_agree_with_recorded_on_a_real_transcript() -> None:
    s = _load(FIXTURES / "spotter_tool_heavy_L26-36_parallel_tools_out_of_order.jsonl")
    log = simulate(s)
    assert log.as_sent
    assert all(r.recorded is not None for r in log.requests)
    # the first request read the tools + system cached by an earlier session, as recorded
    first = log.requests[0]
    assert first.recorded is not None
    assert 0 < first.cache_read <= first.recorded["cache_read_input_tokens"]
    assert first.predicted_break == first.recorded_break
    # the second request reads what the first wrote, as the recorded usage shows
    assert log.requests[1].cache_break is None
    assert log.requests[1].recorded_break is False
    assert log.requests[1].predicted_break is False


# -- pricing ------------------------------------------------------------------------------------
def test_cost_arithmetic() -> None:
    p = Price(3, 3.75, 6, 0.3, 15)
    c = cost(
        p,
        uncached=1_000_000,
        cache_read=1_000_000,
        cache_write_5m=1_000_000,
        cache_write_1h=1_000_000,
        output=1_000_000,
    )
    assert c == pytest.approx(3 + 0.3 + 3.75 + 6 + 15)
    assert cost(None, uncached=10, cache_read=0) is None
    std = PRICES["claude-opus-4-6"]
    assert (std.cache_write_5m, std.cache_write_1h, std.cache_read) == (6.25, 10, 0.5)
    # Sonnet 4.6 (the model of Anthropic's own request fixtures) is priced, dated ids too
    from ctxview.core.pricing import PriceTable

    s46 = PriceTable().get("claude-sonnet-4-6-20260217")
    assert s46 is not None and (s46.input, s46.output) == (3, 15)
    assert s46.cache_read == pytest.approx(0.3)


def test_request_cost_uses_the_right_rates() -> None:
    log = simulate(convo(2, model="claude-sonnet-4-5"))
    r0, r1 = log.requests
    p = PRICES["claude-sonnet-4-5"]
    want0 = (r0.cache_write * p.cache_write_5m + r0.output_tokens * p.output) / 1e6
    want1 = (
        r1.cache_read * p.cache_read
        + r1.cache_write * p.cache_write_5m
        + r1.output_tokens * p.output
    ) / 1e6
    assert r0.cost_usd == pytest.approx(want0)
    assert r1.cost_usd == pytest.approx(want1)
    assert log.totals()["cost_usd"] == pytest.approx(round(want0 + want1, 6), abs=2e-6)


def test_unknown_model_costs_null_with_a_note() -> None:
    log = simulate(convo(2, model="claude-unknown-9"))
    assert all(r.cost_usd is None for r in log.requests)
    assert log.totals()["cost_usd"] is None
    assert any("no price for model 'claude-unknown-9'" in n for n in log.notes)
    table = PriceTable({"claude-unknown-9": parse_price({"input": 1, "output": 2}, "x")})
    log = simulate(convo(2, model="claude-unknown-9"), prices=table)
    assert all(r.cost_usd is not None for r in log.requests)


def test_a_total_keeps_the_known_costs_when_one_request_is_unpriced() -> None:
    from ctxview.textfmt import fmt_total_usd

    log = simulate(convo(3, model="claude-sonnet-4-5"))
    known = [r.cost_usd for r in log.requests]
    assert None not in known and fmt_total_usd(log.totals()).startswith("$")
    log.requests[1].cost_usd = None  # a reply of a model the price table lacks
    t = log.totals()
    assert t["cost_usd"] is None and t["unpriced_requests"] == 1
    assert t["priced_cost_usd"] == pytest.approx(known[0] + known[2], abs=2e-6)
    assert fmt_total_usd(t) == f"${t['priced_cost_usd']:.4f} + 1 unpriced"
    for r in log.requests:
        r.cost_usd = None
    assert fmt_total_usd(log.totals()) == "—"


def test_published_rates_that_are_not_the_standard_multipliers() -> None:
    # models/opus-5-5/overview: cache reads at 0.05x input, writes at 1.25x / 2x
    p = PriceTable().get("claude-opus-5-5-20260922")
    assert p is not None
    assert (p.input, p.cache_write_5m, p.cache_write_1h, p.cache_read, p.output) == (
        4,
        5,
        8,
        0.2,
        20,
    )
    assert PriceTable().get("claude-haiku-5-5") is None  # tiered by prompt size: not guessed


def test_model_names_normalise() -> None:
    assert normalise_model("claude-opus-4-6[1m]") == "claude-opus-4-6"
    assert normalise_model("claude-sonnet-4-20250514") == "claude-sonnet-4"
    assert normalise_model("claude-opus-4-0") == "claude-opus-4"


def test_parse_price_rejects_bad_tables() -> None:
    with pytest.raises(ValueError, match="'input' and 'output' are required"):
        parse_price({"input": 1}, 'pricing."m"')
    with pytest.raises(ValueError, match=r'pricing\."m"\.output: expected a number'):
        parse_price({"input": 1, "output": "cheap"}, 'pricing."m"')
    with pytest.raises(ValueError, match="unknown price"):
        parse_price({"input": 1, "output": 2, "bogus": 1}, 'pricing."m"')
    p = parse_price({"input": 2, "output": 8, "cache_read": 0.1}, "m")
    assert (p.cache_write_5m, p.cache_write_1h, p.cache_read) == (2.5, 4, 0.1)


# -- redundancy, calibration ----------------------------------------------------------------------
def test_the_same_tool_result_twice_is_redundant() -> None:
    result = "x = 1\n" * 100
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "read it twice"}]
    for k in range(2):
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": f"t{k}", "name": "read", "input": {"p": "a"}}
                ],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": result}],
            }
        )
    s = LoadedSession("m.json", "messages", msgs, [{} for _ in msgs], model="claude-sonnet-4-5")
    log = simulate(s, max_context_messages=50, strategy="seed")
    last = log.requests[-1]
    assert last.redundancy is not None
    assert last.redundancy.items == 1
    assert last.redundancy.tokens == math.ceil(len(result) * Rates().per_char[3])
    assert last.redundancy.cost_usd is not None and last.redundancy.cost_usd > 0
    assert log.requests[0].redundancy is None
    assert log.totals()["redundant_tokens"] == last.redundancy.tokens


def test_fit_recovers_known_rates() -> None:
    import random

    rng = random.Random(1)
    true = (1 / 3, 1 / 2.5, 1 / 2, 1 / 3.5, 1 / 4)
    deltas = []
    for _ in range(60):
        f = [rng.uniform(0, 3000) for _ in range(5)] + [0.0]
        n = rng.randint(1, 4)
        rec = sum(a * b for a, b in zip(f[:5], true, strict=True)) + n * 6.0
        deltas.append(Delta(features=f, messages=n, recorded=round(rec)))
    r = fit_rates(deltas)
    assert r.calibrated and r.samples == 60
    for got, want in zip(r.per_char, true, strict=True):
        assert got == pytest.approx(want, rel=0.05)
    assert fit_rates(deltas[:2]) == Rates()  # too few deltas: the defaults


def test_calibrated_estimates_match_recorded_usage() -> None:
    # usage recorded as exactly 3 characters a token + a 5,000-token hidden system prompt
    s = convo(30, text="The quick brown fox jumps over the lazy dog. " * 40)
    total = 0
    for i, m in enumerate(s.messages):
        if m["role"] == "assistant":
            size = 5000 + sum(
                math.ceil(sum(message_features(x)[:5]) / 3) + 3 for x in s.messages[:i]
            )
            s.metas[i]["usage"] = {
                "input_tokens": size,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            }
            total += 1
    log = simulate(s)
    err = log.totals()["token_error"]
    assert err is not None and err["median"] < 0.01 and err["p90"] < 0.02
    assert log.rates.calibrated
    assert abs(log.static_tokens - 5000) < 250


# -- the commands -------------------------------------------------------------------------------
REQ_KEYS = {
    "index",
    "message_ids",
    "window_size",
    "input_tokens",
    "cache_read",
    "cache_write",
    "uncached",
    "cache_break",
    "recorded",
    "timestamp",
    "cost_usd",
}
TOTAL_KEYS = {
    "requests",
    "input_tokens",
    "cache_read",
    "cache_write",
    "hit_rate",
    "cost_usd",
    "recorded_hit_rate",
}
ROW_KEYS = {
    "name",
    "requests",
    "rejected_requests",
    "first_rejected",
    "newest_dropped",
    "mean_window",
    "input_tokens",
    "cache_read",
    "cache_write",
    "hit_rate",
    "cost_usd",
    "evicted_messages",
}


def test_requests_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "requests",
        str(FIXTURES / "spotter_tool_heavy_L26-36_parallel_tools_out_of_order.jsonl"),
        "--json",
    )
    assert code == 0
    doc = json.loads(out)
    assert {
        "file",
        "format",
        "strategy",
        "max_context_messages",
        "model",
        "requests",
        "totals",
    } <= set(doc)
    assert doc["format"] == "claude-code" and doc["max_context_messages"] is None
    assert doc["strategy"] is None  # as sent: no ctxview truncation
    for r in doc["requests"]:
        assert set(r) >= REQ_KEYS
        assert set(r["recorded"]) == {
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
        }
    assert set(doc["totals"]) >= TOTAL_KEYS
    assert set(doc["totals"]["token_error"]) == {"median", "p90"}
    # the first request read a prefix cached before the file starts: no break
    assert doc["requests"][0]["recorded"]["cache_read_input_tokens"] > 0
    assert doc["requests"][0]["cache_break"] is None
    assert doc["requests"][0]["recorded_break"] is None
    assert doc["cache_assumption"]["mode"] == "automatic"


def test_requests_table_and_exit_codes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "requests", str(FIXTURES / "spotter_short.jsonl"))
    assert code == 0 and "as sent" in out and "first@0" not in out  # a warm first request
    code, _, err = run(capsys, "requests", str(tmp_path / "missing.json"))
    assert code == 2 and "no such file" in err


def test_compare_json_and_rejections(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from tests.support.agentgen import agent_loop

    msgs = agent_loop([[1, 2, 1]] * 15)
    for m in msgs:  # results big enough to be cached
        if isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    b["content"] = f"{b['tool_use_id']} " + "lorem ipsum " * 200
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(msgs))
    code, out, _ = run(
        capsys, "compare", str(path), "--max", "12", "--json", "--cache", "automatic"
    )
    doc = json.loads(out)
    assert set(doc) == {
        "file",
        "provider",
        "max_context_messages",
        "strategies",
        "config_used",
        "skipped",
    }
    assert doc["provider"] == "anthropic"
    assert doc["max_context_messages"] == 12
    rows = {r["name"]: r for r in doc["strategies"]}
    for r in rows.values():
        assert set(r) == ROW_KEYS
    assert rows["seed"]["rejected_requests"] > 0 and code == 1
    assert rows["pair-safe"]["rejected_requests"] == 0
    assert rows["low-water"]["rejected_requests"] == 0
    assert rows["low-water"]["cache_read"] > rows["pair-safe"]["cache_read"]
    code, _, err = run(capsys, "compare", str(path), "--strategies", "seed,nope")
    assert code == 2 and "nope" in err


def test_config_pricing_override(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg = tmp_path / "config.toml"
    cfg.write_text('[pricing."claude-opus-4-6"]\ninput = 1.0\noutput = 2.0\n')
    monkeypatch.setenv("CTXVIEW_CONFIG", str(cfg))
    f = str(FIXTURES / "spotter_short.jsonl")
    _, out, _ = run(capsys, "requests", f, "--json")
    cheap = json.loads(out)["totals"]["cost_usd"]
    monkeypatch.setenv("CTXVIEW_CONFIG", str(tmp_path / "none.toml"))
    _, out, _ = run(capsys, "requests", f, "--json")
    assert json.loads(out)["totals"]["cost_usd"] == pytest.approx(cheap * 5, rel=0.01)
    cfg.write_text('[pricing."x"]\ninput = "free"\noutput = 1\n')
    monkeypatch.setenv("CTXVIEW_CONFIG", str(cfg))
    code, _, err = run(capsys, "requests", f, "--json")
    assert code == 0 and 'pricing."x".input' in err


@pytest.mark.parametrize("value", ["inf", "1e308", "nan", "-0.5"])
def test_a_price_past_any_real_one_is_refused_not_priced(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    value: str,
) -> None:
    """TOML reads ``inf`` and ``1e308``: such a price made every cost infinite, and
    ``requests --json`` died with a traceback ("Out of range float values"); the table said
    ``$nan``. It is refused like any bad price (named, the default used)."""
    cfg = tmp_path / "config.toml"
    cfg.write_text(f'[pricing."claude-sonnet-5-5"]\ninput = {value}\noutput = 15\n')
    monkeypatch.setenv("CTXVIEW_CONFIG", str(cfg))
    f = str(SAMPLES / "agent_loop.json")
    code, out, err = run(capsys, "requests", f, "--json")
    assert code == 1, err  # as without a config: the sample's last request is rejected
    assert 'pricing."claude-sonnet-5-5".input: expected a number from 0 to 1,000,000' in err
    cost = json.loads(out)["totals"]["cost_usd"]
    assert isinstance(cost, float) and 0 < cost < 1
    _, table, _ = run(capsys, "requests", f)
    assert "nan" not in table and "inf" not in table


def test_hostile_model_name_is_made_visible(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    line = {
        "type": "user",
        "uuid": "u1",
        "parentUuid": None,
        "message": {"role": "user", "content": "hi"},
    }
    reply = {
        "type": "assistant",
        "uuid": "a1",
        "parentUuid": "u1",
        "message": {
            "id": "m1",
            "role": "assistant",
            "model": "evil\x1b]52;c;AAAA\x07",
            "content": [{"type": "text", "text": "ok"}],
        },
    }
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(line) + "\n" + json.dumps(reply) + "\n")
    _code, out, _ = run(capsys, "requests", str(path), "--max", "5")
    assert "\x1b" not in out and "\x07" not in out


@pytest.mark.parametrize(
    "usage",
    [
        {"input_tokens": 10**30, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
        {"input_tokens": 5, "cache_read_input_tokens": 10**20, "cache_creation_input_tokens": 0},
        {"input_tokens": -3, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
        {"input_tokens": 5, "cache_read_input_tokens": -1, "cache_creation_input_tokens": 0},
        {"input_tokens": 5, "cache_read_input_tokens": "9", "cache_creation_input_tokens": 0},
        {"input_tokens": 5.0, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0},
    ],
)
def test_a_usage_no_request_could_have_is_not_believed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, usage: dict[str, Any]
) -> None:
    """Usage of 10**30 tokens was taken as recorded: the calibration priced requests at
    $10**25, the table printed '3000000000000000000000.0B', the JSON a float-spoilt integer;
    negative counts showed as 'recorded 0/0/0'. Such a usage is not recorded (shown as —)."""
    lines = []
    for k in range(4):
        lines.append(
            {
                "type": "user",
                "uuid": f"u{k}",
                "parentUuid": f"a{k - 1}" if k else None,
                "message": {"role": "user", "content": f"question {k} " * 20},
            }
        )
        lines.append(
            {
                "type": "assistant",
                "uuid": f"a{k}",
                "parentUuid": f"u{k}",
                "message": {
                    "id": f"m{k}",
                    "role": "assistant",
                    "model": "claude-sonnet-4-5",
                    "content": [{"type": "text", "text": "answer " * 30}],
                    "usage": {**usage, "output_tokens": 40},
                },
            }
        )
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, out, err = run(capsys, "requests", str(path), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert all(r["recorded"] is None for r in report["requests"])
    assert all(r["input_tokens"] < 10_000 for r in report["requests"])
    assert report["totals"]["cost_usd"] < 1
    _code, table, _ = run(capsys, "requests", str(path))
    assert "0/0/0" not in table and "B " not in table


def _load(path: Path) -> LoadedSession:
    from ctxview.sessions.readers import load_session

    return load_session(path)


def test_compare_on_a_real_transcript_keeps_safe_strategies_clean() -> None:
    s = _load(FIXTURES / "spotter_tool_heavy_L26-36_parallel_tools_out_of_order.jsonl")
    rows = {r["name"]: r for r in compare(s, max_context_messages=3)}
    assert rows["pair-safe"]["rejected_requests"] == 0


@pytest.mark.parametrize("strategy", ["seed", "pair-safe", "token-budget", "low-water"])
@pytest.mark.parametrize("max_", [2, 3, 4, 5, 8, 13])
@pytest.mark.parametrize("seed", [0, 1])
def test_incremental_rejections_match_a_full_check(strategy: str, max_: int, seed: int) -> None:
    import random

    from ctxview.core.protocol import check_protocol, first_error_code
    from tests.support.agentgen import agent_loop

    rng = random.Random(max_ * 10 + seed)
    turns = [[rng.randint(1, 3) for _ in range(rng.randint(0, 3))] for _ in range(12)]
    msgs = agent_loop(turns, seed=max_ + seed)
    # some damage the API rejects wherever it sits: an empty text block, a doubled user turn
    msgs[len(msgs) // 3]["content"] = [{"type": "text", "text": ""}]
    msgs.insert(len(msgs) // 2, {"role": "user", "content": "again"})
    s = LoadedSession("m.json", "messages", msgs, [{} for _ in msgs])
    kw: dict[str, Any] = {"max_context_messages": max_, "strategy": strategy}
    # the range form (WindowErrors) and the context form (Rejections)
    for reference in (False, True):
        log = simulate(s, check=True, keep_windows=range(10_000), _reference=reference, **kw)
        assert log.requests
        for r in log.requests:
            window = [msgs[i] for i in log.windows[r.index]]
            problems = check_protocol(window)
            full = any(p.severity == "error" for p in problems)
            assert r.rejected == full, (r.index, log.windows[r.index])
            # every rejected request names the first error the API would answer with
            assert r.error_code == first_error_code(problems), (r.index, reference)


def test_request_points_per_format() -> None:
    msgs: list[dict[str, Any]] = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": [{"type": "text", "text": "b"}]},
        {"role": "user", "content": "c"},
        {"role": "assistant", "content": [{"type": "text", "text": "d"}]},
        {"role": "user", "content": "e"},
    ]
    metas: list[dict[str, Any]] = [{} for _ in msgs]

    def sizes(fmt: str) -> list[int]:
        s = LoadedSession("m", fmt, msgs, metas, model="claude-sonnet-4-5")
        return [r.window_size for r in simulate(s, max_context_messages=50).requests]

    assert sizes("messages") == [1, 3, 5]  # one per user message added
    assert sizes("ctxview") == [1, 3]  # one per API response
    assert sizes("request") == [5]  # the body: one
    metas[3] = {"model": "<synthetic>"}  # Claude Code's own error replies are not API calls
    assert sizes("claude-code") == [1]


def test_compare_table_never_cuts_a_number_in_a_pipe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Piped (80 columns), a long session's figures are printed whole, never as ``$1,2…``."""
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "start"}]
    for i in range(400):
        msgs.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{i}", "name": "c", "input": {}}],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 900}],
            }
        )
    path = tmp_path / "long.json"
    path.write_text(json.dumps(msgs))
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run(capsys, "compare", str(path), "--max", "40", "--json")
    rows = {r["name"]: r for r in json.loads(out)["strategies"]}
    code_table, out, _ = run(capsys, "compare", str(path), "--max", "40")
    assert code_table == code
    assert "…" not in out
    line = next(ln for ln in out.splitlines() if ln.startswith("clear-tool-uses"))
    cells = line.split()
    assert cells[-1] == f"{rows['clear-tool-uses']['evicted_messages']:,}"
    assert cells[-2] == f"${rows['clear-tool-uses']['cost_usd']:,.2f}"


def test_compare_counts_a_prompt_over_the_context_as_rejected(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request the API would answer with ``prompt is too long`` is a rejection, as inspect
    says: a strategy that evicts nothing is not shown as "0 rejected" for it."""
    cfg = tmp_path / "config.toml"
    cfg.write_text('model = "claude-haiku-4-5"\n')  # a 200k model (the 5.x models have 1M)
    monkeypatch.setenv("CTXVIEW_CONFIG", str(cfg))
    big = "lorem ipsum dolor sit amet " * 12_000  # ~80k tokens a message
    msgs = [
        {"role": "user", "content": "start"},
        {"role": "assistant", "content": "ok"},
    ]
    for k in range(4):
        msgs += [{"role": "user", "content": f"{k} {big}"}, {"role": "assistant", "content": "ok"}]
    path = tmp_path / "long.json"
    path.write_text(json.dumps(msgs))
    code, out, _ = run(
        capsys,
        "compare",
        str(path),
        "--max",
        "4",
        "--strategies",
        "pair-safe,clear-thinking",
        "--json",
    )
    rows = {r["name"]: r for r in json.loads(out)["strategies"]}
    assert rows["pair-safe"]["rejected_requests"] == 0  # the window stays under 200k
    assert rows["clear-thinking"]["rejected_requests"] >= 1  # everything is kept: over 200k
    assert rows["clear-thinking"]["first_rejected"] is not None and code == 1
    code, out, _ = run(capsys, "inspect", str(path), "--strategy", "clear-thinking", "--json")
    assert code == 1 and "over_context_window" in {p["code"] for p in json.loads(out)["problems"]}


def test_requests_table_header_names_no_max_under_context_editing(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.support.paths import ROOT

    path = str(ROOT / "sample_sessions" / "agent_loop.json")
    _, out, _ = run(capsys, "requests", path, "--strategy", "clear-tool-uses")
    head = out.splitlines()[0]
    assert "simulated: clear-tool-uses ·" in head and "max" not in head, head
    _, out, _ = run(capsys, "requests", path, "--strategy", "pair-safe", "--max", "9")
    assert "simulated: pair-safe, max 9 ·" in out.splitlines()[0]


def test_a_tool_result_text_that_is_not_a_string_is_counted_not_a_crash(capsys: Any) -> None:
    """A damaged tool_result whose inner text block holds an object: its redundancy key was a
    tuple holding a dict, and ``requests --max 2`` died with ``unhashable type: 'dict'``."""
    long = "a" * 120
    inner = [{"type": "text", "text": long}, {"type": "text", "text": {"a": 1}}]
    msgs: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for k in range(3):
        msgs.append(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{k}", "name": "x", "input": {}}],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": inner}],
            }
        )
    s = LoadedSession("d.json", "messages", msgs, [{} for _ in msgs])
    for reference in (False, True):
        log = simulate(s, max_context_messages=4, _reference=reference)
        red = log.requests[-1].redundancy
        assert red is not None and red.items == 1  # the same result twice in the last window
    fast = simulate(s, max_context_messages=4)
    ref = simulate(s, max_context_messages=4, _reference=True)
    assert [r.redundancy for r in fast.requests] == [r.redundancy for r in ref.requests]


def test_the_ttl_runs_from_when_a_request_was_sent_not_when_its_response_was_logged() -> None:
    """A response streamed for minutes is logged long after its request was sent: the next
    request 340 s after that log line but 200 s after the request still reads the cache."""
    s = convo(3, gaps={2: 340.0})
    assert simulate(s).requests[2].cache_break is not None
    s.metas[5]["request_sent"] = ts(10.0 + 200.0)  # the line before it: 200 s after request 1's
    s.metas[3]["request_sent"] = ts(10.0)
    r = simulate(s).requests[2]
    assert r.cache_break is None and r.cache_read == simulate(s).requests[1].input_tokens
