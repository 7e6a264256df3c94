"""The real AsyncAnthropic client against the loopback fake: streaming, tool_use and faults."""

from __future__ import annotations

import socket
from typing import Any

import pytest

from ctxview.chat.backends import AnthropicBackend, ChatError
from tests.support.fake_api import FakeAPI, Response, error, text_events, tool_events

BODY: dict[str, Any] = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 64,
    "system": "be brief",
    "messages": [{"role": "user", "content": "hi"}],
}


def backend(api: FakeAPI, **kw: Any) -> AnthropicBackend:
    return AnthropicBackend(api_key="sk-test-not-real", base_url=api.url, **kw)


async def test_stream_text(fake_api: FakeAPI) -> None:
    chunks: list[str] = []
    reply = await backend(fake_api).reply(BODY, chunks.append)
    assert reply.complete and reply.stop_reason == "end_turn"
    assert "".join(chunks) == "Hello from the fake API."
    assert reply.content[0].text == "Hello from the fake API."
    assert reply.usage and reply.usage["cache_read_input_tokens"] == 7
    assert fake_api.requests[0]["system"] == "be brief" and fake_api.requests[0]["stream"] is True
    h = fake_api.headers[0]
    assert "sk-test-not-real" in (h.get("x-api-key", "") + h.get("authorization", ""))


async def test_stream_tool_use(fake_api: FakeAPI) -> None:
    fake_api.queue(Response("sse", tool_events("calculator", {"expression": "6*7"})))
    reply = await backend(fake_api).reply(BODY, lambda s: None)
    assert reply.stop_reason == "tool_use"
    use = reply.content[1]
    assert (
        use.type == "tool_use" and use.input == {"expression": "6*7"} and use.name == "calculator"
    )


async def test_cut_stream_is_detected(fake_api: FakeAPI) -> None:
    fake_api.queue(Response("sse", text_events("a partial answer that never", cut=True)))
    chunks: list[str] = []
    reply = await backend(fake_api).reply(BODY, chunks.append)
    assert not reply.complete and reply.stop_reason is None
    assert "partial" in "".join(chunks)


@pytest.mark.parametrize(
    "status, etype, needle",
    [
        (400, "invalid_request_error", "400"),
        (401, "authentication_error", "401"),
        (403, "permission_error", "403"),
        (404, "not_found_error", "404"),
        (413, "request_too_large", "413"),
        (500, "api_error", "500"),
        (529, "overloaded_error", "529"),
    ],
)
async def test_status_errors(fake_api: FakeAPI, status: int, etype: str, needle: str) -> None:
    fake_api.queue(error(status, etype, f"fake {etype}"))
    with pytest.raises(ChatError) as exc:
        await backend(fake_api).reply(BODY, lambda s: None)
    assert exc.value.status == status and exc.value.kind == etype
    assert needle in str(exc.value) and f"fake {etype}" in str(exc.value)
    assert len(fake_api.requests) == 1  # no silent retries


async def test_429_shows_retry_after(fake_api: FakeAPI) -> None:
    fake_api.queue(error(429, "rate_limit_error", "slow down", **{"retry-after": "17"}))
    with pytest.raises(ChatError) as exc:
        await backend(fake_api).reply(BODY, lambda s: None)
    assert exc.value.retry_after == "17" and "retry after 17 s" in str(exc.value)


async def test_connection_refused() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    b = AnthropicBackend(api_key="k", base_url=f"http://127.0.0.1:{port}")
    with pytest.raises(ChatError) as exc:
        await b.reply(BODY, lambda s: None)
    assert exc.value.kind == "connection" and "cannot reach" in str(exc.value)


async def test_timeout(fake_api: FakeAPI) -> None:
    fake_api.queue(Response("hang"))
    with pytest.raises(ChatError) as exc:
        await backend(fake_api, timeout=0.5).reply(BODY, lambda s: None)
    assert exc.value.kind == "timeout"


async def test_count_tokens(fake_api: FakeAPI) -> None:
    n = await backend(fake_api).count_tokens({**BODY, "max_tokens": 5})
    assert n == 1234
    assert fake_api.paths[-1].startswith("/v1/messages/count_tokens")
    assert "max_tokens" not in fake_api.requests[-1]


async def test_stream_thinking(fake_api: FakeAPI) -> None:
    from tests.support.fake_api import thinking_events

    fake_api.queue(Response("sse", thinking_events("Let me think this through.", "Done.")))
    thoughts: list[str] = []
    text: list[str] = []
    reply = await backend(fake_api).reply(BODY, text.append, thoughts.append)
    assert "".join(thoughts) == "Let me think this through." and "".join(text) == "Done."
    block = reply.content[0]
    assert block.type == "thinking" and block.signature == "EqQBCkYIBxgCKkBzaWduZWQ="
