"""One figure for the next request of a recorded file: ``inspect``'s window, the app's sidebar
("Request tokens") and its cache line give what ``requests`` prices the request after the file's
last message at, and that is the last row of ``requests`` plus what the next request adds (the
last response's items, as sent, and the reasoning they carry while the turn runs).

On these files they had differed by the tools + system (the file's median in place of the
segment's: a Claude Code transcript's 0 in place of 32,785), by the hosted
web searches (each at 4,300 in place of what the file's usage measured, and still billed after
an interrupt: 235,944 against 191,003) and by a Codex response's recorded reasoning."""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import pytest

from ctxview.app.cacheline import predict, session_view, with_next_request
from ctxview.app.model import SessionModel
from ctxview.core.providers.base import RECORDED_CARRY
from ctxview.core.requests import RequestLog, simulate
from ctxview.sessions import load_session, replay
from ctxview.sessions.session import Session
from tests.support.paths import ACCEPTANCE

CODEX = ACCEPTANCE / "unseen3" / "codex"
FILES = {
    # hosted searches measured at 5.4k to 7k each, an interrupt after them, a compaction
    "codex searches": CODEX / "agentv_019eecb9-cc3a-73c2-814a-dd4f8ced7545.jsonl",
    # two compactions with replacement histories (three statics, 10,123 to 16,165)
    "codex compactions": CODEX / "agentv_019f36b8-7808-7b53-b256-85144c802798.jsonl",
    # the last response's reasoning (1,522 tokens) is carried to the next request
    "codex reasoning": CODEX / "agentv_019f03e0-321f-7eb2-83cc-b54ecd71be23.jsonl",
    "claude code compaction": ACCEPTANCE
    / "claude_code"
    / "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl",
    # a static that fell inside the first segment, then a compaction: the file's median is 0,
    # the last segment's 32,785
    "claude code static drop": ACCEPTANCE
    / "unseen2"
    / "claude_code"
    / "entire_fdd24234-3c2a-4958-91ed-59c63b12ba1e.jsonl",
}


class Loaded(NamedTuple):
    rep: Session
    log: RequestLog
    inspect: dict[str, Any]


@pytest.fixture(scope="module", params=sorted(FILES))
def loaded(request: pytest.FixtureRequest) -> Loaded:
    path: Path = FILES[request.param]
    session = load_session(path)
    rep = replay(session, as_sent=True)
    return Loaded(rep, simulate(session), rep.summary()["window"])


def test_inspect_is_the_last_request_and_what_the_next_one_adds(loaded: Loaded) -> None:
    rep, log, window = loaded
    s = rep.session
    last = log.requests[-1]
    end = log.windows[last.index][-1] + 1  # the last request's window ends there
    n = len(s.messages)
    assert 0 < n - end <= 4  # the last response's items
    added = sum(rep.sent_tokens(i, s.messages[i]) for i in range(end, n))
    # their recorded reasoning, billed to the requests after them in the turn
    carried = sum(v for m in s.metas[end:n] if type(v := (m or {}).get(RECORDED_CARRY)) is int)
    assert window["estimated_tokens"] == last.input_tokens + added + carried


def test_inspect_is_the_request_models_next_request(loaded: Loaded) -> None:
    rep, _, window = loaded
    nxt = simulate(with_next_request(rep.session)).requests[-1]
    assert window["estimated_tokens"] == nxt.input_tokens


def test_the_sidebar_and_its_cache_line_give_inspects_figure(loaded: Loaded) -> None:
    rep, _, window = loaded
    model = SessionModel(rep, rep.session.path, rep.session.model or "")
    found = session_view(model)
    assert found is not None
    pred = predict(*found)
    assert pred is not None
    assert model.window_tokens == pred.input_tokens == window["estimated_tokens"]
