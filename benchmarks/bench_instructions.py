"""Instructions executed (valgrind's cachegrind, ``I refs``) by json.load and whole ctxview
commands on the agent loop: a count that does not move with the machine's speed, unlike wall
time on a shared box. It counts work, not waiting: memory stalls (json.load's allocations) do
not show, so its ratios run higher than the wall-time ones; use it to tell whether a change did
less work, and wall time (``commands``) for the targets. Needs ``valgrind``; each command runs
~50× slower under it (the 91 MB file: about a minute for json.load, three for ``requests``).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile

from benchmarks.common import Bench, Figure, ctxview_argv, json_load_argv, report

_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(argv: list[str], env: dict[str, str]) -> int:
    out = subprocess.run(
        [
            "valgrind",
            "--tool=cachegrind",
            "--cache-sim=no",
            "--cachegrind-out-file=/dev/null",
            *argv,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tempfile.gettempdir(),
        check=False,
    )
    found = _IREFS.search(out.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def run(b: Bench) -> None:
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    path = b.agent_loop()
    base = instructions(json_load_argv(path), b.env)
    report(Figure("json.load", base, ""))
    for cmd in ("requests", "compare", "inspect"):
        argv = ctxview_argv(cmd, str(path), "--json")
        instructions(argv, b.env)  # the first run may compile the bytecode
        count = instructions(argv, b.env)
        report(
            Figure(
                f"{cmd} --json / json.load, instructions",
                count / base,
                "x",
                note=f"{count:,} instructions",
            )
        )
