"""Run the benchmarks and print each figure beside its target.

    python -m benchmarks                  # every benchmark at full size (100,000 messages)
    python -m benchmarks --quick          # 10,000 messages, one run each: does it all work?
    python -m benchmarks --only commands,tui
    python -m benchmarks --list

Each benchmark runs in a fresh interpreter (one cannot slow the next through memory or GC
state), sharing the generated files of the run. See benchmarks/README.md for what each figure
means.
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import (
    ELSEWHERE,
    FIGURE_PREFIX,
    Bench,
    Figure,
    bench_env,
    measured_ctxview,
    use_bench_env,
)

# name -> whether a plain run includes it (the others are tools to run with --only)
BENCHMARKS = {
    "commands": True,
    "requests_view": True,
    "tui": True,
    "as_sent": True,
    "core": True,
    "protocol": True,
    "openai_rules": True,
    "edit": True,
    "repair": True,
    "clearing": True,
    "ledger_rewind": True,
    "follow": True,
    "sessions": True,
    "proxy": True,
    "search": True,
    "report": True,
    "redact": True,
    "fleet": True,
    "memory": True,
    "steps": False,
    "instructions": False,
}


def loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def about(name: str) -> str:
    doc = importlib.import_module(f"benchmarks.bench_{name}").__doc__ or ""
    return doc.strip().splitlines()[0]


def child(name: str, b: Bench, tree: Path | None) -> None:
    use_bench_env(b.data, tree)
    module = importlib.import_module(f"benchmarks.bench_{name}")
    module.run(b)


def parent(args: argparse.Namespace) -> int:
    names = args.only.split(",") if args.only else [n for n, on in BENCHMARKS.items() if on]
    unknown = [n for n in names if n not in BENCHMARKS]
    if unknown:
        print(f"unknown benchmark: {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    data = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="ctxview-bench-"))
    data.mkdir(parents=True, exist_ok=True)
    tree = Path(args.tree) if args.tree else None
    env = bench_env(data, tree)
    size = "10,000" if args.quick else "100,000"
    print(
        f"ctxview benchmarks: {size} messages, {args.rounds} rounds; "
        f"load average {loadavg()}; {os.cpu_count()} CPUs; "
        f"Python {sys.version.split()[0]}"
    )
    print(f"measuring {measured_ctxview(env, ELSEWHERE)}")
    figures: list[tuple[str, Figure]] = []
    failed: list[str] = []
    t_all = time.perf_counter()
    for name in names:
        print(f"\n== {name}: {about(name)}", flush=True)
        argv = [
            sys.executable,
            "-m",
            "benchmarks",
            "--child",
            name,
            "--data",
            str(data),
            "--rounds",
            str(args.rounds),
        ]
        if args.quick:
            argv.append("--quick")
        if args.file:
            argv += ["--file", str(Path(args.file).resolve())]
        if tree is not None:
            argv += ["--tree", str(tree.resolve())]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, cwd=ELSEWHERE, env=env)
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(FIGURE_PREFIX):
                fig = Figure.from_json(line[len(FIGURE_PREFIX) :])
                figures.append((name, fig))
                verdict = "" if args.quick else f": {fig.verdict}"
                print(
                    f"  {fig.name}: {fig.shown()}"
                    + (f"  (target {fig.target_shown()}{verdict})" if fig.target else "")
                    + (f"  [{fig.note}]" if fig.note else ""),
                    flush=True,
                )
            else:
                print(line, end="", flush=True)
        if proc.wait() != 0:
            failed.append(name)
            print(f"  ** {name} failed (exit {proc.returncode})", flush=True)
        print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    print(f"\n== figures ({time.perf_counter() - t_all:.0f} s; load average now {loadavg()})\n")
    width = max((len(f.name) for _, f in figures), default=10)
    print(f"{'benchmark':<14} {'figure':<{width}} {'today':>12}  {'target':<10} ")
    for name, f in figures:
        verdict = "" if args.quick else f.verdict
        print(f"{name:<14} {f.name:<{width}} {f.shown():>12}  {f.target_shown():<10} {verdict}")
    if args.quick:
        print(
            "\n--quick: the targets are set for 100,000 messages; on the small files the start of"
            " the interpreter weighs more, so the ratios run higher. No verdicts."
        )
    missed = [f for _, f in figures if f.verdict == "MISSED" and not args.quick]
    print(
        f"\n{len(figures)} figures, {sum(1 for _, f in figures if f.target)} with a target, "
        f"{len(missed)} missed" + (f"; failed: {', '.join(failed)}" if failed else "")
    )
    if args.data is None and not args.keep:
        shutil.rmtree(data, ignore_errors=True)
    elif args.keep:
        print(f"files kept in {data}")
    return 1 if failed else 0


def main() -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10,000 messages, one run of each")
    ap.add_argument("--only", metavar="NAME[,NAME]", help="these benchmarks only (see --list)")
    ap.add_argument("--list", action="store_true", help="the benchmarks, and what each measures")
    ap.add_argument(
        "--file", help="measure this ctxview session instead of the generated agent loop"
    )
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="interleaved rounds of each command against json.load (default 3)",
    )
    ap.add_argument("--data", help="make (and keep) the generated files here")
    ap.add_argument("--keep", action="store_true", help="keep the generated files")
    ap.add_argument(
        "--tree",
        help="measure the ctxview of another checkout (the code before a change) with these benchmarks",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.list:
        for name, on in BENCHMARKS.items():
            print(f"{name:<14} {about(name)}" + ("" if on else "  (only with --only)"))
        return 0
    if args.child:
        b = Bench(
            quick=args.quick,
            data=Path(args.data),
            file=Path(args.file) if args.file else None,
            rounds=args.rounds,
        )
        tree = Path(args.tree) if args.tree else None
        b.env = bench_env(b.data, tree)
        child(args.child, b, tree)
        return 0
    return parent(args)


if __name__ == "__main__":
    sys.exit(main())
