"""A long Codex rollout where every turn runs a hosted web search, and every 40th turn is
interrupted: the case the search rules (each search's measured size, the results an interrupt
leaves unbilled) cost most on. Written in Codex's documented line format, not by ctxview.

    python -m benchmarks.codex_searches OUT.jsonl [TURNS]     # default 2,000 turns (~10 MB)

then time ``ctxview requests OUT.jsonl --json`` and ``ctxview inspect OUT.jsonl --json`` on it,
whole processes, against the same commands of the code before a change (``PYTHONPATH`` set to
each checkout in turn).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, TextIO


def write_rollout(path: Path, turns: int) -> None:
    """``turns`` turns of a prompt, a response that searched (reasoning, ``web_search_call``,
    a message), a shell call and its output, and a final answer, each response with its
    ``token_count``; every 40th turn ends interrupted (``turn_aborted``) after the output."""
    state = {"line": 0, "total": 0}

    def put(f: TextIO, kind: str, payload: dict[str, Any]) -> None:
        state["line"] += 1
        ts = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_782_000_000 + state["line"]))
        f.write(json.dumps({"timestamp": ts + ".000Z", "type": kind, "payload": payload}) + "\n")

    def usage(last: int) -> dict[str, Any]:
        state["total"] += last
        u = {
            "input_tokens": last,
            "cached_input_tokens": last - 900,
            "output_tokens": 120,
            "reasoning_output_tokens": 40,
            "total_tokens": last + 120,
        }
        total = {**u, "input_tokens": state["total"]}
        info = {"total_token_usage": total, "last_token_usage": u, "model_context_window": 258400}
        return {"type": "token_count", "info": info}

    def said(text: str) -> dict[str, Any]:
        return {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": text}],
        }

    def user(text: str) -> dict[str, Any]:
        return {
            "type": "message",
            "role": "user",
            "content": [{"type": "input_text", "text": text}],
        }

    prompt = 12_000
    with path.open("w") as f:
        meta = {"id": "t1", "cwd": "/repo", "cli_version": "0.142.0"}
        put(f, "session_meta", {**meta, "base_instructions": {"text": "You are Codex." * 200}})
        for turn in range(turns):
            put(f, "turn_context", {"cwd": "/repo", "model": "gpt-5.4"})
            put(f, "response_item", user(f"look up thing {turn} " + "q" * 200))
            put(
                f,
                "response_item",
                {"type": "reasoning", "summary": [], "encrypted_content": "e" * 800},
            )
            action = {"type": "search", "query": f"query {turn}", "queries": [f"query {turn}"]}
            put(
                f,
                "response_item",
                {"type": "web_search_call", "status": "completed", "action": action},
            )
            put(f, "response_item", said("found it " + "a" * 300))
            prompt += 300
            put(f, "event_msg", usage(prompt))
            call = {"cmd": f"cat f{turn}.py"}
            put(
                f,
                "response_item",
                {
                    "type": "function_call",
                    "name": "shell",
                    "arguments": json.dumps(call),
                    "call_id": f"c{turn}",
                },
            )
            prompt += 100
            put(f, "event_msg", usage(prompt))
            output = {
                "type": "function_call_output",
                "call_id": f"c{turn}",
                "output": "x = 1\n" * 150,
            }
            put(f, "response_item", output)
            if turn % 40 == 39:
                put(
                    f,
                    "response_item",
                    user(
                        "<turn_aborted>\nThe user interrupted the previous turn on purpose.\n</turn_aborted>"
                    ),
                )
                put(f, "event_msg", {"type": "turn_aborted", "reason": "interrupted"})
                prompt -= 3000
                continue
            put(f, "response_item", said("done " + "b" * 200))
            prompt += 400
            put(f, "event_msg", usage(prompt))


if __name__ == "__main__":
    write_rollout(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 2000)
