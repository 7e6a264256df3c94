"""The OpenAI readers: detection by content, one canonical message per wire message or item
with the item kept, the leading system messages as the system prompt, Codex rollouts' usage,
responses and compactions, and clear errors naming the file and place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.core.protocol import check_protocol, errors
from ctxview.core.requests.points import session_rules
from ctxview.sessions import SessionError, load_session
from ctxview.sessions.replay import replay

PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _write(tmp_path: Path, name: str, data: object) -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def test_a_chat_body_is_told_from_an_anthropic_one(tmp_path: Path) -> None:
    chat = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    anthropic = {"model": "claude-opus-4-6", "max_tokens": 5, "messages": chat["messages"]}
    by_role = {
        "messages": [{"role": "developer", "content": "x"}, {"role": "user", "content": "hi"}]
    }
    assert load_session(_write(tmp_path, "a.json", chat)).format == "openai-chat"
    assert load_session(_write(tmp_path, "b.json", anthropic)).format == "request"
    assert load_session(_write(tmp_path, "c.json", by_role)).provider == "openai"
    responses = {"model": "gpt-5", "input": "hello"}
    assert load_session(_write(tmp_path, "d.json", responses)).format == "openai-responses"


def test_chat_messages_become_one_canonical_message_each(tmp_path: Path) -> None:
    wire = [
        {"role": "system", "content": "be brief"},
        {"role": "developer", "content": [{"type": "text", "text": "use tools"}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image_url", "image_url": {"url": PNG, "detail": "low"}},
                {"type": "input_audio", "input_audio": {"data": "AAA", "format": "wav"}},
                {"type": "file", "file": {"file_id": "file-1", "filename": "a.pdf"}},
            ],
        },
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": '{"x": 1}'},
                },
                {
                    "id": "c2",
                    "type": "function",
                    "function": {"name": "g", "arguments": "not json"},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "two"}]},
        {"role": "system", "content": "later"},
    ]
    s = load_session(_write(tmp_path, "chat.json", {"model": "gpt-4o", "messages": wire}))
    assert s.system == "be brief\n\nuse tools" and s.system_wire == wire[:2]
    assert [m["role"] for m in s.messages] == ["user", "assistant", "user", "user", "system"]
    assert [meta["wire"] for meta in s.metas] == wire[2:]
    blocks = s.messages[0]["content"]
    assert blocks[1]["source"] == {"type": "base64", "media_type": "image/png", "data": PNG[22:]}
    assert blocks[2]["type"] == "input_audio"  # kept as it is
    assert blocks[3] == {
        "type": "document",
        "source": {"type": "file", "file_id": "file-1"},
        "title": "a.pdf",
    }
    uses = s.messages[1]["content"]
    assert uses[0]["input"] == {"x": 1} and uses[1]["input"] == {"arguments": "not json"}
    assert s.messages[3]["content"][0]["tool_use_id"] == "c2"


def test_a_responses_body_keeps_its_items_and_says_what_it_continues(tmp_path: Path) -> None:
    body = {
        "model": "gpt-5",
        "instructions": "be brief",
        "previous_response_id": "resp_1",
        "input": [
            {"type": "function_call_output", "call_id": "c0", "output": "from before"},
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "hm"}]},
            {"type": "web_search_call", "id": "ws_1", "status": "completed"},
            {"role": "user", "content": [{"type": "input_image", "file_id": "file-2"}]},
        ],
    }
    s = load_session(_write(tmp_path, "r.json", body))
    assert s.system == "be brief" and "previous_response_id" in s.request_params
    assert [m["role"] for m in s.messages] == ["user", "assistant", "assistant", "user"]
    assert s.messages[1]["content"][0] == {"type": "thinking", "thinking": "hm", "signature": ""}
    assert s.messages[2]["content"][0]["type"] == "web_search_call"
    assert any("not in the file" in w for w in s.warnings)


def test_a_responses_body_naming_a_stored_prompt_opens_and_says_what_it_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ctxview.cli import main

    # the shape DataDog/dd-trace-js recorded (answered 200): no input, no model, a prompt id
    body = {"prompt": {"id": "pmpt_6911", "version": "1", "variables": {"word": "cat"}}}
    path = _write(tmp_path, "p.json", body)
    s = load_session(path)
    assert s.format == "openai-responses" and s.messages == []
    assert s.request_params == body
    assert any("stored prompt" in w for w in s.warnings)
    assert main(["inspect", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert "uses_stored_prompt" in json.dumps(report)


def test_a_codex_rollout_reads_responses_usage_and_a_compaction(tmp_path: Path) -> None:
    def line(kind: str, payload: dict[str, object], t: str = "2026-01-01T00:00:00Z") -> str:
        return json.dumps({"timestamp": t, "type": kind, "payload": payload})

    usage = {"input_tokens": 3000, "cached_input_tokens": 1024, "output_tokens": 9}
    count = {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}
    lines = [
        line("session_meta", {"id": "s", "base_instructions": {"text": "system!"}}),
        line("turn_context", {"model": "gpt-5-codex"}),
        line("response_item", {"type": "message", "role": "user", "content": "go"}),
        line("response_item", {"type": "reasoning", "summary": []}),
        line(
            "response_item",
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        ),
        line("event_msg", count),
        line("event_msg", count),  # the same usage again: one response
        line("response_item", {"type": "function_call_output", "call_id": "a", "output": "ok"}),
        "not json",
        line("mystery", {}),
        line(
            "compacted",
            {
                "message": "",
                "replacement_history": [
                    {"type": "message", "role": "user", "content": "go"},
                    {"type": "message", "role": "assistant", "content": "summary"},
                ],
            },
        ),
    ]
    s = load_session(_write(tmp_path, "rollout-x.jsonl", "\n".join(lines) + "\n"))
    assert (s.format, s.provider, s.system, s.model) == (
        "codex",
        "openai",
        "system!",
        "gpt-5-codex",
    )
    assert len(s.messages) == 6
    assert s.metas[1]["usage"]["cache_read_input_tokens"] == 1024
    assert s.metas[2].get("same_response") and "usage" not in s.metas[2]
    assert s.skipped_lines == [9, 10] and "unknown record type" in s.skipped_reasons[10]
    assert s.metas[4]["compact_boundary"]["line"] == 11 and s.metas[5]["compacted_history"]


def test_a_codex_token_count_after_the_tool_outputs_is_its_responses_usage(
    tmp_path: Path,
) -> None:
    """Codex runs a response's calls while it streams and records their outputs before the
    response's ``token_count`` (Codex CLI 0.140-0.142, every response with calls): the usage is
    the response's, and the next assistant item starts the next response."""

    def line(kind: str, payload: dict[str, object]) -> str:
        return json.dumps({"timestamp": "2026-06-18T00:57:11Z", "type": kind, "payload": payload})

    def count(n: int) -> str:
        usage = {
            "input_tokens": n,
            "cached_input_tokens": 0,
            "output_tokens": 50,
            "reasoning_output_tokens": n // 100,
        }
        total = {"input_tokens": n * 10, "cached_input_tokens": 0, "output_tokens": 5}
        info = {"total_token_usage": total, "last_token_usage": usage}
        return line("event_msg", {"type": "token_count", "info": info})

    call = {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "a", "output": "ok"}
    lines = [
        line("session_meta", {"id": "s"}),
        line("turn_context", {"model": "gpt-5.5"}),
        line("response_item", {"type": "message", "role": "user", "content": "go"}),
        line("response_item", {"type": "reasoning", "summary": []}),
        line("response_item", call),
        line("response_item", output),
        count(2000),
        line("response_item", call | {"call_id": "b"}),
        line("response_item", output | {"call_id": "b"}),
        count(2100),
        line(
            "response_item",
            {"type": "web_search_call", "status": "completed", "action": {"type": "search"}},
        ),
        line("response_item", {"type": "message", "role": "assistant", "content": "done"}),
        count(2200),
    ]
    s = load_session(_write(tmp_path, "rollout-y.jsonl", "\n".join(lines) + "\n"))
    prompts = {
        i: sum(m["usage"][k] for k in ("input_tokens", "cache_creation_input_tokens"))
        for i, m in enumerate(s.metas)
        if "usage" in m
    }
    assert prompts == {1: 2000, 4: 2100, 6: 2200}
    assert s.metas[2].get("same_response") and not s.metas[4].get("same_response")
    # the hidden reasoning each response recorded, on its first item (the others carry none)
    carried = [m.get("reasoning_tokens") for m in s.metas]
    assert carried == [None, 20, 0, None, 21, None, 22, 0]
    # the response that ran a hosted search is named (its request was billed the results)
    assert [m.get("server_tool_run") for m in s.metas].count("web_search") == 1
    assert s.metas[6]["server_tool_run"] == "web_search"


