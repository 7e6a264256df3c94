"""The recorded file formats: the request model replays them as they were sent when neither
max nor strategy is given, and a saved session shown so names one (``settings.as_sent``)."""

from __future__ import annotations

RECORDED_FORMATS = (
    "claude-code",
    "claude-code-web",
    "request",
    "proxy",
    "openai-chat",
    "openai-responses",
    "codex",
    "gemini",
    "gemini-cli",
    "otel",
)
