from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ctxview import check_protocol
from ctxview.core.protocol import errors
from ctxview.sessions import SessionError, load_session, replay
from tests.support.paths import FIXTURES, ROOT

CC = FIXTURES / "claude_code"
REQ = FIXTURES / "anthropic_requests"


def write(tmp_path: Path, name: str, data: Any) -> Path:
    p = tmp_path / name
    if isinstance(data, bytes):
        p.write_bytes(data)
    elif isinstance(data, str):
        p.write_text(data, encoding="utf-8")
    else:
        p.write_text(json.dumps(data), encoding="utf-8")
    return p


# -- fixtures ------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(REQ.glob("*.json")), ids=lambda p: p.name)
def test_request_fixtures(path: Path) -> None:
    s = load_session(path)
    body = json.loads(path.read_text())
    assert s.format == "request"
    assert s.messages == body["messages"]
    assert s.model == body["model"]
    assert s.system == body.get("system")
    assert errors(check_protocol(s.messages)) == []


def test_request_with_thinking_keeps_signatures() -> None:
    s = load_session(REQ / "anthropic_test_anthropic_tool_with_thinking_req2.json")
    thinking = s.messages[1]["content"][0]
    assert thinking["type"] == "thinking" and thinking["signature"].startswith("EqEECkYIC")
    assert s.tools[0]["name"] == "get_user_country"


def test_spotter_real_transcript_rebuilt_as_sent() -> None:
    s = load_session(CC / "spotter_short.jsonl")
    assert s.format == "claude-code"
    assert [m["role"] for m in s.messages] == ["user", "assistant", "user"]
    asst = s.messages[1]["content"]
    # five lines share one message.id: one message; the whitespace-only text block is dropped
    assert [b["type"] for b in asst] == ["thinking", "text", "tool_use", "tool_use"]
    assert s.metas[1]["source_lines"] == [5, 6, 7, 8, 10]
    # the two results (one hanging off the chain as a sibling) + the interruption text, results first
    user = s.messages[2]["content"]
    assert [b["type"] for b in user] == ["tool_result", "tool_result", "text"]
    assert [b["tool_use_id"] for b in user[:2]] == [asst[2]["id"], asst[3]["id"]]
    assert all(b["is_error"] for b in user[:2])
    assert s.skipped_lines == []
    assert check_protocol(s.messages) == []
    assert s.metas[1]["usage"]["output_tokens"] > 0


def test_simonw_sample() -> None:
    s = load_session(CC / "simonw_sample_session.jsonl")
    assert s.title == "Test session for JSONL parsing"
    assert s.messages[0] == {"role": "user", "content": "Create a hello world function"}
    assert errors(check_protocol(s.messages)) == []


def test_cclog_edge_cases_skips_bad_lines() -> None:
    s = load_session(CC / "cclog_edge_cases.jsonl")
    # 3 lines are not JSON objects, others are damaged records: all reported, the rest loads
    assert {13, 15, 16} <= set(s.skipped_lines)
    assert 10 in s.skipped_lines  # "contenst": no content
    assert len(s.messages) >= 5


def _line(**kw: Any) -> dict[str, Any]:
    base = {"isSidechain": False, "timestamp": "2026-01-01T00:00:00Z"}
    base.update(kw)
    return base


def _asst(
    uuid: str, parent: str | None, mid: str, *blocks: dict[str, Any], **kw: Any
) -> dict[str, Any]:
    return _line(
        type="assistant",
        uuid=uuid,
        parentUuid=parent,
        message={
            "id": mid,
            "role": "assistant",
            "content": list(blocks),
            "usage": {"output_tokens": len(uuid)},
        },
        **kw,
    )


def _user(uuid: str, parent: str | None, content: Any, **kw: Any) -> dict[str, Any]:
    return _line(
        type="user",
        uuid=uuid,
        parentUuid=parent,
        message={"role": "user", "content": content},
        **kw,
    )


def _jsonl(tmp_path: Path, lines: list[Any]) -> Path:
    return write(tmp_path, "t.jsonl", "\n".join(json.dumps(x) for x in lines) + "\n")


TU = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
TU2 = {"type": "tool_use", "id": "t2", "name": "f", "input": {}}


