"""Where ``requests --json`` and ``compare`` spend their time, step by step, in one process.

Reading the file (the parse alone, as json.load, then ``load_session``), the request model
(``simulate``), the totals, the protocol check of the last window, and compare's strategies
one by one (the first includes the work shared per session). GC paused, as the commands run;
best of N per step, so the sum is close to, not equal to, a command's own time.
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Callable
from typing import Any

from benchmarks.common import Bench, Figure, best, report
from ctxview.core.protocol import check_protocol
from ctxview.core.requests import iter_compare, simulate, window_of
from ctxview.core.strategies import STRATEGIES
from ctxview.sessions import load_session


def run(b: Bench) -> None:
    path = str(b.agent_loop())
    n = b.runs

    def step(name: str, fn: Callable[[], Any], runs: int = n) -> Any:
        secs, out = best(fn, runs)
        report(Figure(name, secs, "s"))
        return out

    gc.disable()

    def parse() -> None:
        with open(path, "rb") as f:
            json.load(f)

    step("json.load of the file", parse)
    s = step("load_session (read, parse, records)", lambda: load_session(path), 1)
    log = step("simulate (the whole request model)", lambda: simulate(s))
    step("totals", log.totals)
    last = window_of(s, log, len(log.requests) - 1)
    step(
        "protocol check of the last window",
        lambda: check_protocol([s.messages[i] for i in last], s.system),
    )
    t0 = time.perf_counter()
    for row in iter_compare(s, strategies=list(STRATEGIES)):
        t1 = time.perf_counter()
        report(Figure(f"compare: {row['name']}", t1 - t0, "s"))
        t0 = t1
