"""OpenAI's token estimate: the documented framing (per message, reply priming, function
definitions, images) around the content's exact o200k_base count."""

from __future__ import annotations

import json
import math
from pathlib import Path

from ctxview.core.providers import openai_tokens as ot
from ctxview.core.providers.registry import provider
from ctxview.sessions import load_session
from ctxview.sessions.replay import replay

ACCEPTANCE = Path(__file__).resolve().parents[2] / "acceptance"


def test_text_is_counted_by_the_o200k_base_tokenizer() -> None:
    # o200k_base's own splits (tiktoken gives the same): a common word is one token, a rare
    # string of the same length several, and a special token's spelling is plain text
    assert ot.text_tokens("hello world") == 2
    assert ot.text_tokens("zqxjkvbw") > 2
    assert ot.text_tokens("<|endoftext|>") > 1
    assert ot.text_tokens("") == 0


def test_a_message_costs_three_tokens_of_framing_beside_its_text() -> None:
    msg = {"role": "user", "content": "hello world"}
    assert ot.estimate_message(msg) == 3 + 2
    assert ot.estimate_message({"role": "user", "content": ""}) == 3


def test_a_gpt_4o_message_costs_four_tokens_of_framing() -> None:
    msg = {"role": "user", "content": "hello world"}
    assert ot.message_estimate("gpt-4o-mini")(msg) == 4 + 2
    assert ot.message_estimate("gpt-4.1")(msg) == 4 + 2
    assert ot.message_estimate("gpt-5-mini")(msg) == 3 + 2
    assert ot.message_estimate(None)(msg) == 3 + 2
    assert ot.estimate_system("hello world", "gpt-4o") == 3 + 4 + 2


def test_the_reply_priming_is_counted_once_with_the_system_prompt() -> None:
    assert ot.estimate_system("") == 3
    assert ot.estimate_system("hello world") == 3 + 3 + 2


def test_function_definitions_follow_the_cookbook_rule() -> None:
    chat_tool = {
        "type": "function",
        "function": {
            "name": "get",  # "get:Find it" (the full stop dropped)
            "description": "Find it.",
            "parameters": {
                "type": "object",
                # "city:string:Name"; enum: -3 + (3 + "ab") + (3 + "cd")
                "properties": {
                    "city": {"type": "string", "description": "Name", "enum": ["ab", "cd"]}
                },
            },
        },
    }
    t = ot.text_tokens
    enum = -3 + (3 + t("ab")) + (3 + t("cd"))
    per_fn = 7 + t("get:Find it") + 3 + (3 + t("city:string:Name") + enum)
    assert ot.estimate_tools([chat_tool]) == 12 + per_fn
    # the Responses API's flat form is counted the same
    responses_tool = {"type": "function", **chat_tool["function"]}
    assert ot.estimate_tools([responses_tool]) == 12 + per_fn
    assert ot.estimate_tools([]) == 0


def test_images_cost_85_at_low_detail_and_170_a_tile_at_high() -> None:
    assert ot.image_tokens(4096, 4096, "low") == 85
    assert ot.image_tokens(512, 512) == 85 + 170
    # 1024 x 1024: short side to 768 -> 2 x 2 tiles
    assert ot.image_tokens(1024, 1024) == 85 + 4 * 170
    # 2048 x 4096: fitted to 1024 x 2048, then 768 x 1536 -> 2 x 3 tiles
    assert ot.image_tokens(2048, 4096) == 85 + 6 * 170
    assert ot.block_tokens({"type": "image", "detail": "low", "source": {}}) == 85


def test_a_tile_counting_model_prices_its_tiles_at_its_own_rates() -> None:
    # GPT-4o mini: 2,833 + 5,667 a tile (an image costs what it costs on GPT-4o); a 640 x 480
    # image is two tiles, billed 14,167 on the unseen set's recordings
    mini = ot.image_rule("gpt-4o-mini-2024-07-18")
    assert ot.image_tokens(640, 480, base=mini.base, tile=mini.tile) == 14167
    assert ot.block_tokens({"type": "image", "detail": "low", "source": {}}, mini) == 2833
    assert ot.image_rule("gpt-4o") == ot.TILES
    assert ot.image_rule("gpt-5-2025-08-07") == ot.ImageRule(70, 140)
    assert ot.image_rule("o3-2025-04-16") == ot.ImageRule(75, 150)
    assert ot.image_rule(None) == ot.TILES


