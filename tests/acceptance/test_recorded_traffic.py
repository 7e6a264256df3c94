"""Acceptance on a larger set of real recorded traffic (tests/acceptance/, MANIFEST.md there).

* every request body the real API answered with HTTP 200 passes ``ctxview inspect`` (exit 0), and
  ``export`` returns every top-level field unchanged (``stream`` aside);
* every real Claude Code transcript rebuilds with every block of every response and every tool
  result, and zero protocol errors;
* the recorded 400s that are about ``messages`` are rejected (exit 1 or 2).
"""

from __future__ import annotations

import collections
import json
from pathlib import Path
from typing import Any

import pytest

from ctxview import check_protocol
from ctxview.cli import main
from ctxview.core.protocol import errors
from ctxview.sessions import load_session
from tests.support.paths import ACCEPTANCE

ACC = ACCEPTANCE
BODIES = sorted((ACC / "anthropic_requests").glob("*.json"))
TRANSCRIPTS = sorted((ACC / "claude_code").glob("*.jsonl"))


def test_the_set_is_large() -> None:
    assert len(BODIES) >= 80 and len(TRANSCRIPTS) >= 20


@pytest.mark.parametrize("path", BODIES, ids=lambda p: p.name)
def test_accepted_request_passes_and_exports_unchanged(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["inspect", str(path), "--json"]) == 0, capsys.readouterr().out
    capsys.readouterr()
    original = json.loads(path.read_text())
    original.pop("stream", None)
    assert main(["export", str(path)]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported == original


def _file_census(path: Path) -> tuple[collections.Counter[Any], int]:
    """Block types of every assistant line and the number of tool_result blocks, main thread
    (or every line of a sub-agent transcript)."""
    records = []
    for raw in path.read_text().splitlines():
        try:
            rec = json.loads(raw)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            records.append(rec)
    sub = not any(
        r.get("type") in ("user", "assistant") and not r.get("isSidechain") for r in records
    )
    blocks: collections.Counter[Any] = collections.Counter()
    results = 0
    for r in records:
        msg = r.get("message")
        if (r.get("isSidechain") and not sub) or not isinstance(msg, dict):
            continue
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        for b in content:
            if r.get("type") == "assistant":
                if b.get("type") == "text" and not str(b.get("text", "")).strip():
                    continue  # Claude Code drops whitespace-only text before sending
                blocks[b.get("type")] += 1
            elif r.get("type") == "user" and b.get("type") == "tool_result":
                results += 1
    return blocks, results


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name[:60])
def test_real_transcript_rebuilds_every_block_without_errors(path: Path) -> None:
    s = load_session(path)
    assert errors(check_protocol(s.messages)) == []
    expected_blocks, expected_results = _file_census(path)
    got = collections.Counter(
        b.get("type")
        for m in s.messages
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for b in m["content"]
    )
    results = sum(
        1
        for m in s.messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    )
    assert got == expected_blocks
    assert results == expected_results


@pytest.mark.parametrize(
    "name",
    [
        "mirascope_handles-empty-string-content_req1.json",
        "ddtrace_anthropic_completion_error_req1.json",
        "pai_openai_responses_reasoning_without_following_item_req2.json",
    ],
)
def test_recorded_rejections_are_rejected(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = ACC / "rejected" / name
    code = main(["inspect", str(path), "--json"])
    out = capsys.readouterr()
    assert code in (1, 2), out
    error = json.loads((ACC / "rejected" / name.replace(".json", ".error.json")).read_text())
    api_text = json.dumps(error)
    if code == 1:  # our problem carries the API's own words
        messages = [p["message"] for p in json.loads(out.out)["problems"]]
        assert any(m in api_text for m in messages), (messages, api_text)
