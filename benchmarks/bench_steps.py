"""Where `requests --json` spends its time, step by step, in one process (GC paused, as the
command runs; best of N per step): reading (text, parse, records), the per-message work of
the request model, the replay, writing the JSON, and compare's strategies one by one.

    python benchmarks/bench_steps.py [--file F] [--repeat 3]

Without --file the 100,000-message agent loop of bench_inspect.py is generated (91 MB). The
steps are timed apart, so their sum is close to, not equal to, the command's own time.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_inspect import make_session  # noqa: E402


def best(name: str, fn: Callable[[], Any], repeat: int) -> Any:
    times = []
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    print(f"{name:34s} {min(times):7.3f} s")
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    path = Path(args.file) if args.file else Path(tempfile.mkdtemp()) / "big_session.json"
    if not args.file:
        make_session(path, 100_000)
    f, n = str(path), args.repeat
    gc.disable()
    from ctxview.cli.requests import requests_json
    from ctxview.core import requests as rq
    from ctxview.core import requests_fast as rf
    from ctxview.core.calibrate import DEFAULT_RATES
    from ctxview.core.protocol import check_protocol
    from ctxview.core.strategies import STRATEGIES
    from ctxview.sessions import load_session
    from ctxview.sessions import readers as R

    text = best("read + decode the file", lambda: R._read_text(f), n)
    data = best("parse (json, depth-bounded)", lambda: R._parse_json(f, text), n)
    fmt = R.detect(f, "", data)
    best(f"records ({fmt} reader)", lambda: R.READERS[fmt](f, "", data), n)
    s = best("load_session (all of the above)", lambda: load_session(f), 1)
    if s.format in rq.CALIBRATED_FORMATS:  # calibrated: features per kind, then the rest
        feats = best("per-message features", lambda: rq.session_features(s), n)
        best("tokens from the features", lambda: DEFAULT_RATES.tokens_many(feats), n)
        best("roles", lambda: rf.Shared(s.messages).valid_roles(), n)
        best("request points + compaction starts", lambda: rq._layout(s), n)
        best("redundancy keys", lambda: rf.Shared(s.messages).content_keys(DEFAULT_RATES), n)
    else:  # uniform rates: one walk gives tokens, keys, roles, the unusual messages
        walked = rf.Shared(s.messages)

        def walk() -> None:
            nonlocal walked
            walked = rf.Shared(s.messages)
            walked.uniform_tokens(DEFAULT_RATES, keys=True)

        best("the walk (tokens, keys, roles)", walk, n)
        best(
            "request points + compaction starts",
            lambda: rq._layout(s, walked.roles, walked._unusual),
            n,
        )
    log = best("simulate (all of the request model)", lambda: rq.simulate(s), n)
    best("write the JSON (requests_json)", lambda: requests_json(log, s), n)
    best("totals", lambda: log.totals(), n)
    last = rq.window_of(s, log, len(log.requests) - 1)
    best(
        "protocol check of the last window",
        lambda: check_protocol([s.messages[i] for i in last], s.system),
        n,
    )
    print("compare, strategy by strategy (the first one includes the shared work):")
    t0 = time.perf_counter()
    for row in rq.iter_compare(s, strategies=list(STRATEGIES)):
        t1 = time.perf_counter()
        print(f"  {row['name']:32s} {t1 - t0:7.3f} s")
        t0 = t1
    if not args.file:
        path.unlink()


if __name__ == "__main__":
    main()
