"""CPU of following a 3 MB Claude Code transcript as it grows, per new tool round.

What the follower does per change (read the new bytes, parse the new lines, rebuild over the
lines already parsed, the prefix check), beside reading and parsing the new lines alone, a
late block (a reply already shown gets a second block: the view is replayed), and a full
re-open of the file per change. The followed sequence must equal a full open. Then a line with
no end (a sparse file of 1 GB, 256 MB with --quick): the bytes held for it stay under the line
cap, and the CPU to read past it grows with its size only.
"""

from __future__ import annotations

import os
import time

from benchmarks.common import Bench, Figure, cc_line, report, say
from ctxview.live.follow import Follower
from ctxview.sessions import LoadedSession, load_session, replay


def tool_round(k: int, parent: str) -> tuple[str, str]:
    """A response written as two lines (text, then tool_use), then the tool's result."""
    mid = f"m{k}"
    out = cc_line(
        "assistant",
        f"a{k}",
        parent,
        [{"type": "text", "text": f"step {k} " + "r" * 300}],
        message_id=mid,
        model="claude-x",
    )
    tool_use = {
        "type": "tool_use",
        "id": f"t{k}",
        "name": "read_file",
        "input": {"path": f"f{k}.py"},
    }
    out += cc_line("assistant", f"b{k}", f"a{k}", [tool_use], message_id=mid, model="claude-x")
    result = {"type": "tool_result", "tool_use_id": f"t{k}", "content": "x" * 1200}
    out += cc_line("user", f"u{k}", f"b{k}", [result])
    return out, f"u{k}"


def run(b: Bench, mb: float = 3.0, appends: int = 200) -> None:
    import json

    path = b.data / "follow.jsonl"
    parts = [cc_line("user", "u0", None, "fix the failing tests")]
    parent, k, size = "u0", 0, len(parts[0])
    while size < mb * 1e6:
        k += 1
        chunk, parent = tool_round(k, parent)
        parts.append(chunk)
        size += len(chunk)
    path.write_text("".join(parts))
    say(f"{path.stat().st_size / 1e6:.1f} MB, {sum(p.count(chr(10)) for p in parts):,} lines")

    t = time.process_time()
    f = Follower(str(path))
    f.poll()
    f.step(quiet=True)
    report(Figure("first read (every line parsed once)", (time.process_time() - t) * 1000, "ms"))

    follow_cpu = read_cpu = 0.0
    for _ in range(appends):
        k += 1
        chunk, parent = tool_round(k, parent)
        with open(path, "a") as fh:
            fh.write(chunk)
        t = time.process_time()
        assert f.poll()
        f.step(quiet=False)
        f.poll()
        assert f.step(quiet=True) is not None
        follow_cpu += time.process_time() - t
        t = time.process_time()
        with open(path, "rb") as fh:
            fh.seek(path.stat().st_size - len(chunk.encode()))
            for raw in fh.read().split(b"\n"):
                if raw.strip():
                    json.loads(raw)
        read_cpu += time.process_time() - t
    report(
        Figure(
            "CPU per appended tool round (3 lines)",
            follow_cpu / appends * 1000,
            "ms",
            note=f"{f.rebuilds} rebuilds",
        )
    )
    report(Figure("of which reading and parsing the new bytes", read_cpu / appends * 1000, "ms"))

    # a late block: the reply already shown gets its second block -> the view is replayed
    from ctxview.app.model import SessionModel

    k += 1
    with open(path, "a") as fh:
        fh.write(
            cc_line(
                "assistant",
                f"a{k}",
                parent,
                [{"type": "text", "text": "thinking about it"}],
                message_id=f"m{k}",
                model="claude-x",
            )
        )
    f.poll()
    f.step(quiet=False)
    f.poll()
    f.step(quiet=True)
    with open(path, "a") as fh:
        fh.write(
            cc_line(
                "assistant",
                f"b{k}",
                f"a{k}",
                [{"type": "tool_use", "id": f"t{k}", "name": "x", "input": {}}],
                message_id=f"m{k}",
                model="claude-x",
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
    report(
        Figure(
            f"a late block: replay of {len(model.transcript):,} messages",
            (time.process_time() - t) * 1000,
            "ms",
        )
    )
    t = time.process_time()
    for _ in range(5):
        load_session(path)
    report(Figure("a full re-open per change instead", (time.process_time() - t) / 5 * 1000, "ms"))
    assert f.applied == load_session(path).messages, (
        "the followed sequence differs from a full open"
    )
    say("followed sequence == full open: ok")
    endless_line(b)


def endless_line(b: Bench) -> None:
    from ctxview.sessions.readers import MAX_LINE_BYTES

    path = b.data / "endless.jsonl"
    size = (256 if b.quick else 1024) * 1024**2
    with open(path, "w") as fh:
        fh.write(cc_line("user", "u0", None, "go"))
        fh.write('{"junk": "')
    os.truncate(path, size)  # sparse: no disk, every byte a NUL, no newline
    f = Follower(str(path))
    held = 0
    t = time.process_time()
    while f._tail is not None and f._tail.offset < size:
        f.poll()
        held = max(held, f._tail.pending_bytes)
    cpu = time.process_time() - t
    assert f.bad == [2], f.bad
    report(
        Figure(
            f"a line with no end ({size / 1024**3:g} GiB): most bytes held for it",
            held / 1e6,
            "MB",
            target=MAX_LINE_BYTES / 1e6,
        )
    )
    report(Figure("  CPU to read past it, per GiB", cpu / (size / 1024**3), "s", target=10))
    path.unlink()
