"""One opened session: what a source read (:class:`~ctxview.sessions.model.LoadedSession`: the
messages, their metadata, the file's settings) replayed into a live context and its transcript,
and the facts every view asks of it: the next request's body, the document to save, the problems
of the window, the summary ``inspect`` prints, whether it is shown as sent.

Every source builds one through :mod:`ctxview.sessions.replay` (a file of any format, a new chat,
a followed transcript, a proxy recording reopened); the chat loop drives one, the CLI prints one,
the TUI shows one. The request model (``ctxview.core.requests``) reads the LoadedSession alone:
``requests`` and ``compare`` never pay for a live context.

Headless: imports neither Textual nor the anthropic SDK.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxview.core.context import ConversationContext
from ctxview.core.transcript import Transcript
from ctxview.sessions.model import LoadedSession

if TYPE_CHECKING:
    from ctxview.core.protocol import Problem


@dataclass
class Session:
    """A loaded session replayed: ``session`` (what the source read), ``context`` (the live
    window) and ``transcript`` (every message, with when it was added and evicted)."""

    session: LoadedSession
    context: ConversationContext
    transcript: Transcript
    #: True when a saved ctxview session's window was restored as saved (not replayed)
    restored: bool
    #: the recorded format when the session is shown as it was sent (no ctxview truncation;
    #: see :func:`as_sent_format`), else None: a simulation under max and strategy
    as_sent: str | None = None
    #: as sent: the transcript id of the request's first message after the last Claude Code
    #: compaction (the messages before it are ``compacted``); 0 without one
    compacted_before: int = 0

    @property
    def system(self) -> Any:
        """The system prompt as sent (``ConversationContext.system_sent``)."""
        return self.context.system_sent

    def model_name(self, defaults: Mapping[str, Any], model: str | None = None) -> str:
        """The model a request goes to: ``model`` (a flag, the app's choice), else the file's,
        else the config's."""
        return str(model or self.session.model or defaults.get("model") or "")

    def max_tokens(self, defaults: Mapping[str, Any]) -> int:
        """The request's ``max_tokens``: the file's, else the config's."""
        return int(self.session.max_tokens or defaults.get("max_tokens") or 0)

    def request_body(
        self,
        defaults: Mapping[str, Any],
        model: str | None = None,
        *,
        max_tokens: int | None = None,
        tools: list[Any] | None = None,
        context_management: bool | None = None,
    ) -> dict[str, Any]:
        """The Messages API request ctxview would send next for this window (``model``,
        ``max_tokens`` and ``tools``: the caller's, else the file's, else the config's;
        ``context_management``: see :func:`ctxview.sessions.request.build_request`)."""
        from ctxview.sessions.request import build_request

        return build_request(
            self.context,
            model=self.model_name(defaults, model),
            max_tokens=max_tokens or self.max_tokens(defaults),
            system=self.system,
            tools=self.session.tools if tools is None else tools,
            params=self.session.request_params,
            context_management=context_management,
        )

    def document(
        self,
        defaults: Mapping[str, Any],
        model: str | None = None,
        *,
        max_tokens: int | None = None,
        tools: list[Any] | None = None,
    ) -> dict[str, Any]:
        """The ctxview session document to save (settings as :meth:`request_body` resolves
        them; an as-sent view is saved so, and reopens so)."""
        from ctxview.sessions.store import session_document

        s = self.session
        return session_document(
            self.context,
            self.transcript,
            model=self.model_name(defaults, model),
            max_tokens=max_tokens or self.max_tokens(defaults),
            system=self.system,
            tools=s.tools if tools is None else tools,
            title=s.title,
            request_params=s.request_params,
            as_sent=self.as_sent,
        )

    def protocol_problems(self) -> list[Problem]:
        """The API's rules over the window (what makes it answer 400)."""
        from ctxview.core.protocol import check_protocol

        return check_protocol(self.window_messages(), self.session.system)

    def window_messages(self) -> list[dict[str, Any]]:
        return [m for _, m in self.context.entries()]

    def summary(self, model: str | None = None) -> dict[str, Any]:
        """What ``ctxview inspect --json`` prints (``model``: the one the request goes to, for
        the context-window check; default the file's)."""
        from ctxview.core.limits import context_problem
        from ctxview.core.tokens import estimate_window
        from ctxview.sessions.request import token_breakdown

        ctx = self.context
        session = self.session
        window = self.window_messages()
        # the API's rules, then what ctxview notes about the window itself (max+1, budget, newest)
        problems = self.protocol_problems() + ctx.window_notes()
        # messages as the API reads them (from the last compaction block on; as sent, under a
        # context-editing strategy)
        sent = [m for _, m in ctx.sent_entries()] if ctx.edits_messages else window
        breakdown = token_breakdown(self.system, session.tools, estimate_window(sent))
        # the sidebar's rule: system + tools + window against the model's context
        over = context_problem(sum(breakdown.values()), model or session.model)
        if over is not None:
            problems.append(over)
        return {
            "file": session.path,
            "format": session.format,
            "messages_total": len(self.transcript),
            "max_context_messages": ctx.max_context_messages,
            "strategy": ctx.strategy,
            "window": {
                "ids": ctx.window_ids,
                "size": len(ctx),
                # the whole request: system + tools + messages (as the app's sidebar counts it)
                "estimated_tokens": sum(breakdown.values()),
                "token_breakdown": breakdown,
            },
            "pinned_id": ctx.pinned_id,
            "pinned_ids": ctx.pinned_ids,
            "evicted": [
                {"id": r.id, "evicted_at_step": r.evicted_step}
                for r in self.transcript.records
                if r.evicted_step is not None
            ],
            "problems": [p.to_dict() for p in problems],
            "fixes": _fixes(window, session.system, problems),
            "skipped_lines": session.skipped_lines,
            "subagents": session.subagents,
            **_editing_summary(ctx),
        }


def _fixes(window: list[Any], system: Any, problems: list[Any]) -> list[dict[str, Any]]:
    """What ``ctxview repair`` would do (only computed when the window has an error)."""
    if not any(p.severity == "error" for p in problems):
        return []
    from ctxview.core.repair import repair

    return [f.to_dict() for f in repair(window, system).fixes]


def _editing_summary(ctx: Any) -> dict[str, Any]:
    """``context_editing``: what a context-editing strategy sends edited (ids, and the API's
    ``applied_edits`` as estimated); nothing for the other strategies."""
    sf = ctx.sent_form() if ctx.edits_messages else None
    if sf is None:
        return {}
    return {
        "context_editing": {
            "cleared_ids": sorted(sf.edited),
            "applied_edits": sf.applied_edits(),
            "context_management": ctx.context_editing.context_management(ctx.strategy),
        }
    }
