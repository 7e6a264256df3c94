"""Instructions executed (valgrind's cachegrind, ``I refs``) by json.load and by whole ctxview
commands on one file: a count that does not move with the machine's speed, unlike wall time
on a shared box (rounds of the same command differ by ±30% there). It counts work, not
waiting: memory stalls (json.load's allocations) do not show, so the ratios are higher than
the wall-time ones; use it to tell whether a change did less work, and wall time
(``bench_rounds.py --whole``) for the targets.

    python benchmarks/bench_instructions.py [--file F] [--commands requests,compare,inspect]
                                            [--tree DIR]

Needs ``valgrind`` (``apt-get install valgrind``); each command runs ~50× slower under it (the
91 MB file: about a minute for json.load, three for ``requests``). ``--tree`` measures another
checkout's ctxview (``PYTHONPATH``), e.g. the tree before a change, beside this one.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_inspect import make_session  # noqa: E402

_IREFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def instructions(argv: list[str], tree: Path, env: dict[str, str]) -> int:
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
        env={**env, "PYTHONPATH": str(tree)},
        cwd=tempfile.gettempdir(),
        check=False,
    )
    found = _IREFS.search(out.stderr)
    if found is None:
        raise SystemExit(f"no instruction count from valgrind:\n{out.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--file")
    ap.add_argument("--commands", default="requests")
    ap.add_argument("--tree", action="append", default=[], help="another checkout to measure")
    args = ap.parse_args()
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (apt-get install valgrind)")
    path = Path(args.file).resolve() if args.file else Path(tempfile.mkdtemp()) / "big.json"
    if not args.file:
        make_session(path, 100_000)
    f = str(path)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["CTXVIEW_CONFIG"] = str(Path(tempfile.mkdtemp()) / "none.toml")
    base = instructions(
        [sys.executable, "-c", f"import json\nwith open({f!r}, 'rb') as fh: json.load(fh)"],
        ROOT,
        env,
    )
    print(f"json.load            {base:>16,}")
    for tree in [ROOT, *map(Path, args.tree)]:
        for cmd in args.commands.split(","):
            # twice: the first run may compile the tree's bytecode
            argv = [sys.executable, "-m", "ctxview", cmd, f, "--json"]
            instructions(argv, tree, env)
            n = instructions(argv, tree, env)
            print(f"{cmd:9s} {tree.name[:10]:10s} {n:>16,}  {n / base:.2f}x json.load")
    if not args.file:
        path.unlink()


if __name__ == "__main__":
    main()
