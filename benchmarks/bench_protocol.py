"""The protocol check of a big window after a live max change (what the sidebar re-runs).

    python benchmarks/bench_protocol.py [--window 5000]

The checker merges same-role turns as the API does (issue 8) and memoises per turn; the figure
to keep is the time per check after the window moved by 50 messages (most turns are cache hits),
beside a cold check of the same window.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from agentgen import agent_loop  # noqa: E402

from ctxview import ConversationContext  # noqa: E402
from ctxview.core.protocol import ProtocolChecker  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--window", type=int, default=5000)
    args = ap.parse_args()
    msgs = agent_loop([[1, 2, 1]] * (args.window // 3), seed=1)[: args.window * 2]
    ctx = ConversationContext(max_context_messages=args.window)
    for m in msgs:
        ctx.add_message(m)
    checker = ProtocolChecker()
    t0 = time.perf_counter()
    checker.check(ctx.entries())
    cold = time.perf_counter() - t0
    times = []
    for k in range(7):
        ctx.max_context_messages = args.window - 50 * (k + 1)
        t0 = time.perf_counter()
        checker.check(ctx.entries())
        times.append(time.perf_counter() - t0)
    print(f"window {args.window:,} messages: cold check {cold * 1000:.1f} ms")
    print(f"after a max change of -50 (median of 7): {statistics.median(times) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
