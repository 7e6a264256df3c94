"""`ctxview inspect --json` on two 100,000-message sessions against `json.load` of the same file.

    python benchmarks/bench_inspect.py [--messages 100000] [--keep]

Files: the agent loop of ``make_session`` (~1 KB tool results, ~91 MB) and a tool loop of short
messages (``make_tool_loop``: ``tests/agentgen.agent_loop``, rounds of 1-2-1 tool calls, ~39 MB),
both saved as ctxview sessions (max 5000 / seed).
Targets: issue 3, inspect time <= 3x json.load time and peak memory < 4x the file size;
issue 11, inspect --json <= 2x json.load on both files. Each figure is a fresh subprocess (wall
time from its first line, imports included, and peak RSS), best of 3. Figures and the machine's
load: benchmarks/README.md.
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


def make_tool_loop(path: Path, n: int) -> None:
    """A tool loop of short messages: user instruction, (assistant tool_use, user tool_result)
    rounds, assistant reply; saved as a ctxview session."""
    sys.path.insert(0, str(ROOT / "tests" / "support"))
    from agentgen import agent_loop

    from ctxview.core.context import ConversationContext
    from ctxview.core.transcript import Transcript
    from ctxview.sessions.store import save_session, session_document

    msgs = agent_loop([[1, 2, 1]] * (n // 8 + 1), seed=1)[:n]
    ctx = ConversationContext(max_context_messages=5000)
    tr = Transcript(ctx)
    for m in msgs:
        ctx.add_message(m)
    save_session(path, session_document(ctx, tr, model="claude-sonnet-5-5"))


def measure(code: str) -> tuple[float, int]:
    """(wall seconds, peak RSS bytes) of a fresh interpreter running code (VmHWM: ru_maxrss
    would carry the parent's high-water mark across fork+exec)."""
    wrapper = (
        "import time\nt0=time.perf_counter()\n" + code + "\nimport sys\n"
        "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM')][0].split()[1]\n"
        "print(time.perf_counter()-t0, int(hwm)*1024, file=sys.stderr)"
    )
    # as installed: with the modules' bytecode cached (a sandbox's PYTHONDONTWRITEBYTECODE would
    # make every run compile ctxview's 30,000 lines again: about 0.06 s of every command)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = subprocess.run(
        [sys.executable, "-c", wrapper], capture_output=True, text=True, cwd=ROOT, env=env
    )
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
    os.environ["CTXVIEW_CONFIG"] = str(tmp / "none.toml")  # the defaults, not the user's config
    e = min(measure("pass") for _ in range(3))
    print(f"interpreter alone : {e[0]:.3f} s, peak RSS {e[1] / 1e6:.0f} MB")
    for name, make in (("agent loop", make_session), ("short tool loop", make_tool_loop)):
        path = tmp / f"{name.replace(' ', '_')}.json"
        t0 = time.perf_counter()
        make(path, args.messages)
        size = path.stat().st_size
        print(
            f"\n{name}: {args.messages:,} messages, {size / 1e6:.1f} MB "
            f"(made in {time.perf_counter() - t0:.1f} s): {path}"
        )
        base_code = f"import json\nwith open({str(path)!r}, 'rb') as f: json.load(f)"
        insp_code = (
            "import sys, io, contextlib\nfrom ctxview.cli import main\n"
            f"buf = io.StringIO()\nwith contextlib.redirect_stdout(buf): "
            f"main(['inspect', {str(path)!r}, '--json'])"
        )
        replay_code = insp_code.replace(
            "'--json']", "'--json', '--max', '50', '--strategy', 'pair-safe']"
        )
        b = min(measure(base_code) for _ in range(3))
        i = min(measure(insp_code) for _ in range(3))
        r = min(measure(replay_code) for _ in range(3))
        print(f"json.load         : {b[0]:.3f} s, peak RSS {b[1] / 1e6:.0f} MB")
        print(f"ctxview inspect   : {i[0]:.3f} s, peak RSS {i[1] / 1e6:.0f} MB")
        print(
            f"inspect --max 50 --strategy pair-safe (a full replay): {r[0]:.3f} s, "
            f"peak RSS {r[1] / 1e6:.0f} MB"
        )
        print(
            f"time ratio  inspect / json.load = {i[0] / b[0]:.2f}x, replay {r[0] / b[0]:.2f}x  "
            "(targets: <= 3x, issue 11: inspect <= 2x)"
        )
        print(
            f"memory      inspect peak / file = {i[1] / size:.2f}x, replay {r[1] / size:.2f}x  "
            "(target < 4x)"
        )
        if not args.keep:
            path.unlink()
    if not args.keep:
        os.rmdir(tmp)


if __name__ == "__main__":
    main()
