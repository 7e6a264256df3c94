"""Interleaved rounds: json.load, `requests --json`, `compare --json` (and optionally `inspect
--json`) on one file, each a fresh interpreter, N rounds; each command's ratio is taken against
the json.load of its own round, so a machine whose speed drifts during the run (a shared box)
moves both sides of every ratio alike. Wall time and CPU time (``time.process_time``: what the
process itself used, less moved by other work on the box) are both reported, with the ratio of
the best runs (min/min) beside the median of the per-round ratios.

    python benchmarks/bench_rounds.py [--rounds 5] [--file F] [--commands json,req,cmp,ins]
                                      [--whole]

By default each command is timed inside its interpreter (imports included, `main()` called from
Python, so what it built is freed before the clock stops). ``--whole`` times whole processes
from the parent, as a user's shell does: ``python -m ctxview CMD F --json > /dev/null`` against
``python -c "json.load(...)"`` (interpreter start and exit included on both sides; the console
script exits without freeing the loaded session: ``cli.run``).

Without --file the 100,000-message agent loop of bench_inspect.py is generated (91 MB).
Bytecode is cached, as an installed ctxview's is.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_inspect import make_session  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--file")
    ap.add_argument("--commands", default="json,req,cmp")
    ap.add_argument("--whole", action="store_true", help="time whole processes from the parent")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    path = Path(args.file).resolve() if args.file else tmp / "big_session.json"
    if not args.file:
        make_session(path, 100_000)
    f = str(path)
    cli = "import io, contextlib\nfrom ctxview.cli import main\nbuf = io.StringIO()\n"
    codes = {
        "json": f"import json\nwith open({f!r}, 'rb') as fh: json.load(fh)",
        "req": cli + f"with contextlib.redirect_stdout(buf): main(['requests', {f!r}, '--json'])",
        "cmp": cli + f"with contextlib.redirect_stdout(buf): main(['compare', {f!r}, '--json'])",
        "ins": cli + f"with contextlib.redirect_stdout(buf): main(['inspect', {f!r}, '--json'])",
    }
    which = args.commands.split(",")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["CTXVIEW_CONFIG"] = str(tmp / "none.toml")  # the defaults, not the user's config
    res: dict[str, list[float]] = {k: [] for k in which}
    cpus: dict[str, list[float]] = {k: [] for k in which}
    argvs = {
        "json": [sys.executable, "-c", codes["json"]],
        "req": [sys.executable, "-m", "ctxview", "requests", f, "--json"],
        "cmp": [sys.executable, "-m", "ctxview", "compare", f, "--json"],
        "ins": [sys.executable, "-m", "ctxview", "inspect", f, "--json"],
    }
    for _ in range(args.rounds):
        for k in which:
            if args.whole:
                r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                t0 = time.perf_counter()
                subprocess.run(argvs[k], stdout=subprocess.DEVNULL, env=env, cwd=ROOT)
                res[k].append(time.perf_counter() - t0)
                r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpus[k].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
                continue
            code = (
                "import time\nt0 = time.perf_counter()\nc0 = time.process_time()\n"
                + codes[k]
                + "\nimport sys\nprint(time.perf_counter() - t0, time.process_time() - c0,"
                " file=sys.stderr)"
            )
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT
            )
            wall, cpu = out.stderr.strip().splitlines()[-1].split()
            res[k].append(float(wall))
            cpus[k].append(float(cpu))
    for label, table in (("wall", res), ("cpu", cpus)):
        base = table.get("json")
        for k, v in table.items():
            line = f"{label} {k:5s}: min {min(v):.3f} s, median {statistics.median(v):.3f} s"
            if base and k != "json":
                ratios = [a / b for a, b in zip(v, base, strict=True)]
                line += (
                    f"; ratio to the round's json.load: median {statistics.median(ratios):.2f}x "
                    f"(range {min(ratios):.2f}-{max(ratios):.2f}x; min/min {min(v) / min(base):.2f}x)"
                )
            print(line)
    if not args.file:
        path.unlink()


if __name__ == "__main__":
    main()
