"""Redaction (``export --redact``, ``repair -o --redact``, the proxy's recording, ``report``,
``scan``): ``redact_value`` over every message of a 100,000-message session.

Two sessions: the agent loop (lorem ipsum: few texts hold anything a detector looks for) and
100,000 messages drawn in turn from the recorded Claude Code transcripts of
``tests/acceptance/claude_code`` (real tool calls and results: code, JSON, shell output, paths,
hashes), the hard case. The figures are the whole pass and its rate in MB of JSON a second,
in CPU time of this process (one thread): on a shared machine the wall time measures the
neighbours.
"""

from __future__ import annotations

import json
import time
from itertools import cycle, islice
from typing import Any

from benchmarks.common import ROOT, Bench, Figure, report, say
from ctxview.core.redact import redact_value
from ctxview.sessions import load_session


def _real_messages(n: int) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for path in sorted((ROOT / "tests" / "acceptance" / "claude_code").glob("*.jsonl")):
        found.extend(load_session(path).messages)
    return list(islice(cycle(found), n))


def _measure(b: Bench, messages: list[dict[str, Any]], what: str, target: float) -> None:
    size = len(json.dumps(messages)) / 1e6
    best = float("inf")
    total = 0
    for _ in range(b.runs):
        t0 = time.process_time()
        _, found = redact_value(messages)
        best = min(best, time.process_time() - t0)
        total = found.total
    say(f"{what}: {size:.0f} MB of JSON, {total:,} secrets redacted")
    report(Figure(f"redact {len(messages):,} messages ({what}), CPU", best, "s", target))
    report(Figure(f"  its rate in MB of JSON a second ({what})", size / best, ""))


def run(b: Bench) -> None:
    redact_value("warm up: the detectors are built on first use")
    _measure(b, load_session(b.agent_loop()).messages, "agent loop", 10.0)
    _measure(b, _real_messages(b.messages), "real Claude Code transcripts", 10.0)
