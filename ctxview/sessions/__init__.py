"""Sessions: the files every source reads (the ctxview format, Anthropic request bodies, Claude
Code transcripts, proxy recordings) and the one :class:`Session` they become.

Headless: imports neither Textual nor the anthropic SDK.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# imported now, not on first use: ``replay`` is also the name of its module, and the module's
# first import would bind the package's ``replay`` to the module instead of the function
from ctxview.sessions.replay import open_session, replay

if TYPE_CHECKING:
    from ctxview.sessions.model import LoadedSession, SessionError
    from ctxview.sessions.readers import FORMATS, load_session
    from ctxview.sessions.session import Session
    from ctxview.sessions.store import save_session, session_document

#: public name -> the module that defines it; each is imported on first use, so reading a file
#: does not import saving one, nor the readers of every other format
_HOME = {
    "LoadedSession": "model",
    "SessionError": "model",
    "FORMATS": "readers",
    "load_session": "readers",
    "Session": "session",
    "save_session": "store",
    "session_document": "store",
}

__all__ = [
    "FORMATS",
    "LoadedSession",
    "Session",
    "SessionError",
    "load_session",
    "open_session",
    "replay",
    "save_session",
    "session_document",
]


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
