"""The next request of a Claude Code transcript with microcompactions is estimated as it is sent
(``Session.microcompacted``): the tool results Claude Code cleared count cleared in ``inspect``'s
window and the app's per-message estimates, as in the request model."""

from __future__ import annotations

from ctxview.app.model import compute_tokens
from ctxview.core.requests import simulate
from ctxview.sessions import load_session, replay
from tests.support.paths import ACCEPTANCE

FILE = ACCEPTANCE / "claude_code" / "phantomreads_b811ba2a-b3e3-44cf-8a97-c6b79d9eb8b5.jsonl"


def test_the_window_of_a_microcompacted_transcript_is_estimated_as_sent() -> None:
    loaded = load_session(FILE)
    last = simulate(loaded).requests[-1]
    assert last.recorded_total is not None
    rep = replay(loaded, as_sent=True)
    summary = rep.summary()
    # the last request billed 160,904; with the cleared results whole the window came to ~224k
    # and inspect called the recorded, accepted request "prompt is too long"
    assert not [p for p in summary["problems"] if p["severity"] == "error"], summary["problems"]
    size = summary["window"]["estimated_tokens"]
    assert abs(size - last.recorded_total) / last.recorded_total < 0.03, size
    # the app's per-message estimates are the same
    toks, _, static = compute_tokens(loaded.messages, rep)
    assert static is not None and abs(static + sum(toks) - size) < 50


def test_the_html_reports_rows_count_the_cleared_results_as_sent() -> None:
    import json
    import re

    from ctxview.cli.requests import requests_report
    from ctxview.html import build_report
    from ctxview.sessions.request_model import session_requests

    loaded = load_session(FILE)
    rep = replay(loaded, as_sent=True)
    log, agents = session_requests(loaded, prices=None, defaults={})
    page, _ = build_report(rep, rep.summary(), requests_report(log, loaded, agents=agents))
    found = re.search(r'id="ctxview-data">(.*?)</script>', page, re.S)
    assert found is not None
    rows = json.loads(found.group(1))["rows"]
    toks, _, static = compute_tokens(loaded.messages, rep)
    assert [r[3] for r in rows] == toks
    assert static is not None and static + sum(toks) < 200_000
