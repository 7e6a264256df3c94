"""ctxview.sessions.gemini: generateContent bodies and responses as canonical messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxview.core.protocol import check_protocol, errors
from ctxview.core.providers.gemini import RULES
from ctxview.sessions import load_session
from ctxview.sessions.gemini import Pairing, contents_messages, part_block
from ctxview.sessions.readers import detect
from ctxview.sessions.replay import replay


def _blocks(contents: list[Any]) -> list[list[dict[str, Any]]]:
    messages, _ = contents_messages(contents, "contents")
    return [m["content"] for m in messages]


def _open(tmp_path: Path, data: Any) -> Any:
    path = tmp_path / "body.json"
    path.write_text(json.dumps(data))
    return load_session(path)


def test_each_part_kind_becomes_one_block() -> None:
    parts = [
        {"text": "hi"},
        {"text": "let me think", "thought": True, "thoughtSignature": "c2ln"},
        {"functionCall": {"name": "f", "args": {"a": 1}}},
        {"inlineData": {"mimeType": "image/png", "data": "AAAA"}},
        {"fileData": {"mimeType": "application/pdf", "fileUri": "gs://b/x.pdf"}},
        {"executableCode": {"language": "PYTHON", "code": "print(1)"}},
        {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "1\n"}},
        {"thoughtSignature": "only"},
    ]
    blocks = [part_block(p, Pairing(), f"0.{j}", []) for j, p in enumerate(parts)]
    assert [b["type"] for b in blocks] == [
        "text",
        "thinking",
        "tool_use",
        "image",
        "document",
        "server_tool_use",
        "code_execution_tool_result",
        "text",
    ]
    assert blocks[1]["signature"] == "c2ln"
    assert blocks[3]["source"] == {"type": "base64", "media_type": "image/png", "data": "AAAA"}
    assert blocks[4]["source"]["url"] == "gs://b/x.pdf"
    assert blocks[7]["gemini_part"] == {"thoughtSignature": "only"}


def test_a_server_result_pairs_with_its_call_by_id_else_the_latest_one() -> None:
    [blocks] = _blocks(
        [
            {
                "role": "model",
                "parts": [
                    {"executableCode": {"id": "a", "code": "1"}},
                    {"executableCode": {"code": "2"}},
                    {"codeExecutionResult": {"id": "a", "output": "1"}},
                    {"codeExecutionResult": {"output": "2"}},
                ],
            }
        ]
    )
    assert blocks[2]["tool_use_id"] == "a"
    assert blocks[3]["tool_use_id"] == blocks[1]["id"] == "server#0.1"


def test_snake_case_fields_are_read_as_the_api_reads_them() -> None:
    [model, user] = _blocks(
        [
            {"role": "model", "parts": [{"function_call": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"function_response": {"name": "f", "response": {}}}]},
        ]
    )
    assert model[0]["type"] == "tool_use"
    assert user[0] == {
        "type": "tool_result",
        "tool_use_id": model[0]["id"],
        "content": "{}",
        "gemini_response": {},  # written back as sent
    }


def test_responses_pair_with_calls_by_id_when_they_carry_one() -> None:
    [_model, user] = _blocks(
        [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"id": "c1", "name": "f", "args": {}}},
                    {"functionCall": {"id": "c2", "name": "f", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "c2", "name": "f", "response": {}}},
                    {"functionResponse": {"id": "c1", "name": "f", "response": {}}},
                ],
            },
        ]
    )
    assert [b["tool_use_id"] for b in user] == ["c2", "c1"]


def test_responses_without_ids_pair_by_order_and_name() -> None:
    [model, user] = _blocks(
        [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "a", "args": {}}},
                    {"functionCall": {"name": "b", "args": {}}},
                    {"functionCall": {"name": "a", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"name": "b", "response": {"output": "B"}}},
                    {"functionResponse": {"name": "a", "response": {"output": "A1"}}},
                    {"functionResponse": {"name": "a", "response": {"output": "A2"}}},
                ],
            },
        ]
    )
    ids = [b["id"] for b in model]
    assert ids == ["a#0.0", "b#0.1", "a#0.2"]
    assert [b["tool_use_id"] for b in user] == ["b#0.1", "a#0.0", "a#0.2"]
    assert [b["content"] for b in user] == ["B", "A1", "A2"]


def test_a_response_to_no_call_is_reported_in_gemini_words() -> None:
    messages, _ = contents_messages(
        [
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ],
        "contents",
    )
    [problem] = errors(check_protocol(messages, None, RULES))
    assert problem.code == "orphan_tool_result"
    assert problem.message.startswith(
        "Please ensure that function response turn comes immediately after a function call turn."
    )


def test_a_call_left_unanswered_is_reported_in_gemini_words() -> None:
    """Two parallel calls, one function response: the turn's response parts fall short."""
    messages, _ = contents_messages(
        [
            {"role": "user", "parts": [{"text": "go"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "f", "args": {}}},
                    {"functionCall": {"name": "g", "args": {}}},
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ],
        "contents",
    )
    [problem] = errors(check_protocol(messages, None, RULES))
    assert "number of function response parts is equal" in problem.message


def test_a_call_followed_by_a_text_turn_is_accepted() -> None:
    """The API takes a user Content without function responses after a call turn as a new
    user turn: req_llm's recorded tool_round_trip_2 bodies sent the tool's result as text
    (Gemini 2.0 Flash, 2.0 Flash-Lite, 2.5 Flash, 2.5 Pro) and were answered."""
    messages, _ = contents_messages(
        [
            {"role": "user", "parts": [{"text": "Use the add tool to compute 2 + 3."}]},
            {
                "role": "model",
                "parts": [{"functionCall": {"id": "c1", "name": "add", "args": {"a": 2}}}],
            },
            {"role": "user", "parts": [{"text": "5"}]},
        ],
        "contents",
    )
    assert errors(check_protocol(messages, None, RULES)) == []


def test_turns_gemini_accepts_are_no_errors() -> None:
    # consecutive user turns, empty text parts, a history that starts with a model turn:
    # recorded requests the API answered with 200 hold each
    messages, _ = contents_messages(
        [
            {"role": "model", "parts": [{"text": "hello"}]},
            {"role": "user", "parts": [{"text": ""}]},
            {"role": "user", "parts": [{"text": "again"}]},
        ],
        "contents",
    )
    assert errors(check_protocol(messages, None, RULES)) == []


def test_a_request_body_opens_as_gemini(tmp_path: Path) -> None:
    body = {
        "contents": [{"role": "user", "parts": [{"text": "hi"}]}],
        "systemInstruction": {"role": "user", "parts": [{"text": "be brief"}]},
        "generationConfig": {"temperature": 0},
    }
    session = _open(tmp_path, body)
    assert (session.format, session.provider) == ("gemini", "gemini")
    assert session.system == [{"type": "text", "text": "be brief"}]
    assert session.metas[0]["wire"] == body["contents"][0]
    assert session.request_params["generationConfig"] == {"temperature": 0}


def test_a_streamed_response_is_one_message_with_the_last_usage(tmp_path: Path) -> None:
    chunks = [
        {"candidates": [{"content": {"role": "model", "parts": [{"text": "Par"}]}}]},
        {
            "candidates": [
                {"content": {"role": "model", "parts": [{"text": "is"}]}, "finishReason": "STOP"}
            ],
            "usageMetadata": {
                "promptTokenCount": 100,
                "cachedContentTokenCount": 60,
                "candidatesTokenCount": 2,
                "thoughtsTokenCount": 5,
            },
            "modelVersion": "gemini-2.5-flash",
        },
    ]
    session = _open(tmp_path, chunks)
    assert session.messages == [
        {"role": "assistant", "content": [{"type": "text", "text": "Paris"}]}
    ]
    usage = session.metas[0]["usage"]
    assert (
        usage["input_tokens"],
        usage["cache_read_input_tokens"],
        usage["cache_creation_input_tokens"],
        usage["output_tokens"],
    ) == (40, 60, 0, 7)
    assert session.model == "gemini-2.5-flash"


@pytest.mark.parametrize(
    "data",
    [
        {"contents": []},
        {"candidates": []},
        [{"candidates": [], "usageMetadata": {"promptTokenCount": 1}}],
    ],
)
def test_detect_knows_gemini_bodies(data: Any) -> None:
    assert detect("x.json", "", data) == "gemini"


def test_a_bad_content_is_named_by_its_path(tmp_path: Path) -> None:
    from ctxview.sessions.model import SessionError

    with pytest.raises(SessionError, match=r"contents\[1\]\.parts: expected an array"):
        _open(tmp_path, {"contents": [{"parts": []}, {"parts": "x"}]})


@pytest.mark.parametrize("text", [12345, ["a"], {"t": 1}, True])
def test_a_text_part_that_is_not_a_string_is_named_by_its_path(tmp_path: Path, text: Any) -> None:
    # the API refuses it ("Invalid value at 'contents[0].parts[1].text' (TYPE_STRING)"); read
    # as an unknown part it was called valid
    from ctxview.sessions.model import SessionError

    parts = [{"text": "ok"}, {"text": text}]
    with pytest.raises(SessionError, match=r"contents\[0\]\.parts\[1\]\.text: expected a string"):
        _open(tmp_path, {"contents": [{"role": "user", "parts": parts}]})


def test_a_history_that_starts_with_a_function_call_is_an_error() -> None:
    messages, _ = contents_messages(
        [
            {"role": "model", "parts": [{"functionCall": {"name": "f", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        ],
        "contents",
    )
    [problem] = errors(check_protocol(messages, None, RULES))
    assert (problem.code, problem.index) == ("function_call_turn_order", 0)
    assert problem.message.startswith(
        "Please ensure that function call turn comes immediately after a user turn or after a "
        "function response turn."
    )


def test_consecutive_model_contents_are_one_turn_as_the_api_merges_them() -> None:
    messages, _ = contents_messages(
        [
            {"role": "user", "parts": [{"text": "both"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "a", "name": "f", "args": {}}}]},
            {"role": "model", "parts": [{"functionCall": {"id": "b", "name": "g", "args": {}}}]},
            {
                "role": "user",
                "parts": [
                    {"functionResponse": {"id": "a", "name": "f", "response": {}}},
                    {"functionResponse": {"id": "b", "name": "g", "response": {}}},
                ],
            },
        ],
        "contents",
    )
    assert errors(check_protocol(messages, None, RULES)) == []


def test_a_request_on_an_explicit_cache_says_what_the_file_cannot_show(tmp_path: Path) -> None:
    session = _open(
        tmp_path,
        {
            "cachedContent": "cachedContents/abc",
            "contents": [{"role": "user", "parts": [{"text": "q"}]}],
        },
    )
    assert "explicit cache cachedContents/abc" in session.warnings[0]
    assert session.request_params["cachedContent"] == "cachedContents/abc"


def test_repair_writes_a_gemini_body_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxview.cli import main

    # two parallel calls, one answered
    broken = {
        "contents": [
            {"role": "user", "parts": [{"text": "weather and time?"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "weather", "args": {}}},
                    {"functionCall": {"name": "time", "args": {}}},
                ],
            },
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "weather", "response": {"t": 20}}}],
            },
        ],
        "generationConfig": {"temperature": 0},
    }
    out = tmp_path / "fixed.json"
    assert main(["repair", str(_open(tmp_path, broken).path), "-o", str(out)]) == 0
    assert "(gemini, 1 fix)" in capsys.readouterr().err
    fixed = json.loads(out.read_text())
    assert fixed["generationConfig"] == {"temperature": 0}
    assert fixed["contents"][:2] == broken["contents"][:2]  # unchanged turns as they were
    answers = {
        p["functionResponse"]["name"]: p["functionResponse"] for p in fixed["contents"][2]["parts"]
    }
    assert answers["weather"] == {"name": "weather", "response": {"t": 20}}
    assert set(answers) == {"weather", "time"} and "error" in answers["time"]["response"]
    assert errors(check_protocol(load_session(out).messages, None, RULES)) == []


