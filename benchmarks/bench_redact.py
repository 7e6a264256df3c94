"""Redaction (``export --redact``, ``repair -o --redact``, the proxy's recording, ``report``,
``scan``): ``redact_value`` over every message of a 100,000-message session.

Two sessions: the agent loop (lorem ipsum: few texts hold anything a detector looks for) and
100,000 messages drawn in turn from the recorded Claude Code transcripts of
``tests/acceptance/claude_code`` (real tool calls and results: code, JSON, shell output, paths,
hashes), the hard case. The figures are the whole pass and its rate in MB of JSON a second,
in CPU time of this process (one thread): on a shared machine the wall time measures the
neighbours.

Then the detector's figures: the secrets corpus (``tests/support/secrets_corpus``: found with
their exact span, look-alikes untouched), what it redacts in the real transcripts, and what
detect-secrets' entropy plugins (left out of the detector) would flag in both.
"""

from __future__ import annotations

import json
import time
from itertools import cycle, islice
from typing import Any

from benchmarks.common import ROOT, Bench, Figure, report, say, test_helper
from ctxview.core.redact import redact_text, redact_value
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


def _strings(value: Any) -> list[str]:
    out: list[str] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return out


def _entropy_flags(text: str) -> int:
    """What detect-secrets' entropy plugins flag in ``text`` (quoted strings over their limits:
    base64 4.5, hex 3.0), line by line as they run."""
    from detect_secrets.plugins.high_entropy_strings import (
        Base64HighEntropyString,
        HexHighEntropyString,
    )

    n = 0
    for plugin in (Base64HighEntropyString(), HexHighEntropyString()):
        for line in text.splitlines():
            for found in plugin.analyze_string(line):
                n += plugin.calculate_shannon_entropy(found) > plugin.entropy_limit
    return n


def _detector(real: list[list[dict[str, Any]]]) -> None:
    corpus = test_helper("secrets")
    secrets, lookalikes = corpus.secrets(), corpus.lookalikes()
    found = sum(redact_text(s.text)[0] == s.redacted for s in secrets)
    untouched = sum(redact_text(t)[1].total == 0 for _, t in lookalikes)
    report(Figure("corpus secrets found (exact span)", found, "", len(secrets), True))
    report(Figure("corpus look-alikes left untouched", untouched, "", len(lookalikes), True))
    texts = _strings(real)
    redacted = sum(redact_text(t)[1].total for t in texts)
    report(Figure("secrets redacted in the real transcripts (once each)", redacted, ""))
    entropy_real = sum(_entropy_flags(t) for t in texts)
    entropy_look = sum(_entropy_flags(t) > 0 for _, t in lookalikes)
    entropy_found = sum(_entropy_flags(s.text) > 0 for s in secrets)
    report(Figure("  entropy plugins: flags in the real transcripts", entropy_real, ""))
    report(Figure("  entropy plugins: look-alikes flagged", entropy_look, ""))
    report(Figure("  entropy plugins: corpus secrets flagged", entropy_found, ""))


def run(b: Bench) -> None:
    redact_value("warm up: the detectors are built on first use")
    _measure(b, load_session(b.agent_loop()).messages, "agent loop", 10.0)
    _measure(b, _real_messages(b.messages), "real Claude Code transcripts", 10.0)
    files = sorted((ROOT / "tests" / "acceptance" / "claude_code").glob("*.jsonl"))
    _detector([load_session(p).messages for p in files])
