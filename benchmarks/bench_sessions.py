"""ctxview sessions: list 1,000 Claude Code session files (cold: no cache; warm: cached by mtime).

Files: 1,000 transcripts across 20 projects, sizes from 5 kB to 8 MB (log-uniform, 600 MB in
all with the default seed), each with a sub-agent folder now and then.

    python benchmarks/bench_sessions.py [--files 1000] [--dir DIR]
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

from ctxview.live.sessions_list import list_sessions


def make(root: Path, n: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    total = 0
    filler = "y" * 900
    for k in range(n):
        proj = root / f"-home-user-project-{k % 20}"
        proj.mkdir(parents=True, exist_ok=True)
        size = int(10 ** rng.uniform(3.7, 6.9))
        lines = [
            json.dumps(
                {
                    "type": "user",
                    "cwd": f"/home/user/project-{k % 20}",
                    "sessionId": f"s{k}",
                    "timestamp": "2026-01-01T00:00:00Z",
                    "message": {"role": "user", "content": f"task number {k}"},
                }
            )
        ]
        body = "\n".join(lines) + "\n"
        rec = (
            json.dumps(
                {
                    "type": "assistant",
                    "timestamp": f"2026-01-{1 + k % 28:02d}T00:00:00Z",
                    "message": {"role": "assistant", "content": [{"type": "text", "text": filler}]},
                }
            )
            + "\n"
        )
        body += rec * max(1, (size - len(body)) // len(rec))
        path = proj / f"s{k}.jsonl"
        path.write_text(body)
        total += len(body)
        if k % 10 == 0:
            sub = proj / f"s{k}" / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / "agent-1.jsonl").write_text(lines[0] + "\n" + rec)
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--dir")
    args = ap.parse_args()
    base = Path(args.dir or tempfile.mkdtemp())
    root = base / "projects"
    if not root.exists():
        total = make(root, args.files)
        print(f"made {args.files} session files, {total / 1e6:.0f} MB, in {root}")
    cache = base / "cache.json"
    cache.unlink(missing_ok=True)
    t0 = time.perf_counter()
    infos = list_sessions([root], cache_path=cache)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = list_sessions([root], cache_path=cache)
    warm = time.perf_counter() - t0
    assert len(infos) == len(again) == args.files
    print(
        f"list {len(infos)} sessions: cold (no cache) {cold * 1000:.0f} ms, warm (cached by mtime) {warm * 1000:.0f} ms"
    )
    print(f"sub-agents found: {sum(len(i.subagents) for i in infos)}")


if __name__ == "__main__":
    main()
