from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxview import ConversationContext, Transcript
from ctxview.sessions import load_session, replay, save_session, session_document
from ctxview.sessions.store import atomic_write
from tests.support.paths import ROOT


def test_round_trip_restores_window_and_steps(tmp_path: Path) -> None:
    ctx = ConversationContext(max_context_messages=4, system_prompt="sys")
    tr = Transcript(ctx)
    for i in range(6):
        ctx.add_user_message(f"u{i}", meta={"timestamp": f"2026-01-01T00:00:0{i}Z"})
        ctx.add_assistant_message(
            [{"type": "text", "text": f"a{i}"}], meta={"usage": {"output_tokens": i}}
        )
    ctx.max_context_messages = 6  # raising brings nothing back
    p = tmp_path / "s.json"
    save_session(p, session_document(ctx, tr, model="m", tools=[{"name": "t"}], title="T"))
    r = replay(load_session(p))
    assert r.restored
    assert r.context.window_ids == ctx.window_ids
    assert r.context.messages == ctx.messages
    assert r.context.max_context_messages == 6 and r.context.system_prompt == "sys"
    assert [x.evicted_step for x in r.transcript.records] == [x.evicted_step for x in tr.records]
    assert r.transcript.usage(11) == {"output_tokens": 5}
    assert r.transcript[0].meta["timestamp"] == "2026-01-01T00:00:00Z"
    # the restored context keeps working, with new ids
    r.context.add_user_message("next")
    assert r.context.window_ids[-1] == 12 and len(r.transcript) == 13


def test_save_is_atomic_and_keeps_old_file_on_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    p = tmp_path / "s.json"
    p.write_text("old")

    def boom(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", boom)
    with pytest.raises(OSError):
        atomic_write(p, b"new")
    assert p.read_text() == "old"
    assert [x.name for x in tmp_path.iterdir()] == ["s.json"]  # no temp file left behind


def test_api_key_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    r = replay(load_session(ROOT / "sample_sessions" / "tool_errors.json"))
    p = tmp_path / "s.json"
    save_session(p, session_document(r.context, r.transcript))
    assert "sk-ant-test" not in p.read_text()
    r.context.add_user_message("my key is sk-ant-test-0123456789")
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        save_session(p, session_document(r.context, r.transcript))
    assert "sk-ant-test" not in p.read_text()


def test_generate_matches(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    src = ROOT / "sample_sessions"
    dst = tmp_path / "sample_sessions"
    dst.mkdir()
    shutil.copy(src / "generate.py", dst / "generate.py")
    shutil.copytree(ROOT / "ctxview", tmp_path / "ctxview")
    subprocess.run([sys.executable, str(dst / "generate.py")], check=True, capture_output=True)
    for f in sorted(src.glob("*.json")):
        assert json.loads((dst / f.name).read_text()) == json.loads(f.read_text()), f.name