def tr(t: str) -> dict[str, Any]:
    return {"type": "tool_result", "tool_use_id": t, "content": "r"}


def test_rewind_follows_last_branch_and_skips_sidechain_and_progress(tmp_path: Path) -> None:
    lines = [
        {"type": "file-history-snapshot", "snapshot": {}},
        _user("u1", None, "first"),
        _asst("a1", "u1", "m1", {"type": "text", "text": "hi"}),
        _user("u2", "a1", "abandoned branch"),
        _asst("a2", "u2", "m2", {"type": "text", "text": "old answer"}),
        _user("u3", "a1", "rewritten question"),  # rewind: second child of a1
        {"type": "progress", "uuid": "p1", "parentUuid": "u3", "data": {}},
        _asst("s1", "u3", "ms", {"type": "text", "text": "sub-agent"}, isSidechain=True),
        {"type": "queue-operation", "operation": "enqueue"},
        _asst("a3", "p1", "m3", {"type": "text", "text": "new answer"}),
    ]
    s = load_session(_jsonl(tmp_path, lines))
    assert [
        m["content"] if isinstance(m["content"], str) else m["content"][0]["text"]
        for m in s.messages
    ] == ["first", "hi", "rewritten question", "new answer"]


def test_results_between_blocks_of_one_response(tmp_path: Path) -> None:
    lines = [
        _user("u1", None, "go"),
        _asst("a1", "u1", "m1", TU),
        _user("r1", "a1", [tr("t1")]),  # the tool started before the response ended
        _asst("a2", "r1", "m1", TU2),
        _user("r2", "a2", [tr("t2")]),
        _user("u2", "r2", [{"type": "text", "text": "and?"}], isMeta=True),
    ]
    s = load_session(_jsonl(tmp_path, lines))
    assert [m["role"] for m in s.messages] == ["user", "assistant", "user"]
    assert [b["id"] for b in s.messages[1]["content"]] == ["t1", "t2"]
    assert [b["type"] for b in s.messages[2]["content"]] == ["tool_result", "tool_result", "text"]
    assert s.metas[1]["usage"]["output_tokens"] == 2  # from the last line of the response
    assert s.metas[2]["is_meta"] is True
    assert check_protocol(s.messages) == []


def test_compaction_boundary_and_summary(tmp_path: Path) -> None:
    lines = [
        _user("u1", None, "long task"),
        _asst("a1", "u1", "m1", {"type": "text", "text": "working"}),
        _line(
            type="system",
            subtype="compact_boundary",
            uuid="c1",
            parentUuid=None,
            logicalParentUuid="a1",
            compactMetadata={"trigger": "auto", "preTokens": 160000},
        ),
        _user("u2", "c1", "This session is being continued. Summary: ...", isCompactSummary=True),
        _asst("a2", "u2", "m2", {"type": "text", "text": "continuing"}),
    ]
    s = load_session(_jsonl(tmp_path, lines))
    assert len(s.messages) == 4
    assert s.metas[2]["compact_summary"] is True
    assert s.metas[2]["compact_boundary"] == {"trigger": "auto", "preTokens": 160000}


def test_web_session(tmp_path: Path) -> None:
    lines = [json.loads(x) for x in (CC / "spotter_short.jsonl").read_text().splitlines()]
    s = load_session(write(tmp_path, "web.json", {"loglines": lines}))
    assert s.format == "claude-code-web"
    assert s.messages == load_session(CC / "spotter_short.jsonl").messages


