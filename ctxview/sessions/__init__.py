"""Session files: the ctxview format, Anthropic request bodies, Claude Code transcripts.

Headless: imports neither Textual nor the anthropic SDK.
"""

from ctxview.sessions.model import LoadedSession, SessionError
from ctxview.sessions.readers import FORMATS, load_session
from ctxview.sessions.replay import Replay, open_session, replay
from ctxview.sessions.store import save_session, session_document

__all__ = [
    "FORMATS",
    "LoadedSession",
    "Replay",
    "SessionError",
    "load_session",
    "open_session",
    "replay",
    "save_session",
    "session_document",
]
