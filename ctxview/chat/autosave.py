"""Autosave: after every completed turn, the session goes to
``platformdirs.user_state_path("ctxview")/sessions/`` (``$CTXVIEW_STATE_DIR`` overrides)."""

from __future__ import annotations

import time
from pathlib import Path

from ctxview.config import state_dir


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
