"""Following a growing Claude Code transcript: new bytes only, partial lines, resets, rewinds."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from ctxview.live import follow
from ctxview.live.follow import LATE_BLOCK, Follower, Tail
from ctxview.sessions import SessionError, load_session
from tests.support.paths import ACCEPTANCE
from tests.support.transcripts import rec, text


def test_tail_partial_line_waits_and_truncation_resets(tmp_path: Path) -> None:
    p = tmp_path / "t.jsonl"
    p.write_text('{"a": 1}\n{"b"')
    tail = Tail(str(p))
    assert tail.read() == (False, [b'{"a": 1}'])
    assert tail.read() == (False, [])
    with open(p, "a") as fh:
        fh.write(': 2}\n{"c": 3}\n')
    assert tail.read() == (False, [b'{"b": 2}', b'{"c": 3}'])
    offset = tail.offset
    p.write_text('{"z": 0}\n')  # truncated and rewritten
    assert tail.offset == offset
    assert tail.read() == (True, [b'{"z": 0}'])
    # replaced by another file of the same size: another inode
    other = tmp_path / "o.jsonl"
    other.write_text('{"y": 9}\n')
    os.replace(other, p)
    assert tail.read() == (True, [b'{"y": 9}'])
    # rewritten in place, grown past the old offset: the first bytes differ
    p.write_text('{"x": 8}\n{"w": 7}\n')
    assert tail.read() == (True, [b'{"x": 8}', b'{"w": 7}'])


def test_follower_appends_and_waits_for_a_quiet_poll(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(
        rec("user", "u1", None, "fix the bug") + rec("assistant", "a1", "u1", text("on it"))
    )
    f = Follower(str(p))
    assert f.poll()
    up = f.step(quiet=False)
    assert up is not None and up.kind == "append" and len(up.messages) == 1  # the reply waits
    assert not f.poll()
    up = f.step(quiet=True)
    assert up is not None and up.kind == "append" and up.messages[0]["role"] == "assistant"
    assert f.step(quiet=True) is None
    # a partial line is not applied
    with open(p, "a") as fh:
        fh.write(rec("user", "u2", "a1", "next")[:20])
    assert not f.poll() and f.step(quiet=True) is None
    with open(p, "a") as fh:
        fh.write(rec("user", "u2", "a1", "next")[20:])
    assert f.poll()
    assert f.step(quiet=False) is None  # the newest waits for a quiet poll
    assert not f.poll()
    up = f.step(quiet=True)
    assert up is not None and [m["content"] for m in up.messages] == ["next"]
    # the same sequence as a full open
    assert f.applied == load_session(p).messages


def test_late_block_and_rewind_replay(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(
        rec("user", "u1", None, "q")
        + rec(
            "assistant",
            "a1",
            "u1",
            [{"type": "thinking", "thinking": "hm", "signature": "s"}],
            mid="m1",
        )
    )
    f = Follower(str(p))
    f.poll()
    f.step(quiet=False)
    f.poll()
    assert f.step(quiet=True).kind == "append"  # type: ignore[union-attr]
    # a second block of the same response, written later: the shown message changes -> replay
    with open(p, "a") as fh:
        fh.write(rec("assistant", "a2", "a1", text("answer"), mid="m1"))
    assert f.poll()
    up = f.step(quiet=False)
    assert up is not None and up.kind == "replay" and up.reason == LATE_BLOCK
    assert [b["type"] for b in up.messages[-1]["content"]] == ["thinking", "text"]
    assert list(up.messages) == load_session(p).messages
    # a rewind: a new user message whose parent is the first one
    with open(p, "a") as fh:
        fh.write(rec("user", "u3", None, "start over"))
    assert f.poll()
    f.step(quiet=False)
    assert not f.poll()
    f.step(quiet=True)
    assert f.applied == load_session(p).messages


def test_bad_lines_are_reported_not_fatal(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_text(rec("user", "u1", None, "q") + "{not json\n" + "[1]\n")
    f = Follower(str(p))
    f.poll()
    assert f.bad == [2, 3]
    f.poll()
    up = f.step(quiet=True)
    assert up is not None and up.messages[0]["content"] == "q"
    assert up.skipped_lines == (2, 3)
    assert dict(up.skipped_reasons) == {
        2: "invalid JSON at column 2: Expecting property name enclosed in double quotes",
        3: "an array, not a JSON object",
    }


def test_a_followed_line_is_read_by_the_rule_of_an_opened_one(tmp_path: Path) -> None:
    """NaN, as on opening: a line the reader refuses is not a message when followed either."""
    p = tmp_path / "s.jsonl"
    nan = rec("user", "u2", "u1", "x").replace('"x"', "NaN")
    p.write_text(rec("user", "u1", None, "q") + nan)
    f = Follower(str(p))
    f.poll()
    up = f.step(quiet=True)
    assert up is not None
    assert up.skipped_lines == tuple(load_session(p).skipped_lines) == (2,)
    assert dict(up.skipped_reasons)[2] == load_session(p).skipped_reasons[2]


@pytest.mark.slow
def test_checkpointed_rebuild_equals_a_full_open(tmp_path: Path, monkeypatch: Any) -> None:
    """Long tool loops move the rebuild checkpoint; a rewind across it falls back to a full
    rebuild. Either way the followed sequence is what a full open gives."""
    from ctxview.live import follow

    monkeypatch.setattr(follow, "CHECKPOINT_LINES", 10)
    p = tmp_path / "s.jsonl"
    p.write_text(rec("user", "u0", None, "start"))
    f = Follower(str(p))
    parent = "u0"

    def settle() -> None:
        f.poll()
        f.step(quiet=False)
        f.poll()
        f.step(quiet=True)

    for k in range(1, 30):
        mid = f"m{k}"
        with open(p, "a") as fh:
            fh.write(rec("assistant", f"a{k}", parent, text(f"step {k}"), mid=mid))
            fh.write(
                rec(
                    "assistant",
                    f"b{k}",
                    f"a{k}",
                    [{"type": "tool_use", "id": f"t{k}", "name": "x", "input": {}}],
                    mid=mid,
                )
            )
            fh.write(
                rec(
                    "user",
                    f"r{k}",
                    f"b{k}",
                    [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "ok"}],
                )
            )
        parent = f"r{k}"
        settle()
        assert f.applied == load_session(p).messages
    assert f._cp > 0 and f.full_rebuilds < f.rebuilds  # the checkpoint was used
    # a rewind to an early turn: a new prompt whose parent is before the checkpoint
    with open(p, "a") as fh:
        fh.write(
            rec(
                "user",
                "rw",
                "b3",
                [{"type": "tool_result", "tool_use_id": "t3", "content": "again"}],
            )
        )
        fh.write(rec("assistant", "rwa", "rw", text("redo")))
    settle()
    assert f.applied == load_session(p).messages
    assert len(f.applied) < 20  # the branch from the rewind, not the old one


@pytest.mark.slow
def test_following_real_transcripts_equals_a_full_open(tmp_path: Path, monkeypatch: Any) -> None:
    """Each real Claude Code transcript of the acceptance set, written a few lines at a time
    (a small checkpoint interval so it moves often): at half way and at the end, what the
    follower shows is what a full open of the file so far gives."""
    from ctxview.live import follow

    monkeypatch.setattr(follow, "CHECKPOINT_LINES", 25)
    root = ACCEPTANCE / "claude_code"
    files = sorted(p for p in root.glob("*.jsonl") if "__subagent_" not in p.name)
    assert files
    for src in files:
        lines = src.read_bytes().splitlines(keepends=True)
        dst = tmp_path / src.name
        dst.write_bytes(b"")
        f = Follower(str(dst))
        marks = {len(lines) // 2, len(lines)}
        for k in range(0, len(lines), 11):
            with open(dst, "ab") as fh:
                fh.write(b"".join(lines[k : k + 11]))
            f.poll()
            f.step(quiet=False)
            f.poll()
            f.step(quiet=True)
            done = min(k + 11, len(lines))
            if any(k < m <= done for m in marks):
                try:
                    want = load_session(dst).messages
                except SessionError:  # no message yet in this part of the file
                    want = []
                assert f.applied == want, f"{src.name}: differs after {done} lines"


def test_a_line_past_the_cap_is_skipped_and_never_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line that never ends (or ends too late) is given up once it passes MAX_LINE_BYTES: it
    is reported as a skipped line with the reason, the bytes held stay under the cap, and the
    lines after it are read."""
    monkeypatch.setattr(follow, "MAX_LINE_BYTES", 1000)
    monkeypatch.setattr(follow, "MAX_READ", 300)  # the long line arrives over several reads
    p = tmp_path / "s.jsonl"
    p.write_text(rec("user", "u1", None, "q") + '{"junk": "' + "x" * 5000)
    f = Follower(str(p))
    held = []
    for _ in range(40):
        f.poll()
        assert f._tail is not None
        held.append(f._tail.pending_bytes)
    assert max(held) <= 1000
    assert f.bad == [2]
    first = f.step(quiet=True)
    assert first is not None and first.skipped_lines == (2,)
    assert dict(first.skipped_reasons) == {2: "longer than 1000 bytes"}
    with open(p, "a") as fh:  # its end comes at last, then a good line
        fh.write('"}\n' + rec("assistant", "a1", "u1", text("answer")))
    while f.poll():
        pass
    assert f.bad == [2]
    up = f.step(quiet=True)
    assert up is not None and [m["role"] for m in up.messages] == ["assistant"]
    assert [ln.number for ln in f.lines] == [1, 3]


