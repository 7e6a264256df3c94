"""Every recorded OpenAI file kept for acceptance (tests/acceptance/openai_chat,
openai_responses, codex; MANIFEST.md) opens as the OpenAI provider's, with no protocol error
but the ones listed (each a request the API would reject, explained), and loses nothing:

* a request body comes back from ``export`` as the same JSON value;
* a Codex rollout reads one message per response item (and per item of a compaction's
  replacement history), each keeping its item.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxview.sessions import load_session
from ctxview.sessions.replay import replay
from tests.support.paths import ACCEPTANCE

CHAT = sorted((ACCEPTANCE / "openai_chat").glob("*.json"))
RESPONSES = sorted((ACCEPTANCE / "openai_responses").glob("*.json"))
CODEX = sorted((ACCEPTANCE / "codex").glob("*.jsonl"))

#: the errors found, each a true one: (file, code, message index)
EXPECTED_ERRORS = {
    # a synthetic fixture: an escalated call the user declined, with no output recorded (Codex
    # records an output for it; without one the next request is refused)
    "agenthistory_codex_with_escalation.jsonl": [("unanswered_tool_use", 8)],
    # a call left without output when the session was resumed 15 minutes later; the file ends
    # before any request after it
    "localpush_rollout-2026-02-23T12-47-42-019c8a53-a0dd-7130-bcd7-95445d84846a.jsonl": [
        ("unanswered_tool_use", 436)
    ],
}


def _errors(path: Path) -> list[tuple[str, int]]:
    rep = replay(load_session(path), as_sent=True)
    return [(p.code, p.index) for p in rep.protocol_problems() if p.severity == "error"]


def test_the_files_are_there() -> None:
    assert len(CHAT) >= 80 and len(RESPONSES) >= 150 and len(CODEX) >= 10


@pytest.mark.parametrize(
    ("files", "fmt", "key"),
    [(CHAT, "openai-chat", "messages"), (RESPONSES, "openai-responses", "input")],
    ids=["chat", "responses"],
)
def test_every_body_opens_valid_and_exports_as_read(files: list[Path], fmt: str, key: str) -> None:
    for path in files:
        session = load_session(path)
        assert (session.format, session.provider) == (fmt, "openai"), path.name
        rep = replay(session, as_sent=True)
        errors = [p for p in rep.protocol_problems() if p.severity == "error"]
        assert errors == [], (path.name, errors)
        assert rep.request_body({}) == json.loads(path.read_text()), path.name


def test_every_codex_rollout_opens_with_only_the_known_errors() -> None:
    for path in CODEX:
        session = load_session(path)
        assert (session.format, session.provider) == ("codex", "openai"), path.name
        assert _errors(path) == EXPECTED_ERRORS.get(path.name, []), path.name


def test_a_codex_rollout_keeps_every_item() -> None:
    for path in CODEX:
        items = []
        for line in path.read_text().splitlines():
            rec = json.loads(line)
            if rec["type"] == "response_item":
                items.append(rec["payload"])
            elif rec["type"] == "compacted":
                items.extend(rec["payload"].get("replacement_history") or [None])
        session = load_session(path)
        wires = [m.get("wire") for m in session.metas]
        assert wires == items, path.name


def test_a_codex_rollout_has_its_recorded_usage_and_requests() -> None:
    from ctxview.core.requests import simulate

    path = next(p for p in CODEX if p.name.startswith("localpush_rollout-2026-02-23T20-34"))
    log = simulate(load_session(path))
    recorded = [r for r in log.requests if r.recorded is not None]
    # one request per response: 12 token_count events, each repeated once
    assert len(recorded) == 6
    assert log.requests[0].model == "gpt-5.3-codex"


def test_a_chat_cassette_opens_with_each_reply_as_its_turn_and_its_usage_recorded() -> None:
    """A VCR cassette of two Chat Completions interactions: the conversation is the second
    request's messages and its reply, each reply's usage the recorded usage of its request."""
    import yaml

    path = (
        ACCEPTANCE
        / "openai_chat"
        / "pai_openai_instructions_with_tool_calls_keep_instructions.yaml"
    )
    interactions = yaml.safe_load(path.read_text())["interactions"]
    sent = interactions[1]["request"]["parsed_body"]["messages"]
    replies = [i["response"]["parsed_body"] for i in interactions]
    session = load_session(path)
    assert (session.format, session.provider) == ("proxy", "openai")
    assert [m.get("wire") for m in session.metas] == [
        *sent[1:],  # the system message is the system prompt
        replies[1]["choices"][0]["message"],
    ]
    usage = [m["usage"] for m in session.metas if "usage" in m]
    prompt = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    assert [sum(u[k] for k in prompt) for u in usage] == [
        r["usage"]["prompt_tokens"] for r in replies
    ]
    assert _errors_of(session) == []


@pytest.mark.parametrize(
    ("folder", "name", "turn"),
    [
        (
            "openai_chat",
            "pai_openai_moderation_stream.yaml",
            [{"role": "assistant", "content": "Paris."}],
        ),
        (
            "openai_responses",
            "pai_openai_responses_moderation_stream.yaml",
            ["reasoning", "message"],
        ),
    ],
)
def test_a_streamed_cassettes_reply_is_its_assistant_turn(
    folder: str, name: str, turn: list[object]
) -> None:
    """A cassette whose reply was streamed (SSE): the reply the stream carries is the assistant
    turn after the request's messages, and its usage (on the stream's last chunk, or its
    ``response.completed``) the recorded usage of the request, as for a JSON reply."""
    session = load_session(ACCEPTANCE / folder / name)
    wire = [m.get("wire") for m in session.metas]
    assert wire[0] == {"content": "What is the capital of France?", "role": "user"}
    replies = wire[1:]
    if folder == "openai_chat":
        assert replies == turn
    else:
        assert [r["type"] for r in replies] == turn
        assert replies[1]["content"][0]["text"] == "Paris."
    assert session.metas[1]["usage"]["input_tokens"] == 13
    assert _errors_of(session) == []


def _errors_of(session: object) -> list[tuple[str, int]]:
    rep = replay(session, as_sent=True)  # type: ignore[arg-type]
    return [(p.code, p.index) for p in rep.protocol_problems() if p.severity == "error"]
