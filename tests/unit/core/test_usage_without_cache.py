"""A Claude Code transcript whose recorded usage reports no cache fields at all was sent without
caching (``ctxview.core.usage.sent_uncached``): every input token at the base rate, no break."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.core.requests import simulate
from ctxview.sessions import load_session


def _transcript(tmp_path: Path, usage: dict[str, Any]) -> Path:
    base = {"sessionId": "s", "isSidechain": True, "userType": "external", "cwd": "/w"}
    lines = [
        {
            **base,
            "type": "user",
            "uuid": "u1",
            "parentUuid": None,
            "timestamp": "2026-01-14T19:37:40.000Z",
            "message": {"role": "user", "content": "Warmup"},
        },
        {
            **base,
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "timestamp": "2026-01-14T19:37:42.000Z",
            "message": {
                "id": "msg_bdrk_01",
                "role": "assistant",
                "model": "converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0",
                "content": [{"type": "text", "text": "Ready to search the codebase."}],
                "usage": usage,
            },
        },
    ]
    path = tmp_path / "agent-warmup.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_a_transcript_whose_usage_reports_no_cache_fields_is_priced_uncached(
    tmp_path: Path,
) -> None:
    log = simulate(load_session(_transcript(tmp_path, {"input_tokens": 16878, "output_tokens": 9})))
    (r,) = log.requests
    assert (r.cache_read, r.cache_write, r.cache_break) == (0, 0, None)
    assert r.uncached == r.input_tokens == 16878
    assert r.cost_usd is not None  # the Bedrock id priced as claude-haiku-4-5
    assert any("reports no cache reads or writes" in n for n in log.notes)


def test_a_usage_with_cache_fields_keeps_the_cache(tmp_path: Path) -> None:
    usage = {
        "input_tokens": 3,
        "cache_creation_input_tokens": 16875,
        "cache_read_input_tokens": 0,
        "output_tokens": 9,
    }
    log = simulate(load_session(_transcript(tmp_path, usage)))
    (r,) = log.requests
    assert r.cache_write == r.input_tokens and r.cache_break is not None
    assert not any("reports no cache reads or writes" in n for n in log.notes)