@given(
    calls=st.lists(
        st.tuples(st.sampled_from(["a", "b", "c"]), st.booleans()), min_size=1, max_size=6
    ),
    data=st.data(),
)
def test_every_call_answered_once_in_any_order_pairs_cleanly(
    calls: list[tuple[str, bool]], data: st.DataObject
) -> None:
    """However the responses are ordered, and whether or not calls and responses carry ids,
    a turn answering every call once pairs each response with a distinct call."""
    with_ids = [(name, f"id{k}" if has_id else None) for k, (name, has_id) in enumerate(calls)]
    answers = data.draw(st.permutations(with_ids))

    def spec(name: str, cid: str | None, key: str, extra: dict[str, Any]) -> dict[str, Any]:
        inner = {"name": name, **extra, **({"id": cid} if cid else {})}
        return {key: inner}

    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [spec(n, i, "functionCall", {"args": {}}) for n, i in with_ids]},
        {
            "role": "user",
            "parts": [spec(n, i, "functionResponse", {"response": {}}) for n, i in answers],
        },
    ]
    messages, _ = contents_messages(contents, "contents")
    uses = [b["id"] for b in messages[1]["content"]]
    results = [b["tool_use_id"] for b in messages[2]["content"]]
    assert sorted(results) == sorted(uses)
    # a response with an id answers the call of that id, whatever its place
    assert all(r == i for r, (_, i) in zip(results, answers, strict=True) if i)
    assert errors(check_protocol(messages, None, RULES)) == []


