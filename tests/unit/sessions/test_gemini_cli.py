"""ctxview.sessions.gemini_cli: Gemini CLI sessions (JSON and JSONL) as the API turns they send."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.sessions import SessionError, load_session

HEAD = {"sessionId": "s1", "projectHash": "p", "startTime": "2026-01-01T00:00:00Z"}


def _record(rid: str, kind: str, content: Any = "", **extra: Any) -> dict[str, Any]:
    return {
        "id": rid,
        "timestamp": "2026-01-01T00:00:01Z",
        "type": kind,
        "content": content,
        **extra,
    }


def _call(cid: str, output: str) -> dict[str, Any]:
    return {
        "id": cid,
        "name": "read_file",
        "args": {"path": "a"},
        "status": "success",
        "result": [
            {"functionResponse": {"id": cid, "name": "read_file", "response": {"output": output}}}
        ],
    }


def _open_json(tmp_path: Path, records: list[Any]) -> Any:
    path = tmp_path / "session-2026-01-01T00-00-s1.json"
    path.write_text(json.dumps({**HEAD, "lastUpdated": "x", "messages": records}))
    return load_session(path)


def _open_log(tmp_path: Path, lines: list[Any]) -> Any:
    path = tmp_path / "session-2026-01-01T00-00-s1.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in [HEAD, *lines]) + "\n")
    return load_session(path)


def test_an_older_record_gives_thoughts_text_calls_then_their_responses(tmp_path: Path) -> None:
    session = _open_json(
        tmp_path,
        [
            _record("u1", "user", "read a"),
            _record(
                "g1",
                "gemini",
                "Reading it.",
                thoughts=[{"subject": "Plan", "description": "read the file", "timestamp": "t"}],
                toolCalls=[_call("c1", "text of a")],
                tokens={
                    "input": 100,
                    "output": 5,
                    "cached": 80,
                    "thoughts": 3,
                    "tool": 0,
                    "total": 108,
                },
                model="gemini-2.5-pro",
            ),
        ],
    )
    assert (session.format, session.provider, session.model) == (
        "gemini-cli",
        "gemini",
        "gemini-2.5-pro",
    )
    _user, model, answers = session.messages
    assert [b["type"] for b in model["content"]] == ["thinking", "text", "tool_use"]
    assert model["content"][0]["thinking"] == "**Plan** read the file"
    assert answers["role"] == "user"
    assert answers["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "text of a"}
    ]
    usage = session.metas[1]["usage"]
    assert (usage["input_tokens"], usage["cache_read_input_tokens"], usage["output_tokens"]) == (
        20,
        80,
        8,
    )
    assert session.metas[1]["record"]["id"] == "g1"
    assert session.metas[2]["record"] == {"id": "g1_response"}


def test_a_newer_record_sends_its_content_parts_as_they_are(tmp_path: Path) -> None:
    parts = [
        {"text": "thinking", "thought": True, "thoughtSignature": "sig"},
        {"functionCall": {"id": "c1", "name": "read_file", "args": {}}, "thoughtSignature": "s2"},
    ]
    session = _open_json(
        tmp_path,
        [
            _record("u1", "user", [{"text": "go"}]),
            _record("g1", "gemini", parts, toolCalls=[_call("c1", "x")]),
        ],
    )
    assert session.metas[1]["wire"] == {"role": "model", "parts": parts}
    assert [b["type"] for b in session.messages[1]["content"]] == ["thinking", "tool_use"]
    assert session.messages[1]["content"][0]["signature"] == "sig"


def test_commands_and_info_records_are_not_sent_and_are_said(tmp_path: Path) -> None:
    session = _open_json(
        tmp_path,
        [
            _record("u0", "user", "/model"),
            _record("i0", "info", "Loaded cached credentials."),
            _record("u1", "user", "hello"),
            _record("g1", "gemini", "hi"),
            _record("e1", "error", "quota"),
        ],
    )
    assert [m["role"] for m in session.messages] == ["user", "assistant"]
    assert "1 error, 1 ignored user, 1 info" in session.warnings[0]


def test_the_log_form_keeps_the_last_version_of_a_record_in_its_first_place(tmp_path: Path) -> None:
    session = _open_log(
        tmp_path,
        [
            _record("u1", "user", "first"),
            _record("g1", "gemini", "", toolCalls=[]),
            _record("g1", "gemini", "", toolCalls=[_call("c1", "done")]),
            {"$set": {"lastUpdated": "later", "summary": "Reading a file"}},
            _record("u2", "user", "thanks"),
        ],
    )
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "user"]
    assert session.messages[2]["content"][0]["tool_use_id"] == "c1"
    assert session.title == "Reading a file"


def test_the_log_form_rewinds_and_replaces_every_message(tmp_path: Path) -> None:
    lines = [
        _record("u1", "user", "one"),
        _record("g1", "gemini", "reply one"),
        _record("u2", "user", "two"),
        {"$rewindTo": "u2"},
        _record("u3", "user", "two, again"),
    ]
    session = _open_log(tmp_path, lines)
    assert [m["content"][0]["text"] for m in session.messages] == ["one", "reply one", "two, again"]
    replaced = _open_log(
        tmp_path, [*lines, {"$set": {"messages": [_record("u9", "user", "only this")]}}]
    )
    assert [m["content"][0]["text"] for m in replaced.messages] == ["only this"]


def test_a_bad_line_is_skipped_and_named(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        json.dumps(HEAD) + "\n{not json\n" + json.dumps(_record("u1", "user", "hi")) + "\n"
    )
    session = load_session(path)
    assert session.skipped_lines == [2]
    assert len(session.messages) == 1


def test_a_record_with_no_text_sends_no_text_part(tmp_path: Path) -> None:
    # the CLI sends `content ? parts : []`: an empty content is no part (an empty text part is
    # what the API refuses)
    session = _open_json(
        tmp_path,
        [_record("u1", "user", "go"), _record("g1", "gemini", "", toolCalls=[_call("c1", "x")])],
    )
    assert session.metas[1]["wire"]["parts"] == [
        {"functionCall": {"id": "c1", "name": "read_file", "args": {"path": "a"}}}
    ]


def test_a_user_text_that_is_not_a_string_is_refused_with_its_place(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match=r"messages\[1\]\.content\[0\]\.text: expected a string"):
        _open_json(tmp_path, [_record("u0", "user", "hi"), _record("u1", "user", [{"text": 7}])])


def _tokens(prompt: int) -> dict[str, int]:
    return {"input": prompt, "output": 9, "cached": 0, "thoughts": 5, "tool": 0, "total": prompt}


def _unkept_session(tmp_path: Path) -> Any:
    # an older CLI's session: the model ran tools between its records, the file kept none of it
    thought = [{"subject": "Plan", "description": "read the files " * 20, "timestamp": "t"}]
    records = [_record("u1", "user", "rename the project")]
    for k in range(6):
        records.append(
            _record(
                f"g{k}",
                "gemini",
                "Done with step.",
                thoughts=thought,
                tokens=_tokens(7000 + 3000 * k),
            )
        )
    return _open_json(tmp_path, records)


def test_a_model_record_right_after_another_is_marked_as_holding_unkept_turns(
    tmp_path: Path,
) -> None:
    session = _unkept_session(tmp_path)
    assert [bool(m.get("unkept_turns")) for m in session.metas] == [False, False, *[True] * 5]
    assert any("5 model records follow another model record" in w for w in session.warnings)
    # a record after tool results or a user turn holds every turn sent
    kept = _open_json(
        tmp_path,
        [
            _record("u1", "user", "read a"),
            _record("g1", "gemini", "", toolCalls=[_call("c1", "text of a")]),
            _record("g2", "gemini", "Read."),
            _record("u2", "user", "thanks"),
            _record("g3", "gemini", "You are welcome."),
        ],
    )
    assert not any(m.get("unkept_turns") for m in kept.metas)
    assert not any("follow another" in w for w in kept.warnings)


def test_the_growth_over_unkept_turns_does_not_fit_the_rates(tmp_path: Path) -> None:
    from ctxview.core.requests.points import calibrate

    # 3,000 tokens a request the file does not show: fitted, they were billed to the thoughts
    rates = calibrate(_unkept_session(tmp_path)).rates
    assert not rates.calibrated


def test_the_tools_and_system_are_fitted_on_the_requests_that_held_every_turn_sent(
    tmp_path: Path,
) -> None:
    from ctxview.core.requests.points import calibrate

    # the first request (7,000 tokens) held the prompt and the tools with the file's one user
    # turn; every later one (10,000 to 22,000) held tool turns the file does not keep
    static = calibrate(_unkept_session(tmp_path)).static
    assert static is not None and 6_900 < static < 7_000


def test_the_benchmark_measures_only_requests_whose_turns_the_file_holds(tmp_path: Path) -> None:
    from benchmarks.gemini_tokens import _sessions, cli_errors, request_errors

    session = _unkept_session(tmp_path)
    calibrated, first, growth, skipped = cli_errors(Path(session.path))
    assert (calibrated, first, growth, skipped) == ([], [], [], 5)
    # as `requests` prices them: only the first request held every turn (and fitted the
    # system prompt + tools)
    assert request_errors(Path(session.path)) == [0.0]
    log = _open_log(tmp_path, [_record("u1", "user", "hi"), _record("g1", "gemini", "hello")])
    assert _sessions(tmp_path) == sorted([Path(session.path), Path(log.path)])
