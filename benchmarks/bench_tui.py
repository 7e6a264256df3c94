"""TUI timings: first paint (small and 100,000-message sessions) and a max change at 100,000.

    python benchmarks/bench_tui.py [--messages 100000] [--runs 3]

Targets (issue 4):
* startup to a drawn timeline, small session: <= 1.5x a bare Textual app's first paint;
* with a 100,000-message session: <= 2x (bare Textual app + json.load of the file);
* a max change on 100,000 messages redrawn within 50 ms.

Each startup is a fresh interpreter run headless at 120x40 that exits as soon as the screen is
drawn (wall time of the whole process, best of N).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

BARE = """
from textual.app import App
from textual.widgets import Static

class Probe(Static):
    painted = False
    def render_line(self, y):
        strip = super().render_line(y)
        if not Probe.painted:
            Probe.painted = True
            print("PAINTED", flush=True)
            self.app.call_later(self.app.exit)
        return strip

class Bare(App):
    def compose(self):
        yield Probe("hello")

Bare().run(headless=True, size=(120, 40))
"""

BARE_JSON = (
    """
import json
with open({path!r}, "rb") as f:
    json.load(f)
"""
    + BARE
)

CTXVIEW = """
import sys
from ctxview.app.launch import launch
from ctxview.cli import build_app_parser
import ctxview.app.app as appmod
import ctxview.app.widgets.timeline as tlmod

orig_render = tlmod.Timeline.render_line
painted = []
def render_line(self, y):
    strip = orig_render(self, y)
    if not painted and strip.text.strip():
        painted.append(1)  # the first frame with a timeline row in it: exit now
        print("PAINTED", flush=True)
        self.app.call_later(self.app.exit, 0)
    return strip
tlmod.Timeline.render_line = render_line
orig_run = appmod.CtxviewApp.run
def run(self, **kw):
    return orig_run(self, headless=True, size=(120, 40))
appmod.CtxviewApp.run = run
args = build_app_parser().parse_args([{path!r}, "--offline"])
rc = launch(args)
assert painted, "timeline never drawn"
sys.exit(rc)
"""


def wall(code: str, runs: int) -> float:
    """Best-of-N seconds from spawning the interpreter to its first painted frame (the child
    prints PAINTED when the probed widget renders its first line; teardown is not counted)."""
    best = float("inf")
    env = dict(
        os.environ,
        CTXVIEW_CONFIG=str(Path(tempfile.gettempdir()) / "ctxview-bench-none.toml"),
        TEXTUAL_ANIMATIONS="none",
    )
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", code],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env=env,
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        dt = time.perf_counter() - t0
        _out, err = proc.communicate()
        if proc.returncode != 0 or "PAINTED" not in line:
            raise SystemExit(f"exit {proc.returncode}: {err[-2000:]}")
        best = min(best, dt)
    return best


def max_change(path: Path) -> dict[str, float]:
    """Milliseconds for a max change on the session: applying it (context, rows, sidebar, detail)
    and until the timeline's rows were rendered again (the next compositor frame)."""
    import asyncio

    from apphelp_bench import make_app

    import ctxview.app.widgets.timeline as tlmod

    renders: list[float] = []
    orig = tlmod.Timeline.render_line

    def render_line(self: object, y: int) -> object:
        strip = orig(self, y)  # type: ignore[arg-type]
        renders.append(time.perf_counter())
        return strip

    tlmod.Timeline.render_line = render_line  # type: ignore[method-assign]
    app = make_app(str(path))
    result: dict[str, float] = {}

    async def go() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            await app.workers.wait_for_complete()
            await pilot.pause(0.2)
            ctx = app.model.context
            n = ctx.max_context_messages
            applied, drawn = [], []
            for k in range(7):
                renders.clear()
                t0 = time.perf_counter()
                app.set_max(n - 50 * (k + 1))
                t1 = time.perf_counter()
                await pilot.pause(0.15)
                after = [t for t in renders if t >= t1]
                applied.append((t1 - t0) * 1000)
                drawn.append(
                    ((max(t for t in after if t - after[0] < 0.05)) - t0) * 1000
                    if after
                    else float("nan")
                )
            result["apply"] = sorted(applied)[len(applied) // 2]
            result["drawn"] = sorted(drawn)[len(drawn) // 2]
            renders.clear()
            t0 = time.perf_counter()
            app.set_max(10)  # thousands of evictions at once
            t1 = time.perf_counter()
            await pilot.pause(0.15)
            after = [t for t in renders if t >= t1]
            result["drastic_apply"] = (t1 - t0) * 1000
            result["drastic_drawn"] = ((max(t for t in after if t - after[0] < 0.05)) - t0) * 1000

    asyncio.run(go())
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    from bench_inspect import make_session

    tmp = Path(tempfile.mkdtemp())
    big = tmp / "big.json"
    make_session(big, args.messages)
    small = ROOT / "sample_sessions" / "agent_loop.json"
    print(
        f"big session: {args.messages:,} messages, {big.stat().st_size / 1e6:.1f} MB, window {len(json.loads(big.read_text())['window']['ids']):,}"
    )
    bare = wall(BARE, args.runs)
    bare_json = wall(BARE_JSON.format(path=str(big)), args.runs)
    small_t = wall(CTXVIEW.format(path=str(small)), args.runs)
    big_t = wall(CTXVIEW.format(path=str(big)), args.runs)
    print(f"bare Textual app first paint        : {bare:.3f} s")
    print(
        f"ctxview, small session first paint  : {small_t:.3f} s  ratio {small_t / bare:.2f}x (target <= 1.5x)"
    )
    print(f"bare app + json.load of big file    : {bare_json:.3f} s")
    print(
        f"ctxview, 100k session first paint   : {big_t:.3f} s  ratio {big_t / bare_json:.2f}x (target <= 2x)"
    )
    r = max_change(big)
    print(
        f"max change on 100k (-50, median of 7): {r['apply']:.1f} ms to apply, {r['drawn']:.1f} ms until the timeline is redrawn (target <= 50 ms)"
    )
    print(
        f"max change 5,000 -> 10 (4,990 evictions at once): {r['drastic_apply']:.1f} ms to apply, {r['drastic_drawn']:.1f} ms until redrawn"
    )
    big.unlink()
    tmp.rmdir()


if __name__ == "__main__":
    main()
