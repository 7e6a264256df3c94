"""The TUI: first paint of a small and a 100,000-message session, and a max change at 100,000.

First paint is a fresh ``ctxview FILE`` process run headless at 120x40, from its spawn to the
first frame that draws a timeline row (``probe.py``), best of N; a bare Textual app (one
Static) is timed the same way, and with ``json.load`` of the big file before it. The max
change runs in the app under Pilot: the time to apply it and until the timeline is drawn again.
"""

from __future__ import annotations

from benchmarks.common import ROOT, Bench, Figure, first_paint, probe, report, say


def run(b: Bench) -> None:
    big = b.agent_loop()
    small = ROOT / "sample_sessions" / "agent_loop.json"
    bare = first_paint(["bare"], b.env, b.runs)
    small_t = first_paint(["ctxview", str(small)], b.env, b.runs)
    bare_json = first_paint(["bare-json", str(big)], b.env, b.runs)
    big_t = first_paint(["ctxview", str(big)], b.env, b.runs)
    say(
        f"bare Textual app {bare:.3f} s; ctxview on sample_sessions/agent_loop.json {small_t:.3f} s"
    )
    say(f"bare app + json.load of the big file {bare_json:.3f} s; ctxview on it {big_t:.3f} s")
    report(Figure("first paint, small session / bare Textual app", small_t / bare, "x", 1.3))
    report(
        Figure(
            f"first paint, {b.messages:,} messages / (bare app + json.load)",
            big_t / bare_json,
            "x",
            2.0,
        )
    )
    r = probe("max-change", big, b.env)
    say(
        f"max change -50 (median of 7): {r['apply']:.1f} ms to apply, {r['drawn']:.1f} ms until drawn"
    )
    report(Figure(f"max change on {b.messages:,} messages, until redrawn", r["drawn"], "ms", 50.0))
    report(
        Figure(
            "max change 4,650 -> 10 at once, until redrawn",
            r["drastic_drawn"],
            "ms",
            note=f"{r['drastic_apply']:.1f} ms to apply",
        )
    )
