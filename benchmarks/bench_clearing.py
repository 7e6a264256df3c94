"""The context-editing strategies' sent form (issue 11) on a long tool loop.

    python benchmarks/bench_clearing.py                 # 100,000 messages
    python benchmarks/bench_clearing.py --messages 20000

Measures, on a tool loop of N messages (user question, then rounds of assistant tool_use + user
tool_result, results of ~1-2k characters):

* replaying the loop (N adds) under ``pair-safe`` (max 20) and under ``clear-tool-uses`` /
  ``clear-thinking`` (nothing evicted; the sent form is not computed until read);
* the sent form computed once, from scratch, after the replay;
* N adds with the sent form brought up to date after every add (what a chat or the request
  model does): the incremental path, amortised per add;
* ``ctx.messages`` (a deep copy of the window as sent) against the originals' copy;
* ``simulate`` (the request model, one request per user message) under ``clear-tool-uses``
  against ``pair-safe``.

Best of 3; CPU time of this process (``time.process_time``: the machine may be shared).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ctxview.core.clearing import ClearToolUses, ContextEditing
from ctxview.core.context import ConversationContext
from ctxview.core.requests import simulate
from ctxview.sessions.model import LoadedSession

EDITING = ContextEditing(ClearToolUses(trigger=20_000, keep=3))


def tool_loop(n: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    k = 0
    while len(msgs) < n:
        if k % 10 == 0 and (not msgs or msgs[-1]["role"] == "user"):
            msgs.append({"role": "user", "content": f"question {len(msgs)}"})
            if len(msgs) > 1:  # a question after tool results: the turn ends with a text reply
                msgs.insert(-1, {"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        tid = f"toolu_{k:07d}"
        k += 1
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "let me look " * 8, "signature": "sig"},
                    {"type": "text", "text": "reading"},
                    {"type": "tool_use", "id": tid, "name": "read_file", "input": {"path": "a"}},
                ],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": tid,
                        "content": "line of output\n" * (60 + k % 60),
                    }
                ],
            }
        )
    msgs = msgs[:n]
    while msgs[-1]["role"] == "assistant":  # end on a tool result or a question
        msgs.pop()
    return msgs


def best(fn: Any, runs: int = 3) -> float:
    out = []
    for _ in range(runs):
        t0 = time.process_time()
        fn()
        out.append(time.process_time() - t0)
    return min(out)


def replay(msgs: list[dict[str, Any]], strategy: str, every: bool = False) -> ConversationContext:
    ctx = ConversationContext(20, strategy=strategy, context_editing=EDITING)
    add = ctx.add_message
    if every:
        sent = ctx.sent_form
        for m in msgs:
            add(m, copy=False)
            sent()
    else:
        for m in msgs:
            add(m, copy=False)
    return ctx


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    args = ap.parse_args()
    msgs = tool_loop(args.messages)
    n = len(msgs)
    print(f"tool loop: {n:,} messages")
    for strategy in ("pair-safe", "clear-tool-uses", "clear-thinking"):
        t = best(lambda s=strategy: replay(msgs, s))  # type: ignore[misc]
        print(f"  replay, {strategy:<16} {t * 1000:8.1f} ms  ({t / n * 1e6:.2f} µs/add)")
    for strategy in ("clear-tool-uses", "clear-thinking"):
        ctx = replay(msgs, strategy)
        t0 = time.process_time()
        sf = ctx.sent_form()
        t_once = time.process_time() - t0
        assert sf is not None
        print(
            f"  {strategy}: sent form from scratch {t_once * 1000:.1f} ms "
            f"({sf.cleared_units:,} cleared, ~{sf.cleared_tokens:,} tokens saved)"
        )
        t = best(lambda s=strategy: replay(msgs, s, every=True))  # type: ignore[misc]
        print(
            f"  {strategy}: adds + sent form after every add {t * 1000:.1f} ms "
            f"({t / n * 1e6:.2f} µs/add)"
        )
        t_sent = best(lambda c=ctx: c.messages)  # type: ignore[misc]
        t_orig = best(lambda c=ctx: c.original_messages)  # type: ignore[misc]
        print(
            f"  {strategy}: ctx.messages (as sent) {t_sent * 1000:.1f} ms, "
            f"originals {t_orig * 1000:.1f} ms"
        )
    session = LoadedSession(
        path="bench", format="messages", messages=msgs, metas=[{} for _ in msgs], model=None
    )
    for strategy in ("pair-safe", "clear-tool-uses"):
        t0 = time.process_time()
        log = simulate(
            session,
            strategy=strategy,
            max_context_messages=20,
            context_editing=EDITING,
            redundancy=False,
        )
        t = time.process_time() - t0
        tot = log.totals()
        print(
            f"  simulate, {strategy:<16} {t:6.2f} s  {tot['requests']:,} requests, "
            f"{tot['input_tokens']:,} input tokens, hit rate {tot['hit_rate']}"
        )


if __name__ == "__main__":
    main()
