"""Timeline search (``/``) over every message of the agent loop, as the app's worker runs it.

The worker matches a chunk of messages at a time and hands the matches found so far to the app
between chunks: the figures are the whole search (a word found in one message, a word in every
tool result, ``tool:read_file``, ``is:error``) and the longest chunk, which bounds how long the
first matches wait.
"""

from __future__ import annotations

import time

from benchmarks.common import Bench, Figure, report, say
from ctxview.core.search import find, parse_query
from ctxview.sessions import load_session


def run(b: Bench) -> None:
    session = load_session(b.agent_loop())
    messages = session.messages
    say(f"searching {len(messages):,} messages")
    for text, what in (
        (f"step {len(messages) - 4}:", "a phrase in one message"),
        ("lorem", "a word in most messages"),
        ("tool:read_file", "tool:read_file"),
        ("is:error", "is:error"),
    ):
        query = parse_query(f'"{text}"' if " " in text else text)
        best = longest = float("inf")
        found = 0
        for _ in range(b.runs):
            t0 = last = time.perf_counter()
            chunk_max = 0.0
            found = 0
            for ids in find(messages, query):
                now = time.perf_counter()
                chunk_max = max(chunk_max, now - last)
                last = now
                found += len(ids)
            best = min(best, time.perf_counter() - t0)
            longest = min(longest, chunk_max)
        report(
            Figure(
                f"search {len(messages):,} messages: {what} ({found:,} found)",
                best,
                "s",
                1.0,
            )
        )
        report(Figure(f"  its longest chunk ({what})", longest * 1000, "ms", 50.0))
