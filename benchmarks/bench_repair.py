"""The repair engine and the request diff on 100,000-message windows, and the TUI's edit path.

A seed-truncated window with one orphaned tool_result at its start (the usual break); the
same window with 1% of its results orphaned (many fixes: repair re-checks after each batch of
block drops, with the memoised checker); a diff of two requests that differ by an eviction at
the front, and of two identical ones (the longest walk of the cache prefix); then the TUI's
path on a request body holding the window: the model's first check, ``r``'s plan with the warm
checker, applying it, a stub's preview, and undo; and ``r`` on a call nothing answers in the
middle of the window (the fix inserts a message: the session is rebuilt with it,
``ctxview.sessions.inserts``).
"""

from __future__ import annotations

import copy
import json
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Bench, Figure, best, report, rounds_loop
from ctxview.core.diff import diff_requests
from ctxview.core.edits import preview, repair_plan, stub_plan
from ctxview.core.protocol import ProtocolChecker, check_protocol
from ctxview.core.repair import repair
from ctxview.sessions import load_session, replay


def edit_path(window: list[dict[str, Any]], path: Path) -> dict[str, float]:
    from ctxview.app.model import SessionModel

    path.write_text(json.dumps({"model": "m", "max_tokens": 1, "messages": window}))
    model = SessionModel(replay(load_session(str(path))), None, "m")
    out: dict[str, float] = {}
    t0 = time.perf_counter()
    assert model.error_ids() == [1]
    out["first protocol check"] = time.perf_counter() - t0
    ctx = model.context
    t0 = time.perf_counter()
    plan = repair_plan(ctx.entries(), model.system, only=1, checker=model.checker)
    out["r: the plan (warm checker)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for mid, new in plan.changes.items():
        if new is None:
            ctx.remove_message(mid)
        else:
            ctx.replace_message(mid, new)
    model.after_change()
    assert model.error_ids() == []
    out["r: apply, model, re-check"] = time.perf_counter() - t0
    entries = ctx.entries()
    middle = len(entries) // 2
    t0 = time.perf_counter()
    stub = stub_plan(
        entries, entries[middle][0] + (1 if entries[middle][1]["role"] != "user" else 0)
    )
    preview(entries, stub, model.system, checker=model.checker, tokens_before=0)
    out["stub preview (warm checker)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    ctx.readmit_message(1, window[1])
    model.after_change()
    assert model.error_ids() == [1]
    out["undo, model, re-check"] = time.perf_counter() - t0
    return out


def insert_path(window: list[dict[str, Any]], path: Path) -> dict[str, float]:
    """``r`` on a call whose results a system turn replaced, mid-window: the plan, then the
    session rebuilt with the answer in its history and its model."""
    from ctxview.app.model import SessionModel
    from ctxview.sessions.inserts import with_inserts

    msgs = list(window)
    mid = next(
        k
        for k in range(len(msgs) // 2, len(msgs))
        if msgs[k]["role"] == "user" and msgs[k]["content"][0].get("type") == "tool_result"
    )
    msgs[mid] = {"role": "system", "content": "the tool was interrupted"}
    path.write_text(json.dumps({"model": "m", "max_tokens": 1, "messages": msgs}))
    model = SessionModel(replay(load_session(str(path)), as_sent=True), None, "m")
    assert model.error_ids() == [1, mid - 1]
    out: dict[str, float] = {}
    ctx = model.context
    t0 = time.perf_counter()
    plan = repair_plan(ctx.entries(), model.system, only=mid - 1, checker=model.checker)
    out["r on a call before a system turn: the plan"] = time.perf_counter() - t0
    assert list(plan.inserts) == [mid]
    t0 = time.perf_counter()
    done = with_inserts(model.replay, plan.inserts)
    new = SessionModel(done.session, None, "m")
    assert new.error_ids() == [1]
    out["r: the session rebuilt with the new message, model, check"] = time.perf_counter() - t0
    return out


def run(b: Bench) -> None:
    n = b.messages
    full = rounds_loop(n + 2, result="ok " * 50, tool="f")
    window = [full[0], *full[2:]]  # the seed cut: an orphaned result at position 1
    t_check, _ = best(lambda: check_protocol(window))
    t_one, r = best(lambda: repair(window))
    assert r.valid and len(r.fixes) == 1
    ids = list(range(len(window)))
    warm = []
    for _ in range(3):  # the TUI's r: the model's checker has just checked the window
        checker = ProtocolChecker()
        checker.check(list(zip(ids, window, strict=True)))
        t0 = time.perf_counter()
        repair(window, keys=ids, checker=checker)
        warm.append(time.perf_counter() - t0)
    many = copy.deepcopy(window)
    k = 0
    for m in many:
        c = m["content"]
        if isinstance(c, list) and c and c[0].get("type") == "tool_result":
            k += 1
            if k % 100 == 0:
                c[0]["tool_use_id"] = "gone"
    t_many, rm = best(lambda: repair(many), 1)
    assert rm.valid
    a = {"model": "m", "max_tokens": 1, "messages": full[:n]}
    c = {"model": "m", "max_tokens": 1, "messages": [full[0], *full[5 : n + 2]]}
    t_diff, _ = best(lambda: diff_requests(a, c))
    t_same, _ = best(lambda: diff_requests(a, a))
    w = f"{len(window):,}-message window"
    report(Figure(f"check_protocol, {w}", t_check * 1000, "ms"))
    report(Figure(f"repair, one orphaned pair, {w}", t_one * 1000, "ms"))
    report(Figure("the same with a warm checker (the TUI's r)", min(warm) * 1000, "ms"))
    report(Figure(f"repair, 1% of results orphaned ({len(rm.fixes):,} fixes)", t_many * 1000, "ms"))
    report(Figure("diff, an eviction at the front", t_diff * 1000, "ms"))
    report(Figure("diff, identical requests", t_same * 1000, "ms"))
    for name, secs in edit_path(window, b.data / "repair_request.json").items():
        report(Figure(f"TUI edit path: {name}", secs * 1000, "ms"))
    for name, secs in insert_path(window, b.data / "repair_insert.json").items():
        report(Figure(f"TUI edit path: {name}", secs * 1000, "ms"))