def test_an_openai_body_is_counted_by_openai_rules(tmp_path: Path) -> None:
    body = {
        "model": "gpt-4o",
        "messages": [
            {"role": "system", "content": "abcd" * 3},
            {"role": "user", "content": "abcd" * 5},
        ],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    summary = replay(load_session(path), as_sent=True).summary()
    assert summary["provider"] == "openai"
    assert provider("openai").tokens.estimate is ot.estimate_message
    # GPT-4o: system: priming 3 + framing 4 + its text; user: framing 4 + its text
    system = 3 + 4 + ot.text_tokens("abcd" * 3)
    assert summary["window"]["token_breakdown"]["system"] == system
    assert summary["window"]["estimated_tokens"] == system + 4 + ot.text_tokens("abcd" * 5)


def test_a_compaction_item_is_counted_by_its_encrypted_length() -> None:
    block = {"type": "compaction", "id": "cmp_1", "encrypted_content": "g" * 1000}
    assert ot.block_tokens(block) == 100
    assert ot.estimate_message({"role": "assistant", "content": [block]}) == 3 + 100


def test_an_image_or_pdf_that_cannot_be_measured_offline_costs_its_fallback() -> None:
    image = {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}
    pdf = {"type": "document", "source": {"type": "url", "url": "https://example.com/a.pdf"}}
    assert ot.block_tokens(image) == ot.IMAGE_UNKNOWN_TOKENS == 85 + 2 * 170
    assert ot.block_tokens(pdf) == ot.FILE_UNKNOWN_TOKENS
    text_doc = {"type": "document", "source": {"type": "text", "data": "hello world"}}
    assert ot.block_tokens(text_doc) == 2


def test_a_structured_output_schema_is_counted_by_its_json_less_additional_properties(
    tmp_path: Path,
) -> None:
    item = {"type": "object", "properties": {"n": {"type": "integer"}}}
    schema = {
        "name": "out",
        "description": "The answer.",
        "schema": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "items": {"type": "array", "items": item}},
            "additionalProperties": False,
        },
    }
    # its compact JSON, nested schemas included, with no additionalProperties key
    bare = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "items": {"type": "array", "items": item}},
    }
    n = ot.text_tokens(json.dumps(bare, separators=(",", ":")))
    assert ot.schema_tokens({**bare, "additionalProperties": False}) == n
    # the draft a schema names is not rendered (the API's response echoes the schema without)
    assert ot.schema_tokens({**bare, "$schema": "http://json-schema.org/draft-07/schema#"}) == n
    chat = {"response_format": {"type": "json_schema", "json_schema": schema}}
    responses = {"text": {"format": {"type": "json_schema", **schema}}}
    assert ot.estimate_params(chat) == ot.estimate_params(responses) == n
    assert ot.estimate_params({"response_format": {"type": "json_object"}}) == 0
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}], **chat}
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    summary = replay(load_session(path), as_sent=True).summary()
    assert summary["window"]["token_breakdown"]["tools"] == n


def test_chats_older_functions_list_is_counted_as_tools_are(tmp_path: Path) -> None:
    fn = {"name": "get", "description": "Find it", "parameters": {"type": "object"}}
    n = ot.estimate_tools([fn])
    assert n == 12 + 7 + ot.text_tokens("get:Find it")
    assert ot.estimate_params({"functions": [fn]}) == n
    body = {"model": "gpt-4", "messages": [{"role": "user", "content": "hi"}], "functions": [fn]}
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    summary = replay(load_session(path), as_sent=True).summary()
    assert summary["window"]["token_breakdown"]["tools"] == n


