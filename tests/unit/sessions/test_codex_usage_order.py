"""Which response a Codex ``token_count`` measured when the rollout writes it before the
response's items (Codex CLI 0.39), and what a response's reasoning leaves billed when it came
with no sealed form."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.core.providers.base import RECORDED_CARRY
from ctxview.sessions import load_session


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2025-09-19T09:02:12Z", "type": kind, "payload": payload})


def _count(prompt: int, total: int, reasoning: int = 0) -> str:
    last = {
        "input_tokens": prompt,
        "cached_input_tokens": 0,
        "output_tokens": 10,
        "reasoning_output_tokens": reasoning,
    }
    info = {"total_token_usage": {"input_tokens": total}, "last_token_usage": last}
    return _line("event_msg", {"type": "token_count", "info": info})


def _reasoning(sealed: str | None) -> str:
    item = {"type": "reasoning", "summary": [], "content": None, "encrypted_content": sealed}
    return _line("response_item", item)


CALL = _line(
    "response_item", {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"}
)
OUTPUT = _line("response_item", {"type": "function_call_output", "call_id": "a", "output": "ok"})


def _load(tmp_path: Path, lines: list[str]) -> Any:
    head = [_line("session_meta", {"id": "s"}), _line("turn_context", {"model": "gpt-5"})]
    user = _line("response_item", {"type": "message", "role": "user", "content": "go"})
    path = tmp_path / "rollout-o.jsonl"
    path.write_text("\n".join([*head, user, *lines]) + "\n")
    return load_session(path)


def _prompts(s: Any) -> dict[int, int]:
    return {
        i: m["usage"]["input_tokens"] + m["usage"]["cache_creation_input_tokens"]
        for i, m in enumerate(s.metas)
        if "usage" in m
    }


def test_a_usage_written_before_its_responses_items_is_that_responses(tmp_path: Path) -> None:
    """The first usage comes before any assistant item: each usage is the next response's
    (its items follow it), the last one's too."""
    s = _load(
        tmp_path,
        [
            _count(5_000, 5_000),
            _reasoning(None),
            CALL,
            OUTPUT,
            _count(5_200, 10_200),
            _reasoning(None),
            CALL.replace('"a"', '"b"'),
            OUTPUT.replace('"a"', '"b"'),
            _count(5_400, 15_600),
            _line("response_item", {"type": "message", "role": "assistant", "content": "done"}),
        ],
    )
    assert _prompts(s) == {1: 5_000, 4: 5_200, 7: 5_400}


def test_a_usage_written_after_its_responses_items_stays_that_responses(tmp_path: Path) -> None:
    s = _load(
        tmp_path,
        [
            _reasoning("x" * 2_000),
            CALL,
            OUTPUT,
            _count(5_000, 5_000),
            _reasoning("y"),
            _count(5_100, 10_100),
        ],
    )
    assert _prompts(s) == {1: 5_000, 4: 5_100}


def test_reasoning_without_a_sealed_form_leaves_nothing_billed(tmp_path: Path) -> None:
    unsealed = _load(tmp_path, [_reasoning(None), CALL, OUTPUT, _count(5_000, 5_000, 640)])
    assert unsealed.metas[1][RECORDED_CARRY] == 0
    sealed = _load(tmp_path, [_reasoning("z" * 3_000), CALL, OUTPUT, _count(5_000, 5_000, 640)])
    assert sealed.metas[1][RECORDED_CARRY] == 640
    # the publisher's files that drop the key altogether keep the recorded reasoning
    bare = _line("response_item", {"type": "reasoning", "summary": []})
    stripped = _load(tmp_path, [bare, CALL, OUTPUT, _count(5_000, 5_000, 640)])
    assert stripped.metas[1][RECORDED_CARRY] == 640