def test_bare_list_of_messages(tmp_path: Path) -> None:
    msgs = [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    s = load_session(write(tmp_path, "m.json", msgs))
    assert s.format == "messages" and s.messages == msgs


def test_request_system_blocks(tmp_path: Path) -> None:
    body = {
        "model": "m",
        "system": [{"type": "text", "text": "be", "cache_control": {"type": "ephemeral"}}],
        "messages": [{"role": "user", "content": "x"}],
    }
    s = load_session(write(tmp_path, "r.json", body))
    assert s.system_text == "be"
    r = replay(s)
    assert r.context.estimated_tokens > 0


def test_forced_format(tmp_path: Path) -> None:
    p = write(tmp_path, "m.json", [{"role": "user", "content": "a"}])
    with pytest.raises(SessionError, match="expected a request object"):
        load_session(p, "request")


# -- bad input: one clear sentence, naming the file ----------------------------------------------
@pytest.mark.parametrize(
    "content, needle",
    [
        (b"", "file is empty"),
        (b"   \n\n", "file is empty"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00", "binary"),
        (b'{"messages": "caf\xe9"}', "not UTF-8"),
        (b'{"messages": [\n  {"role": "user", "content": "x"},\n  }\n]}', "line 3, column 3"),
        (b"[" * 100000 + b"]" * 100000, "nested too deeply"),
        (b'{"foo": 1}', "not a recognised session"),
        (b"42", "not a recognised session"),
        (b"[]", "empty JSON array"),
    ],
)
def test_bad_files(tmp_path: Path, content: bytes, needle: str) -> None:
    p = write(tmp_path, "bad.json", content)
    with pytest.raises(SessionError, match=needle) as exc:
        load_session(p)
    assert str(p) in str(exc.value)
    assert "\n" not in str(exc.value)


def test_missing_and_directory(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="no such file"):
        load_session(tmp_path / "nope.json")
    with pytest.raises(SessionError, match="is a directory"):
        load_session(tmp_path)


@pytest.mark.parametrize(
    "messages, path",
    [
        ([{"role": "user", "content": "a"}, {"role": "robot", "content": "b"}], "messages[1].role"),
        ([{"role": "user"}], "messages[0]: message without content"),
        (
            [
                {"role": "user", "content": "a"},
                {"role": "assistant", "content": "b"},
                {"role": "user", "content": "c"},
                {
                    "role": "user",
                    "content": [
                        {"type": "text", "text": "x"},
                        {"type": "tool_result", "content": "r"},
                    ],
                },
            ],
            "messages[3].content[1]: tool_result without tool_use_id",
        ),
        (
            [{"role": "user", "content": [{"text": "no type"}]}],
            "messages[0].content[0]: content block without a type",
        ),
        ([{"role": "user", "content": 5}], "messages[0].content: expected a string or an array"),
        ("nope", "messages: expected an array"),
    ],
)
def test_wrong_shape_names_json_path(tmp_path: Path, messages: Any, path: str) -> None:
    p = write(tmp_path, "r.json", {"model": "m", "messages": messages})
    with pytest.raises(SessionError) as exc:
        load_session(p)
    assert path in str(exc.value)


def test_jsonl_bad_lines_load_the_good_ones(tmp_path: Path) -> None:
    good = [_user("u1", None, "a"), _asst("a1", "u1", "m1", {"type": "text", "text": "b"})]
    text = json.dumps(good[0]) + "\n{broken\n" + json.dumps(good[1]) + "\n[1]\n"
    s = load_session(write(tmp_path, "t.jsonl", text))
    assert s.skipped_lines == [2, 4]
    assert len(s.messages) == 2


def test_skipped_lines_say_why_in_visible_text(tmp_path: Path) -> None:
    good = [_user("u1", None, "a"), _asst("a1", "u1", "m1", {"type": "text", "text": "b"})]
    unusable = _user("u2", "a1", "c")
    unusable["message"]["content"] = 5
    lines = [
        json.dumps(good[0]),
        "{broken",
        json.dumps(good[1]),
        "[1]",
        r"""{"\u001b]0;evil\u0007""" + "k" * 400 + r"""": NaN}""",
        json.dumps(unusable),
    ]
    s = load_session(write(tmp_path, "t.jsonl", "\n".join(lines) + "\n"))
    assert s.skipped_lines == [2, 4, 5, 6]
    why = {d["line"]: d["reason"] for d in s.skipped()}
    assert why[2] == "invalid JSON at column 2: Expecting property name enclosed in double quotes"
    assert why[4] == "an array, not a JSON object"
    assert why[5].startswith("␛]0;evil␇kkk") and len(why[5]) == 160
    assert why[6] == "message without content"
    assert all(ch.isprintable() for r in why.values() for ch in r)


def test_ctxview_session_errors(tmp_path: Path) -> None:
    doc = json.loads((ROOT / "sample_sessions" / "long_chat.json").read_text())
    doc["version"] = 7
    with pytest.raises(SessionError, match="newer ctxview"):
        load_session(write(tmp_path, "s.json", doc))
    doc["version"] = 1
    doc["transcript"][3]["message"]["content"] = 5
    with pytest.raises(SessionError, match=r"transcript\[3\]\.message\.content"):
        load_session(write(tmp_path, "s.json", doc))


def test_session_restores_window_exactly() -> None:
    path = ROOT / "sample_sessions" / "agent_loop.json"
    doc = json.loads(path.read_text())
    r = replay(load_session(path))
    assert r.restored
    assert r.context.window_ids == doc["window"]["ids"]
    evicted = {
        t["id"]: t["evicted_at_step"] for t in doc["transcript"] if t["evicted_at_step"] is not None
    }
    assert {
        rec.id: rec.evicted_step for rec in r.transcript.records if rec.evicted_step is not None
    } == evicted


# -- fuzzing: never a traceback ------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5)
        | st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "content",
                    "type",
                    "text",
                    "messages",
                    "tool_use_id",
                    "id",
                    "name",
                    "input",
                    "format",
                    "version",
                    "loglines",
                    "message",
                    "uuid",
                    "parentUuid",
                    "transcript",
                    "window",
                    "ids",
                    "system",
                ]
            )
            | st.text(max_size=5),
            children,
            max_size=6,
        )
    ),
    max_leaves=30,
)


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.binary(max_size=300))
def test_fuzz_random_bytes(tmp_path: Path, data: bytes) -> None:
    p = tmp_path / "f.json"
    p.write_bytes(data)
    try:
        s = load_session(p)
        replay(s)
    except SessionError as exc:
        assert str(exc)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    value=json_values,
    fmt=st.sampled_from(
        [None, None, "request", "messages", "claude-code", "ctxview", "claude-code-web"]
    ),
)
# a type or role that is a list or an object: readers look them up among known names
@example(value={"type": []}, fmt=None)
@example(value={"messages": [{"role": {}}]}, fmt=None)
def test_fuzz_random_json(tmp_path: Path, value: Any, fmt: str | None) -> None:
    p = tmp_path / "f.json"
    p.write_text(json.dumps(value))
    try:
        s = load_session(p, fmt)
        r = replay(s)
        check_protocol(r.context.messages)
    except SessionError as exc:
        assert str(exc)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(json_values, min_size=1, max_size=8))
