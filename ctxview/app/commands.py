"""Command palette provider (ctrl+p): every action of the inspector by name."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from textual.command import DiscoveryHit, Hit, Hits, Provider

from ctxview.core.strategies import STRATEGIES

if TYPE_CHECKING:
    from ctxview.app.app import CtxviewApp


class CtxviewCommands(Provider):
    def _commands(self) -> list[tuple[str, str, Callable[[], Any]]]:
        app: CtxviewApp = self.app  # type: ignore[assignment]
        cmds: list[tuple[str, str, Callable[[], Any]]] = [
            (
                "Open file…",
                "open a session, request body or Claude Code transcript (ctrl+o)",
                app.action_open,
            ),
            ("Save session", "save in the ctxview format, atomically (ctrl+s)", app.action_save),
            ("Save session as…", "save under a new name (S)", app.action_save_as),
            (
                "Export request…",
                "write the request body ctxview would send next (x)",
                app.action_export,
            ),
            (
                "Toggle evicted rows",
                "show or hide evicted messages in the timeline (e)",
                app.action_toggle_evicted,
            ),
            (
                "Jump to pinned message",
                "select the pinned first message (p)",
                app.action_jump_pinned,
            ),
            (
                "Jump to next problem",
                "select the next message with a protocol error (n)",
                app.action_next_problem,
            ),
            ("Edit system prompt…", "change the system prompt (ctrl+e)", app.action_edit_system),
            (
                "Toggle sidebar",
                "show or hide the config sidebar (ctrl+b)",
                app.action_toggle_sidebar,
            ),
            ("Toggle detail pane", "show or hide the block detail (d)", app.action_toggle_detail),
            (
                "Count tokens exactly",
                "ask the API's count_tokens for this window (ctrl+k)",
                app.action_count_tokens,
            ),
            (
                "Requests…",
                "every API request: predicted cache, breaks, cost (R)",
                app.action_requests,
            ),
            (
                "Compare strategies…",
                "every strategy on this session: rejected requests, context kept, cost (C)",
                app.action_compare,
            ),
            (
                "Follow this transcript",
                "apply new lines of the open Claude Code transcript as the agent writes them (f)",
                app.action_follow,
            ),
            (
                "Claude Code sessions…",
                "the sessions under ~/.claude/projects, newest first (ctrl+l)",
                app.action_sessions,
            ),
            (
                "Make these settings the default",
                "save this session's max, strategy and model to config.toml for new chats",
                app.action_make_default,
            ),
            ("Help", "every key (? or F1)", app.action_help),
        ]
        for name in STRATEGIES:
            cmds.append(
                (f"Strategy: {name}", STRATEGIES[name].description, partial(app.set_strategy, name))
            )
        for n in (1, 5, 10, 20, 50, 100):
            cmds.append((f"Set max messages to {n}", "applied live", partial(app.set_max, n)))
        return cmds

    async def discover(self) -> Hits:
        for name, help_text, cb in self._commands():
            yield DiscoveryHit(name, cb, help=help_text)

    async def search(self, query: str) -> Hits:
        app: CtxviewApp = self.app  # type: ignore[assignment]
        number = re.search(r"\d+", query)
        if number and ("max" in query.lower() or query.strip().isdigit()):
            n = int(number.group())
            if n >= 1:
                yield Hit(
                    1.0, f"Set max messages to {n}", partial(app.set_max, n), help="applied live"
                )
        matcher = self.matcher(query)
        for name, help_text, cb in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), cb, text=name, help=help_text)