def test_an_edited_content_is_sent_edited_and_keeps_its_thought_signature(tmp_path: Path) -> None:
    from ctxview.sessions.replay import replay

    call = {"functionCall": {"name": "f", "args": {}}, "thoughtSignature": "c2lnMQ"}
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"text": "plan A", "thought": True}, call]},
        {"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]},
        {"role": "model", "parts": [{"text": "done"}]},
        {"role": "user", "parts": [{"text": "again"}]},
        {"role": "model", "parts": [{"text": "plan B", "thought": True}, {"text": "ok"}]},
    ]
    path = tmp_path / "body.json"
    path.write_text(json.dumps({"contents": contents}))
    rep = replay(load_session(path), strategy="clear-thinking")
    sent = rep.request_body({})["contents"]
    # the older turn's thought is cleared; its call keeps the signature Gemini 3 validates
    assert sent[1] == {"role": "model", "parts": [call]}
    assert sent[5] == contents[5]


def _problems(contents: list[Any]) -> list[tuple[str, int, int | None, str]]:
    messages, _ = contents_messages(contents, "contents")
    return [
        (p.code, p.index, p.block, p.message) for p in errors(check_protocol(messages, None, RULES))
    ]


HI = {"role": "user", "parts": [{"text": "hi"}]}


@pytest.mark.parametrize("role", ["user", "model"])
def test_a_content_with_no_parts_is_rejected_wherever_it_is(role: str) -> None:
    # the final model Content too: the Messages API's exemption is not Gemini's
    assert _problems([HI, {"role": role, "parts": []}]) == [
        (
            "empty_content",
            1,
            None,
            "* GenerateContentRequest.contents[1].parts: contents.parts must not be empty.",
        )
    ]