def test_fuzz_random_jsonl(tmp_path: Path, lines: list[Any]) -> None:
    p = tmp_path / "f.jsonl"
    p.write_text("\n".join(json.dumps(x) for x in lines) + "\n{")
    try:
        s = load_session(p, "claude-code")
        replay(s)
    except SessionError as exc:
        assert str(exc)


@pytest.mark.parametrize("levels", [150, 201, 202, 260, 5000])
def test_big_files_refuse_the_same_nesting_as_small_ones(tmp_path: Path, levels: int) -> None:
    """A big file is parsed under a recursion limit instead of walked for its depth afterwards
    (jsonfile._loads_bounded): the same files open, the same are refused, with the same path."""
    from ctxview.core import jsonfile

    def outcome(pad: int) -> str:
        inner = "[" * (levels - 3) + " " * pad + "]" * (levels - 3)  # levels in all
        body = '{"messages": [{"role": "user", "content": "hi", "x": ' + inner + "}]}"
        p = write(tmp_path, f"n{pad}.json", body.encode())
        try:
            load_session(p)
        except SessionError as exc:
            return str(exc).replace(str(p), "F")
        return "ok"

    small = outcome(0)
    big = outcome(jsonfile.BOUNDED_MIN_CHARS)
    assert big == small
    assert (small == "ok") == (levels <= jsonfile.MAX_DEPTH + 1), small


