"""The proxy's recording with its secrets redacted: on by default, ``--no-redact`` to keep them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import pytest

from ctxview.cli.main import build_sub_parser
from ctxview.live.proxy import Proxy
from ctxview.sessions import load_session
from tests.support.fake_api import FakeAPI, Response, text_events
from tests.support.secrets import secrets

API_KEY = "sk-ant-api03-PROXYTESTKEY-0123456789abcdef"
PASTED = next(s for s in secrets() if s.kind == "openai-key")
RESULT = next(s for s in secrets() if s.kind == "private-key")
REPLIED = next(s for s in secrets() if s.kind == "github-token")


async def _record(fake_api: FakeAPI, path: Path, redact: bool | None) -> Proxy:
    proxy = Proxy(fake_api.url, record_path=str(path))
    if redact is not None:
        proxy.log.redact_secrets = redact
    host, port = await proxy.start("127.0.0.1", 0)
    try:
        fake_api.queue(Response("sse", text_events(f"try {REPLIED.text}")))
        body: dict[str, Any] = {
            "model": "claude-test",
            "max_tokens": 64,
            "messages": [
                {"role": "user", "content": PASTED.text},
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t1", "name": "cat", "input": {}}],
                },
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t1", "content": RESULT.text}
                    ],
                },
            ],
        }
        c = anthropic.AsyncAnthropic(
            api_key=API_KEY, base_url=f"http://{host}:{port}", max_retries=0
        )
        async with c.messages.stream(**body) as stream:
            await stream.get_final_message()
        # the upstream got the request as sent: redaction is of the recording only
        assert fake_api.requests[0]["messages"][0]["content"] == PASTED.text
        await proxy.flush()
    finally:
        await proxy.close()
    return proxy


async def test_the_recording_has_its_secrets_redacted_and_counted(
    fake_api: FakeAPI, tmp_path: Path
) -> None:
    path = tmp_path / "rec.jsonl"
    proxy = await _record(fake_api, path, None)
    text = path.read_text()
    assert PASTED.secret not in text and REPLIED.secret not in text
    header, line = (json.loads(x) for x in text.splitlines())
    assert header["redact"] is True
    messages = line["request"]["messages"]
    assert messages[0]["content"] == PASTED.redacted
    assert messages[2]["content"][0]["content"] == RESULT.redacted
    assert line["response"]["content"][0]["text"] == f"try {REPLIED.redacted}"
    counts = {"openai-key": 1, "private-key": 1, "github-token": 1}
    assert line["redacted"] == counts
    assert proxy.log.redactions.counts == counts
    # what the view is handed is what was saved
    (rec,) = proxy.records
    assert rec.request["messages"][0]["content"] == PASTED.redacted
    assert load_session(path).messages[0]["content"] == PASTED.redacted


async def test_no_redact_keeps_them(fake_api: FakeAPI, tmp_path: Path) -> None:
    path = tmp_path / "rec.jsonl"
    proxy = await _record(fake_api, path, False)
    text = path.read_text()
    header, line = (json.loads(x) for x in text.splitlines())
    assert header["redact"] is False and "redacted" not in line
    messages = line["request"]["messages"]
    assert messages[0]["content"] == PASTED.text
    assert messages[2]["content"][0]["content"] == RESULT.text
    assert line["response"]["content"][0]["text"] == f"try {REPLIED.text}"
    assert proxy.log.redactions.total == 0
    assert API_KEY not in text  # the credential it was sent with is removed all the same


@pytest.mark.parametrize(("argv", "redact"), [([], True), (["--no-redact"], False)])
def test_proxy_redacts_unless_told_not_to(argv: list[str], redact: bool) -> None:
    args = build_sub_parser("proxy").parse_args(["proxy", "--record", "r.jsonl", *argv])
    assert args.redact is redact
