"""Following a growing Codex rollout: every real rollout written a few lines at a time ends as
a full open shows it (usage included), with and without the rebuild checkpoint; a usage that
comes after its reply was shown replays it."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from ctxview.live import follow_codex
from ctxview.live.follow_codex import LATE_USAGE, CodexFollower
from ctxview.sessions import load_session
from tests.support.paths import ACCEPTANCE

ROLLOUTS = sorted((ACCEPTANCE / "codex").glob("*.jsonl"))


def drive(src: Path, dst: Path, seed: int) -> tuple[CodexFollower, list[Any], list[Any], int]:
    """Write ``src`` to ``dst`` a random few lines at a time, polling after each write, the
    way the app does; (the follower, the messages and metas shown, the replays)."""
    lines = src.read_bytes().splitlines(keepends=True)
    rng = random.Random(seed)
    dst.write_bytes(b"")
    f = CodexFollower(str(dst))
    shown: list[Any] = []
    metas: list[Any] = []
    replays = 0
    at = 0
    while at < len(lines) or f.pending:
        step = rng.randint(1, 12)
        with open(dst, "ab") as fh:
            fh.write(b"".join(lines[at : at + step]))
        at += step
        changed = f.poll()
        for quiet in (False, True) if changed else (True,):
            up = f.step(quiet=quiet)
            if up is None:
                continue
            if up.kind == "replay":
                replays += 1
                shown, metas = list(up.messages), list(up.metas)
            else:
                shown += up.messages
                metas += up.metas
            if not quiet:
                f.poll()  # nothing new: the next step is a quiet one
    return f, shown, metas, replays


@pytest.mark.parametrize(
    "checkpoint", [follow_codex.CHECKPOINT_LINES, 25], ids=["default", "short"]
)
@pytest.mark.parametrize("path", ROLLOUTS, ids=[p.stem[:40] for p in ROLLOUTS])
def test_a_followed_rollout_ends_as_a_full_open(
    path: Path, checkpoint: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follow_codex, "CHECKPOINT_LINES", checkpoint)
    f, shown, metas, _ = drive(path, tmp_path / path.name, seed=len(path.name))
    full = load_session(str(path))
    assert shown == full.messages
    assert [m.get("usage") for m in metas] == [m.get("usage") for m in full.metas]
    assert metas == full.metas
    if checkpoint < 100 and len(full.messages) > 200:
        assert f.rebuilds > f.full_rebuilds  # the checkpoint was used


def line(kind: str, payload: dict[str, Any]) -> str:
    return (
        json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload}) + "\n"
    )


def test_a_usage_that_comes_late_replays_the_reply(tmp_path: Path) -> None:
    p = tmp_path / "rollout.jsonl"
    user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    reply = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "yo"}],
    }
    p.write_text(line("session_meta", {"id": "s", "cwd": "/x"}) + line("response_item", user))
    f = CodexFollower(str(p))
    assert f.poll()
    assert f.step(quiet=False) is not None
    with open(p, "a") as fh:
        fh.write(line("response_item", reply))
    assert f.poll()
    assert f.step(quiet=False) is None  # the reply waits for its usage...
    assert not f.poll()
    up = f.step(quiet=True)  # ...until a poll brings nothing new
    assert up is not None and up.kind == "append" and "usage" not in up.metas[0]
    usage = {"input_tokens": 1200, "cached_input_tokens": 1024, "output_tokens": 5}
    info = {"total_token_usage": usage, "last_token_usage": usage}
    with open(p, "a") as fh:
        fh.write(line("event_msg", {"type": "token_count", "info": info}))
    assert f.poll()
    up = f.step(quiet=False)
    assert up is not None and up.kind == "replay" and up.reason == LATE_USAGE
    assert up.metas[1]["usage"]["cache_read_input_tokens"] == 1024
    assert f.step(quiet=True) is None


def test_the_checkpoint_carries_the_model_and_the_last_usage_across(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rollout whose one turn_context comes first, and whose token_count lines repeat the last
    total (a rate-limit update) before the next response's own: the lines after a checkpoint are
    read with that state, as a full open reads them."""
    monkeypatch.setattr(follow_codex, "CHECKPOINT_LINES", 5)
    src = tmp_path / "src.jsonl"
    out = [line("session_meta", {"id": "s", "cwd": "/x"}), line("turn_context", {"model": "gpt-x"})]
    total = 0
    for k in range(30):
        text = {"type": "input_text", "text": f"q{k}"}
        out.append(line("response_item", {"type": "message", "role": "user", "content": [text]}))
        answer = {"type": "output_text", "text": f"a{k}"}
        out.append(
            line("response_item", {"type": "message", "role": "assistant", "content": [answer]})
        )
        if k:  # the previous total again, then this response's own
            same = {"input_tokens": total, "output_tokens": 1}
            info = {"total_token_usage": same, "last_token_usage": same}
            out.append(line("event_msg", {"type": "token_count", "info": info}))
        total += 100
        usage = {"input_tokens": total, "output_tokens": 1}
        info = {"total_token_usage": usage, "last_token_usage": usage}
        out.append(line("event_msg", {"type": "token_count", "info": info}))
    src.write_text("".join(out))
    f, shown, metas, _ = drive(src, tmp_path / "dst.jsonl", seed=3)
    full = load_session(str(src))
    assert f.rebuilds > f.full_rebuilds
    assert shown == full.messages and metas == full.metas
    assert {m.get("model") for m in metas if "usage" in m} == {"gpt-x"}
