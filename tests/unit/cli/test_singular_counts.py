"""A count of one is said in the singular in the commands' text: "1 request", "1 message"."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ctxview.textfmt import counted
from tests.support.cli import run

ONE = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 10,
    "messages": [{"role": "user", "content": "hi"}],
}


def test_counted_marks_thousands_and_agrees_with_its_number() -> None:
    assert [counted(n, "message") for n in (0, 1, 2, 12_345)] == [
        "0 messages",
        "1 message",
        "2 messages",
        "12,345 messages",
    ]


@pytest.mark.parametrize(
    ("command", "said"),
    [
        (["compare"], "· 1 request\n"),
        (["requests"], "total: 1 request ·"),
        (["report", "-o", "{out}"], "1 message;"),
    ],
)
def test_a_one_request_body_is_counted_in_the_singular(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], said: str
) -> None:
    body = tmp_path / "one.json"
    body.write_text(json.dumps(ONE))
    args = [a.replace("{out}", str(tmp_path / "r.html")) for a in command]
    _, out, err = run(capsys, args[0], str(body), *args[1:])
    text = out + err
    assert said in text
    assert not re.search(r"\b1 (request|message)s\b", text)
