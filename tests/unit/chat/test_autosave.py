"""Autosave names (``ctxview/chat/autosave.py``) and how the agent loop writes them: each chat
gets its own file, and a save never replaces a file the chat did not write."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ctxview.chat.autosave import new_autosave_path, newest_autosave, sessions_dir
from tests.support import cli


@pytest.fixture
def same_second(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chat starts in the same second."""
    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "chat-20260101-120000")


def test_names_started_in_one_second_differ(same_second: None) -> None:
    first, second, third = (new_autosave_path() for _ in range(3))
    assert [p.name for p in (first, second, third)] == [
        "chat-20260101-120000.ctxview.json",
        "chat-20260101-120000-2.ctxview.json",
        "chat-20260101-120000-3.ctxview.json",
    ]
    assert all(p.parent == sessions_dir() and p.exists() for p in (first, second, third))


def test_a_claimed_but_unwritten_name_is_not_resumed(same_second: None) -> None:
    new_autosave_path()
    assert newest_autosave() is None


def test_two_chats_in_one_second_keep_both(
    capsys: pytest.CaptureFixture[str], same_second: None
) -> None:
    saved = []
    for prompt in ("calculate 6*7", "hello"):
        code, out, err = cli.run(capsys, "chat", "--no-tui", prompt, "--offline", "--json")
        assert code == 0, err
        saved.append(Path(json.loads(out)["saved"]))
    assert saved[0] != saved[1]
    first = [t["message"] for t in json.loads(saved[0].read_text())["transcript"]]
    second = [t["message"] for t in json.loads(saved[1].read_text())["transcript"]]
    assert first[0]["content"] == "calculate 6*7" and second[0]["content"] == "hello"


async def test_a_file_put_in_its_place_is_not_replaced(same_second: None) -> None:
    from ctxview.chat.backends import OfflineBackend
    from ctxview.chat.loop import AgentLoop, HeadlessSession
    from ctxview.chat.tools import ToolSettings
    from ctxview.sessions import LoadedSession, replay

    rep = replay(LoadedSession(path="", format="new", messages=[], metas=[]))
    loop = AgentLoop(HeadlessSession(rep, "m", 1024), OfflineBackend(delay=0), tools=ToolSettings())
    await loop.submit("hello")
    await loop.wait_saved()
    mine = loop.autosave_path
    assert mine is not None
    mine.unlink()
    mine.write_text("someone else's file")  # another program's file under the same name
    await loop.submit("again")
    await loop.wait_saved()
    assert mine.read_text() == "someone else's file"
    assert loop.autosave_path is not None and loop.autosave_path != mine
    doc = json.loads(loop.autosave_path.read_text())
    assert [t["message"]["content"] for t in doc["transcript"]][-2] == "again"
