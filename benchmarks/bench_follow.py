"""CPU of following a 3 MB Claude Code transcript as it grows, per new line.

Compared: what the follower does per change (read the new bytes, parse the new line, the
in-memory rebuild over the lines already parsed, the prefix check), the part that is only
reading and parsing the new line, and a full re-open of the file (load_session) per change.

    python benchmarks/bench_follow.py [--mb 3] [--appends 200]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from ctxview.live.follow import Follower
from ctxview.sessions import load_session


def line(kind: str, uuid: str, parent: str | None, content: Any, mid: str | None = None) -> str:
    msg: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        msg.update(id=mid or f"msg_{uuid}", type="message", model="claude-x")
    return (
        json.dumps(
            {
                "type": kind,
                "uuid": uuid,
                "parentUuid": parent,
                "sessionId": "s",
                "timestamp": "2026-01-01T00:00:00Z",
                "message": msg,
            }
        )
        + "\n"
    )


def turn(k: int, parent: str) -> tuple[str, str]:
    """A tool round: assistant text + tool_use (two lines, one response), the tool result."""
    mid = f"m{k}"
    out = line(
        "assistant", f"a{k}", parent, [{"type": "text", "text": f"step {k} " + "r" * 300}], mid
    )
    out += line(
        "assistant",
        f"b{k}",
        f"a{k}",
        [{"type": "tool_use", "id": f"t{k}", "name": "read_file", "input": {"path": f"f{k}.py"}}],
        mid,
    )
    out += line(
        "user",
        f"u{k}",
        f"b{k}",
        [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "x" * 1200}],
    )
    return out, f"u{k}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=3.0)
    ap.add_argument("--appends", type=int, default=200)
    args = ap.parse_args()
    path = Path(tempfile.mkdtemp()) / "session.jsonl"
    parts = [line("user", "u0", None, "fix the failing tests")]
    parent, k = "u0", 0
    size = len(parts[0])
    while size < args.mb * 1e6:
        k += 1
        chunk, parent = turn(k, parent)
        parts.append(chunk)
        size += len(chunk)
    path.write_text("".join(parts))
    n_lines = sum(p.count("\n") for p in parts)
    print(f"{path.stat().st_size / 1e6:.1f} MB, {n_lines:,} lines")

    t = time.process_time()
    f = Follower(str(path))
    f.poll()
    f.step(quiet=True)
    print(
        f"first read (every line parsed once): {(time.process_time() - t) * 1000:.0f} ms CPU, {len(f.applied):,} messages"
    )

    follow_cpu = 0.0
    read_cpu = 0.0
    for _ in range(args.appends):
        k += 1
        chunk, parent = turn(k, parent)
        with open(path, "a") as fh:
            fh.write(chunk)
        t = time.process_time()
        assert f.poll()
        f.step(quiet=False)
        f.poll()
        up = f.step(quiet=True)
        follow_cpu += time.process_time() - t
        assert up is not None
        t = time.process_time()
        with open(path, "rb") as fh:
            fh.seek(path.stat().st_size - len(chunk.encode()))
            for raw in fh.read().split(b"\n"):
                if raw.strip():
                    json.loads(raw)
        read_cpu += time.process_time() - t
    per = follow_cpu / args.appends * 1000
    print(
        f"per appended tool round (3 lines): follower {per:.1f} ms CPU "
        f"({f.rebuilds} rebuilds), of which reading+parsing the new bytes alone {read_cpu / args.appends * 1000:.2f} ms"
    )
    # a late block: a reply already shown gets its second block -> the view is replayed (the
    # rebuild, then in the follower's thread a replay through ConversationContext and a model)
    from ctxview.app.model import SessionModel
    from ctxview.sessions import LoadedSession, replay

    k += 1
    with open(path, "a") as fh:
        fh.write(
            line(
                "assistant",
                f"a{k}",
                parent,
                [{"type": "text", "text": "thinking about it"}],
                f"m{k}",
            )
        )
    f.poll()
    f.step(quiet=False)
    f.poll()
    f.step(quiet=True)
    with open(path, "a") as fh:
        fh.write(
            line(
                "assistant",
                f"b{k}",
                f"a{k}",
                [{"type": "tool_use", "id": f"t{k}", "name": "x", "input": {}}],
                f"m{k}",
            )
        )
    t = time.process_time()
    f.poll()
    up = f.step(quiet=False)
    assert up is not None and up.kind == "replay", up
    session = LoadedSession(
        str(path), "claude-code", list(up.messages), [dict(m) for m in up.metas]
    )
    model = SessionModel(replay(session, max_context_messages=50), str(path), "claude-x")
    print(
        f"a late block (replay of {len(model.transcript):,} messages, built off the UI thread): {(time.process_time() - t) * 1000:.0f} ms CPU"
    )
    t = time.process_time()
    for _ in range(5):
        load_session(path)
    full = (time.process_time() - t) / 5 * 1000
    print(f"a full re-open (load_session) per change instead: {full:.0f} ms CPU")
    assert f.applied == load_session(path).messages, (
        "the followed sequence differs from a full open"
    )
    print("followed sequence == full open: ok")


if __name__ == "__main__":
    main()