def test_a_tool_calls_framing_depends_on_the_api_and_the_family() -> None:
    call = {"type": "tool_use", "id": "call_1", "name": "get", "input": {"q": "x"}}
    message = {"role": "assistant", "content": [call]}
    plain = ot.estimate_message(message)
    chat_4o = ot.message_estimate("gpt-4o", "openai-chat")(message)
    assert chat_4o == plain + 1 + ot.CHAT_TOOL_CALL_TOKENS
    # a reasoning model frames a Chat call as it frames a Responses one; another model (not
    # GPT-4o's generation nor a reasoning model) as GPT-4o does
    assert ot.message_estimate("gpt-5", "openai-chat")(message) == plain + 14
    assert ot.message_estimate("o4-mini", "openai-chat")(message) == plain + 14
    assert ot.message_estimate("gpt-3.5-turbo", "openai-chat")(message) == plain + 8
    # the Responses API: GPT-4o's function_call costs no framing, a reasoning model's its channel
    assert ot.message_estimate("gpt-4o", "openai-responses")(message) == plain + 1
    assert ot.message_estimate("gpt-5", "openai-responses")(message) == plain + 14
    # parallel calls (two or more in one message): GPT-4o's Chat rendering of them costs more
    parallel = {"role": "assistant", "content": [call, {**call, "id": "call_2"}]}
    one_by_one = 2 * ot.message_estimate("gpt-4o", "openai-chat")(message) - 4
    assert ot.message_estimate("gpt-4o", "openai-chat")(parallel) == (
        one_by_one + ot.CHAT_PARALLEL_CALLS_TOKENS + 2
    )
    gpt5 = ot.message_estimate("gpt-5", "openai-chat")
    assert gpt5(parallel) == 2 * gpt5(message) - 3
    responses = ot.message_estimate("gpt-4o", "openai-responses")
    assert responses(parallel) == 2 * responses(message) - 4
    # one function per combination, whatever the model's exact name
    assert ot.message_estimate("gpt-5.2", "x") is ot.message_estimate("gpt-5.4", "x")


def test_tools_added_mid_conversation_cost_twice_their_json() -> None:
    tools = [{"type": "function", "name": "f", "parameters": {"type": "object"}}]
    block = {"type": "additional_tools", "role": "developer", "tools": tools}
    assert ot.block_tokens(block) == 2 * ot.json_tokens({"role": "developer", "tools": tools})


def test_a_hosted_web_search_call_costs_its_results_beside_its_json() -> None:
    """The API ran it and bills what it found while the call is in the conversation (Codex
    rollouts: a request's prompt grows by thousands of tokens at a search); a client-run tool
    search's call is only its JSON (what it found is in the file)."""
    search = {"type": "web_search_call", "status": "completed", "action": {"type": "search"}}
    assert ot.block_tokens(search) == ot.json_tokens(search) + ot.WEB_SEARCH_RESULT_TOKENS
    assert ot.server_tool_call(search) == "web_search"
    client = {"type": "tool_search_call", "execution": "client", "arguments": {"query": "x"}}
    assert ot.server_tool_call(client) is None
    assert ot.block_tokens(client) <= ot.json_tokens(client)


def test_a_patch_counting_model_prices_an_image_by_its_32px_patches() -> None:
    # 540 x 360: 17 x 12 patches, times GPT-4.1 nano's 2.46
    assert ot.image_rule("gpt-4.1-nano-2025-04-14").multiplier == 2.46
    assert ot.image_rule("gpt-4.1").multiplier is None
    assert ot.patch_image_tokens(540, 360, 2.46) == math.ceil(17 * 12 * 2.46)
    # GPT-5 mini and nano are billed 1.2 and 1.5 a patch, not the 1.62 and 2.46 documented
    assert ot.image_rule("gpt-5-mini-2025-08-07").multiplier == 1.2
    assert ot.image_rule("gpt-5-nano").multiplier == 1.5
    # past 1,536 patches the image is scaled down to fit
    assert ot.patch_image_tokens(4096, 4096, 1.0) <= 1536
    assert ot.patch_image_tokens(4096, 4096, 1.0) > 1400


