"""Pins, the edit preview and the Requests-view diff on big sessions (issue 13).

    python benchmarks/bench_edit.py [--messages 100000]

Cases (best of 3, wall time in this process):

* adds per second of a tool loop at max 50 under each strategy, with no pin and with 20 pinned
  tool pairs held in the window (eviction skips them: still amortised O(1) per add);
* pin and unpin of one message in a window of ``--messages`` messages (O(window): a user's
  action);
* the edit preview of a stub in the middle of a ``--messages``-message window: the protocol
  verdict after it (``core.edits.preview``, memoised checker as the TUI uses it) and its price over
  the next request (``core.edits.edit_cost``);
* the diff of two requests of a ``--messages``-message session in the Requests view
  (``core.diff.diff_logged_requests``: one simulate with ``keep_windows`` + the diff).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ctxview.core.context import ConversationContext  # noqa: E402
from ctxview.core.diff import diff_logged_requests  # noqa: E402
from ctxview.core.edits import edit_cost, preview, stub_plan  # noqa: E402
from ctxview.core.protocol import ProtocolChecker  # noqa: E402
from ctxview.core.requests import simulate  # noqa: E402
from ctxview.core.tokens import estimate_message  # noqa: E402

STRATEGIES = ["seed", "pair-safe", "token-budget", "low-water"]


def loop(n: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    i = 0
    while len(msgs) < n:
        msgs.append({"role": "user", "content": f"step {i}"})
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"calling {i}"},
                    {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"i": i}},
                ],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "x" * 80}],
            }
        )
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]})
        i += 1
    return msgs[:n]


def best(fn: Callable[[], Any], n: int = 3) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def adds(msgs: list[dict[str, Any]], strategy: str, pins: int) -> float:
    def run() -> None:
        ctx = ConversationContext(max_context_messages=50, strategy=strategy)
        add = ctx.add_message
        every = max(1, len(msgs) // (pins + 1)) if pins else 0
        for k, m in enumerate(msgs):
            mid = add(m, copy=False)
            if every and k % every == 1 and k // every < pins and m["role"] == "assistant":
                ctx.pin(mid)

    return len(msgs) / best(run)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    args = ap.parse_args()
    n = args.messages
    msgs = loop(n)
    print(f"tool loop of {n:,} messages")
    for s in STRATEGIES:
        plain = adds(msgs, s, 0)
        pinned = adds(msgs, s, 20)
        print(
            f"  adds/s at max 50, {s:<12}: no pins {plain:>10,.0f} · 20 pinned pairs {pinned:>10,.0f}"
        )

    ctx = ConversationContext(max_context_messages=n + 1)
    for m in msgs:
        ctx.add_message(m, copy=False)
    mid = n // 2 + 1 if msgs[n // 2 + 1]["role"] == "assistant" else n // 2
    t_pin = best(lambda: (ctx.pin(mid), ctx.unpin(mid)))
    print(f"  pin + unpin of one message in a {n:,}-message window: {t_pin * 1000:.1f} ms")

    entries = ctx.entries()
    checker = ProtocolChecker()
    checker.check(entries)  # the TUI's checker is warm (memoised on ids)
    toks = [estimate_message(m) for _, m in entries]
    target = next(i for i, m in entries[n // 2 :] if m["role"] == "user" and i % 4 == 2)
    plan = stub_plan(entries, target)
    errs = sum(1 for p in checker.check(entries) if p.severity == "error")
    t_prev = best(
        lambda: preview(
            entries, plan, None, checker=checker, tokens_before=sum(toks), errors_before=errs
        )
    )
    t_cost = best(
        lambda: edit_cost(entries, plan, static_tokens=500, model="claude-sonnet-5-5", tokens=toks)
    )
    print(
        f"  edit preview of a stub mid-window ({n:,} messages): verdict {t_prev * 1000:.0f} ms · "
        f"price {t_cost * 1000:.0f} ms"
    )

    session = SimpleNamespace(
        path="bench",
        format="ctxview",
        messages=msgs,
        metas=[{"model": "claude-sonnet-5-5"} if m["role"] == "assistant" else {} for m in msgs],
        system="You are careful.",
        tools=[],
        model="claude-sonnet-5-5",
    )
    t = time.perf_counter()
    log = simulate(session, max_context_messages=200, strategy="pair-safe")
    t_sim = time.perf_counter() - t
    last = len(log.requests) - 1
    t_diff = best(lambda: diff_logged_requests(session, log, last // 2, last // 2 + 5), 1)
    print(
        f"  Requests view of {n:,} messages ({len(log.requests):,} requests, max 200): "
        f"simulate {t_sim:.2f} s · diff of two requests {t_diff:.2f} s"
    )


if __name__ == "__main__":
    main()
