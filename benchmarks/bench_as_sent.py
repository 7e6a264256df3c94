"""The TUI on a 100,000-message Claude Code transcript opened as it was sent (issue 11), and the
sidebar's cache line (the request model run in a worker) on it and on bench_inspect's session.

    python benchmarks/bench_as_sent.py [--messages 100000] [--runs 3]

Measured:
* first paint of ``ctxview FILE`` (as sent) against a bare Textual app + parsing the JSONL file
  (target, as bench_tui's: <= 2x), and of a small real transcript against a bare app;
* the cache line: the snapshot taken on the UI thread (the only part on it), the worker's
  request-model run, and the wall time from the app's start until the sidebar shows the figures;
* a max change on the as-sent session (the switch to a simulation replays in a worker): wall
  time until the simulation is installed, and the longest the UI thread was held meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_tui import BARE, CTXVIEW, wall  # noqa: E402

BARE_JSONL = (
    """
import json
with open({path!r}, "rb") as f:
    for line in f:
        json.loads(line)
"""
    + BARE
)


def make_transcript(path: Path, n: int) -> None:
    """A Claude Code transcript of ``n`` messages: tool rounds (assistant text + tool_use as one
    response, then its tool_result), each response with recorded usage and a timestamp 20 s
    after the previous one (the prompt cache stays warm)."""
    t0 = 1_767_225_600  # 2026-01-01T00:00:00Z
    parent: str | None = None
    cached = 20_000
    with path.open("w") as f:

        def write(kind: str, uuid: str, content: Any, k: int, usage: Any = None) -> None:
            msg: dict[str, Any] = {"role": kind, "content": content}
            if kind == "assistant":
                msg.update(id=f"msg_{k}", type="message", model="claude-sonnet-4-6")
                msg["usage"] = usage
            ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(t0 + 20 * k))
            rec = {
                "type": kind,
                "uuid": uuid,
                "parentUuid": parent,
                "sessionId": "s",
                "timestamp": ts,
                "message": msg,
            }
            f.write(json.dumps(rec) + "\n")

        write("user", "u-start", "Read every file and summarise it.", 0)
        parent = "u-start"
        k = 0
        count = 1
        while count < n:
            k += 1
            usage = {
                "input_tokens": 3,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 420,
                "output_tokens": 60,
            }
            cached += 420
            write(
                "assistant",
                f"a{k}",
                [
                    {"type": "text", "text": f"Reading f{k}.py next. " + "r" * 200},
                    {"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"path": f"f{k}"}},
                ],
                k,
                usage,
            )
            parent = f"a{k}"
            count += 1
            if count >= n:
                break
            write(
                "user",
                f"u{k}",
                [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "x = 1\n" * 200}],
                k,
            )
            parent = f"u{k}"
            count += 1


def cache_line(path: Path, as_sent: bool) -> dict[str, float]:
    """Seconds: the UI-thread snapshot, the worker's run, and start -> figures in the sidebar."""
    from apphelp_bench import make_app

    from ctxview.app.cacheline import session_view

    t_start = time.perf_counter()
    app = make_app(str(path), as_sent=as_sent)
    out: dict[str, float] = {}

    async def go() -> None:
        async with app.run_test(size=(140, 45)) as pilot:
            while app.model.cache_prediction is None:
                await pilot.pause(0.01)
            out["shown"] = time.perf_counter() - t_start
            out["worker"] = app.last_prediction_seconds
            t0 = time.perf_counter()
            session_view(app.model)
            out["snapshot"] = time.perf_counter() - t0
            out["requests"] = app.model.cache_prediction.requests

    asyncio.run(go())
    return out


def switch(path: Path) -> dict[str, float]:
    """A max change on the as-sent session: seconds until the simulation is installed, and the
    longest gap between two ticks of a 10 ms timer on the UI thread meanwhile."""
    from apphelp_bench import make_app

    app = make_app(str(path), as_sent=True)
    out: dict[str, float] = {}

    async def go() -> None:
        async with app.run_test(size=(140, 45)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            await app.workers.wait_for_complete()
            ticks: list[float] = []
            timer = app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
            old = app.model
            t0 = time.perf_counter()
            app.set_max(20)
            while app.model is old:
                await pilot.pause(0.005)
            out["switch"] = time.perf_counter() - t0
            timer.stop()
            gaps = [b - a for a, b in itertools.pairwise(ticks)]
            out["max_ui_gap"] = max(gaps) if gaps else float("nan")
            out["window"] = len(app.model.context)

    asyncio.run(go())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from bench_inspect import make_session

    tmp = Path(tempfile.mkdtemp())
    big = tmp / "big.jsonl"
    make_transcript(big, args.messages)
    print(f"transcript: {args.messages:,} messages, {big.stat().st_size / 1e6:.1f} MB")
    small = ROOT / "tests" / "acceptance" / "claude_code"
    small = small / "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
    bare = wall(BARE, args.runs)
    bare_jsonl = wall(BARE_JSONL.format(path=str(big)), args.runs)
    small_t = wall(CTXVIEW.format(path=str(small)), args.runs)
    big_t = wall(CTXVIEW.format(path=str(big)), args.runs)
    sim_t = wall(
        CTXVIEW.replace('"--offline"', '"--offline", "--max", "20"').format(path=str(big)),
        args.runs,
    )
    print(f"bare Textual app first paint             : {bare:.3f} s")
    print(
        f"as sent, real 3.4 MB transcript          : {small_t:.3f} s  ratio {small_t / bare:.2f}x"
    )
    print(f"bare app + parsing the 100k JSONL         : {bare_jsonl:.3f} s")
    print(
        f"as sent, 100k transcript first paint      : {big_t:.3f} s  ratio "
        f"{big_t / bare_jsonl:.2f}x (target <= 2x)"
    )
    print(
        f"simulated (--max 20), 100k first paint   : {sim_t:.3f} s  ratio {sim_t / bare_jsonl:.2f}x "
        "(what opening did before)"
    )
    r = cache_line(big, as_sent=True)
    print(
        f"cache line, 100k as sent ({r['requests']:,.0f} requests): snapshot on the UI thread "
        f"{1000 * r['snapshot']:.1f} ms, worker {r['worker']:.2f} s, start -> shown "
        f"{r['shown']:.2f} s"
    )
    ses = tmp / "big_session.json"
    make_session(ses, args.messages)
    r = cache_line(ses, as_sent=False)
    print(
        f"cache line, bench_inspect 100k session, simulated ({r['requests']:,.0f} requests): "
        f"snapshot {1000 * r['snapshot']:.1f} ms, worker {r['worker']:.2f} s, start -> shown "
        f"{r['shown']:.2f} s"
    )
    s = switch(big)
    print(
        f"as sent -> simulated: seed, max 20 on 100k: {s['switch']:.2f} s until installed "
        f"(window {s['window']:,.0f}), longest UI-thread stall {1000 * s['max_ui_gap']:.0f} ms"
    )
    for p in (big, ses):
        p.unlink()
    tmp.rmdir()


if __name__ == "__main__":
    main()