def test_audio_input_counts_its_length_not_its_base64() -> None:
    import base64
    import io
    import wave

    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(24000)
        w.writeframes(b"\1\2" * 24000 * 3)  # 3 s
    data = base64.b64encode(out.getvalue()).decode()
    part = {"type": "input_audio", "input_audio": {"data": data, "format": "wav"}}
    # ten audio tokens a second, whatever the clip's size in base64 (192,000 characters)
    assert ot.block_tokens(part) == 30
    # a clip whose header is not read: its size as a 128 kbit/s MP3's
    other = {"data": base64.b64encode(b"OggS" + b"\0" * 31_996).decode(), "format": "ogg"}
    assert ot.audio_tokens(other) == 20
    assert ot.audio_tokens({"data": "not base64 at all!"}) == 0
    # a clip whose length is read is measured; another is named as not in the file
    user = {"role": "user", "content": [part]}
    assert ot.unmeasured([user], [], {}) == []
    unread = {"role": "user", "content": [{"type": "input_audio", "input_audio": other}]}
    assert ot.unmeasured([unread], [], {}) == [
        "audio whose length is not read from its header (billed by its length)"
    ]


def _reasoning(sealed_chars: int) -> dict[str, object]:
    block = {"type": "thinking", "thinking": "", "signature": "g" * sealed_chars}
    return {"role": "assistant", "content": [block]}