def test_the_oldest_codex_rollout_form_reads_its_bare_items(tmp_path: Path) -> None:
    """Before the {timestamp, type, payload} envelope (Codex CLI of mid 2025): the meta line
    bare, state markers, bare items; the shape of a real rollout of 2025-09-10 (docs/protocol.md
    names it), the text made up here."""
    reasoning = {"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "x"}
    call = {
        "type": "function_call",
        "id": "fc_1",
        "name": "shell",
        "arguments": '{"command": ["ls"]}',
        "call_id": "call_1",
    }
    items = [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "ls"}]},
        reasoning,
        call,
        {"type": "function_call_output", "call_id": "call_1", "output": "README.md"},
        reasoning | {"id": "rs_2"},
        # a message with no id after a reasoning item with one: what Codex wrote, and sent
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "ok"}],
        },
    ]
    head = {
        "id": "s1",
        "timestamp": "2025-09-10T18:58:38.331Z",
        "instructions": "be brief",
        "git": {},
    }
    state = {"record_type": "state"}
    lines = [head, state, items[0], state, *items[1:], state, "not json"]
    text = "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n"
    s = load_session(_write(tmp_path, "rollout-2025-09-10T18-58-38-s1.jsonl", text))
    assert (s.format, s.provider, s.system) == ("codex", "openai", "be brief")
    assert [m.get("wire") for m in s.metas] == items
    assert [m["role"] for m in s.messages] == ["user", "assistant", "assistant", "user"] + [
        "assistant"
    ] * 2
    assert s.skipped_lines == [len(lines)]  # the state markers are the format's, not skipped
    assert errors(check_protocol(s.messages, rules=session_rules(s))) == []


