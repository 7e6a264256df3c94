"""Autosave: after every completed turn, the session goes to
``platformdirs.user_state_path("ctxview")/sessions/`` (``$CTXVIEW_STATE_DIR`` overrides).
And what a chat starts from, in the TUI and ``chat --no-tui`` alike: a file, the newest
autosave (``--resume``) or a new chat with the configured system prompt."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from ctxview.config import Config, state_dir

if TYPE_CHECKING:
    from ctxview.sessions.session import Session


def sessions_dir() -> Path:
    return state_dir() / "sessions"


def new_autosave_path() -> Path:
    return sessions_dir() / time.strftime("chat-%Y%m%d-%H%M%S.ctxview.json")


def newest_autosave() -> Path | None:
    d = sessions_dir()
    if not d.is_dir():
        return None
    files = [p for p in d.glob("*.json") if p.is_file() and not p.name.startswith(".")]
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
