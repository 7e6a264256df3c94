"""What a reader yields: the message sequence to replay, with what is known about each message."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxview.core.content import system_text
from ctxview.core.gc_pause import freeze_long_lived as freeze_long_lived
from ctxview.core.gc_pause import gc_paused as gc_paused
from ctxview.core.gc_pause import unfreeze as unfreeze
from ctxview.core.jsonfile import SessionError as SessionError

if TYPE_CHECKING:
    from ctxview.core.providers.base import Route

#: request body fields ctxview rebuilds itself; every other one is kept in ``request_params``
#: (``stream`` is a transport choice, not part of the request: it is dropped)
REQUEST_OWN_FIELDS = frozenset({"model", "max_tokens", "system", "messages", "tools", "stream"})


def load_error(path: str, exc: BaseException) -> str:
    """The one line ``inspect`` prints for a file it cannot read: the reader's own sentence
    (:class:`SessionError`), else what went wrong, naming the file (a reader bug is never a
    traceback)."""
    if isinstance(exc, SessionError):
        return str(exc)
    if isinstance(exc, RecursionError | MemoryError):
        return f"{path}: cannot read the file ({type(exc).__name__})"
    return f"{path}: cannot read the file (internal error: {type(exc).__name__}: {exc})"


@dataclass
class LoadedSession:
    path: str
    format: str
    messages: list[dict[str, Any]]
    #: per message: timestamp, usage, flags (is_meta, compact_summary, compact_boundary, ...)
    metas: list[dict[str, Any]]
    system: Any = None
    tools: list[Any] = field(default_factory=list)
    model: str | None = None
    max_tokens: int | None = None
    max_context_messages: int | None = None
    strategy: str | None = None
    max_context_tokens: int | None = None
    low_water_fraction: float | None = None
    #: the context-editing parameters saved with a ctxview session (their config/session form)
    context_editing: dict[str, Any] | None = None
    title: str | None = None
    #: request bodies: every other top-level field (thinking, tool_choice, temperature, metadata,
    #: context_management, unknown ones...), kept verbatim and written back by ``export``
    request_params: dict[str, Any] = field(default_factory=dict)
    #: Claude Code: the session's sub-agent transcripts (``<session>/subagents/agent-*.jsonl``)
    subagents: list[str] = field(default_factory=list)
    #: 1-based numbers of JSONL lines that could not be used
    skipped_lines: list[int] = field(default_factory=list)
    #: why each skipped line could not be used (visible text, one line, cut short)
    skipped_reasons: dict[int, str] = field(default_factory=dict)
    #: ``Session.calibration`` of these messages, kept for every replay of them (a new strategy
    #: replays the same file: its recorded usage calibrates the same)
    calibration_memo: Any = field(default=None, repr=False, compare=False)
    warnings: list[str] = field(default_factory=list)
    #: request bodies: the fields ctxview rebuilds whose value the API refuses (field -> why, in
    #: the API's words); never replaced silently by a default
    invalid_fields: dict[str, str] = field(default_factory=dict)
    #: ctxview sessions only: the saved window and eviction steps, to restore exactly
    saved_window: list[int] | None = None
    saved_cut: bool = False
    saved_evicted_steps: dict[int, int] = field(default_factory=dict)
    saved_added_steps: dict[int, int] = field(default_factory=dict)
    saved_step: int | None = None
    #: Claude Code: API responses off the current branch (a rewind or an edited prompt), with
    #: where their requests left it (``ctxview.sessions.claude_code.off_branch_responses``)
    off_branch: list[dict[str, Any]] = field(default_factory=list)
    #: Claude Code: lines whose ``parentUuid`` is not in the file, ``{"line", "parent"}``: the
    #: branch went on from the message line written before each
    dangling_parents: list[dict[str, Any]] = field(default_factory=list)
    #: Claude Code: 1-based numbers of main-thread message lines on no branch (neither sent
    #: with the current one nor with a request off it): kept out of the messages, and said
    unplaced_lines: list[int] = field(default_factory=list)
    #: Claude Code: what links a sub-agent to the tool call that started it, read from the
    #: parent's tool_result lines: agent id -> the ``Task``/``Agent`` tool_use id
    subagent_links: dict[str, str] = field(default_factory=dict)
    #: Claude Code (older versions): sub-agents written into this file as ``isSidechain`` lines,
    #: agent id (or the sidechain's first uuid) -> its lines (``claude_code.Line``), rebuilt when
    #: the sub-agent is opened (``sessions.subagents``)
    sidechains: dict[str, list[Any]] = field(default_factory=dict)
    #: ctxview sessions only: saved from an "as sent" view of a recorded session (the format it
    #: was recorded in); reopened as sent
    as_sent_format: str | None = None
    #: ids the user pinned (``window.pinned``): kept whatever the strategy evicts
    saved_pinned: list[int] = field(default_factory=list)
    #: ctxview sessions: the pinned ids the strategy had passed (``window.held``; None: not saved)
    saved_held: list[int] | None = None
    #: proxy recordings: every request of the shown conversation as recorded (the lines of
    #: docs/proxy-recording.md: errors, cut streams and count_tokens calls included)
    exchanges: list[dict[str, Any]] = field(default_factory=list)
    #: proxy recordings: the shown conversation's number and every conversation the file holds
    conversation: int | None = None
    conversations: list[dict[str, Any]] = field(default_factory=list)
    #: the API the file's requests went to (``ctxview.core.providers.registry``): its rules,
    #: tokens, cache, prices and request body
    provider: str = "anthropic"
    #: where the file's requests went, read from their URL (a proxy recording's or a
    #: cassette's path): Gemini's API and whether the endpoint streamed; None for a file that
    #: does not say (a lone request body). Gemini's token estimate bills by it
    route: Route | None = None
    #: the wire messages the system prompt was read from (OpenAI Chat Completions: the leading
    #: system/developer messages), written back as they were while it is unchanged
    system_wire: list[Any] = field(default_factory=list)
    #: a ctxview session saved from another provider's file: the format it was read from (the
    #: body ``export`` writes: OpenAI's Chat Completions or Responses)
    wire_format: str | None = None
    #: Claude Code: the working directory and the first prompt its lines name (what
    #: ``ctxview sessions`` lists it by)
    cwd: str | None = None
    first_prompt: str | None = None

    def skipped(self) -> list[dict[str, Any]]:
        """``[{"line": n, "reason": why}]`` for every skipped line, in order."""
        return [
            {"line": n, "reason": self.skipped_reasons.get(n, "not usable")}
            for n in self.skipped_lines
        ]

    def route_fields(self) -> dict[str, Any]:
        """``{"route": …}`` for a Gemini session, as ``inspect --json`` and ``requests --json``
        name the route its tokens were estimated for (None: the file does not say, estimated as
        the Gemini API bills); nothing for another provider's."""
        if self.provider != "gemini":
            return {}
        return {"route": self.route.to_dict() if self.route is not None else None}

    @property
    def system_text(self) -> str:
        """The system prompt as text (blocks joined)."""
        return system_text(self.system)