def test_bad_openai_input_is_a_clear_error(tmp_path: Path) -> None:
    bad = {"model": "gpt-4o", "messages": [{"role": "user", "content": "x"}, 7]}
    with pytest.raises(SessionError, match=r"b\.json: messages\[1\]: expected an object"):
        load_session(_write(tmp_path, "b.json", bad))
    with pytest.raises(SessionError, match=r"c\.json: input\[0\]: expected an object"):
        load_session(_write(tmp_path, "c.json", {"input": [3]}))
    # a content part whose type is an object (not hashable), or a text part without text: the
    # reader refuses them with the place, as the Anthropic reader refuses such blocks
    odd = {"type": {"an": "object"}, "text": "x"}
    tool = {"role": "tool", "content": "x"}
    with pytest.raises(SessionError, match=r"messages\[1\]\.content\[0\]: content part without"):
        load_session(
            _write(tmp_path, "d.json", {"messages": [tool, {"role": "user", "content": [odd]}]})
        )
    blank = {"type": "text", "text": {}}
    with pytest.raises(SessionError, match=r"messages\[1\]\.content\[0\]: text part without"):
        load_session(
            _write(tmp_path, "e.json", {"messages": [tool, {"role": "user", "content": [blank]}]})
        )
    # a content that is neither text nor parts, in either body; a Responses text part
    number = {"role": "user", "content": 12345}
    with pytest.raises(SessionError, match=r"messages\[0\]\.content: expected a string or an"):
        load_session(_write(tmp_path, "f.json", {"model": "gpt-4o", "messages": [number]}))
    with pytest.raises(SessionError, match=r"input\[0\]\.content: expected a string or an"):
        load_session(_write(tmp_path, "g.json", {"model": "gpt-5", "input": [number]}))
    untyped = {"role": "user", "content": [{"type": "input_text", "text": 7}]}
    with pytest.raises(SessionError, match=r"input\[0\]\.content\[0\]: text part without"):
        load_session(_write(tmp_path, "h.json", {"model": "gpt-5", "input": [untyped]}))
    only_events = json.dumps({"timestamp": "t", "type": "session_meta", "payload": {}})
    with pytest.raises(SessionError, match="no messages found in this Codex session"):
        load_session(_write(tmp_path, "rollout-e.jsonl", only_events + "\n" + only_events))


@pytest.mark.parametrize(
    "body",
    [
        {
            "model": "gpt-4o",
            "temperature": 0,
            "messages": [
                {"role": "developer", "content": "be brief"},
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "f", "arguments": "{}"},
                        }
                    ],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "ok"},
            ],
        },
        {
            "model": "gpt-5",
            "instructions": "be brief",
            "input": [
                {"role": "user", "content": "hi"},
                {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "c1", "output": "ok"},
            ],
        },
    ],
    ids=["chat", "responses"],
)
def test_a_saved_openai_session_reopens_as_openai_and_exports_its_body(
    tmp_path: Path, body: dict[str, object]
) -> None:
    from ctxview.sessions.replay import replay

    rep = replay(load_session(_write(tmp_path, "body.json", body)), as_sent=True)
    saved = _write(tmp_path, "saved.json", rep.document({"max_tokens": 4096}))
    again = replay(load_session(saved), as_sent=True)
    assert (again.session.format, again.provider) == ("ctxview", "openai")
    assert again.request_body({}) == body
    assert again.protocol_rules is rep.protocol_rules


@pytest.mark.parametrize("tools", [[], None])
@pytest.mark.parametrize(
    "body",
    [
        {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]},
        {"model": "gpt-4o", "input": [{"role": "user", "content": "hi"}]},
    ],
    ids=["chat", "responses"],
)
def test_an_empty_or_null_tools_field_is_written_back_as_read(
    tmp_path: Path, body: dict[str, Any], tools: Any
) -> None:
    body = {**body, "tools": tools}
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    assert replay(load_session(str(path)), as_sent=True).request_body({}) == body


@pytest.mark.parametrize("role", ["user", "system", "developer", "tool"])
def test_a_chat_message_without_content_is_refused_unless_it_is_the_assistants(
    tmp_path: Path, role: str
) -> None:
    """Chat Completions answers "Invalid value for 'content': expected a string, got null."
    for such a message; an assistant message that calls tools goes without."""
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
    ]
    path = tmp_path / "body.json"
    path.write_text(json.dumps({"model": "gpt-4o", "messages": messages}))
    assert len(load_session(path).messages) == 3
    messages.append({"role": role, "content": None})
    path.write_text(json.dumps({"model": "gpt-4o", "messages": messages}))
    with pytest.raises(SessionError, match=r"messages\[3\]\.content: a .* message needs"):
        load_session(path)
