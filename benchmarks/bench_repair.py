"""The repair engine and the request diff on 100,000-message windows (issue 13).

    python benchmarks/bench_repair.py [--messages 100000]

Cases: a seed-truncated window with one orphaned tool_result pair at its start (the usual break);
the same window with 1% of its tool_results orphaned (many fixes: repair re-checks after each
batch of block drops, with the memoised checker); a diff of two requests that differ by an
eviction at the front (the worst case for the cache-prefix walk is no difference at all, also
measured). Best of 3, wall time in the current process.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def loop(n: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    i = 0
    while len(msgs) < n:
        msgs.append({"role": "user", "content": f"step {i}"})
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "checking"},
                    {"type": "tool_use", "id": f"t{i}", "name": "f", "input": {"p": i}},
                ],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": "ok " * 50}],
            }
        )
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
        i += 1
    return msgs[:n]


def best(fn: Any, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def edit_path(window: list[dict[str, Any]]) -> dict[str, float]:
    """The TUI's edit path on a request body holding the window (every message in it): the
    model's first check, r's plan with the warm checker, applying it through the context's edit
    API with the model following, a stub's preview, and undo."""
    from ctxview.app.model import SessionModel
    from ctxview.core.edits import preview, repair_plan, stub_plan
    from ctxview.sessions.model import LoadedSession
    from ctxview.sessions.replay import replay

    session = LoadedSession("bench.json", "request", window, [{} for _ in window])
    model = SessionModel(replay(session), None, "m")
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    assert model.error_ids() == [1]
    out["tui: first protocol check"] = time.perf_counter() - t0
    ctx = model.context
    t0 = time.perf_counter()
    plan = repair_plan(ctx.entries(), model.system, only=1, checker=model.checker)
    out["tui: r, plan (warm checker)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for mid, new in plan.changes.items():
        if new is None:
            ctx.remove_message(mid)
        else:
            ctx.replace_message(mid, new)
    model.after_change()
    assert model.error_ids() == []
    out["tui: r, apply + model + re-check"] = time.perf_counter() - t0
    entries = ctx.entries()
    target = entries[len(entries) // 2][0]
    t0 = time.perf_counter()
    stub = stub_plan(
        entries, target + (1 if entries[len(entries) // 2][1]["role"] != "user" else 0)
    )
    preview(entries, stub, model.system, checker=model.checker, tokens_before=0)
    out["tui: stub preview (warm checker)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ctx.readmit_message(1, window[1])
    model.after_change()
    assert model.error_ids() == [1]
    out["tui: undo + model + re-check"] = time.perf_counter() - t0
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    n = ap.parse_args().messages

    from ctxview.core.diff import diff_requests
    from ctxview.core.protocol import check_protocol
    from ctxview.core.repair import repair

    full = loop(n + 2)
    seed_window = [full[0], *full[2:]]  # the seed cut: an orphaned result at position 1
    t_check = best(lambda: check_protocol(seed_window))
    t_one = best(lambda: repair(seed_window))
    r = repair(seed_window)
    assert r.valid and len(r.fixes) == 1
    from ctxview.core.protocol import ProtocolChecker

    ids = list(range(len(seed_window)))

    def warm_repair() -> None:  # the TUI's r: the model's checker has just checked the window
        checker = ProtocolChecker()
        checker.check(list(zip(ids, seed_window, strict=True)))
        t0 = time.perf_counter()
        repair(seed_window, keys=ids, checker=checker)
        warm_times.append(time.perf_counter() - t0)

    warm_times: list[float] = []
    for _ in range(3):
        warm_repair()
    t_warm = min(warm_times)
    many = copy.deepcopy(seed_window)
    k = 0
    for m in many:
        c = m["content"]
        if isinstance(c, list) and c and c[0].get("type") == "tool_result":
            k += 1
            if k % 100 == 0:
                c[0]["tool_use_id"] = "gone"
    t_many = best(lambda: repair(many), runs=1)
    rm = repair(many)
    assert rm.valid
    a = {"model": "m", "max_tokens": 1, "messages": full[:n]}
    b = {"model": "m", "max_tokens": 1, "messages": [full[0], *full[5 : n + 2]]}
    t_diff = best(lambda: diff_requests(a, b))
    t_same = best(lambda: diff_requests(a, a))
    t_edit = edit_path(seed_window)
    print(f"window of {len(seed_window):,} messages")
    print(f"check_protocol (reference)          {t_check * 1000:8.0f} ms")
    print(f"repair, one orphaned pair          {t_one * 1000:8.0f} ms  (1 fix)")
    print(f"repair, same, warm checker (TUI r) {t_warm * 1000:8.0f} ms")
    print(f"repair, 1% results orphaned       {t_many * 1000:8.0f} ms  ({len(rm.fixes):,} fixes)")
    print(f"diff, eviction at the front        {t_diff * 1000:8.0f} ms")
    for k, v in t_edit.items():
        print(f"{k:<35}{v * 1000:8.0f} ms")
    print(f"diff, identical requests           {t_same * 1000:8.0f} ms")


if __name__ == "__main__":
    main()