def test_a_line_over_many_reads_is_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A line under the cap that arrives over many reads comes back whole, once it ends."""
    monkeypatch.setattr(follow, "MAX_READ", 64)
    line = rec("user", "u1", None, "y" * 4000)
    p = tmp_path / "s.jsonl"
    p.write_text(line[:-1])
    tail = Tail(str(p))
    for _ in range(100):
        assert tail.read() == (False, [])
    assert tail.pending_bytes == len(line) - 1
    with open(p, "a") as fh:
        fh.write("\n")
    assert tail.read() == (False, [line.rstrip("\n").encode()])
    assert tail.pending_bytes == 0


def test_a_skipped_line_with_no_new_message_still_reaches_the_view_once(tmp_path: Path) -> None:
    """A bad line that brings no message is carried by an update appending nothing; the next
    update carries it again (the full list), and no update is made for it alone twice."""
    p = tmp_path / "s.jsonl"
    p.write_text(rec("user", "u1", None, "q") + rec("assistant", "a1", "u1", text("a")))
    f = Follower(str(p))
    f.poll()
    assert f.step(quiet=True) is not None
    with open(p, "a") as fh:
        fh.write("{cut off\n")
    assert f.poll()
    only = f.step(quiet=False)
    assert only is not None and only.kind == "append" and only.messages == ()
    assert only.skipped_lines == (3,) and dict(only.skipped_reasons)[3].startswith("invalid JSON")
    assert not f.poll() and f.step(quiet=True) is None