@settings(max_examples=300, deadline=None)
@given(
    message=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(["role", "content", "type", "text", "id", "name", "tool_use_id"]),
                inner | st.sampled_from(["user", "assistant", "system", "text", "tool_use"]),
                max_size=4,
            )
        ),
        max_leaves=10,
    )
    | st.fixed_dictionaries(
        {
            "role": st.sampled_from(["user", "assistant", "system", "x"]),
            "content": st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(
                            ["text", "tool_use", "tool_result", "thinking", "image", "zzz"]
                        )
                    },
                    optional={
                        "text": st.none() | st.text(max_size=3) | st.integers(),
                        "id": st.none() | st.text(max_size=3),
                        "name": st.none() | st.text(max_size=3),
                        "tool_use_id": st.none() | st.text(max_size=3),
                        "source": st.none() | st.just({}),
                    },
                )
                | st.text(max_size=3),
                max_size=3,
            )
            | st.text(max_size=3),
        }
    )
)
@example({"role": "user", "content": [{"type": "tool_result", "tool_use_id": ""}]})
@example({"role": "user", "content": [{"type": "text", "text": None}]})
@example({"role": "assistant", "content": [{"type": "tool_use", "id": "a"}]})
@example({"role": "assistant", "content": [{"type": "image"}]})
@example({"role": "user", "content": [{"text": "no type"}]})
def test_message_problem_fast_yes_agrees_with_the_block_checks(message: Any) -> None:
    """The quick pass for usual messages never passes one the block-by-block check refuses."""
    from ctxview.sessions.validate import block_problem, message_problem

    found = message_problem(message)
    slow: Any = None
    if (
        not isinstance(message, dict)
        or message.get("role") not in ("user", "assistant", "system")
        or "content" not in message
        or not isinstance(message["content"], (str, list))
    ):
        slow = "bad"
    elif isinstance(message["content"], list):
        slow = next((p for b in message["content"] if (p := block_problem(b))), None)
    assert (found is None) == (slow is None), (message, found, slow)


def _outcome(fn: Any, raw: str) -> Any:
    try:
        return ("ok", fn(raw))
    except Exception as exc:
        return ("error", type(exc).__name__, str(exc))


_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**20), 10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
_json_trees = st.recursive(
    _leaf,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4), st.dictionaries(st.text(max_size=6), kids, max_size=4)
    ),
    max_leaves=30,
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    value=_json_trees,
    depth=st.sampled_from([0, 3, 199, 200, 201, 250, 1500]),
    damage=st.sampled_from(["", "nan", "inf", "bigint", "extra", "cut"]),
)
@example(value={"a": 1}, depth=5000, damage="")
def test_a_jsonl_line_parses_as_the_careful_parser_says(
    value: Any, depth: int, damage: str
) -> None:
    """The per-line fast path (a shared decoder, the depth walk only for lines with enough
    brackets) gives what ``loads_checked`` gives: the same value, or the same error."""
    from ctxview.core.jsonfile import loads_checked
    from ctxview.sessions.readers import _loads_line

    raw = "[" * depth + json.dumps(value) + "]" * depth
    if damage == "nan":
        raw = raw.replace("null", "NaN", 1) if "null" in raw else "[" + raw + ", NaN]"
    elif damage == "inf":
        raw = '{"x": -Infinity, "y": ' + raw + "}"
    elif damage == "bigint":
        raw = "[" + raw + ", " + "9" * 5000 + "]"
    elif damage == "extra":
        raw += " {}"
    elif damage == "cut":
        raw = raw[: len(raw) // 2]
    assert _outcome(_loads_line, raw) == _outcome(loads_checked, raw)


# -- the fast yes of message validation --------------------------------------------------------
_loose = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3), st.just([]))
_loose_blocks = st.one_of(
    _loose,
    st.fixed_dictionaries(
        {},
        optional={
            "type": st.sampled_from(
                ["text", "tool_use", "tool_result", "thinking", "redacted_thinking", "image", 3]
            ),
            "text": _loose,
            "tool_use_id": _loose,
            "id": _loose,
            "name": _loose,
            "source": st.one_of(_loose, st.just({})),
        },
    ),
)


@given(
    st.one_of(
        _loose,
        st.fixed_dictionaries(
            {},
            optional={
                "role": st.sampled_from(["user", "assistant", "system", "", None]),
                "content": st.one_of(_loose, st.lists(_loose_blocks, max_size=4)),
            },
        ),
    )
)
def test_plain_message_is_a_fast_yes_of_the_full_check(message: Any) -> None:
    """``plain_message`` (the readers' one-loop check) never passes a message the full check
    (``block_problem`` per block) would refuse, and passes the usual shapes."""
    from ctxview.sessions import validate

    if validate.plain_message(message):
        assert _full_problem(message) is None, message