@pytest.mark.parametrize("part", [{}, {"text": None}, {"thought": True}, {"thought": False}])
def test_a_part_that_sets_no_data_field_is_rejected(part: dict[str, Any]) -> None:
    model = {"role": "model", "parts": [{"text": "ok"}, part]}
    assert _problems([HI, model]) == [
        (
            "part_without_data",
            1,
            1,
            "* GenerateContentRequest.contents[1].parts[1].data: required oneof field 'data' "
            "must have one initialized field",
        )
    ]


@pytest.mark.parametrize(
    "part",
    [
        {"text": ""},  # accepted: pai_empty_assistant_response_req1.json
        {"text": "", "thoughtSignature": "c2ln"},
        {"inline_data": {"mime_type": "image/png", "data": "AAAA"}},
        {"someNewData": {"x": 1}},  # a data field this reader does not know: not judged
        # a thought's signature without its text: Gemini 3 Flash Preview answered it (ruby_llm
        # recordings, Gemini API and Vertex AI)
        {"thought": True, "thoughtSignature": "c2ln"},
        {"thought": True, "thought_signature": "c2ln"},
        # the closing part Gemini 3 returns with only a signature, sent back as it came:
        # gemini-3.1-pro-preview answered it (google/adk-go's TestParallelFunctionCalls recording)
        {"thoughtSignature": "c2ln"},
    ],
)
def test_a_part_with_data_is_not(part: dict[str, Any]) -> None:
    assert _problems([HI, {"role": "model", "parts": [part]}]) == []


def test_a_gemini_body_is_repaired_by_geminis_rules(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxview.cli import main

    # a final model Content with no parts: the Messages API would take it, Gemini does not
    path = tmp_path / "body.json"
    path.write_text(json.dumps({"contents": [HI, {"role": "model", "parts": []}]}))
    out = tmp_path / "fixed.json"
    assert main(["inspect", str(path), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [f["code"] for f in report["fixes"]] == ["empty_content"]
    assert main(["repair", str(path), "-o", str(out)]) == 0
    assert json.loads(out.read_text())["contents"] == [HI]


def test_one_part_object_where_an_array_is_documented_reads_as_a_list_of_one(
    tmp_path: Path,
) -> None:
    # tidyverse/ellmer sends systemInstruction.parts as one object; the Gemini API answered it
    body = {
        "systemInstruction": {"parts": {"text": "Be terse."}},
        "contents": [{"role": "user", "parts": {"text": "hi"}}],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    session = load_session(path)
    assert session.system == [{"type": "text", "text": "Be terse."}]
    assert session.messages[0]["content"] == [{"type": "text", "text": "hi"}]
    rep = replay(session, as_sent=True)
    assert [p for p in rep.protocol_problems() if p.severity == "error"] == []
    # written back as it was read
    assert rep.request_body({}) == body


def test_forcing_the_gemini_format_on_another_body_names_both_shapes_it_reads() -> None:
    """``--format gemini`` on an Anthropic body: the error names the request and the response
    the reader takes (it said "expected a generateContent response, got an object", as if an
    object were not what it expected)."""
    from ctxview.sessions import SessionError
    from tests.support.paths import SAMPLES

    with pytest.raises((SessionError, ValueError)) as exc:
        load_session(str(SAMPLES / "agent_loop.json"), "gemini")
    text = str(exc.value)
    assert "request (with `contents`) or response (with `candidates`)" in text
    assert "got an object with neither" in text
