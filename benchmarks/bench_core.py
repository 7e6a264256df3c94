"""Adds per second: ConversationContext (each strategy) against a literal port of the Java.

    python benchmarks/bench_core.py            # 1,000,000 adds at max 50; 100,000 at max 5,000
    python benchmarks/bench_core.py --quick    # a tenth of that

It also reports the mean window fill (window size / max after each add) of each strategy in a
tool loop at max 10: the safe strategies stay near 1 (they only give up a message to avoid a
leading tool_result), low-water lower by design (it trims to half of max at once).

The literal port rebuilds the list on every truncation (as the Java does), so its cost per add
grows with max; ConversationContext evicts from a deque, amortised O(1) per add.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxview.core.context import ConversationContext
from ctxview.core.reference import LiteralJavaContext

STRATEGIES = ["seed", "pair-safe", "token-budget", "low-water"]


def messages(n: int) -> list[tuple[bool, Any]]:
    """A chat: user strings and assistant text blocks, alternating. Both sides add them through
    ``add_user_message`` / ``add_assistant_message`` with the same block conversion."""
    return [
        (True, f"message {i}") if i % 2 == 0 else (False, [{"type": "text", "text": f"reply {i}"}])
        for i in range(n)
    ]


def time_ours(msgs: list[tuple[bool, Any]], max_: int, strategy: str) -> float:
    ctx = ConversationContext(
        max_context_messages=max_, strategy=strategy, max_context_tokens=10**9
    )
    user, assistant = ctx.add_user_message, ctx.add_assistant_message
    t0 = time.perf_counter()
    for is_user, m in msgs:
        if is_user:
            user(m)
        else:
            assistant(m)
    return time.perf_counter() - t0


def time_literal(msgs: list[tuple[bool, Any]], max_: int) -> float:
    ctx = LiteralJavaContext(max_)
    user, assistant = ctx.add_user_message, ctx.add_assistant_message
    t0 = time.perf_counter()
    for is_user, m in msgs:
        if is_user:
            user(m)
        else:
            assistant(m)
    return time.perf_counter() - t0


def window_fill(max_: int = 10, n: int = 20_000) -> dict[str, float]:
    """Mean window fill (window size / max after each add) per strategy in a tool loop."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))
    from agentgen import agent_loop

    msgs = agent_loop([[1, 2, 1, 3]] * (n // 10), seed=1)[:n]
    fills: dict[str, float] = {}
    for strategy in STRATEGIES:
        ctx = ConversationContext(max_context_messages=max_, strategy=strategy)
        total = 0.0
        for m in msgs:
            ctx.add_message(m)
            total += len(ctx) / max_
        fills[strategy] = total / len(msgs)
    return fills


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    scale = 10 if args.quick else 1
    cases = [(1_000_000 // scale, 50), (100_000 // scale, 5_000)]
    print(f"{'adds':>9} {'max':>6} {'strategy':<13} {'ours s':>8} {'literal s':>9} {'ratio':>7}")
    for n, max_ in cases:
        msgs = messages(n)
        lit = time_literal(msgs, max_)
        for strategy in STRATEGIES:
            ours = time_ours(msgs, max_, strategy)
            print(f"{n:>9,} {max_:>6,} {strategy:<13} {ours:>8.3f} {lit:>9.3f} {lit / ours:>6.1f}x")
    print("\nmean window fill (window/max) in a tool loop at max 10:")
    for strategy, fill in window_fill().items():
        print(f"  {strategy:<13} {fill:.3f}")


if __name__ == "__main__":
    main()
