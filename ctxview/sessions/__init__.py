"""Sessions: the files every source reads (the ctxview format, Anthropic request bodies, Claude
Code transcripts, proxy recordings) and the one :class:`Session` they become.

Headless: imports neither Textual nor the anthropic SDK.
"""

from ctxview.sessions.model import LoadedSession, SessionError
from ctxview.sessions.readers import FORMATS, load_session
from ctxview.sessions.replay import open_session, replay
from ctxview.sessions.session import Session
from ctxview.sessions.store import save_session, session_document

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
