"""The OpenAI provider: usage in canonical counts, the prefix cache in 128-token steps with no
write charge, its rule sets (Chat Completions' merged-turn pairing, the Responses API's pairing
across the input) and the body writer giving each message's wire item back."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxview.core.pricing import PriceTable
from ctxview.core.protocol import check_protocol
from ctxview.core.providers import openai
from ctxview.core.providers.base import BodyParts, Usage
from ctxview.core.providers.openai_wire import chat_message, responses_item
from ctxview.core.providers.registry import price_table, provider
from ctxview.core.requests import simulate
from ctxview.core.requests.cache import PromptCache
from ctxview.sessions import load_session


def test_cached_tokens_are_a_part_of_the_prompt() -> None:
    chat = {
        "prompt_tokens": 3000,
        "completion_tokens": 7,
        "prompt_tokens_details": {"cached_tokens": 1920},
    }
    u = openai.usage(chat)
    # 3,000 tokens cacheable up to 2,944 (1,024 + 15 x 128): 1,920 read, 1,024 written, 56 past
    assert u == Usage(56, 1920, 1024, 0, 7)
    assert u.prompt == 3000
    resp = {"input_tokens": 500, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 3}
    assert openai.usage(resp) == Usage(500, 0, 0, 0, 3)  # below the minimum: nothing cached
    codex = {"input_tokens": 44218, "cached_input_tokens": 42880, "output_tokens": 96}
    assert openai.usage(codex).cache_read == 42880
    assert (
        openai.usage({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 11}}) is None
    )
    assert openai.usage({"prompt_tokens": -1}) is None


def test_a_cached_prefix_is_read_in_whole_steps_and_priced_without_a_write_charge() -> None:
    cache = PromptCache(price_table(), 0, rules=openai.CACHE)
    key = ("gpt-5", None, None)
    first = cache.settle(key, None, 300.0, 1, 2000, None, None, "", 0, None, prefix=lambda q: 0)
    assert first[:3] == (0, 1920, 80)  # 1,024 + 7 x 128 written, the rest past the last step
    second = cache.settle(key, None, 300.0, 2, 3000, None, None, "", 0, None, prefix=lambda q: 2000)
    assert second[0] == 1920  # the previous prompt, down to its last whole step
    price = PriceTable(books=(openai.PRICE_BOOK,)).get("gpt-5-2025-08-07")
    assert price is not None and price.cache_write_5m == price.input
    assert not cache.min_notes  # the minimum is documented


def test_gpt_5_5_is_priced_at_its_own_rates() -> None:
    # Codex rollouts of gpt-5.5 had no cost at all
    price = PriceTable(books=(openai.PRICE_BOOK,)).get("gpt-5.5")
    assert price is not None
    assert (price.input, price.cache_read, price.output) == (5.00, 0.50, 30.00)


def test_chat_rules_pair_tool_messages_with_the_assistant_before_them() -> None:
    wire = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
            ],
        },
        {"role": "user", "content": "wait"},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    msgs = [chat_message(m) for m in wire]
    found = check_protocol(msgs, rules=openai.CHAT_RULES)
    # the user message between them closes the run: the call is unanswered, the tool message
    # answers nothing (Anthropic's merged turns accept the same messages)
    assert [(p.code, p.index) for p in found] == [
        ("unanswered_tool_use", 1),
        ("orphan_tool_result", 3),
    ]
    assert found[0].message.endswith("did not have response messages: c1")
    assert not [p for p in check_protocol(msgs) if p.severity == "error"]
    both = [msgs[0], msgs[1], msgs[3], msgs[3]]
    assert [p.code for p in check_protocol(both, rules=openai.CHAT_RULES)] == [
        "duplicate_tool_result"
    ]
    other = chat_message({"role": "tool", "tool_call_id": "zz", "content": "?"})
    found = check_protocol([msgs[0], msgs[1], msgs[3], other], rules=openai.CHAT_RULES)
    assert [p.message for p in found] == [
        "Invalid parameter: 'tool_call_id' of 'zz' not found in 'tool_calls' of previous message."
    ]
    assert check_protocol(msgs[:2], rules=openai.CHAT_RULES) == []  # the last one waits
    # Anthropic's own rules (an assistant message first, an empty one) are not OpenAI's
    ok = [
        chat_message({"role": "assistant", "content": ""}),
        chat_message({"role": "user", "content": "x"}),
    ]
    assert check_protocol(ok, rules=openai.CHAT_RULES) == []
    assert check_protocol(ok) != []


def test_responses_rules_pair_by_call_id_across_the_input() -> None:
    items = [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {
            "type": "message",
            "role": "developer",
            "content": [{"type": "input_text", "text": "note"}],
        },
        {"type": "function_call_output", "call_id": "a", "output": "done"},
        {"type": "function_call_output", "call_id": "b", "output": "?"},
        {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
        {"role": "user", "content": "next"},
    ]
    msgs = [responses_item(i) for i in items]
    found = check_protocol(msgs, rules=openai.RESPONSES_RULES)
    assert [(p.code, p.index, p.message) for p in found] == [
        ("orphan_tool_result", 4, "No tool call found for function call output with call_id b."),
        ("unanswered_tool_use", 5, "No tool output found for function call c."),
    ]
    # a body continuing a stored response: its outputs may answer calls the file lacks
    assert [p.code for p in check_protocol(msgs, rules=openai.CONTINUED_RULES)] == [
        "unanswered_tool_use"
    ]
    # the last response's calls wait for their outputs (the next request holds them)
    assert check_protocol(msgs[:2], rules=openai.RESPONSES_RULES) == []


def test_a_rollout_cut_between_parallel_calls_outputs_waits_for_the_rest() -> None:
    """Two parallel calls, one output recorded, the other still running (unseen4 codex
    eskills_019dd4b9 ends so): the agent sends both outputs next, as for a last response's
    calls. Once anything else follows, the call left without an output is unanswered."""
    items = [
        {"role": "user", "content": "go"},
        {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
        {"type": "function_call", "call_id": "b", "name": "f", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "a", "output": "done"},
    ]
    msgs = [responses_item(i) for i in items]
    assert check_protocol(msgs, rules=openai.RESPONSES_RULES) == []
    later = [*msgs, responses_item({"role": "user", "content": "next"})]
    assert [(p.code, p.ids) for p in check_protocol(later, rules=openai.RESPONSES_RULES)] == [
        ("unanswered_tool_use", ("b",))
    ]
    # an output of an earlier call among them: not the last response's wait
    earlier = [
        responses_item({"role": "user", "content": "go"}),
        responses_item({"type": "function_call", "call_id": "z", "name": "f", "arguments": "{}"}),
        responses_item({"role": "user", "content": "more"}),
        *msgs[1:3],
        responses_item({"type": "function_call_output", "call_id": "z", "output": "late"}),
    ]
    assert [(p.code, p.ids) for p in check_protocol(earlier, rules=openai.RESPONSES_RULES)] == [
        ("unanswered_tool_use", ("a",)),
        ("unanswered_tool_use", ("b",)),
    ]


def test_a_stored_reasoning_item_keeps_the_item_that_followed_it() -> None:
    def reasoning(rid: str | None) -> dict[str, object]:
        return {"type": "reasoning", "summary": [], **({"id": rid} if rid else {})}

    call = {"type": "function_call", "id": "fc_1", "call_id": "a", "name": "f", "arguments": "{}"}
    output = {"type": "function_call_output", "call_id": "a", "output": "ok"}
    said = {"type": "message", "id": "msg_1", "role": "assistant", "content": "hi"}
    rewritten = {"role": "assistant", "content": "hi"}  # no id: not the stored item any more
    user = {"role": "user", "content": "go"}

    def found(*items: dict[str, object]) -> list[tuple[str, int, str]]:
        msgs = [responses_item(i) for i in items]
        return [
            (p.code, p.index, p.message)
            for rules in (openai.RESPONSES_RULES, openai.CONTINUED_RULES)
            for p in check_protocol(msgs, rules=rules)
        ]

    assert found(user, reasoning("rs_1"), call, output, user) == []
    assert found(user, reasoning("rs_1"), said, user) == []
    # Codex sends reasoning without ids (stateless, encrypted): nothing to keep
    assert found(user, reasoning(None), rewritten, user) == []
    # the response being recorded may end in a reasoning item
    assert found(user, reasoning("rs_1")) == []
    text = "Item 'rs_1' of type 'reasoning' was provided without its required following item."
    for after in (rewritten, user, output):
        assert ("reasoning_without_following_item", 1, text) in found(
            user, reasoning("rs_1"), after, user
        )
    assert len(found(user, reasoning("rs_1"), rewritten, user)) == 2  # both rule sets
    # a stateless body (store: false) is not resolved against stored items: no such rule
    stateless = openai.rules_for(openai.RESPONSES, {"store": False})
    bare_call = {k: v for k, v in call.items() if k != "id"}
    msgs = [responses_item(i) for i in (user, reasoning("rs_1"), bare_call, output, user)]
    assert check_protocol(msgs, rules=stateless) == []
    assert check_protocol(msgs, rules=openai.rules_for(openai.RESPONSES, {}))


def test_the_body_writer_gives_wire_items_back_and_writes_changed_messages() -> None:
    wire = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}], "name": "kept"},
    ]
    msg = chat_message(wire[1])
    parts = BodyParts(
        "gpt-5",
        [msg],
        [{"wire": wire[1]}],
        system="be brief",
        params={"temperature": 0},
        format=openai.CHAT,
        system_wire=wire[:1],
    )
    body = provider("openai").write_body(parts)
    assert body == {"model": "gpt-5", "temperature": 0, "messages": wire}
    edited = {"role": "user", "content": [{"type": "text", "text": "changed"}]}
    body = provider("openai").write_body(
        BodyParts("gpt-5", [edited], [{"wire": wire[1]}], system="new", format=openai.CHAT)
    )
    assert body["messages"] == [
        {"role": "system", "content": "new"},
        {"role": "user", "content": "changed"},
    ]
    responses = provider("openai").write_body(
        BodyParts("gpt-5", [responses_item("hello")], [{"wire": "hello"}], format=openai.RESPONSES)
    )
    assert responses == {"model": "gpt-5", "input": "hello"}


@pytest.mark.parametrize(("minutes", "reads"), [(20, True), (70, False)])
def test_an_openai_cache_entry_lives_an_hour(tmp_path: Path, minutes: int, reads: bool) -> None:
    """Codex CLI requests sent 5 to 38 minutes after the previous one read it from the cache;
    those sent an hour or more after did not (docs/providers.md)."""
    from tests.support.codex_rollouts import line, meta, said, usage, user

    later = f"2026-03-01T{10 + (minutes // 60):02d}:{minutes % 60:02d}:00.000Z"
    path = tmp_path / "rollout.jsonl"
    path.write_text(
        line("session_meta", meta("t"))
        + line("turn_context", {"model": "gpt-5.5"})
        + line("response_item", user("look " * 2000))
        + line("response_item", said("done"))
        + line("event_msg", usage(2400, 2400))
        + line("response_item", user("again"), ts=later)
        + line("response_item", said("done again"), ts=later)
        + line("event_msg", usage(4810, 2410, cached=2304), ts=later)
    )
    second = simulate(load_session(path)).requests[1]
    assert (second.cache_read > 0) is reads
    assert (second.cache_break is not None and second.cache_break.reason == "ttl") is not reads


def test_a_codex_turns_reasoning_is_cached_where_it_stands_and_dropped_at_the_next_prompt(
    tmp_path: Path,
) -> None:
    """The reasoning items of the current turn are sent where they stand (a request of the same
    turn reads them from the cache with the rest of the previous prompt); the API drops them at
    the next user prompt, whose request reads only up to the first of them."""
    from tests.support.codex_rollouts import line, meta, said, user

    def count(n: int, reasoning: int) -> dict[str, object]:
        last = {"input_tokens": n, "output_tokens": 9, "reasoning_output_tokens": reasoning}
        return {
            "type": "token_count",
            "info": {"total_token_usage": {"n": n}, "last_token_usage": last},
        }

    def call(k: int) -> dict[str, object]:
        return {"type": "function_call", "name": "f", "arguments": "{}", "call_id": f"c{k}"}

    def output(k: int) -> dict[str, object]:
        return {"type": "function_call_output", "call_id": f"c{k}", "output": "ok " * 300}

    reasoning = {"type": "reasoning", "summary": []}
    rows = [
        ("session_meta", meta("t")),
        ("turn_context", {"model": "gpt-5.5"}),
        ("response_item", user("look " * 3000)),
        ("response_item", reasoning),
        ("response_item", call(1)),
        ("response_item", output(1)),
        ("event_msg", count(3000, 2000)),
        ("response_item", reasoning),
        ("response_item", call(2)),
        ("response_item", output(2)),
        ("event_msg", count(5400, 10)),
        ("response_item", said("done")),
        ("event_msg", count(5700, 10)),
        ("response_item", user("and now?")),
        ("response_item", said("nothing")),
        ("event_msg", count(3700, 10)),
    ]
    path = tmp_path / "rollout.jsonl"
    path.write_text("".join(line(kind, payload) for kind, payload in rows))
    session = load_session(path)
    log = simulate(session)
    third, prompt = log.requests[2], log.requests[3]
    # the previous request's prompt, its 2,000 carried reasoning tokens included, is read
    assert third.cache_read >= log.requests[1].input_tokens - 128
    assert log.requests[1].input_tokens - log.requests[0].input_tokens > 2000
    # the next prompt: read up to the first reasoning item, the turn's reasoning dropped
    assert prompt.cache_break is not None and prompt.cache_break.reason == "thinking"
    assert prompt.cache_read < log.requests[0].input_tokens
    # a rollout holds its system prompt (base_instructions): only its tools are not in the file
    assert any("(the tools not in the file)" in note for note in log.notes)
