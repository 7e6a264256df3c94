"""A 100,000-message Claude Code transcript opened as it was sent, and the sidebar's cache line.

* first paint of ``ctxview FILE`` (as sent) against a bare Textual app that first parses the
  JSONL file, and of a small real transcript against a bare app;
* the cache line (the request model run in a worker): from the process's start until the
  sidebar shows its figures, on the transcript (as sent) and on the agent loop (simulated);
* a max key on the as-sent transcript (the switch to a simulation replays in a worker): the
  time until the simulation is installed and the longest the UI thread was held meanwhile.
"""

from __future__ import annotations

from benchmarks.common import ROOT, Bench, Figure, first_paint, probe, report, say

REAL = "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"  # 3.4 MB, from the test fixtures


def run(b: Bench) -> None:
    big = b.transcript()
    bare = first_paint(["bare"], b.env, b.runs)
    bare_jsonl = first_paint(["bare-jsonl", str(big)], b.env, b.runs)
    big_t = first_paint(["ctxview", str(big)], b.env, b.runs)
    say(
        f"bare app {bare:.3f} s; bare app + parsing the JSONL {bare_jsonl:.3f} s; "
        f"ctxview as sent {big_t:.3f} s"
    )
    report(
        Figure(
            f"first paint, {b.messages:,}-message transcript as sent / (bare app + parsing it)",
            big_t / bare_jsonl,
            "x",
            2.0,
        )
    )
    sim = first_paint(["ctxview", str(big), "--max", "20"], b.env, b.runs)
    report(Figure("the same, simulated (--max 20)", sim / bare_jsonl, "x"))
    real = next(ROOT.glob(f"tests/**/{REAL}"), None)
    if real is not None:
        t = first_paint(["ctxview", str(real)], b.env, b.runs)
        report(Figure("first paint, a real 3.4 MB transcript / bare app", t / bare, "x"))
    for label, path in (("transcript as sent", big), ("agent loop, simulated", b.agent_loop())):
        r = probe("cache-line", path, b.env)
        say(f"cache line, {label}: {r['requests']:,} requests, worker {r['worker']:.2f} s")
        report(Figure(f"cache line shown, {label} (from launch)", r["shown"] - r["started"], "s"))
    s = probe("switch", big, b.env)
    say(f"as sent -> simulated: window {s['window']:,}")
    report(Figure("as sent -> simulated: until installed", s["switch"], "s"))
    report(Figure("as sent -> simulated: longest UI-thread stall", 1000 * s["max_ui_gap"], "ms"))
