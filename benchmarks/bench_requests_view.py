"""The Requests view (key R) of the 100,000-message agent loop, key to first drawn row.

The app is ``ctxview FILE`` as the console script starts it, driven by Pilot (``probe.py``);
by the time of the key the sidebar's cache line has computed the session's requests in its
worker, and the view takes them when they are current (the worker's seconds are printed).
"""

from __future__ import annotations

from benchmarks.common import Bench, Figure, probe, report, say


def run(b: Bench) -> None:
    path = b.agent_loop()
    times = []
    for _ in range(b.runs):
        r = probe("requests-view", path, b.env)
        times.append(r["seconds"])
        worker = r["worker"]
        say(
            f"R to the first request row: {r['seconds']:.3f} s ({r['requests']:,} requests; the "
            f"cache line's worker took {worker:.2f} s before)"
            if worker is not None
            else f"R to the first request row: {r['seconds']:.3f} s"
        )
    report(
        Figure("Requests view: R to the first row", min(times), "s", 0.5, note=f"best of {b.runs}")
    )
