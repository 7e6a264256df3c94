"""The headless commands on 100,000 messages against ``json.load`` of the same file.

Files: the agent loop (``common.agent_loop``, ~91 MB) and a tool loop of short messages
(~39 MB), both ctxview sessions at max 5000 / seed, so every command replays 100,000 messages
and 50,000 requests with windows of up to 5,000 messages. Each command is a whole process
(``python -m ctxview CMD FILE --json > /dev/null``), timed in interleaved rounds with json.load
(see ``common.against_json_load``); the figure is the median of the rounds' ratios.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.common import Bench, Figure, against_json_load, ctxview_argv, report, say

# (name, arguments after FILE, target ratio to json.load)
AGENT_LOOP = [
    ("inspect --json", ["inspect", "--json"], 2.0),
    (
        "inspect --json --max 50 --strategy pair-safe (a full replay)",
        ["inspect", "--json", "--max", "50", "--strategy", "pair-safe"],
        3.0,
    ),
    ("requests --json", ["requests", "--json"], 2.0),
    ("compare --json (every strategy)", ["compare", "--json"], 5.0),
]
TOOL_LOOP = [("inspect --json", ["inspect", "--json"], 2.0)]


def measure(b: Bench, label: str, path: Path, cases: list[tuple[str, list[str], float]]) -> None:
    size = path.stat().st_size
    for name, args, target in cases:
        cmd, *flags = args
        r = against_json_load(ctxview_argv(cmd, str(path), *flags), path, b.env, b.rounds)
        say(
            f"{label}, {name}: {r.command.wall:.2f} s against json.load's {r.baseline.wall:.2f} s "
            f"(rounds {r.low:.2f}–{r.high:.2f}×, best/best {r.best_over_best:.2f}×), "
            f"CPU {r.command.cpu:.2f} s against {r.baseline.cpu:.2f} s, "
            f"peak RSS {r.command.peak_rss / 1e6:.0f} MB"
        )
        report(
            Figure(
                f"{label}: {name} / json.load",
                r.median,
                "x",
                target,
                note=f"median of {b.rounds} rounds",
            )
        )
        report(Figure(f"{label}: {name} / json.load, CPU time", r.cpu_median, "x"))
        if cmd == "inspect" and len(flags) == 1 and label != "tool loop":
            report(
                Figure(
                    f"{label}: inspect --json peak memory / file size",
                    r.command.peak_rss / size,
                    "x",
                    4.0,
                )
            )


def run(b: Bench) -> None:
    measure(b, b.file.name if b.file else "agent loop", b.agent_loop(), AGENT_LOOP)
    measure(b, "tool loop", b.tool_loop(), TOOL_LOOP)
