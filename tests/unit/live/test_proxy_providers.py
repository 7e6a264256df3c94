"""ctxview proxy with OpenAI's and Gemini's APIs: the real ``openai`` and ``google-genai`` SDKs ->
one shared proxy -> loopback fakes of each provider (tests/support/fake_providers.py), each on
its own upstream. Every request reaches its own provider's upstream, streams pass through chunk
by chunk, each exchange is recorded with its provider, reply, usage and completeness, and no key
of any provider is ever written."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from google import genai
from google.genai import types as gtypes

from ctxview.core.providers.registry import provider
from ctxview.live.proxy import route
from tests.support.fake_api import FakeAPI, Response
from tests.support.fake_providers import (
    CHAT_USAGE,
    GEMINI_USAGE,
    RESPONSES_USAGE,
    chat_chunks,
    chat_completion,
    gemini_chunks,
    gemini_error,
    gemini_response,
    openai_error,
    reply_for,
    response_object,
    responses_events,
)
from tests.support.proxy_thread import ProxyThread

OPENAI_KEY = "sk-proj-OPENAIPROXYKEY-0123456789abcdefABCDEF"
OPENAI_ORG = "org-PROXYTESTORGANISATION42"
OPENAI_PROJECT = "proj_PROXYTESTPROJECT4242"
GEMINI_KEY = "AIzaSyGEMINIPROXYKEY-0123456789abcdef"
QUERY_KEY = "AIzaSyQUERYPARAMKEY-9876543210fedcba"
SECRETS = (OPENAI_KEY, OPENAI_ORG, OPENAI_PROJECT, GEMINI_KEY, QUERY_KEY)
WEATHER = ("get_weather", {"city": "Paris", "unit": "celsius"})


class Upstreams:
    def __init__(self, tmp: Path) -> None:
        self.anthropic = FakeAPI().start()
        self.openai = FakeAPI(default=reply_for).start()
        self.gemini = FakeAPI(default=reply_for).start()
        self.px = ProxyThread(
            self.anthropic.url,
            tmp / "providers.jsonl",
            openai_upstream=self.openai.url + "/v1",  # as OPENAI_BASE_URL names it
            gemini_upstream=self.gemini.url,
        )

    def close(self) -> None:
        self.px.close()
        for api in (self.anthropic, self.openai, self.gemini):
            api.stop()


@pytest.fixture(scope="module")
def up(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Upstreams]:
    u = Upstreams(tmp_path_factory.mktemp("providers"))
    try:
        yield u
        # every test's traffic went through this one recording: no key of any provider in it
        u.px.flush()
        data = u.px.record.read_bytes()
        for secret in SECRETS:
            assert secret.encode() not in data
        assert b"x-goog-api-key" not in data.lower() and b"authorization" not in data.lower()
    finally:
        u.close()


def oai(up: Upstreams) -> openai.OpenAI:
    return openai.OpenAI(
        api_key=OPENAI_KEY,
        organization=OPENAI_ORG,
        project=OPENAI_PROJECT,
        base_url=up.px.url + "/v1",
        max_retries=0,
    )


def gem(up: Upstreams) -> genai.Client:
    return genai.Client(
        api_key=GEMINI_KEY,
        http_options=gtypes.HttpOptions(base_url=up.px.url, retry_options=None),
    )


def recorded(up: Upstreams, mark: int, count: int) -> list[dict[str, Any]]:
    return up.px.lines_since(mark, count)


MESSAGES = [
    {"role": "system", "content": "be brief"},
    {"role": "user", "content": "what is the weather in Paris?"},
]


def test_a_stream_read_to_its_end_is_complete_when_the_client_hangs_up_before_the_upstream_closes(
    up: Upstreams,
) -> None:
    # the SDK closes the response at [DONE]; the upstream's end of body comes seconds later
    mark = up.px.mark()
    up.openai.queue(Response("sse", chat_chunks("one two three"), linger=5))
    stream = oai(up).chat.completions.create(
        model="gpt-fake",
        messages=MESSAGES,  # type: ignore[arg-type]
        stream=True,
    )
    assert "".join(ch.delta.content or "" for chunk in stream for ch in chunk.choices) == (
        "one two three"
    )
    stream.close()
    (rec,) = recorded(up, mark, 1)
    assert (rec["complete"], rec["incomplete"]) == (True, None)


def test_chat_completions_stream_is_forwarded_to_openai_and_recorded(up: Upstreams) -> None:
    mark = up.px.mark()
    seen = len(up.openai.requests), len(up.anthropic.requests), len(up.gemini.requests)
    up.openai.queue(Response("sse", chat_chunks("one two three", call=WEATHER)))
    stream = oai(up).chat.completions.create(
        model="gpt-fake",
        messages=MESSAGES,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    )
    text, args = [], []
    for chunk in stream:
        for ch in chunk.choices:
            text.append(ch.delta.content or "")
            args += [tc.function.arguments or "" for tc in ch.delta.tool_calls or [] if tc.function]
    assert "".join(text) == "one two three"
    assert json.loads("".join(args)) == WEATHER[1]
    # to OpenAI's upstream alone, path and key as sent
    assert (len(up.openai.requests), len(up.anthropic.requests), len(up.gemini.requests)) == (
        seen[0] + 1,
        seen[1],
        seen[2],
    )
    assert up.openai.paths[-1] == "/v1/chat/completions"
    assert up.openai.headers[-1]["authorization"] == f"Bearer {OPENAI_KEY}"
    assert up.openai.headers[-1]["openai-organization"] == OPENAI_ORG
    (rec,) = recorded(up, mark, 1)
    assert rec["provider"] == "openai" and rec["endpoint"] == "chat_completions"
    assert rec["streamed"] and rec["complete"] and rec["incomplete"] is None
    assert rec["request"]["messages"] == MESSAGES
    assert rec["usage"] == CHAT_USAGE and rec["stop_reason"] == "tool_calls"
    (choice,) = rec["response"]["choices"]
    assert choice["message"]["content"] == "one two three"
    (call,) = choice["message"]["tool_calls"]
    assert call["id"] == "call_fake_1" and call["function"]["name"] == "get_weather"
    assert json.loads(call["function"]["arguments"]) == WEATHER[1]
    assert rec["request_headers"] == {"content-type": "application/json"}


def test_chat_completions_json_and_an_api_error(up: Upstreams) -> None:
    mark = up.px.mark()
    up.openai.queue(
        Response("json", body=chat_completion(None, call=WEATHER)),
        openai_error(429, "rate_limit_error", "Rate limit reached", "rate_limit_exceeded"),
    )
    got = oai(up).chat.completions.create(model="gpt-fake", messages=MESSAGES)  # type: ignore[arg-type]
    assert got.choices[0].finish_reason == "tool_calls"
    with pytest.raises(openai.RateLimitError):
        oai(up).chat.completions.create(model="gpt-fake", messages=MESSAGES)  # type: ignore[arg-type]
    ok, failed = recorded(up, mark, 2)
    assert not ok["streamed"] and ok["complete"] and ok["usage"] == CHAT_USAGE
    assert ok["stop_reason"] == "tool_calls" and ok["conversation"] == failed["conversation"]
    assert failed["status"] == 429 and not failed["complete"]
    assert failed["error"] == {"type": "rate_limit_error", "message": "Rate limit reached"}


def test_responses_stream_json_and_previous_response_id(up: Upstreams) -> None:
    mark = up.px.mark()
    up.openai.queue(
        Response("sse", responses_events("Sunny, 21 degrees.", call=WEATHER)),
        Response("json", body=response_object("And tomorrow rain.")),
    )
    client = oai(up)
    events = list(
        client.responses.create(
            model="gpt-fake",
            instructions="be brief",
            input=[{"role": "user", "content": "weather in Paris?"}],
            stream=True,
        )
    )
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == "Sunny, 21 degrees."
    later = client.responses.create(
        model="gpt-fake", previous_response_id="resp_fake_1", input="and tomorrow?"
    )
    assert later.output_text == "And tomorrow rain."
    assert up.openai.paths[-1] == "/v1/responses"
    first, second = recorded(up, mark, 2)
    assert (first["provider"], first["endpoint"]) == ("openai", "responses")
    assert first["streamed"] and first["complete"] and first["usage"] == RESPONSES_USAGE
    assert first["stop_reason"] == "completed"
    kinds = [item["type"] for item in first["response"]["output"]]
    assert kinds == ["message", "function_call"]
    # only its new item was sent: it joins the conversation of the response it continues
    assert not second["streamed"] and second["complete"]
    assert second["conversation"] == first["conversation"] is not None


def test_gemini_generate_and_stream_are_forwarded_to_gemini_and_recorded(up: Upstreams) -> None:
    mark = up.px.mark()
    seen_openai = len(up.openai.requests)
    up.gemini.queue(
        Response("json", body=gemini_response([{"text": "Hi!"}])),
        Response("sse", gemini_chunks("one two three", call=WEATHER)),
    )
    client = gem(up)
    contents = [gtypes.Content(role="user", parts=[gtypes.Part(text="hello")])]
    config = gtypes.GenerateContentConfig(system_instruction="be brief")
    assert (
        client.models.generate_content(model="gemini-fake", contents=contents, config=config).text
        == "Hi!"
    )
    pieces = [
        c.text or ""
        for c in client.models.generate_content_stream(
            model="gemini-fake", contents=contents, config=config
        )
    ]
    assert "".join(pieces) == "one two three"
    assert len(up.openai.requests) == seen_openai
    assert up.gemini.paths[-2] == "/v1/models/gemini-fake:generateContent"
    assert up.gemini.paths[-1] == "/v1/models/gemini-fake:streamGenerateContent?alt=sse"
    assert up.gemini.headers[-1]["x-goog-api-key"] == GEMINI_KEY
    whole, streamed = recorded(up, mark, 2)
    assert (whole["provider"], whole["endpoint"]) == ("gemini", "generate_content")
    assert whole["complete"] and whole["stop_reason"] == "STOP"
    assert whole["usage"] == GEMINI_USAGE
    assert whole["request"]["contents"] == [{"role": "user", "parts": [{"text": "hello"}]}]
    assert streamed["endpoint"] == "stream_generate_content"
    assert streamed["streamed"] and streamed["complete"] and streamed["usage"] == GEMINI_USAGE
    (cand,) = streamed["response"]["candidates"]
    assert cand["content"]["parts"] == [
        {"text": "one two three"},
        {"functionCall": {"name": "get_weather", "args": WEATHER[1]}},
    ]
    assert cand["finishReason"] == "STOP"
    assert whole["conversation"] == streamed["conversation"] is not None


def test_gemini_key_in_the_query_is_forwarded_and_never_recorded(up: Upstreams) -> None:
    mark = up.px.mark()
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": "q"}]}]}).encode()
    url = f"{up.px.url}/v1beta/models/gemini-fake:streamGenerateContent?key={QUERY_KEY}"
    req = urllib.request.Request(url, data=body, headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:  # a JSON array of chunks (no alt=sse)
        chunks = json.loads(resp.read())
    assert chunks[0]["candidates"][0]["finishReason"] == "STOP"
    assert up.gemini.paths[-1].endswith(f"?key={QUERY_KEY}")
    (rec,) = recorded(up, mark, 1)
    assert QUERY_KEY not in rec["path"] and rec["path"].endswith(
        "?key=[credential removed by ctxview]"
    )
    assert rec["complete"] and not rec["streamed"]
    assert rec["response"]["candidates"][0]["content"]["parts"] == [
        {"text": "Hello from the fake Gemini API."}
    ]


@pytest.mark.parametrize(
    ("kind", "end"),
    [("chat", "[DONE]"), ("responses", "response.completed"), ("gemini", "a finishReason")],
)
def test_a_cut_stream_is_recorded_as_cut(up: Upstreams, kind: str, end: str) -> None:
    mark = up.px.mark()
    if kind == "chat":
        up.openai.queue(Response("sse", chat_chunks("this reply stops short", cut=True)))
        for _ in oai(up).chat.completions.create(
            model="gpt-fake",
            messages=[{"role": "user", "content": "cut"}],
            stream=True,
        ):
            pass
    elif kind == "responses":
        up.openai.queue(Response("sse", responses_events("this reply stops short", cut=True)))
        for _ in oai(up).responses.create(model="gpt-fake", input="cut", stream=True):
            pass
    else:
        up.gemini.queue(Response("sse", gemini_chunks("this reply stops short", cut=True)))
        client = gem(up)  # (held: a client collected mid-stream closes its connection)
        for _ in client.models.generate_content_stream(model="gemini-fake", contents="cut"):
            pass
    (rec,) = recorded(up, mark, 1)
    assert rec["streamed"] and rec["status"] == 200
    assert not rec["complete"] and rec["incomplete"] == f"stream ended before {end}"
    assert "this reply stops short" in json.dumps(rec["response"])


def test_gemini_error_is_recorded_with_its_status(up: Upstreams) -> None:
    mark = up.px.mark()
    up.gemini.queue(gemini_error(400, "INVALID_ARGUMENT", "Please ensure that function call turn"))
    client = gem(up)
    with pytest.raises(genai.errors.ClientError):
        client.models.generate_content(model="gemini-fake", contents="x")
    (rec,) = recorded(up, mark, 1)
    assert rec["status"] == 400 and not rec["complete"]
    assert rec["error"] == {
        "type": "INVALID_ARGUMENT",
        "message": "Please ensure that function call turn",
    }


@pytest.mark.parametrize(
    ("method", "path", "headers", "provider"),
    [
        ("POST", "/v1/messages", {}, "anthropic"),
        ("POST", "/v1/chat/completions", {}, "openai"),
        ("POST", "/v1/responses", {}, "openai"),
        ("POST", "/v1beta/models/gemini-2.5-pro:generateContent", {}, "gemini"),
        ("POST", "/v1beta/openai/chat/completions", {"authorization": "x"}, "gemini"),
        ("GET", "/v1/models", {"x-api-key": "k", "anthropic-version": "v"}, "anthropic"),
        ("GET", "/v1/models", {"authorization": "Bearer k"}, "openai"),
        ("GET", "/v1/files", {"x-goog-api-key": "k"}, "gemini"),
        ("GET", "/", {}, "anthropic"),
    ],
)
def test_route(method: str, path: str, headers: dict[str, str], provider: str) -> None:
    assert route(method, path, headers) == provider


def test_each_upstream_is_checked_and_taken_from_its_variable(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxview.cli import main

    args = ["proxy", "--no-tui", "--port", "8787"]
    assert main([*args, "--openai-upstream", "ftp://nowhere"]) == 2
    assert "--openai-upstream: expected an http(s) URL" in capsys.readouterr().err
    # a shell that points OpenAI's clients at the proxy: its upstream is then named apart
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8787/v1")
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "--openai-upstream http://127.0.0.1:8787/v1 is this proxy itself" in err
    assert "OPENAI_BASE_URL" in err
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", "http://localhost:8787")
    assert main([*args, "--openai-upstream", "https://api.openai.com/v1"]) == 2
    assert "--gemini-upstream http://localhost:8787 is this proxy itself" in capsys.readouterr().err


def test_summaries_of_openai_and_gemini_requests(up: Upstreams) -> None:
    from ctxview.live.recording import RequestRecord, summarise, summary_line

    mark = up.px.mark()
    up.openai.queue(Response("json", body=chat_completion("It is sunny.", call=WEATHER)))
    oai(up).chat.completions.create(model="gpt-fake", messages=MESSAGES)  # type: ignore[arg-type]
    up.gemini.queue(Response("sse", gemini_chunks("Bonjour", call=WEATHER)))
    client = gem(up)
    list(client.models.generate_content_stream(model="gemini-2.5-fake", contents="hi"))
    chat, gemini = (summarise(RequestRecord.from_dict(line, "x")) for line in recorded(up, mark, 2))
    assert (chat.provider, chat.model, chat.messages) == ("openai", "gpt-fake", 2)
    assert chat.reply_preview == "It is sunny. [tool_call get_weather]"
    # Gemini names the model in the path only; its requests are checked by Gemini's rules
    assert (gemini.provider, gemini.model, gemini.messages) == ("gemini", "gemini-2.5-fake", 1)
    assert gemini.reply_preview == "Bonjour [functionCall get_weather]"
    assert gemini.verdict == "✓ valid" and gemini.estimated_tokens
    unanswered = {
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "get_weather", "args": {}}},
                    {"functionCall": {"name": "get_time", "args": {}}},
                ],
            },
            {"role": "user", "parts": [{"functionResponse": {"name": "get_time", "response": {}}}]},
        ]
    }
    mark = up.px.mark()
    req = urllib.request.Request(
        f"{up.px.url}/v1beta/models/gemini-2.5-fake:generateContent",
        data=json.dumps(unanswered).encode(),
        headers={"content-type": "application/json", "x-goog-api-key": GEMINI_KEY},
    )
    urllib.request.urlopen(req, timeout=10).close()
    (line,) = recorded(up, mark, 1)
    bad = summarise(RequestRecord.from_dict(line, "x"))
    assert bad.verdict == "✗ 1 problem"
    assert bad.problems[0].startswith("Please ensure that the number of function response parts")
    line = summary_line(chat)
    # checked by OpenAI's rules; usage in the canonical counts (prompt_tokens holds the cached)
    assert " 200 json · openai · gpt-fake · 2 messages ~" in line and "tok ✓ valid" in line
    u = provider("openai").usage(CHAT_USAGE)
    assert u is not None and u.cache_read == 1024
    figures = f"in {u.uncached} out 12 cache read 1024 write {u.cache_write}"
    assert f"{figures} · stop tool_calls" in line
    mark = up.px.mark()
    orphan = [*MESSAGES, {"role": "tool", "tool_call_id": "call_x", "content": "?"}]
    with pytest.raises(openai.BadRequestError):
        up.openai.queue(openai_error(400, "invalid_request_error", "role 'tool' must follow"))
        oai(up).chat.completions.create(model="gpt-fake", messages=orphan)  # type: ignore[arg-type]
    (line,) = recorded(up, mark, 1)
    bad = summarise(RequestRecord.from_dict(line, "x"))
    assert bad.verdict == "✗ 1 problem" and "'tool'" in bad.problems[0]


def test_a_gemini_conversation_recorded_opens_as_sent(up: Upstreams, tmp_path: Path) -> None:
    """Two turns of the SDK's chat through the proxy: the recording's conversation opens with
    its three contents and the reply, each reply with its canonical usage and model."""
    from ctxview.sessions import load_session

    mark = up.px.mark()
    up.gemini.queue(
        Response("json", body=gemini_response([{"text": "first answer"}])),
        Response("sse", gemini_chunks("second answer")),
    )
    client = gem(up)
    chat = client.chats.create(
        model="gemini-2.5-fake", config=gtypes.GenerateContentConfig(system_instruction="brief")
    )
    chat.send_message("first question")
    list(chat.send_message_stream("second question"))
    lines = recorded(up, mark, 2)
    assert lines[0]["conversation"] == lines[1]["conversation"]
    own = tmp_path / "gemini.jsonl"
    header = up.px.record.read_text().splitlines()[0]
    own.write_text("\n".join([header, *(json.dumps(x) for x in lines)]) + "\n")
    session = load_session(str(own))
    assert (session.format, session.provider, session.model) == (
        "proxy",
        "gemini",
        "gemini-2.5-fake",
    )
    texts = [m["content"][0]["text"] for m in session.messages]
    assert texts == ["first question", "first answer", "second question", "second answer"]
    assert [m["role"] for m in session.messages] == ["user", "assistant", "user", "assistant"]
    assert session.system == [{"type": "text", "text": "brief"}]
    replies = [session.metas[1], session.metas[3]]
    assert [r["request"] for r in replies] == [lines[0]["id"], lines[1]["id"]]
    # Gemini's promptTokenCount holds the cached part: the canonical counts take it apart
    counted = provider("gemini").usage(GEMINI_USAGE)
    assert counted is not None and counted.cache_read == 2048
    assert replies[1]["usage"] == counted.as_meta()
    assert replies[1]["model"] == "gemini-fake"
    assert [e["id"] for e in session.exchanges] == [x["id"] for x in lines]


def block_types(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return ["text"] if isinstance(content, str) else [b["type"] for b in content]


def open_lines(up: Upstreams, lines: list[dict[str, Any]], path: Path) -> Any:
    """These lines of the shared recording as a recording of their own, opened."""
    from ctxview.sessions import load_session

    header = up.px.record.read_text().splitlines()[0]
    path.write_text("\n".join([header, *(json.dumps(x) for x in lines)]) + "\n")
    return load_session(str(path))


def test_a_chat_completions_conversation_recorded_opens_as_sent(
    up: Upstreams, tmp_path: Path
) -> None:
    """A tool round through the SDK: the client sends the assistant's reply back its own way
    (without the reply's refusal: null); the conversation still opens with each reply's usage."""
    mark = up.px.mark()
    up.openai.queue(
        Response("json", body=chat_completion(None, call=WEATHER)),
        Response("sse", chat_chunks("Sunny in Paris.")),
    )
    client = oai(up)
    first = client.chat.completions.create(model="gpt-fake", messages=MESSAGES)  # type: ignore[arg-type]
    reply = first.choices[0].message.model_dump(exclude_none=True, exclude={"refusal"})
    history = [
        *MESSAGES,
        reply,
        {"role": "tool", "tool_call_id": "call_fake_1", "content": "21 C, sunny"},
    ]
    for _ in client.chat.completions.create(
        model="gpt-fake",
        messages=history,  # type: ignore[arg-type]
        stream=True,
        stream_options={"include_usage": True},
    ):
        pass
    lines = recorded(up, mark, 2)
    session = open_lines(up, lines, tmp_path / "chat.jsonl")
    assert (session.format, session.provider, session.model) == ("proxy", "openai", "gpt-fake")
    assert session.system == "be brief"
    assert session.title.endswith(f"2 requests to {up.openai.url}")  # its own upstream
    kinds = [(m["role"], block_types(m)) for m in session.messages]
    assert kinds == [
        ("user", ["text"]),
        ("assistant", ["tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
    ]
    assert [session.metas[i].get("request") for i in (1, 3)] == [lines[0]["id"], lines[1]["id"]]
    # prompt_tokens holds the cached part: the canonical counts (OpenAI's rule) take it apart
    counted = provider("openai").usage(CHAT_USAGE)
    assert counted is not None and counted.cache_read == 1024
    assert session.metas[3]["usage"] == counted.as_meta()
    # saved as a ctxview session, it reopens in its API's form (its next request a Chat body)
    from ctxview.sessions import open_session
    from ctxview.sessions.store import save_session

    opened = open_session(str(tmp_path / "chat.jsonl"), as_sent=True)
    assert opened.request_body({})["messages"][0] == {"role": "system", "content": "be brief"}
    saved = tmp_path / "chat.ctxview.json"
    save_session(str(saved), opened.document({}, max_tokens=1024), make_parents=False)
    again = open_session(str(saved), as_sent=True)
    assert (again.session.provider, again.session.wire_format) == ("openai", "openai-chat")
    assert again.request_body({}) == opened.request_body({})


def test_a_responses_chain_recorded_opens_whole(up: Upstreams, tmp_path: Path) -> None:
    """A request that continues a stored response sends only its new items: the conversation
    opens with the items before it, as recorded."""
    mark = up.px.mark()
    up.openai.queue(
        Response("sse", responses_events("Let me look.", call=WEATHER)),
        Response("json", body=response_object("Sunny, 21 degrees.")),
    )
    client = oai(up)
    list(client.responses.create(model="gpt-fake", input="weather in Paris?", stream=True))
    client.responses.create(
        model="gpt-fake",
        previous_response_id="resp_fake_1",
        input=[{"type": "function_call_output", "call_id": "call_fake_1", "output": "21 C"}],
    )
    lines = recorded(up, mark, 2)
    session = open_lines(up, lines, tmp_path / "responses.jsonl")
    assert session.provider == "openai" and not session.warnings
    kinds = [(m["role"], block_types(m)) for m in session.messages]
    assert kinds == [
        ("user", ["text"]),
        ("assistant", ["text"]),
        ("assistant", ["tool_use"]),
        ("user", ["tool_result"]),
        ("assistant", ["text"]),
    ]
    assert session.metas[1]["request"] == lines[0]["id"]
    assert session.metas[4]["request"] == lines[1]["id"]
    assert session.metas[4]["usage"]["cache_read_input_tokens"] == 1152


def test_a_recorded_openai_request_is_counted_by_openai_token_model() -> None:
    """The proxy log's estimate of a Chat Completions request counts its system prompt and
    tools OpenAI's way (reply priming, the cookbook's function rule), as ``inspect`` does."""
    from ctxview.sessions.proxy_record import RequestRecord
    from ctxview.sessions.proxylog_providers import check_request

    tool = {
        "type": "function",
        "function": {"name": "f", "description": "Do it.", "parameters": {}},
    }
    body = {
        "model": "gpt-4o",
        "messages": [{"role": "system", "content": "Be terse."}, {"role": "user", "content": "hi"}],
        "tools": [tool],
    }
    rec = RequestRecord(
        0, "2026-01-01T00:00:00Z", "POST", "/v1/chat/completions", "chat_completions", "openai"
    )
    rec.request = body
    checked = check_request(rec)
    assert checked is not None
    tokens = provider("openai").tokens
    from ctxview.core.providers.openai_tokens import text_tokens

    # tools: 12 + 7 + "f:Do it"; GPT-4o's messages: the user's (framing 4 + "hi"), the system's
    # (priming 3 + framing 4 + its text)
    assert tokens.of("gpt-4o").tools_tokens([tool]) == 12 + 7 + text_tokens("f:Do it")
    system = 3 + 4 + text_tokens("Be terse.")
    assert checked[2] == 4 + text_tokens("hi") + system + tokens.of("gpt-4o").tools_tokens([tool])


def test_openai_and_gemini_token_counts_are_recorded_as_counts_not_model_calls(
    up: Upstreams,
) -> None:
    from ctxview.live.recording import RequestRecord, summarise, summary_line
    from ctxview.sessions.proxylog import MODEL_CALLS, kind_of

    mark = up.px.mark()
    up.openai.queue(Response("json", body={"object": "response.input_tokens", "input_tokens": 11}))
    up.gemini.queue(Response("json", body={"totalTokens": 31}))
    counted = oai(up).responses.input_tokens.count(model="gpt-fake", input="weather in Paris?")
    assert counted.input_tokens == 11
    assert gem(up).models.count_tokens(model="gemini-fake", contents="hi").total_tokens == 31
    assert up.openai.paths[-1] == "/v1/responses/input_tokens"
    assert up.gemini.paths[-1].endswith("/models/gemini-fake:countTokens")
    lines = recorded(up, mark, 2)
    assert [(x["provider"], x["endpoint"]) for x in lines] == [
        ("openai", "input_tokens"),
        ("gemini", "gemini_count_tokens"),
    ]
    # no model answered them: no usage, no conversation of model calls
    assert all(x["complete"] and x["usage"] is None for x in lines)
    assert not {x["endpoint"] for x in lines} & MODEL_CALLS
    oa, gm = (summarise(RequestRecord.from_dict(x, "x")) for x in lines)
    assert (kind_of(oa), oa.counted_tokens, kind_of(gm), gm.counted_tokens) == (
        "count",
        11,
        "count",
        31,
    )
    assert "counted 31 input tokens" in summary_line(gm)