def test_the_current_turns_hidden_reasoning_is_billed_by_its_encrypted_length() -> None:
    call = {"role": "assistant", "content": [{"type": "tool_use", "id": "c", "name": "f"}]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c"}]}
    # 967 characters of any sealed item, then 6.4 a token
    assert ot.reasoning_tokens("g" * 967) == 0
    assert ot.reasoning_tokens("g" * 1607) == 100
    turn = [{"role": "user", "content": "go"}, _reasoning(1607), call, result]
    assert ot.carried_reasoning(turn) == 100
    # a reasoning item before the last user message is dropped by the API: not billed
    assert ot.carried_reasoning([*turn, {"role": "user", "content": "again"}]) == 0
    assert provider("openai").tokens.carried_tokens(turn) == 100


def test_a_sealed_reasoning_item_counts_the_reasoning_tokens_that_made_it() -> None:
    # every recorded response returning one sealed reasoning item reports the reasoning tokens
    # that made it: the estimate from the sealed length is the billed input when the item is
    # carried into the next request
    errors = []
    for folder in (ACCEPTANCE / "openai_responses", ACCEPTANCE / "unseen" / "openai_responses"):
        for path in sorted((folder / "responses").glob("*.json")):
            response = json.loads(path.read_text())
            items = [
                o
                for o in response.get("output", [])
                if o.get("type") == "reasoning" and o.get("encrypted_content")
            ]
            usage = response.get("usage") or {}
            made = (usage.get("output_tokens_details") or {}).get("reasoning_tokens")
            if len(items) == 1 and made:
                estimate = ot.reasoning_tokens(items[0]["encrypted_content"])
                errors.append(abs(estimate - made) / made)
    errors.sort()
    assert len(errors) > 40
    assert errors[len(errors) // 2] < 0.10


def test_a_reasoning_models_chat_tools_cost_their_instructions_more() -> None:
    tool = {"type": "function", "function": {"name": "f", "parameters": {}}}
    flat = {"type": "function", "name": "f", "parameters": {}}
    base = ot.estimate_tools([tool], "gpt-4o")
    assert ot.estimate_tools([tool], "gpt-5-mini") == base + ot.CHAT_REASONING_TOOLS_TOKENS
    # the Responses API's tools (flat) cost the same on either family
    assert ot.estimate_tools([flat], "gpt-5-mini") == ot.estimate_tools([flat], "gpt-4o") == base
    # the o-series add no instructions (o4-mini's Chat body with a tool billed as GPT-4o's)
    for model in ("o4-mini", "o3", "o1"):
        assert ot.estimate_tools([tool], model) == base


def test_arguments_that_are_no_json_object_are_billed_as_the_text_sent(tmp_path: Path) -> None:
    # a client that sent a call's arguments as a JSON string holding the object: the API
    # billed the text, 2 tokens more than the object, not a wrapper around it
    args = {"location": "Florence, Italy"}
    call = {"type": "function_call", "call_id": "c1", "name": "weather"}
    user = {"role": "user", "content": "What's the weather in Florence?"}
    output = {"type": "function_call_output", "call_id": "c1", "output": "40 C"}
    compact = json.dumps(args, separators=(",", ":"))
    totals = []
    for sent in (compact, json.dumps(compact)):
        body = {"model": "gpt-4o", "input": [user, {**call, "arguments": sent}, output]}
        path = tmp_path / "body.json"
        path.write_text(json.dumps(body))
        totals.append(replay(load_session(path), as_sent=True).summary()["window"])
    text_cost = ot.arguments_tokens({"arguments": json.dumps(compact)})
    assert text_cost == ot.json_tokens(args) + 2
    assert totals[1]["estimated_tokens"] == totals[0]["estimated_tokens"] + 2


def test_what_a_body_cannot_show_is_named_and_the_rest_is_measurable(tmp_path: Path) -> None:
    user = {"role": "user", "content": "hi"}
    assert ot.unmeasured([user], [{"type": "function", "name": "f"}], {}) == []
    continued = ot.unmeasured([user], [], {"previous_response_id": "resp_1"})
    assert continued and "previous_response_id" in continued[0]
    searched = ot.unmeasured([user], [], {"web_search_options": {}})
    assert searched == []  # (empty options: no search asked)
    assert ot.unmeasured([user], [], {"web_search_options": {"search_context_size": "low"}})
    hosted = ot.unmeasured([user], [{"type": "web_search_preview\x1b[31m"}], {})
    # the known tool's name, never the file's text
    assert hosted == ["server-side tools (web_search: what they add is billed as input)"]
    # a client-run tool search holds what it found
    assert ot.unmeasured([user], [{"type": "tool_search", "execution": "client"}], {}) == []
    pdf = {"type": "document", "source": {"type": "base64", "data": "JVBERi0x"}}
    url_image = {"type": "image", "source": {"type": "url", "url": "https://e.com/a.png"}}
    by_id = {"type": "image", "source": {"type": "file", "file_id": "file-1"}}
    found = ot.unmeasured([{"role": "user", "content": [pdf, url_image, by_id, pdf]}], [], {})
    assert len(found) == 3  # each reason once
    body = {
        "model": "gpt-5",
        "input": [{"role": "user", "content": "hi"}],
        "tools": [{"type": "file_search", "vector_store_ids": ["vs_1"]}],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    window = replay(load_session(path), as_sent=True).summary()["window"]
    assert window["billed_not_in_file"] == [
        "server-side tools (file_search: what they add is billed as input)"
    ]


def test_a_body_billed_under_the_responses_apis_launch_rule_is_measured_apart() -> None:
    from benchmarks.truth_openai import ROOT, superseded

    folder = ROOT / "openai_responses"
    # the same body, billed 42 tokens on 2025-03-27 and 24 on 2025-04-07: the estimate is
    # today's billing, and the earlier recording is set apart from the figures
    estimates, billed, earlier = [], [], []
    for name in ("pai_openai_responses_system_prompt", "pai_openai_responses_model_instructions"):
        path = folder / f"{name}_req1.json"
        response = json.loads((folder / "responses" / path.name).read_text())
        estimates.append(replay(load_session(path), as_sent=True).summary())
        billed.append(response["usage"]["input_tokens"])
        earlier.append(superseded("openai_responses", response))
    assert [s["window"]["estimated_tokens"] for s in estimates] == [24, 24]
    assert billed == [42, 24]
    assert earlier == [True, False]


def test_the_launch_rule_covers_gpt_4o_mini_and_the_api_s_first_weeks_only() -> None:
    from datetime import UTC, datetime

    from benchmarks.truth_openai import superseded

    def response(when: str, model: str) -> dict[str, object]:
        return {
            "created_at": datetime.fromisoformat(when).replace(tzinfo=UTC).timestamp(),
            "model": model,
        }

    # GPT-4o mini's "say hi" billed 27 on 2025-03-21 (its estimate and today's billing: 9), and
    # GPT-4o's last body so billed is of 2025-03-28 12:05 UTC
    assert superseded("openai_responses", response("2025-03-21T03:25", "gpt-4o-mini-2024-07-18"))
    assert superseded("openai_responses", response("2025-03-28T12:05", "gpt-4o-2024-08-06"))
    assert not superseded("openai_responses", response("2025-04-07T16:31", "gpt-4o-2024-08-06"))
    assert not superseded("openai_chat", response("2025-03-21T03:25", "gpt-4o-mini"))
    assert not superseded("openai_responses", response("2025-03-21T03:25", "gpt-4.1"))
    # a date before the API opened is a fixture's own, not the API's
    assert not superseded("openai_responses", response("2024-02-27T02:13", "gpt-4o-mini"))


def test_a_custom_tools_freeform_input_is_billed_as_its_text() -> None:
    """A Codex ``apply_patch`` call (a ``custom_tool_call``): the API bills its input as the
    patch's text, not as a JSON string (diag4's entgraph_019e7da4: a 17 kB patch added 4,347
    tokens, and its JSON-escaped form 5,245); a function's arguments stay JSON."""
    from ctxview.core.providers.openai_wire import responses_item

    patch = '*** Begin Patch\n*** Add File: a.go\n+package a\n+\n+import (\n+\t"fmt"\n+)\n' * 20
    call = {"type": "custom_tool_call", "call_id": "c", "name": "apply_patch", "input": patch}
    block = responses_item(call)["content"][0]
    assert ot.block_tokens(block) == ot.text_tokens("apply_patch") + ot.text_tokens(patch)
    assert ot.text_tokens(patch) < ot.json_tokens(json.dumps(patch))
    fn = {"type": "function_call", "call_id": "f", "name": "run", "arguments": '{"cmd": "ls"}'}
    fblock = responses_item(fn)["content"][0]
    assert ot.block_tokens(fblock) == ot.text_tokens("run") + ot.json_tokens({"cmd": "ls"})


def test_a_sub_agents_notice_starts_no_turn() -> None:
    """Codex writes a sub-agent's end into the running turn as a user message: the turn's
    reasoning is still billed after it; a prompt of the user's ends the turn."""
    notice = {
        "role": "user",
        "content": [{"type": "text", "text": '<subagent_notification>\n{"agent_path": "a"}'}],
    }
    assert ot.reasoning_carry(notice) == (False, 0)
    assert ot.reasoning_carry({"role": "user", "content": "<subagent_notification> x"})[0] is False
    assert ot.reasoning_carry({"role": "user", "content": [{"type": "text", "text": "go on"}]})[0]


def test_a_responses_function_tool_is_read_from_its_own_fields() -> None:
    """The Responses API ignores a Chat-shaped ``function`` object inside a function tool: the
    tool is billed as its top-level name (description and parameters, here absent), as the
    response echoes it; Chat Completions reads the ``function`` object."""
    nested = {
        "description": "Get current weather information for a location",
        "name": "get_weather",
        "parameters": {
            "type": "object",
            "properties": {"location": {"type": "string", "description": "the city"}},
        },
    }
    both = {"type": "function", "name": "get_weather", "function": nested}
    bare = {"type": "function", "name": "get_weather"}
    flat = {"type": "function", **nested}
    est = ot.estimate_tools
    assert est([both], "gpt-5", responses=True) == est([bare], "gpt-5", responses=True)
    assert est([flat], "gpt-5", responses=True) > est([bare], "gpt-5", responses=True)
    # the same tool written flat is billed alike by either API
    assert est([flat], "gpt-4o", responses=True) == est([{"function": nested}], "gpt-4o")
    # a Chat body reads the nested object
    assert est([both], "gpt-4o") == est([{"function": nested}], "gpt-4o")
