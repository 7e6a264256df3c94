"""`ctxview inspect` on a 100,000-message session (~100 MB) against `json.load` of the same file.

    python benchmarks/bench_inspect.py [--messages 100000] [--keep]

Targets (issue 3): inspect time <= 3x json.load time; inspect peak memory < 4x the file size.
Both are measured in fresh subprocesses (wall time and peak RSS), best of 3.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def make_session(path: Path, n: int) -> None:
    """An agent loop: user turns, tool_use rounds with ~1 KB results, replies."""
    from ctxview.core.context import ConversationContext
    from ctxview.core.transcript import Transcript
    from ctxview.sessions.store import save_session, session_document

    ctx = ConversationContext(max_context_messages=5000)
    tr = Transcript(ctx)
    filler = ("lorem ipsum dolor sit amet " * 80)[:1800]
    i = 0
    while i < n:
        if i % 4 == 0:
            ctx.add_user_message(f"step {i}: {filler[:400]}")
        elif i % 4 == 1:
            ctx.add_assistant_message(
                [
                    {"type": "text", "text": "checking"},
                    {
                        "type": "tool_use",
                        "id": f"toolu_{i}",
                        "name": "read_file",
                        "input": {"path": f"f{i}.txt"},
                    },
                ]
            )
        elif i % 4 == 2:
            ctx.add_tool_results([{"tool_use_id": f"toolu_{i - 1}", "content": filler}])
        else:
            ctx.add_assistant_message([{"type": "text", "text": f"done {i}. {filler[:300]}"}])
        i += 1
    save_session(path, session_document(ctx, tr, model="claude-sonnet-5-5"))


def measure(code: str) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of a fresh interpreter running code (VmHWM: ru_maxrss
    would carry the parent's high-water mark across fork+exec)."""
    wrapper = (
        "import time\nt0=time.perf_counter()\n" + code + "\nimport sys\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
        "print(time.perf_counter()-t0, int(hwm)*1024, file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", wrapper], capture_output=True, text=True, cwd=ROOT)
    if out.returncode not in (0, 1):
        raise SystemExit(out.stderr)
    secs, rss = out.stderr.strip().splitlines()[-1].split()
    return float(secs), int(rss)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=100_000)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    path = tmp / "big_session.json"
    t0 = time.perf_counter()
    make_session(path, args.messages)
    size = path.stat().st_size
    print(
        f"generated {args.messages:,} messages, {size / 1e6:.1f} MB in {time.perf_counter() - t0:.1f} s: {path}"
    )
    base_code = f"import json\nwith open({str(path)!r}, 'rb') as f: json.load(f)"
    insp_code = (
        "import sys, io, contextlib\nfrom ctxview.cli import main\n"
        f"buf = io.StringIO()\nwith contextlib.redirect_stdout(buf): main(['inspect', {str(path)!r}, '--json'])"
    )
    empty_code = "pass"
    replay_code = insp_code.replace(
        "'--json']", "'--json', '--max', '50', '--strategy', 'pair-safe']"
    )
    e = min(measure(empty_code) for _ in range(3))
    b = min(measure(base_code) for _ in range(3))
    i = min(measure(insp_code) for _ in range(3))
    r = min(measure(replay_code) for _ in range(3))
    print(f"interpreter alone : {e[0]:.3f} s, peak RSS {e[1] / 1e6:.0f} MB")
    print(f"json.load         : {b[0]:.3f} s, peak RSS {b[1] / 1e6:.0f} MB")
    print(f"ctxview inspect   : {i[0]:.3f} s, peak RSS {i[1] / 1e6:.0f} MB")
    print(
        f"inspect --max 50 --strategy pair-safe (a full replay): {r[0]:.3f} s, peak RSS {r[1] / 1e6:.0f} MB"
    )
    print(
        f"time ratio  inspect / json.load = {i[0] / b[0]:.2f}x, replay {r[0] / b[0]:.2f}x  (target <= 3x)"
    )
    print(
        f"memory      inspect peak / file = {i[1] / size:.2f}x, replay {r[1] / size:.2f}x  (target < 4x)"
    )
    if not args.keep:
        os.unlink(path)
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
