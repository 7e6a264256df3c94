"""The context-editing strategies' sent form on a long tool loop (100,000 messages).

On a tool loop (a question, then rounds of thinking + text + tool_use and a ~1-2 KB result):
replaying it under ``pair-safe`` (max 20) and under ``clear-tool-uses`` / ``clear-thinking``
(nothing evicted; the sent form is not computed until read); the sent form computed once after
the replay; the adds with the sent form brought up to date after every add (what a chat or the
request model does: the incremental path); ``ctx.messages`` (a copy of the window as sent)
against the originals' copy; and ``simulate`` (one request per user message) under
``clear-tool-uses`` against ``pair-safe``. CPU time of this process, best of 3.
"""

from __future__ import annotations

import json
import time
from typing import Any

from benchmarks.common import Bench, Figure, best, report, say
from ctxview.core.clearing import ClearToolUses, ContextEditing
from ctxview.core.context import ConversationContext
from ctxview.core.requests import simulate
from ctxview.sessions import load_session

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


def cpu(fn: Any) -> float:
    return best(fn, 3, time.process_time)[0]


def run(b: Bench) -> None:
    msgs = tool_loop(b.messages)
    n = len(msgs)
    for strategy in ("pair-safe", "clear-tool-uses", "clear-thinking"):
        t = cpu(lambda s=strategy: replay(msgs, s))
        report(Figure(f"replay of {n:,} adds, {strategy}", t / n * 1e6, "µs/add"))
    for strategy in ("clear-tool-uses", "clear-thinking"):
        ctx = replay(msgs, strategy)
        t0 = time.process_time()
        sf = ctx.sent_form()
        once = time.process_time() - t0
        assert sf is not None
        say(f"{strategy}: {sf.cleared_units:,} cleared, ~{sf.cleared_tokens:,} tokens saved")
        report(Figure(f"{strategy}: the sent form from scratch", once * 1000, "ms"))
        t = cpu(lambda s=strategy: replay(msgs, s, every=True))
        report(Figure(f"{strategy}: adds + the sent form after every add", t / n * 1e6, "µs/add"))
        report(
            Figure(
                f"{strategy}: ctx.messages (as sent)", cpu(lambda c=ctx: c.messages) * 1000, "ms"
            )
        )
        report(
            Figure(
                f"{strategy}: the originals' copy",
                cpu(lambda c=ctx: c.original_messages) * 1000,
                "ms",
            )
        )
    path = b.data / f"clearing_{n}.json"
    path.write_text(json.dumps(msgs))  # a bare message list: one request per user message
    session = load_session(str(path))
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
        say(
            f"simulate, {strategy}: {tot['requests']:,} requests, {tot['input_tokens']:,} input tokens, hit rate {tot['hit_rate']}"
        )
        report(Figure(f"simulate, {strategy}", t, "s"))
