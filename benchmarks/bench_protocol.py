"""The protocol check of a 5,000-message window after a live max change.

What the sidebar re-runs: the checker memoises per merged turn, so after the window moved by 50 messages most
turns are cache hits; a cold check of the same window beside it.
"""

from __future__ import annotations

import statistics
import time

from benchmarks.common import Bench, Figure, report, tool_loop
from ctxview.core.context import ConversationContext
from ctxview.core.protocol import ProtocolChecker


def run(b: Bench, window: int = 5000) -> None:
    ctx = ConversationContext(max_context_messages=window)
    for m in tool_loop(window * 2):
        ctx.add_message(m)
    checker = ProtocolChecker()
    t0 = time.perf_counter()
    checker.check(ctx.entries())
    cold = time.perf_counter() - t0
    times = []
    for k in range(7):
        ctx.max_context_messages = window - 50 * (k + 1)
        t0 = time.perf_counter()
        checker.check(ctx.entries())
        times.append(time.perf_counter() - t0)
    report(Figure(f"protocol check of {window:,} messages, cold", cold * 1000, "ms"))
    report(
        Figure(
            "the same after a max change of -50 (median of 7)",
            statistics.median(times) * 1000,
            "ms",
        )
    )
