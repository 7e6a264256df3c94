"""``ctxview sessions``: list 1,000 Claude Code session files, cold (no cache) and cached.

1,000 transcripts across 20 projects (100 with --quick), sizes from 5 kB to 8 MB
(log-uniform, ~600 MB in all), a sub-agent folder now and then.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from benchmarks.common import Bench, Figure, report, say
from ctxview.live.sessions_list import list_sessions


def make(root: Path, n: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    total = 0
    filler = "y" * 900
    for k in range(n):
        proj = root / f"-home-user-project-{k % 20}"
        proj.mkdir(parents=True, exist_ok=True)
        size = int(10 ** rng.uniform(3.7, 6.9))
        first = json.dumps(
            {
                "type": "user",
                "cwd": f"/home/user/project-{k % 20}",
                "sessionId": f"s{k}",
                "timestamp": "2026-01-01T00:00:00Z",
                "message": {"role": "user", "content": f"task number {k}"},
            }
        )
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
        body = first + "\n"
        body += rec * max(1, (size - len(body)) // len(rec))
        (proj / f"s{k}.jsonl").write_text(body)
        total += len(body)
        if k % 10 == 0:
            sub = proj / f"s{k}" / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            (sub / "agent-1.jsonl").write_text(first + "\n" + rec)
    return total


def run(b: Bench) -> None:
    files = 100 if b.quick else 1000
    root = b.data / f"projects_{files}"
    if not root.exists():
        say(f"made {files} session files, {make(root, files) / 1e6:.0f} MB")
    cache = b.data / "sessions-cache.json"
    cache.unlink(missing_ok=True)
    t0 = time.perf_counter()
    infos = list_sessions([root], cache_path=cache)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = list_sessions([root], cache_path=cache)
    warm = time.perf_counter() - t0
    assert len(infos) == len(again) == files
    say(f"sub-agents found: {sum(len(i.subagents) for i in infos)}")
    report(Figure(f"list {files:,} sessions, cold (no cache)", cold * 1000, "ms"))
    report(Figure(f"list {files:,} sessions, cached by mtime", warm * 1000, "ms"))
