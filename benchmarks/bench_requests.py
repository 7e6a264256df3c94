"""`ctxview requests --json` and `ctxview compare --json` (all strategies) on the
100,000-message session of bench_inspect.py, against `json.load` of the same file.

    python benchmarks/bench_requests.py [--messages 100000] [--keep] [--file F] [--only requests|compare]

Targets (issue 11): requests --json <= 2x json.load; compare of all strategies <= 5x.
Each is a fresh subprocess (wall time from its first line, imports included; peak RSS), best
of 3. The session is a ctxview session whose own settings say max 5000 / seed, so both replay
it under max 5000 (50,000 requests, windows up to 5,000 messages); compare checks every
request of every strategy against the protocol (rejected requests) as well.
Figures, before and after, and the machine's load: benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_inspect import make_session, measure  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--file", help="time this session file instead of generating one")
    ap.add_argument("--only", choices=("requests", "compare"), help="time one command only")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    if args.file:
        path = Path(args.file).resolve()
        args.keep = True
    else:
        path = tmp / "big_session.json"
        t0 = time.perf_counter()
        make_session(path, args.messages)
        size = path.stat().st_size
        print(
            f"generated {args.messages:,} messages, {size / 1e6:.1f} MB "
            f"in {time.perf_counter() - t0:.1f} s"
        )
    env = f"import os\nos.environ['CTXVIEW_CONFIG'] = {str(tmp / 'none.toml')!r}\n"
    base_code = f"import json\nwith open({str(path)!r}, 'rb') as f: json.load(f)"

    def cli(argv: list[str]) -> str:
        return (
            env + "import io, contextlib\nfrom ctxview.cli import main\n"
            f"buf = io.StringIO()\nwith contextlib.redirect_stdout(buf): main({argv!r})"
        )

    b = min(measure(base_code) for _ in range(3))
    print(f"json.load                      : {b[0]:.3f} s, peak RSS {b[1] / 1e6:.0f} MB")
    if args.only != "compare":
        r = min(measure(cli(["requests", str(path), "--json"])) for _ in range(3))
        print(f"requests --json                : {r[0]:.3f} s, peak RSS {r[1] / 1e6:.0f} MB")
        print(f"ratio requests / json.load = {r[0] / b[0]:.2f}x (target <= 2x)")
    if args.only != "requests":
        c = min(measure(cli(["compare", str(path), "--json"])) for _ in range(3))
        print(f"compare --json (all strategies): {c[0]:.3f} s, peak RSS {c[1] / 1e6:.0f} MB")
        print(f"ratio compare  / json.load = {c[0] / b[0]:.2f}x (target <= 5x)")
    if not args.keep:
        os.unlink(path)
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