def _full_problem(message: Any) -> Any:
    """``message_problem`` without its fast yes."""
    from ctxview.sessions import validate

    original = validate.plain_message
    validate.plain_message = lambda m: False  # type: ignore[assignment]
    try:
        return validate.message_problem(message)
    finally:
        validate.plain_message = original


def test_plain_message_usual_shapes() -> None:
    from ctxview.sessions.validate import plain_message

    assert plain_message({"role": "user", "content": "hi"})
    assert plain_message(
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "x", "signature": "s"},
                {"type": "text", "text": "a"},
                {"type": "tool_use", "id": "t", "name": "n", "input": {}},
            ],
        }
    )
    assert plain_message({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t"}]})
    assert not plain_message({"role": "user", "content": [{"type": "tool_result"}]})
    assert not plain_message({"role": "system", "content": "x"})  # asked properly
    assert not plain_message({"role": "user"})
    assert not plain_message({"role": "user", "content": [{"type": "image"}]})


def test_ctxview_records_of_every_shape_read_as_the_general_path(tmp_path: Path) -> None:
    """The usual record (exactly the six keys ctxview writes) is read with one look-up; records
    with a meta, missing keys, extra keys or of another type take the general path, with the
    same results and the same errors."""
    msg = {"role": "user", "content": "hi"}
    usage = {"input_tokens": 3, "output_tokens": 1}
    records: list[Any] = [
        {
            "id": 0,
            "message": msg,
            "timestamp": "2026-01-01T00:00:00Z",
            "usage": usage,
            "added_at_step": 1,
            "evicted_at_step": 4,
        },
        {
            "id": 1,
            "message": {"role": "assistant", "content": "ok"},
            "meta": {"model": "m"},
            "timestamp": None,
            "usage": None,
            "added_at_step": 2,
            "evicted_at_step": None,
        },
        {"id": 2, "message": msg},  # an older or hand-written record: no steps, no usage
        {
            "id": 3,
            "message": msg,
            "timestamp": 5,
            "usage": [1],
            "added_at_step": "x",
            "evicted_at_step": None,
            "note": "an unknown key",
        },
    ]
    doc = {"format": "ctxview.session", "version": 1, "settings": {}, "transcript": records}
    f = tmp_path / "s.json"
    f.write_text(json.dumps(doc))
    s = load_session(str(f))
    assert s.messages == [r["message"] for r in records]
    assert s.metas == [
        {"timestamp": "2026-01-01T00:00:00Z", "usage": usage},
        {"model": "m"},
        {},
        {},
    ]
    assert s.saved_evicted_steps == {0: 4}
    assert s.saved_added_steps == {0: 1, 1: 2}
    for bad, error in (
        ([1, 2, 3, 4, 5, 6], "transcript[0]: expected an object, got an array"),
        (7, "transcript[0]: expected an object, got a number"),
        (
            {
                "id": 1,
                "message": msg,
                "timestamp": None,
                "usage": None,
                "added_at_step": 1,
                "evicted_at_step": None,
            },
            "transcript[0].id: expected 0, got 1",
        ),
        (
            {
                "id": 0,
                "message": {"role": "user"},
                "timestamp": None,
                "usage": None,
                "added_at_step": 1,
                "evicted_at_step": None,
            },
            "transcript[0].message: message without content",
        ),
    ):
        f.write_text(json.dumps({**doc, "transcript": [bad]}))
        with pytest.raises(SessionError) as exc:
            load_session(str(f))
        assert error in str(exc.value)


def test_a_jsonl_line_past_the_line_cap_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The line cap ``--follow`` applies (ctxview.live.follow) holds for a full open too: the
    same lines are skipped either way."""
    from ctxview.sessions import readers
    from tests.support.transcripts import rec, text

    monkeypatch.setattr(readers, "MAX_LINE_BYTES", 1000)
    p = tmp_path / "s.jsonl"
    p.write_text(
        rec("user", "u1", None, "q")
        + rec("assistant", "a1", "u1", text("é" * 600))  # 600 characters, 1,200 bytes
        + rec("assistant", "a2", "u1", text("short"))
    )
    s = load_session(p)
    assert s.skipped_lines == [2]
    assert [m["content"] for m in s.messages][-1] == [{"type": "text", "text": "short"}]


@pytest.mark.parametrize(
    "damage",
    [
        {"message": None},  # no message object
        {"message": "text"},  # a string, not an object
        {"message": {"role": "user"}},  # no content
    ],
)
def test_a_sub_agents_broken_line_is_skipped(tmp_path: Path, damage: dict[str, Any]) -> None:
    """A sub-agent's own file holds only ``isSidechain`` lines: a broken one is a skipped line,
    as in a main transcript (not an error inside the reader)."""
    from tests.support.transcripts import rec, text

    broken = json.loads(rec("user", "u0", None, "hello", isSidechain=True))
    broken.update(damage)
    p = tmp_path / "agent-a1.jsonl"
    p.write_text(
        json.dumps(broken)
        + "\n"
        + rec("user", "u1", None, "task", isSidechain=True)
        + rec("assistant", "a1", "u1", text("done"), isSidechain=True)
    )
    s = load_session(p)
    assert s.skipped_lines == [1]
    assert [m["role"] for m in s.messages] == ["user", "assistant"]


@pytest.mark.parametrize("bad_id", [{}, [], 5])
def test_a_message_id_that_is_no_string(tmp_path: Path, bad_id: Any) -> None:
    """Claude Code's ``message.id`` groups a response's lines; one that is not a string groups
    nothing (never an error inside the reader)."""
    from tests.support.transcripts import rec, text

    broken = json.loads(rec("assistant", "a1", "u1", text("on it")))
    broken["message"]["id"] = bad_id
    p = tmp_path / "s.jsonl"
    p.write_text(
        rec("user", "u1", None, "fix it")
        + json.dumps(broken)
        + "\n"
        + rec("user", "u2", "a1", "thanks")
    )
    s = load_session(p)
    assert [m["role"] for m in s.messages] == ["user", "assistant", "user"]


def test_a_truncated_json_file_is_said_whole(tmp_path: Path) -> None:
    text = '{"messages": [\n  {"role": "user", "content": "cut he'
    with pytest.raises(SessionError) as exc:
        load_session(write(tmp_path, "cut.json", text))
    assert str(exc.value).endswith(
        "cut.json: invalid JSON: unterminated string starting at line 2, column 31 "
        "(the file ends inside it: truncated?)"
    )


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ('{"messages": [{"role": "user", "content": "hi"', "line 1, column 47: Expecting ','"),
        ('{"messages": [\n  {"role": "user",\n', "line 3, column 1: Expecting property name"),
        ('{"messages": [{"role": "user", "content": ', "line 1, column 43: Expecting value"),
    ],
)
def test_a_json_file_cut_between_two_values_says_it_ends_there(
    tmp_path: Path, text: str, place: str
) -> None:
    with pytest.raises(SessionError) as exc:
        load_session(write(tmp_path, "cut.json", text))
    said = str(exc.value)
    assert said.startswith(f"{tmp_path / 'cut.json'}: invalid JSON at {place}")
    assert said.endswith(" (the file ends there: truncated?)")


def test_a_json_error_before_the_end_is_no_truncation(tmp_path: Path) -> None:
    with pytest.raises(SessionError) as exc:
        load_session(write(tmp_path, "bad.json", '{"messages": [} ]}\n'))
    assert "truncated" not in str(exc.value)


def test_a_truncated_jsonl_line_is_said_whole(tmp_path: Path) -> None:
    good = json.dumps(_user("u1", None, "a"))
    s = load_session(write(tmp_path, "t.jsonl", good + "\n" + good[:30] + "\n"))
    why = {d["line"]: d["reason"] for d in s.skipped()}
    assert why[2].startswith("invalid JSON: unterminated string starting at column ")
    assert why[2].endswith(" (the line ends inside it: truncated?)")


def test_a_claude_code_response_records_when_its_request_was_sent(tmp_path: Path) -> None:
    """The request of a response went out when the line before it was written (the prompt, or
    the last tool result): ``request_sent``, the clock the prompt cache runs on; the response's
    own lines are logged after it streamed."""
    from tests.support import claude_code_shapes as shapes

    w = shapes.Writer()
    u = w.user(None, "Fix the failing build.")
    r = w.tool_round(u, 0, (3, 20_000, 2_000))
    result_line = w.records[-1]
    w.assistant(r, [{"type": "text", "text": "Done."}], (3, 22_000, 200), "msg_end", gap=400)
    s = load_session(shapes.write(tmp_path / "s.jsonl", w.records))
    first, last = s.metas[1], s.metas[3]
    assert first["request_sent"] == w.records[0]["timestamp"]
    assert last["request_sent"] == result_line["timestamp"]
    assert last["timestamp"] > last["request_sent"]


def test_a_last_line_cut_inside_a_character_is_a_cut_line_not_a_refused_file(
    tmp_path: Path,
) -> None:
    """An agent's transcript read while a line is written (or after a crash) can end inside a
    multi-byte character: the file opens, that line skipped as cut, as when the cut falls
    between two ASCII bytes. Invalid UTF-8 anywhere else is still refused, at its place."""
    from tests.support.transcripts import rec, text

    lines = [
        rec("user", "u1", None, "hi"),
        rec("assistant", "a1", "u1", text("ok")),
        # as Claude Code writes it: UTF-8, not \u escapes
        json.dumps(json.loads(rec("user", "u2", "a1", "1→ read")), ensure_ascii=False),
    ]
    whole = "".join(lines).encode()
    cut = whole[: whole.index("→".encode()) + 1]  # one byte of the arrow's three
    p = tmp_path / "cut.jsonl"
    p.write_bytes(cut)
    session = load_session(str(p))
    assert len(session.messages) == 2 and session.skipped_lines == [3]
    p.write_bytes(codecs.BOM_UTF8 + cut)
    assert len(load_session(str(p)).messages) == 2
    p.write_bytes(codecs.BOM_UTF8 + whole.replace("→".encode(), b"\xff"))
    with pytest.raises(SessionError, match=r"invalid byte 0xff at line 3, byte offset"):
        load_session(str(p))


def test_a_run_of_nul_bytes_in_a_transcript_is_a_skipped_line(tmp_path: Path) -> None:
    """A crash can leave a block of NUL bytes where a write never landed: the transcript opens
    without that line (said why), not refused whole as a binary file."""
    first = json.dumps(_user("u1", None, "hi")).encode()
    reply = json.dumps(_asst("a1", "u1", "m1", {"type": "text", "text": "ok"})).encode()
    p = write(tmp_path, "t.jsonl", first + b"\n" + b"\x00" * 4096 + b"\n" + reply + b"\n")
    s = load_session(p)
    assert [m["role"] for m in s.messages] == ["user", "assistant"]
    assert s.skipped() == [
        {"line": 2, "reason": "a run of 4,096 NUL bytes (a write that never landed: a crash?)"}
    ]


def test_a_file_that_starts_with_nul_bytes_is_still_binary(tmp_path: Path) -> None:
    with pytest.raises(SessionError, match="is a binary file"):
        load_session(write(tmp_path, "t.jsonl", b"\x00" * 64 + b"\n{}\n"))


def test_a_jsonl_transcript_is_read_a_line_at_a_time_not_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Claude Code and Codex JSONL are parsed line by line from the file (the bytes and the text
    of a 100 MB transcript are never held beside its records), with the same session."""
    from ctxview.core.jsonfile import TextFile
    from tests.support.transcripts import rec, text

    claude = tmp_path / "c.jsonl"
    claude.write_text(rec("user", "u1", None, "hi") + rec("assistant", "a1", "u1", text("ok")))
    codex = ROOT / "tests" / "acceptance" / "codex" / "agenthistory_codex_golden.jsonl"
    before = [load_session(str(p)) for p in (claude, codex)]

    def whole(self: TextFile) -> str:
        raise AssertionError(f"{self.path} read whole")

    monkeypatch.setattr(TextFile, "text", whole)
    after = [load_session(str(p)) for p in (claude, codex)]
    assert [(s.format, s.messages, s.metas) for s in after] == [
        (s.format, s.messages, s.metas) for s in before
    ]
    assert [s.format for s in after] == ["claude-code", "codex"]
