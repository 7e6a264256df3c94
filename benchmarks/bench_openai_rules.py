"""The protocol check of a long Codex session as it was sent, under OpenAI's rules.

A synthetic Codex CLI rollout (JSONL, the documented ``{timestamp, type, payload}`` lines) of
20,000 response items (2,000 with ``--quick``): user turns answered by rounds of reasoning, a
function call, a developer note between some calls and their outputs, the output, and a reply;
a ``token_count`` event after each response, so every response is a request whose window is the
whole history before it. Timed in-process: the request replay with its protocol check
(``requests --json``'s work) and the same replay without the check, so the check's own cost is
the difference; the check alone per request is printed too.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Bench, Figure, report, say


def codex_rollout(items: int) -> list[dict[str, Any]]:
    """The lines of a Codex rollout of about ``items`` response items."""
    t = 0

    def line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        nonlocal t
        t += 1
        stamp = f"2026-01-01T{t // 3600 % 24:02d}:{t // 60 % 60:02d}:{t % 60:02d}.000Z"
        return {"timestamp": stamp, "type": kind, "payload": payload}

    def usage(n: int) -> dict[str, Any]:
        u = {"input_tokens": 40 * n, "cached_input_tokens": 30 * n, "output_tokens": 50}
        return {"type": "token_count", "info": {"last_token_usage": u, "total_token_usage": u}}

    out = [
        line("session_meta", {"id": "bench", "cwd": "/w", "cli_version": "0.77.0"}),
        line("turn_context", {"cwd": "/w", "model": "gpt-5-codex"}),
    ]
    n = call = 0
    while n < items:
        out.append(
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "user",
                    "content": [{"type": "input_text", "text": "go on"}],
                },
            )
        )
        n += 1
        for k in range(4):
            call += 1
            cid = f"call_{call}"
            out.append(
                line(
                    "response_item", {"type": "reasoning", "summary": [], "encrypted_content": "x"}
                )
            )
            out.append(
                line(
                    "response_item",
                    {
                        "type": "function_call",
                        "name": "shell",
                        "arguments": '{"command": "ls"}',
                        "call_id": cid,
                    },
                )
            )
            out.append(line("event_msg", usage(n)))
            if k == 2:
                note = {
                    "type": "message",
                    "role": "developer",
                    "content": [{"type": "input_text", "text": "sandbox changed"}],
                }
                out.append(line("response_item", note))
                n += 1
            out.append(
                line(
                    "response_item",
                    {"type": "function_call_output", "call_id": cid, "output": "a\nb\nc"},
                )
            )
            n += 3
        out.append(
            line(
                "response_item",
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [{"type": "output_text", "text": "done"}],
                },
            )
        )
        out.append(line("event_msg", usage(n)))
        n += 1
    return out


def _write(path: Path, lines: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))


def run(b: Bench) -> None:
    from ctxview.core.requests import simulate
    from ctxview.core.requests.points import session_rules
    from ctxview.core.requests.shared import Shared
    from ctxview.sessions import load_session

    items = 2_000 if b.quick else 20_000
    path = b.data / f"codex_rollout_{items}.jsonl"
    if not path.exists():
        _write(path, codex_rollout(items))
    session = load_session(path)
    n = len(session.messages)
    times: dict[bool, float] = {}
    for check in (False, True):
        t0 = time.perf_counter()
        log = simulate(session, check=check)
        times[check] = time.perf_counter() - t0
    rejected = sum(1 for r in log.requests if r.rejected)
    say(
        f"{n:,} messages, {len(log.requests):,} requests ({rejected} rejected: over the model's context or by a rule); replay "
        f"{times[False]:.2f} s without the check, {times[True]:.2f} s with it"
    )
    # the check alone: every request's window as sent, ``[first] + [lo, hi)``
    windows = simulate(session, keep_windows=range(len(log.requests))).windows
    spans = [(w[0], w[1] if len(w) > 1 else w[0] + 1, w[-1] + 1) for w in windows.values() if w]
    werr = Shared(session.messages).window_errors(session.system, session_rules(session))
    t0 = time.perf_counter()
    for first, lo, hi in spans:
        werr.rejected(first, lo, hi)
    alone = time.perf_counter() - t0
    report(
        Figure(
            f"protocol check of {len(spans):,} as-sent Codex windows ({n:,} items)",
            alone * 1000,
            "ms",
        )
    )
    report(
        Figure("the request replay with the check / without it", times[True] / times[False], "x")
    )
