"""The compaction ledger (ctxview.core.ledger): Claude Code compact boundaries and compaction
blocks, with trigger, tokens before → after and what each replaced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.core.ledger import LedgerScanner, compaction_ledger, recorded_input
from ctxview.sessions import load_session
from tests.support.compactions import COMPACTED_TRANSCRIPTS, constructed_compactions
from tests.support.paths import ACCEPTANCE

ACCEPT = ACCEPTANCE / "claude_code"


def _raw_boundaries(path: Path) -> list[tuple[dict[str, Any], int | None]]:
    """(compactMetadata, recorded input of the next main-thread response) of each
    compact_boundary line, read from the JSONL directly."""
    lines = [json.loads(s) for s in path.read_text().splitlines() if s.strip()]
    out = []
    for k, rec in enumerate(lines):
        if rec.get("subtype") != "compact_boundary":
            continue
        after = None
        for r in lines[k + 1 :]:
            if r.get("type") == "assistant" and not r.get("isSidechain"):
                u = r["message"]["usage"]
                after = (
                    u["input_tokens"]
                    + u["cache_read_input_tokens"]
                    + u["cache_creation_input_tokens"]
                )
                break
        out.append((rec["compactMetadata"], after))
    return out


def test_the_real_transcripts_with_compactions_are_there() -> None:
    assert len(COMPACTED_TRANSCRIPTS) >= 5


@pytest.mark.parametrize("path", COMPACTED_TRANSCRIPTS, ids=lambda p: p.name[:16])
def test_ledger_of_real_claude_code_transcripts(path: Path) -> None:
    s = load_session(str(path))
    ledger = compaction_ledger(s.messages, s.metas)
    raw = _raw_boundaries(path)
    assert len(ledger) == len(raw) >= 1
    prev = 0
    for c, (cm, after) in zip(ledger, raw, strict=True):
        assert c.kind == "claude-code"
        assert c.trigger == cm["trigger"] and c.trigger in ("manual", "auto")
        assert c.tokens_before == cm["preTokens"]
        assert c.tokens_after == after
        assert c.tokens_after is not None and c.tokens_after < c.tokens_before
        # the summary is the message after the boundary, and it replaced everything before
        assert c.summary_id == c.id
        assert s.metas[c.id].get("compact_summary")
        assert "continued from a previous conversation" in json.dumps(s.messages[c.id])
        assert c.replaced == range(prev, c.id)
        prev = c.id


def test_manual_compaction_of_the_acceptance_transcript() -> None:
    s = load_session(str(ACCEPT / "spotter_ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"))
    (c,) = compaction_ledger(s.messages, s.metas)
    assert c.to_dict() == {
        "id": 276,
        "kind": "claude-code",
        "trigger": "manual",
        "tokens_before": 142431,
        "tokens_after": 3 + 23812 + 21448,  # the first response after it: input + read + write
        "summary_id": 276,
        "replaced": [0, 275],
    }


def test_ledger_of_constructed_compactions() -> None:
    msgs, metas = constructed_compactions()
    got = [c.to_dict() for c in compaction_ledger(msgs, metas)]
    assert got == [
        {
            "id": 4,
            "kind": "claude-code",
            "trigger": "auto",
            "tokens_before": 1200,
            "tokens_after": 302,
            "summary_id": 4,
            "replaced": [0, 3],
        },
        {
            "id": 8,
            "kind": "claude-code",
            "trigger": "manual",
            "tokens_before": None,  # no preTokens recorded
            "tokens_after": None,  # the next response has no usage
            "summary_id": 8,
            "replaced": [4, 7],
        },
        {
            "id": 12,
            "kind": "block",
            "trigger": "server",
            "tokens_before": 5000,  # the response that carries the block: the compacted request
            "tokens_after": 40,
            "summary_id": 12,
            "replaced": [8, 11],
        },
    ]


def test_incremental_scan_matches_a_full_scan() -> None:
    msgs, metas = constructed_compactions()
    full = [c.to_dict() for c in compaction_ledger(msgs, metas)]
    for step in (1, 2, 3, 5):
        scanner = LedgerScanner()
        for n in range(0, len(msgs) + 1, step):
            scanner.scan(msgs[:n], metas[:n])
        scanner.scan(msgs, metas)
        assert [c.to_dict() for c in scanner.entries] == full
    scanner.reset()
    assert scanner.scan(msgs, metas) and [c.to_dict() for c in scanner.entries] == full


def test_hostile_or_odd_metadata_is_not_trusted() -> None:
    msgs = [
        {"role": "user", "content": "a"},
        {"role": "assistant", "content": "b"},
        {"role": "user", "content": "s"},
        {"role": "assistant", "content": "c"},
    ]
    metas: list[dict[str, Any]] = [
        {},
        {},
        {"compact_boundary": {"trigger": 7, "preTokens": "many"}},
        {"usage": {"input_tokens": True, "cache_read_input_tokens": -5}},
    ]
    (c,) = compaction_ledger(msgs, metas)
    assert c.trigger is None and c.tokens_before is None and c.tokens_after is None
    assert c.summary_id is None  # the message after the boundary is not marked as a summary
    assert recorded_input({"usage": "x"}) is None
    # a boundary on the very first message (a session continued after a compaction) is an
    # entry that replaces nothing in this file; the summary after it is its summary
    (first,) = compaction_ledger(msgs[:1], [{"compact_boundary": {}, "compact_summary": True}])
    assert (first.id, first.summary_id, list(first.replaced)) == (0, 0, [])
