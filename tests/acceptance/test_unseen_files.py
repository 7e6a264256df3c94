"""The unseen sets (tests/acceptance/unseen, unseen2, unseen3, unseen4 and unseen6, INDEX.md in each): real public files of
every format, each set collected after the estimates were tuned, the judge of the figures in
docs/request-model.md and docs/providers.md. Each request body was answered by its API (HTTP
200) and each session is a real agent's: every one opens in its provider's form with no
protocol error, and a body comes back from ``export`` as the same JSON value.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxview.sessions import load_session
from ctxview.sessions.replay import replay
from tests.support.paths import ACCEPTANCE

#: each set, with the fewest bodies it holds per folder (a set that lost files fails)
SETS = {
    "unseen": {"openai_chat": 200, "openai_responses": 100, "gemini": 100},
    "unseen2": {"openai_chat": 350, "openai_responses": 280, "gemini": 160},
    "unseen3": {"openai_chat": 100, "openai_responses": 230, "gemini": 140},
    "unseen4": {"openai_chat": 105, "openai_responses": 77, "gemini": 90},
    "unseen6": {"openai_chat": 340, "openai_responses": 216, "gemini": 235},
}
BODIES = {
    "openai_chat": ("openai-chat", "openai"),
    "openai_responses": ("openai-responses", "openai"),
    "gemini": ("gemini", "gemini"),
}
SESSIONS = {
    "claude_code": ("*.jsonl", "anthropic"),
    "codex": ("*.jsonl", "openai"),
    "gemini_cli": ("*.json", "gemini"),
}


def _errors(path: Path) -> list[tuple[str, int]]:
    rep = replay(load_session(path), as_sent=True)
    return [(p.code, p.index) for p in rep.protocol_problems() if p.severity == "error"]


@pytest.mark.parametrize("name", sorted(SETS))
def test_the_set_is_there(name: str) -> None:
    counts = {d: len(list((ACCEPTANCE / name / d).glob("*_req*.json"))) for d in BODIES}
    assert all(counts[d] >= least for d, least in SETS[name].items()), counts


@pytest.mark.parametrize("name", sorted(SETS))
@pytest.mark.parametrize("folder", sorted(BODIES))
def test_every_body_the_api_answered_opens_valid_and_exports_as_read(
    name: str, folder: str
) -> None:
    fmt, provider = BODIES[folder]
    bad = []
    for path in sorted((ACCEPTANCE / name / folder).glob("*_req*.json")):
        session = load_session(path)
        assert (session.format, session.provider) == (fmt, provider), path.name
        rep = replay(session, as_sent=True)
        errors = [(p.code, p.index) for p in rep.protocol_problems() if p.severity == "error"]
        if errors or rep.request_body({}) != json.loads(path.read_text()):
            bad.append((path.name, errors))
    assert bad == []


#: the session folders each set has (no Gemini CLI session was found for the third, fourth and
#: sixth, no Codex rollout for the sixth)
SESSION_FOLDERS = [
    (name, folder)
    for name in sorted(SETS)
    for folder in sorted(SESSIONS)
    if folder in {"claude_code", "codex", "gemini_cli"} and (ACCEPTANCE / name / folder).is_dir()
]


@pytest.mark.parametrize(("name", "folder"), SESSION_FOLDERS)
def test_every_session_opens_as_sent_with_no_protocol_error(name: str, folder: str) -> None:
    pattern, provider = SESSIONS[folder]
    paths = sorted((ACCEPTANCE / name / folder).rglob(pattern))
    assert paths
    bad = []
    for path in paths:
        assert load_session(path).provider == provider, path.name
        if errors := _errors(path):
            bad.append((path.name, errors))
    assert bad == []
