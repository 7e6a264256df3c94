"""The agent loop, headless: user message → window → request → streamed reply → tools → again,
with every fault reported and nothing half-done added to the context.

No Textual and no SDK here (the SDK is imported by :class:`AnthropicBackend` on the first
request). The loop drives a :class:`ChatSession` (the live ``ConversationContext`` and what a
request is built from) and tells its subscribers what happens through :class:`ChatEvent` objects;
what to do about a window that should not be sent is a question it asks its caller (``decide``).
The TUI (``ctxview.app.chat``) and ``ctxview chat --no-tui`` (``ctxview.cli.chat``) are its two
callers. Evictions are not loop events: they come from the context's own ``subscribe()``.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from ctxview.chat.autosave import file_id, new_autosave_path
from ctxview.chat.backends import AnthropicBackend, Backend, ChatError, OfflineBackend
from ctxview.chat.presend import not_in_window, pair_safe_would_fix, raised_max
from ctxview.chat.tools import ToolSettings, run_tool
from ctxview.core.context import ConversationContext, block_to_dict
from ctxview.core.protocol import Problem, ProtocolChecker, errors
from ctxview.sessions.session import Session
from ctxview.textfmt import one_line

#: a tool call that has not answered by then gets an error result (the tools are bounded to well
#: under a second of CPU; this is the backstop)
TOOL_TIMEOUT = 5.0

CANCELLED = "reply cancelled: the partial text is shown, not added; ctrl+r retries"
INCOMPLETE = (
    "the stream was cut before message_stop: the partial reply is shown but NOT added to the "
    "context; ctrl+r retries"
)
DECLINED = "not sent: your message stays; ctrl+r sends it later"


def cannot_chat(provider: str, fmt: str) -> str | None:
    """Why a session of ``provider`` cannot be continued in the chat, or None. The chat talks to
    Claude (or the offline model, which answers as the Messages API does): another API's
    session would go out in that API's body, which the Messages API refuses."""
    if provider == "anthropic":
        return None
    return (
        f"the chat talks to Claude: this {fmt} session is another API's, to read, check and "
        "export, not to continue here (a new chat: ctxview with no file)"
    )


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- what the loop drives ---------------------------------------------------------------------------
class ChatSession(Protocol):
    """The session a loop drives: read live on every request (the TUI's model can change)."""

    @property
    def context(self) -> ConversationContext: ...

    @property
    def tools(self) -> list[Any]: ...

    def request_body(self) -> dict[str, Any]: ...

    def protocol_problems(self) -> list[Problem]: ...

    def session_document(self) -> dict[str, Any]: ...


class HeadlessSession:
    """A :class:`ChatSession` over a :class:`~ctxview.sessions.session.Session` (a replayed file
    or a new chat, ``ctxview chat --no-tui``) and the model and max_tokens its requests go with."""

    def __init__(self, session: Session, model: str, max_tokens: int) -> None:
        self.session = session
        self.model = model
        self.max_tokens = max_tokens
        self._checker = ProtocolChecker()

    @property
    def context(self) -> ConversationContext:
        return self.session.context

    @property
    def tools(self) -> list[Any]:
        return self.session.session.tools

    def request_body(self) -> dict[str, Any]:
        return self.session.request_body({}, self.model, max_tokens=self.max_tokens)

    def protocol_problems(self) -> list[Problem]:
        # incremental: a turn re-checks only what it added
        return self._checker.check(self.context.entries(), self.session.system)

    def session_document(self) -> dict[str, Any]:
        return self.session.document({}, self.model, max_tokens=self.max_tokens)


def make_backend(offline: bool, config: Mapping[str, Any]) -> Backend:
    """The offline model, or Claude (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ``request_timeout``)."""
    if offline:
        return OfflineBackend()
    return AnthropicBackend(
        api_key=os.environ.get("ANTHROPIC_API_KEY"),
        base_url=os.environ.get("ANTHROPIC_BASE_URL"),
        timeout=float(config.get("request_timeout", 120.0)),
    )


