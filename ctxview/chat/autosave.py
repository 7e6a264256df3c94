"""Autosave: after every completed turn, the session goes to
``platformdirs.user_state_path("ctxview")/sessions/`` (``$CTXVIEW_STATE_DIR`` overrides).
And what a chat starts from, in the TUI and ``chat --no-tui`` alike: a file, the newest
autosave (``--resume``) or a new chat with the configured system prompt."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ctxview.config import Config, state_dir

if TYPE_CHECKING:
    from ctxview.sessions.session import Session


def sessions_dir() -> Path:
    return state_dir() / "sessions"


#: how many names :func:`new_autosave_path` tries before giving up (chats started together)
MAX_NAME_TRIES = 1000


def new_autosave_path() -> Path:
    """A fresh autosave file, created empty here (``O_EXCL``) so that no other chat can take
    the same name: ``chat-YYYYmmdd-HHMMSS.ctxview.json``, with ``-2``, ``-3``… after the time
    when chats start in the same second. OSError when the folder cannot be written."""
    d = sessions_dir()
    d.mkdir(parents=True, exist_ok=True)
    stem = time.strftime("chat-%Y%m%d-%H%M%S")
    for n in range(1, MAX_NAME_TRIES + 1):
        path = d / (f"{stem}.ctxview.json" if n == 1 else f"{stem}-{n}.ctxview.json")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        os.close(fd)
        return path
    raise FileExistsError(f"{d}: no free autosave name for {stem}")


def file_id(path: Path) -> tuple[int, int, int, int] | None:
    """(device, inode, size, mtime) of the file at ``path``, or None when there is none: a save
    checks that the file it is about to replace is still the one it wrote (an inode alone is
    reused at once when a file is deleted and another written)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def newest_autosave() -> Path | None:
    d = sessions_dir()
    if not d.is_dir():
        return None
    # (an empty file is a name claimed by a chat whose first save has not landed yet)
    files = [
        p
        for p in d.glob("*.json")
        if p.is_file() and not p.name.startswith(".") and p.stat().st_size > 0
    ]
    return max(files, key=lambda p: p.stat().st_mtime, default=None)


def resume_path(path: str | None, resume: bool) -> str | None:
    """The file to open: ``path``, else with ``resume`` the newest autosave (a given file wins
    over ``--resume``). Raises :class:`~ctxview.sessions.SessionError` when there is none."""
    if path or not resume:
        return path
    newest = newest_autosave()
    if newest is None:
        from ctxview.sessions.model import SessionError

        raise SessionError("--resume: no autosaved session yet")
    return str(newest)


def open_chat(
    path: str | None,
    format: str | None,
    config: Config,
    *,
    max_context_messages: int | None = None,
    strategy: str | None = None,
    as_sent: bool = False,
) -> Session:
    """The session at ``path`` (a new chat without one) opened under the config's defaults
    (see :func:`ctxview.sessions.open_session`, which says what it raises)."""
    from ctxview.sessions.replay import open_session

    return open_session(
        path,
        format,
        max_context_messages=max_context_messages,
        strategy=strategy,
        new_chat_system_prompt=config.system_prompt,
        defaults=config.as_defaults(),
        as_sent=as_sent,
    )
