"""Command palette provider (ctrl+p): every action of the inspector by name. Each entry posts a
message (``ctxview.app.messages``) that the app acts on."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.message import Message

from ctxview.app.messages import Command, MaxChosen, StrategyChosen
from ctxview.core.strategies import STRATEGIES

#: (name, help, the app's action) of every palette entry but the strategies and the max
ACTIONS: list[tuple[str, str, str]] = [
    (
        "Open file…",
        "open a session, a request body, an agent's transcript or a trace (ctrl+o)",
        "open",
    ),
    ("Save session", "save in the ctxview format, atomically (ctrl+s)", "save"),
    ("Save session as…", "save under a new name (S)", "save_as"),
    (
        "Export request…",
        "write the request body ctxview would send next (x)",
        "export",
    ),
    (
        "Toggle evicted rows",
        "show or hide evicted messages in the timeline (e)",
        "toggle_evicted",
    ),
    (
        "Jump to pinned message",
        "select the first message, then each pinned one in turn (p)",
        "jump_pinned",
    ),
    (
        "Pin / unpin message",
        "keep the selected message (and its tool pair) whatever the strategy evicts (P)",
        "pin",
    ),
    ("Copy message", "the selected message's text to the clipboard (y)", "copy_message"),
    ("Copy message as JSON", "the selected message as the API reads it (Y)", "copy_json"),
    ("View message in pager", "the selected message in $PAGER (v)", "view_message"),
    (
        "Search the timeline…",
        'words, "a phrase", tool:Bash, is:error, role:user; n / N step (/)',
        "search",
    ),
    (
        "Jump to next problem",
        "select the next message with a protocol error (n)",
        "next_problem",
    ),
    ("Edit system prompt…", "change the system prompt (ctrl+e)", "edit_system"),
    (
        "Skipped lines…",
        "the lines of the open file that could not be used, and why (L)",
        "skipped_lines",
    ),
    (
        "Toggle sidebar",
        "show or hide the config sidebar (ctrl+b)",
        "toggle_sidebar",
    ),
    ("Toggle detail pane", "show or hide the block detail (d)", "toggle_detail"),
    (
        "Count tokens exactly",
        "ask the API's count_tokens for this window (ctrl+k)",
        "count_tokens",
    ),
    (
        "Requests…",
        "every API request: predicted cache, breaks, cost (R)",
        "requests",
    ),
    (
        "Compare strategies…",
        "every strategy on this session: rejected requests, context kept, cost (C)",
        "compare",
    ),
    (
        "Show as sent",
        "a recorded session as it was sent: no ctxview truncation (a)",
        "as_sent",
    ),
    (
        "Follow this transcript",
        "apply new lines of the open Claude Code transcript or Codex rollout as the agent "
        "writes them (f)",
        "follow",
    ),
    (
        "Agent sessions (Claude Code, Codex, Gemini CLI)…",
        "the sessions on this machine, newest first (ctrl+l)",
        "sessions",
    ),
    (
        "Make these settings the default",
        "save this session's max, strategy and model to config.toml for new chats",
        "make_default",
    ),
    ("Help", "every key (? or F1)", "help"),
]


class CtxviewCommands(Provider):
    def _post(self, make: Callable[[], Message]) -> Callable[[], object]:
        """A hit's command: post a new message each time it runs."""
        return lambda: self.app.post_message(make())

    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        cmds: list[tuple[str, str, Callable[[], Any]]] = [
            (name, help_text, self._post(partial(Command, action)))
            for name, help_text, action in ACTIONS
        ]
        for name in STRATEGIES:
            cmds.append(
                (
                    f"Strategy: {name}",
                    STRATEGIES[name].description,
                    self._post(partial(StrategyChosen, name)),
                )
            )
        for n in (1, 5, 10, 20, 50, 100):
            cmds.append((f"Set max messages to {n}", "applied live", self._max(n)))
        return cmds

    def _max(self, n: int) -> Callable[[], object]:
        return self._post(partial(MaxChosen, n))

    async def discover(self) -> Hits:
        for name, help_text, cb in self._commands():
            yield DiscoveryHit(name, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        number = re.search(r"\d+", query)
        if number and ("max" in query.lower() or query.strip().isdigit()):
            n = int(number.group())
            if n >= 1:
                yield Hit(1.0, f"Set max messages to {n}", self._max(n), help="applied live")
        matcher = self.matcher(query)
        for name, help_text, cb in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, text=name, help=help_text)