# -- events out -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Sending:
    """A request goes out (``round`` 0 is the user's message, then one per tool round)."""

    round: int
    body: dict[str, Any]
    kind: Literal["sending"] = "sending"


@dataclass(frozen=True)
class TextDelta:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True)
class ThinkingDelta:
    text: str
    kind: Literal["thinking"] = "thinking"


@dataclass(frozen=True)
class Added:
    """The loop added a message to the context: ``what`` is ``prompt`` (the user's message),
    ``reply`` (a complete assistant reply) or ``tool_results``."""

    id: int
    what: Literal["prompt", "reply", "tool_results"]
    kind: Literal["added"] = "added"


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    input: Any
    kind: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True)
class ToolResult:
    tool_use_id: str
    name: str
    content: str
    is_error: bool
    kind: Literal["tool_result"] = "tool_result"


@dataclass(frozen=True)
class Fault:
    """A reply that did not complete: ``state`` is ``failed`` (an API or transport error,
    ``status`` the HTTP status when there was one), ``incomplete`` (cut before message_stop) or
    ``cancelled``. ``partial`` is what had streamed: it is never added to the context."""

    state: Literal["failed", "incomplete", "cancelled"]
    message: str
    status: int | None = None
    partial: str = ""
    kind: Literal["fault"] = "fault"


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended: ``done``, ``rounds`` (stopped after ``tool_rounds``), ``declined`` (the
    caller chose not to send), ``failed`` or ``incomplete``."""

    outcome: Literal["done", "rounds", "declined", "failed", "incomplete"]
    message: str = ""
    reply_id: int | None = None
    stop_reason: str | None = None
    status: int | None = None
    presend: PreSend | None = None

    @property
    def ok(self) -> bool:
        return self.outcome in ("done", "rounds")


@dataclass(frozen=True)
class TurnDone:
    result: TurnResult
    kind: Literal["done"] = "done"


@dataclass(frozen=True)
class SaveFailed:
    message: str
    kind: Literal["save_failed"] = "save_failed"


ChatEvent = (
    Sending
    | TextDelta
    | ThinkingDelta
    | Added
    | ToolCall
    | ToolResult
    | Fault
    | TurnDone
    | SaveFailed
)


@dataclass(frozen=True)
class PreSend:
    """Why the window should not go out as it is: the API's error texts for its protocol errors,
    and/or why the message just typed is not in the window; ``raise_to`` is a max that would
    hold it."""

    problems: list[str] = field(default_factory=list)
    missing: str | None = None
    raise_to: int = 0
    #: switching to ``pair-safe`` would make the window valid (only then is it offered)
    pair_safe_helps: bool = False


#: the caller's answer: ``send`` (anyway), ``pair-safe`` (switch strategy, then send), ``raise``
#: (raise max to ``raise_to`` and add the message again), or None (keep it unsent)
Decide = Callable[[PreSend], Awaitable[str | None]]


async def _never(_: PreSend) -> str | None:
    return None


# -- the loop -----------------------------------------------------------------------------------------
class AgentLoop:
    """One chat's agent loop. ``await submit(text)`` runs one turn; events go to subscribers."""

    def __init__(
        self,
        session: ChatSession,
        backend: Backend,
        *,
        tools: ToolSettings,
        rounds: int = 8,
        autosave: bool = True,
        decide: Decide = _never,
        tool_timeout: float = TOOL_TIMEOUT,
    ) -> None:
        self.session = session
        self.backend = backend
        self.tools = tools
        self.rounds = rounds
        self.autosave_enabled = autosave
        self.decide = decide
        self.tool_timeout = tool_timeout
        self.autosave_path: Path | None = None
        #: :func:`~ctxview.chat.autosave.file_id` of the autosave file as this chat left it
        self._autosave_id: tuple[int, int, int, int] | None = None
        self.busy = False  #: a request is in flight
        self.failed = False  #: the last turn did not complete
        self.requests: list[dict[str, Any]] = []  #: every body sent, for tests and the curious
        self._subscribers: list[Callable[[ChatEvent], None]] = []
        self._save_lock = threading.Lock()
        self._save_seq = 0
        self._saved_seq = 0
        self._saves: set[asyncio.Future[str | None]] = set()

    # -- events ---------------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[ChatEvent], None]) -> Callable[[], None]:
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self, event: ChatEvent) -> None:
        for cb in list(self._subscribers):
            cb(event)

    # -- the request ----------------------------------------------------------------------------
    def _tools_to_add(self) -> list[dict[str, Any]]:
        """The built-in tools (the ones ctxview can run) the session's own do not name."""
        have = {t.get("name") for t in self.session.tools if isinstance(t, dict)}
        return [schema for schema in self.tools.schemas() if schema["name"] not in have]

    def ensure_tools(self) -> None:
        """Offer the built-in tools beside the session's own (from now on, in the session)."""
        self.session.tools.extend(self._tools_to_add())

    def body(self) -> dict[str, Any]:
        """The request a send makes now: the built-in tools become the session's (they are
        sent, so the session records them)."""
        self.ensure_tools()
        return self.session.request_body()

    def preview_body(self) -> dict[str, Any]:
        """:meth:`body` without changing the session: what ``count_tokens`` measures. (It used
        to add the built-in tools to the session as a side effect: a count changed the tools,
        the tokens, the prices and the export of a file that had sent nothing.)"""
        body = self.session.request_body()
        extra = self._tools_to_add()
        if extra:
            body["tools"] = [*(body.get("tools") or []), *extra]
        return body

    def reset(self) -> None:
        """Another session: the next turn autosaves to a new file."""
        self.autosave_path = None
        self._autosave_id = None
        self.failed = False

    def cannot_retry(self) -> str | None:
        """Why :meth:`retry` has nothing to do, or None."""
        if self.busy:
            return "a reply is in flight"
        msgs = self.session.context.messages
        if not msgs or msgs[-1].get("role") != "user":
            return "nothing to retry: the last message is the model's"
        return None

    # -- a turn ---------------------------------------------------------------------------------
    # ``submit``/``retry`` run a whole turn and ask ``decide`` when the window should not go out
    # as it is. A UI that must not hold a task open while a dialog is up uses the steps instead:
    # ``add_prompt``, ``presend``, then ``send`` or ``answer(pre, choice)``.
    async def submit(self, text: str) -> TurnResult:
        """Add the user's message and run the turn."""
        mid = self.add_prompt(text)
        return await self._check_and_send(mid, text)

    async def retry(self) -> TurnResult:
        """Send the window again (after a fault): the user's message is not added twice."""
        why = self.cannot_retry()
        if why is not None:
            raise RuntimeError(why)
        return await self._check_and_send()

    def add_prompt(self, text: str) -> int:
        """Add the user's message to the context (and autosave): its id."""
        mid = self.session.context.add_user_message(text, meta={"timestamp": _now()})
        self._emit(Added(mid, "prompt"))
        self.autosave()
        return mid

    def presend(self, mid: int | None = None) -> PreSend | None:
        """What is wrong with sending the window now (protocol errors; the message ``mid`` not
        in it), or None when it can go."""
        ctx = self.session.context
        probs = errors(self.session.protocol_problems())
        missing = (
            not_in_window(ctx.window_ids, mid, ctx.max_context_messages)
            if mid is not None
            else None
        )
        if not probs and missing is None:
            return None
        helps = bool(probs) and pair_safe_would_fix(
            ctx.entries(), ctx.max_context_messages, ctx._window.cut, ctx._window.system_prompt
        )
        return PreSend(
            [p.message for p in probs],
            missing,
            raised_max(len(ctx), ctx.max_context_messages),
            helps,
        )

    async def _check_and_send(self, mid: int | None = None, text: str = "") -> TurnResult:
        pre = self.presend(mid)
        if pre is None:
            return await self.send()
        return await self.answer(pre, await self.decide(pre), text, mid)

    async def answer(
        self, pre: PreSend, choice: str | None, text: str = "", mid: int | None = None
    ) -> TurnResult:
        """Act on the caller's choice about ``pre`` (see :data:`Decide`)."""
        ctx = self.session.context
        if choice == "pair-safe":
            if ctx.strategy != "pair-safe":  # (the caller may have switched already)
                ctx.set_strategy("pair-safe")
        elif choice == "raise" and mid is not None:
            if ctx.max_context_messages < pre.raise_to:
                ctx.set_max_context_messages(pre.raise_to)
            return await self.submit(text)  # evicted messages never come back: add it again
        elif choice != "send":
            self.failed = True
            return self._done(TurnResult("declined", DECLINED, presend=pre))
        return await self.send()

    def _done(self, result: TurnResult) -> TurnResult:
        self._emit(TurnDone(result))
        return result

    def _fault(
        self, state: Literal["failed", "incomplete"], message: str, status: int | None, partial: str
    ) -> TurnResult:
        self.failed = True
        self._emit(Fault(state, message, status, partial))
        return self._done(TurnResult(state, message, status=status))

    async def send(self) -> TurnResult:
        """Send the window as it is, and go on until the model stops using tools."""
        ctx = self.session.context
        self.busy = True
        self.failed = False
        reply_id: int | None = None
        stop_reason: str | None = None
        streamed: list[str] = []  # the text of the reply in flight

        def on_text(chunk: str) -> None:
            streamed.append(chunk)
            self._emit(TextDelta(chunk))

        def on_thinking(chunk: str) -> None:
            self._emit(ThinkingDelta(chunk))

        try:
            for round_ in range(self.rounds):
                if round_ > 0:
                    # an automatic round (tool results) is checked like a typed message: a window
                    # the API would reject is not sent; retry (ctrl+r) asks what to do
                    pre = self.presend()
                    if pre is not None:
                        self.failed = True
                        self.autosave()
                        return self._done(
                            TurnResult(
                                "declined",
                                "the tool results were added, but the API would reject the "
                                f"window ({pre.problems[0]}): not sent. Retry (ctrl+r) to choose: "
                                "send anyway or switch strategy",
                                reply_id,
                                stop_reason,
                                presend=pre,
                            )
                        )
                body = self.body()
                self.requests.append(body)
                self._emit(Sending(round_, body))
                streamed.clear()
                try:
                    reply = await self.backend.reply(body, on_text, on_thinking)
                except ChatError as exc:
                    return self._fault("failed", str(exc), exc.status, exc.partial)
                except asyncio.CancelledError:
                    self.failed = True
                    self._emit(Fault("cancelled", CANCELLED, None, "".join(streamed)))
                    raise
                if not reply.complete:
                    return self._fault("incomplete", INCOMPLETE, None, "".join(streamed))
                meta: dict[str, Any] = {"timestamp": _now(), "stop_reason": reply.stop_reason}
                if reply.usage:
                    meta["usage"] = reply.usage
                if reply.model:
                    meta["model"] = reply.model
                if getattr(reply, "context_management", None):
                    meta["context_management"] = reply.context_management
                blocks = [block_to_dict(b) for b in reply.content]
                reply_id = ctx.add_assistant_message(blocks, meta=meta)
                stop_reason = reply.stop_reason
                self._emit(Added(reply_id, "reply"))
                if reply.stop_reason != "tool_use":
                    break
                # The tool calls of the message just added (never ``ctx.messages[-1]``: a strategy
                # may have evicted or reordered the window's end).
                uses = [b for b in blocks if b.get("type") == "tool_use"]
                if not uses:
                    break
                results = []
                for use in uses:
                    name = str(use.get("name"))
                    self._emit(ToolCall(str(use.get("id")), name, use.get("input")))
                    content, is_error = await self._run_tool(use)
                    self._emit(ToolResult(str(use.get("id")), name, content, is_error))
                    results.append(
                        {"tool_use_id": use.get("id"), "content": content, "is_error": is_error}
                    )
                rid = ctx.add_tool_results(results, meta={"timestamp": _now()})
                self._emit(Added(rid, "tool_results"))
                self.autosave()  # a kill mid-loop loses at most the reply in flight
            else:
                self.autosave()
                await self.wait_saved()
                return self._done(
                    TurnResult(
                        "rounds",
                        f"stopped after {self.rounds} tool rounds (tool_rounds in the config)",
                        reply_id,
                        stop_reason,
                    )
                )
            self.autosave()
            await self.wait_saved()
            return self._done(TurnResult("done", "", reply_id, stop_reason))
        finally:
            self.busy = False

    async def _run_tool(self, use: dict[str, Any]) -> tuple[str, bool]:
        """One tool call in a thread; whatever happens, an answer (a fault is an error result)."""
        name = str(use.get("name"))
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(run_tool, name, use.get("input"), self.tools), self.tool_timeout
            )
        except TimeoutError:
            return f"{one_line(name, 60)} timed out after {self.tool_timeout:g} s", True
        except Exception as exc:
            return one_line(f"{name} failed: {type(exc).__name__}: {exc}", 300), True

    # -- autosave -------------------------------------------------------------------------------
    def autosave_now(self) -> Path | None:
        """Save the chat at once, in this thread (SIGTERM/SIGHUP): the path, or None when there
        was no chat to save or the save was refused (the key in the text, an unwritable dir)."""
        if not self.autosave_enabled or self.autosave_path is None:
            return None
        try:
            with self._save_lock:
                self._save_seq += 1
                self._saved_seq = self._save_seq
                self._write_autosave(self.session.session_document())
        except (OSError, ValueError):
            return None
        return self.autosave_path

    def _write_autosave(self, doc: dict[str, Any]) -> None:
        """Write ``doc`` to the autosave file (under the save lock). The file is replaced only
        while it is still the one this chat created or last wrote: when another program put a
        file of its own there, the chat goes on in a fresh file instead."""
        from ctxview.sessions.store import save_session

        path = self.autosave_path
        if path is None or file_id(path) != self._autosave_id:
            path = self.autosave_path = new_autosave_path()
        save_session(path, doc)
        self._autosave_id = file_id(path)

    def autosave(self) -> None:
        """Snapshot the session now and write it in a thread (atomically, never the API key)."""
        if not self.autosave_enabled:
            return
        if self.autosave_path is None:
            try:  # the name is claimed here, at once: two chats never share it
                self.autosave_path = new_autosave_path()
            except OSError as exc:
                self._emit(SaveFailed(f"autosave failed: {exc}"))
                return
            self._autosave_id = file_id(self.autosave_path)
        doc = self.session.session_document()
        self._save_seq += 1
        seq = self._save_seq

        def save() -> str | None:
            try:
                # saves run in threads, one at a time: an older snapshot never overwrites a newer
                with self._save_lock:
                    if seq < self._saved_seq:
                        return None
                    self._saved_seq = seq
                    self._write_autosave(doc)
            except (OSError, ValueError) as exc:
                return f"autosave failed: {exc}"
            return None

        fut = asyncio.get_running_loop().run_in_executor(None, save)
        self._saves.add(fut)
        fut.add_done_callback(self._saved)

    def _saved(self, fut: asyncio.Future[str | None]) -> None:
        self._saves.discard(fut)
        if not fut.cancelled() and fut.exception() is None and (msg := fut.result()):
            self._emit(SaveFailed(msg))

    async def wait_saved(self) -> None:
        """Until every save started so far is on disk (or failed)."""
        while self._saves:
            await asyncio.gather(*list(self._saves), return_exceptions=True)
