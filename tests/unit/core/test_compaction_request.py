"""The request that wrote a compaction's summary, modelled from the main transcript
(``ctxview/core/requests/compaction_request.py``), held against the usage the session's
``agent-acompact`` file recorded for it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxview.core.requests import simulate
from ctxview.core.requests.compaction_request import INSTRUCTION_CHARS
from ctxview.sessions import load_session
from tests.support.paths import ACCEPTANCE

SPOTTER = ACCEPTANCE / "claude_code" / "spotter_258c7280-ae70-4798-800f-63464d01a85d"
ACOMPACT = SPOTTER.with_name(SPOTTER.name + "__subagent_agent-acompact-fffbd0.jsonl")


@pytest.fixture(scope="module")
def session() -> Any:
    return load_session(str(SPOTTER) + ".jsonl")


def _recorded_usage() -> dict[str, int]:
    lines = [json.loads(x) for x in ACOMPACT.read_text().splitlines()]
    usage: dict[str, int] = lines[-1]["message"]["usage"]
    return usage


def test_the_compaction_request_reads_the_last_prompt_and_writes_the_tail_and_instruction(
    session: Any,
) -> None:
    log = simulate(session)
    (comp,) = log.compactions
    assert comp.kind == "compaction" and all(r.kind == "turn" for r in log.requests)
    after = log.requests[comp.index]
    assert after.cache_break is not None and after.cache_break.reason == "compaction"
    last = log.requests[comp.index - 1]
    assert comp.cache_read == last.input_tokens  # the prompt before it, from the cache
    tail = range(last.message_ids[-1] + 1, after.message_ids[0])
    assert len(tail) == 2  # the last response and its tool result
    instruction = round(INSTRUCTION_CHARS * log.rates.per_char[0])
    assert comp.cache_write == comp.input_tokens - comp.cache_read > instruction
    assert comp.output_tokens > 2_000  # the summary (about 14,000 characters)
    # against the request the acompact file recorded: within 1.5% of its prompt
    usage = _recorded_usage()
    billed = sum(usage[k] for k in ("input_tokens", "cache_read_input_tokens"))
    billed += usage["cache_creation_input_tokens"]
    assert abs(comp.input_tokens - billed) / billed < 0.015
    assert abs(comp.cache_read - usage["cache_read_input_tokens"]) / billed < 0.015
    # it is counted in the totals, and sent between the two requests
    t = log.totals()
    assert t["requests"] == len(log.requests) + 1
    assert t["cost_usd"] == pytest.approx(sum(r.cost_usd or 0 for r in log.in_order()), abs=1e-5)
    assert comp.cost_usd is not None and comp.cost_usd > 0.1
    order = log.in_order()
    assert order[comp.index] is comp and order[comp.index + 1] is after


def test_a_compaction_sent_after_the_cache_expired_writes_everything(session: Any) -> None:
    first = simulate(session).compactions[0]
    summary = first.response_id
    assert summary is not None
    meta = session.metas[summary]
    kept = meta["timestamp"]
    meta["timestamp"] = kept.replace("T21:18", "T23:18")  # logged 2 h later (1 h writes)
    try:
        late = simulate(session).compactions[0]
    finally:
        meta["timestamp"] = kept
    assert late.cache_read == 0 and late.cache_write == late.input_tokens
    assert late.cache_break is not None and late.cache_break.reason == "ttl"


def test_a_simulation_under_a_max_models_no_compaction_request(session: Any) -> None:
    assert simulate(session, max_context_messages=40, strategy="seed").compactions == []
