"""Pins, the edit preview and the Requests-view diff on 100,000 messages.

* adds per second of a tool loop at max 50 under each strategy, without pins and with 20
  pinned tool pairs held in the window (eviction skips them: still amortised O(1) per add);
* pin and unpin of one message in a 100,000-message window (O(window): a user's action);
* the edit preview of a stub in the middle of that window: the protocol verdict after it
  (``core.edits.preview`` with the memoised checker the TUI uses) and its price over the next
  request (``core.edits.edit_cost``);
* the diff of two requests of the session in the Requests view (``diff_logged_requests``:
  one replay keeping both windows, then the diff).
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

from benchmarks.common import MODEL, Bench, Figure, best, report, rounds_loop
from ctxview.core.context import ConversationContext
from ctxview.core.diff import diff_logged_requests
from ctxview.core.edits import edit_cost, preview, stub_plan
from ctxview.core.protocol import ProtocolChecker
from ctxview.core.requests import simulate
from ctxview.core.tokens import estimate_message

STRATEGIES = ["seed", "pair-safe", "token-budget", "low-water"]


def adds_per_second(msgs: list[dict[str, Any]], strategy: str, pins: int) -> float:
    def run() -> None:
        ctx = ConversationContext(max_context_messages=50, strategy=strategy)
        add = ctx.add_message
        every = max(1, len(msgs) // (pins + 1)) if pins else 0
        for k, m in enumerate(msgs):
            mid = add(m, copy=False)
            if every and k % every == 1 and k // every < pins and m["role"] == "assistant":
                ctx.pin(mid)

    return len(msgs) / best(run)[0]


def run(b: Bench) -> None:
    n = b.messages
    msgs = rounds_loop(n)
    for s in STRATEGIES:
        report(Figure(f"adds/s at max 50, {s}, no pins", adds_per_second(msgs, s, 0), "/s"))
        report(
            Figure(f"adds/s at max 50, {s}, 20 pinned pairs", adds_per_second(msgs, s, 20), "/s")
        )

    ctx = ConversationContext(max_context_messages=n + 1)
    for m in msgs:
        ctx.add_message(m, copy=False)
    mid = n // 2 + 1 if msgs[n // 2 + 1]["role"] == "assistant" else n // 2
    t_pin, _ = best(lambda: (ctx.pin(mid), ctx.unpin(mid)))
    report(Figure(f"pin + unpin in a {n:,}-message window", t_pin * 1000, "ms"))

    entries = ctx.entries()
    checker = ProtocolChecker()
    checker.check(entries)  # the TUI's checker is warm (memoised on ids)
    toks = [estimate_message(m) for _, m in entries]
    target = next(i for i, m in entries[n // 2 :] if m["role"] == "user" and i % 4 == 2)
    plan = stub_plan(entries, target)
    errs = sum(1 for p in checker.check(entries) if p.severity == "error")
    t_prev, _ = best(
        lambda: preview(
            entries, plan, None, checker=checker, tokens_before=sum(toks), errors_before=errs
        )
    )
    t_cost, _ = best(lambda: edit_cost(entries, plan, static_tokens=500, model=MODEL, tokens=toks))
    report(Figure("stub preview mid-window: the verdict", t_prev * 1000, "ms"))
    report(Figure("stub preview mid-window: the price", t_cost * 1000, "ms"))

    session = SimpleNamespace(
        path="bench",
        format="ctxview",
        messages=msgs,
        metas=[{"model": MODEL} if m["role"] == "assistant" else {} for m in msgs],
        system="You are careful.",
        tools=[],
        model=MODEL,
    )
    t = time.perf_counter()
    log = simulate(session, max_context_messages=200, strategy="pair-safe")
    t_sim = time.perf_counter() - t
    last = len(log.requests) - 1
    t_diff, _ = best(lambda: diff_logged_requests(session, log, last // 2, last // 2 + 5), 1)
    report(Figure(f"simulate {len(log.requests):,} requests (max 200, pair-safe)", t_sim, "s"))
    report(Figure("Requests view: diff of two requests", t_diff, "s"))
