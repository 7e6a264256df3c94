"""Peak memory and time of ``inspect`` and ``requests`` on big Claude Code transcripts.

Files: the 100,000-message transcript of tool rounds (``common.write_transcript``, ~116 MB of
JSONL), and a rewound transcript of 10,000 messages: ten branches of 1,000 off its first reply,
nine of them abandoned, so their 4,500 responses are requests off the current branch, each sent
with its branch so far. Each command is a whole process (``python -m ctxview CMD FILE --json >
/dev/null``, see ``common.run_timed``); the figures are its peak RSS (the most of the rounds,
which vary little) and wall time (the best). A transcript is read a line at a time, so the
peak is the parsed session and what is built on it, not the file's bytes and text beside them.
"""

from __future__ import annotations

from pathlib import Path

from benchmarks.common import Bench, Figure, cc_line, ctxview_argv, iso, report, run_timed, say

#: (name, arguments after FILE)
COMMANDS = [("inspect --json", ["inspect", "--json"]), ("requests --json", ["requests", "--json"])]
#: peak RSS targets on the 100,000-message transcript (MB), per command
TARGET_MB = {"inspect --json": 600.0, "requests --json": 600.0}
BRANCHES = 10


def write_rewound(path: Path, n: int, branches: int = BRANCHES) -> None:
    """A transcript of ``n`` messages: a prompt and its reply, then ``branches`` branches off
    that reply (a rewind to it each time), each a prompt and tool rounds with recorded usage;
    the last branch written is the current one."""
    per = max(2, (n - 2) // branches)
    usage = {
        "input_tokens": 3,
        "cache_read_input_tokens": 20_000,
        "cache_creation_input_tokens": 400,
        "output_tokens": 60,
    }
    t = 0
    with path.open("w") as f:
        f.write(cc_line("user", "u0", None, "Read every file and summarise it.", iso(t)))
        reply = [{"type": "text", "text": "Which files first?"}]
        f.write(cc_line("assistant", "a0", "u0", reply, iso(t), message_id="m0", usage=usage))
        for b in range(branches):
            t += 20
            parent = f"b{b}-q"
            f.write(cc_line("user", parent, "a0", f"Try {b}: start from f{b}.", iso(t)))
            for k in range((per - 1) // 2):
                t += 20
                a, u = f"b{b}-a{k}", f"b{b}-u{k}"
                content = [
                    {"type": "text", "text": f"Reading f{b}_{k}.py next. " + "r" * 200},
                    {"type": "tool_use", "id": f"t{b}_{k}", "name": "Read", "input": {"k": k}},
                ]
                f.write(cc_line("assistant", a, parent, content, iso(t), message_id=a, usage=usage))
                result = [
                    {"type": "tool_result", "tool_use_id": f"t{b}_{k}", "content": "x = 1\n" * 200}
                ]
                f.write(cc_line("user", u, a, result, iso(t)))
                parent = u
            t += 20
            done = [{"type": "text", "text": f"Branch {b} done."}]
            f.write(cc_line("assistant", f"b{b}-end", parent, done, iso(t), message_id=f"b{b}-end"))


def measure(b: Bench, label: str, path: Path, targets: dict[str, float]) -> None:
    size = path.stat().st_size
    for name, args in COMMANDS:
        cmd, *flags = args
        runs = [run_timed(ctxview_argv(cmd, str(path), *flags), b.env) for _ in range(b.runs)]
        rss = max(r.peak_rss for r in runs) / 1e6
        wall = min(r.wall for r in runs)
        say(
            f"{label} ({size / 1e6:.0f} MB), {name}: peak RSS {rss:.0f} MB "
            f"({rss * 1e6 / size:.1f}× the file), {wall:.2f} s "
            f"(CPU {min(r.cpu for r in runs):.2f} s, best of {b.runs})"
        )
        report(
            Figure(
                f"{label}: {name} peak RSS",
                rss,
                "MB",
                targets.get(name),
                note=f"most of {b.runs}",
            )
        )
        report(Figure(f"{label}: {name} time", wall, "s", note=f"best of {b.runs}"))
        # (CPU time moves less than wall time with a shared machine's load)
        cpu = min(r.cpu for r in runs)
        report(Figure(f"{label}: {name} CPU time", cpu, "s", note=f"best of {b.runs}"))


def run(b: Bench) -> None:
    measure(b, "transcript", b.transcript(), TARGET_MB if not b.quick else {})
    rewound = b.data / f"{b.messages}_rewound.jsonl"
    if not rewound.exists():
        part = rewound.with_suffix(".part")
        write_rewound(part, b.messages // 10)
        part.rename(rewound)
        say(f"made {rewound.name}: {rewound.stat().st_size / 1e6:.1f} MB")
    measure(b, "rewound transcript", rewound, {})
