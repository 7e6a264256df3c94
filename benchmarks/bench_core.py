"""Adds per second: ConversationContext under each strategy against a literal port of the Java.

1,000,000 adds at max 50 and 100,000 at max 5,000 (a tenth with --quick). The literal port
rebuilds the list on every truncation, as the Java does, so its cost per add grows with max;
ConversationContext evicts from a deque, amortised O(1) per add. Also the mean window fill
(window size / max after each add) of each strategy in a tool loop at max 10: the safe
strategies stay near 1 (they give up a message only to avoid a leading tool_result),
low-water lower by design (it trims to half of max at once). And ``ConversationContext.load`` and
``save`` of the 100,000-message agent-loop session (10,000 with --quick) beside the app's open
of the same file (``sessions.open_session``): one reader, so the two should take the same time.
"""

from __future__ import annotations

import time
from typing import Any

from benchmarks.common import Bench, Figure, best, report, say, tool_loop
from ctxview.core.context import ConversationContext

STRATEGIES = ["seed", "pair-safe", "token-budget", "low-water"]


def chat(n: int) -> list[tuple[bool, Any]]:
    """User strings and assistant text blocks, alternating, added through the same calls."""
    return [
        (True, f"message {i}") if i % 2 == 0 else (False, [{"type": "text", "text": f"reply {i}"}])
        for i in range(n)
    ]


def seconds(ctx: Any, msgs: list[tuple[bool, Any]]) -> float:
    user, assistant = ctx.add_user_message, ctx.add_assistant_message
    t0 = time.perf_counter()
    for is_user, m in msgs:
        if is_user:
            user(m)
        else:
            assistant(m)
    return time.perf_counter() - t0


def literal_port(max_: int) -> Any:
    """The Java class ported line by line (kept as the reference the tests hold ours to)."""
    from benchmarks.common import test_helper

    port: Any = test_helper("java_context").LiteralJavaContext
    return port(max_)


def window_fill(max_: int = 10, n: int = 20_000) -> dict[str, float]:
    msgs = tool_loop(n)
    fills: dict[str, float] = {}
    for strategy in STRATEGIES:
        ctx = ConversationContext(max_context_messages=max_, strategy=strategy)
        total = 0.0
        for m in msgs:
            ctx.add_message(m)
            total += len(ctx) / max_
        fills[strategy] = total / len(msgs)
    return fills


def run(b: Bench) -> None:
    scale = 10 if b.quick else 1
    for n, max_ in ((1_000_000 // scale, 50), (100_000 // scale, 5_000)):
        msgs = chat(n)
        lit = seconds(literal_port(max_), msgs)
        say(f"literal port, {n:,} adds at max {max_:,}: {n / lit:,.0f} adds/s")
        for strategy in STRATEGIES:
            ctx = ConversationContext(
                max_context_messages=max_, strategy=strategy, max_context_tokens=10**9
            )
            ours = seconds(ctx, msgs)
            report(
                Figure(
                    f"adds/s at max {max_:,}, {strategy}",
                    n / ours,
                    "/s",
                    note=f"{lit / ours:.1f}× the literal port",
                )
            )
    for strategy, fill in window_fill().items():
        report(Figure(f"mean window fill at max 10, {strategy}", fill, ""))
    save_and_load(b)


def save_and_load(b: Bench) -> None:
    from ctxview.sessions import open_session

    path = b.agent_loop()
    n = f"{b.messages:,}"
    opened, _ = best(lambda: open_session(str(path)), b.runs)
    loaded, ctx = best(lambda: ConversationContext.load(path), b.runs)
    report(
        Figure(
            f"ConversationContext.load, {n} messages",
            loaded,
            "s",
            note=f"open_session {opened:.2f} s",
        )
    )
    out = b.data / "saved_by_context.json"
    saved, _ = best(lambda: ctx.save(out), b.runs)
    report(Figure(f"ConversationContext.save, {n} messages", saved, "s"))
