"""The agent loop, made visible: user message → window → request → streamed reply → tools →
again, with every fault reported and nothing half-done added to the context."""

from __future__ import annotations

import asyncio
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview.app.model import Draft
from ctxview.chat.autosave import new_autosave_path
from ctxview.chat.backends import AnthropicBackend, Backend, ChatError, OfflineBackend, import_sdk
from ctxview.chat.presend import not_in_window, raised_max
from ctxview.chat.tools import ToolSettings, run_tool
from ctxview.core.context import block_to_dict
from ctxview.core.protocol import errors
from ctxview.textfmt import one_line

if TYPE_CHECKING:
    from ctxview.app.app import CtxviewApp


#: a tool call that has not answered by then gets an error result (the tools are bounded to well
#: under a second of CPU; this is the backstop)
TOOL_TIMEOUT = 5.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class ChatController:
    def __init__(
        self,
        app: CtxviewApp,
        *,
        offline: bool,
        backend: Backend | None = None,
        tools: ToolSettings | None = None,
        autosave: bool = True,
    ) -> None:
        self.app = app
        self.offline = offline
        cfg = app.config
        if backend is None:
            if offline:
                backend = OfflineBackend()
            else:
                backend = AnthropicBackend(
                    api_key=os.environ.get("ANTHROPIC_API_KEY"),
                    base_url=os.environ.get("ANTHROPIC_BASE_URL"),
                    timeout=float(cfg.get("request_timeout", 120.0)),
                )
        self.backend: Backend = backend
        self.tools = tools or ToolSettings.from_config(cfg.values)
        self.rounds = int(cfg.get("tool_rounds", 8))
        self.autosave_enabled = autosave
        self.autosave_path: Path | None = None
        self.busy = False
        self.failed = False
        self._worker: Any = None
        self.requests: list[dict[str, Any]] = []  # every body sent, for tests and the curious
        self._save_lock = threading.Lock()
        self._save_seq = 0
        self._saved_seq = 0

    # -- lifecycle ------------------------------------------------------------------------------
    def warm(self) -> None:
        """Import the SDK in a thread after the first paint, so the first send does not wait."""
        if isinstance(self.backend, AnthropicBackend):
            self.app.run_worker(import_sdk, thread=True, group="sdk", exit_on_error=False)

    def reset(self) -> None:
        self.cancel()
        self.autosave_path = None
        self.failed = False

    def ensure_tools(self) -> None:
        """Offer the built-in tools (the ones ctxview can run) beside the session's own."""
        have = {t.get("name") for t in self.app.model.tools if isinstance(t, dict)}
        for schema in self.tools.schemas():
            if schema["name"] not in have:
                self.app.model.tools.append(schema)

    # -- user actions ---------------------------------------------------------------------------
    def submit(self, text: str) -> None:
        app = self.app
        if self.busy:
            app.notify("a reply is in flight: wait, or press escape to cancel it", markup=False)
            return
        ctx = app.model.context
        mid = ctx.add_user_message(text, meta={"timestamp": _now()})
        app.model.set_draft(None)
        app.context_changed(keep=mid)
        self._autosave()
        self._check_and_send(mid, text)

    def retry(self) -> None:
        app = self.app
        if self.busy:
            app.notify("a reply is in flight", markup=False)
            return
        msgs = app.model.context.messages
        if not msgs or msgs[-1].get("role") != "user":
            app.notify("nothing to retry: the last message is the model's", markup=False)
            return
        app.model.set_draft(None)
        app.timeline.refresh_rows()
        self._check_and_send()

    def cancel(self) -> None:
        if self._worker is not None and self.busy:
            self._worker.cancel()

    def count_tokens(self) -> None:
        app = self.app

        async def run() -> None:
            body = self._body()
            try:
                n = await self.backend.count_tokens(body)
            except ChatError as exc:
                est = app.model.window_tokens if app.model.tokens_ready else 0
                app.notify(
                    f"{exc} (estimate: ~{est:,})",
                    title="count_tokens",
                    severity="warning",
                    markup=False,
                )
                return
            app.exact_tokens = n
            app.update_panes()
            app.notify(f"exact window size: {n:,} input tokens (count_tokens)", markup=False)

        app.run_worker(run(), group="count", exclusive=True)

    # -- sending --------------------------------------------------------------------------------
    def _body(self) -> dict[str, Any]:
        self.ensure_tools()
        return self.app.request_body()

    def _check_and_send(self, mid: int | None = None, text: str = "") -> None:
        app = self.app
        model = app.model
        probs = errors(model.problems)  # the model's memoised check of this window
        ctx = model.context
        missing = (
            not_in_window(model.window_ids, mid, ctx.max_context_messages)
            if mid is not None
            else None
        )
        if not probs and missing is None:
            self._start()
            return
        from ctxview.app.screens.modals import ConfirmSendScreen

        raise_to = raised_max(len(ctx), ctx.max_context_messages)

        def chosen(choice: str | None) -> None:
            if choice == "send":
                self._start()
            elif choice == "pair-safe":
                app.set_strategy("pair-safe")
                self._start()
            elif choice == "raise":
                app.set_max(raise_to)
                self.submit(text)  # evicted messages never come back: add it again
            else:
                self.failed = True
                app.notify("not sent: your message stays; ctrl+r sends it later", markup=False)

        app.push_screen(ConfirmSendScreen([p.message for p in probs], missing, raise_to), chosen)

    def _start(self) -> None:
        self._worker = self.app.run_worker(
            self._loop(), group="chat", exclusive=True, exit_on_error=False
        )

    def _on_thinking(self, chunk: str) -> None:
        d = self.app.model.draft
        if d is None:
            return
        d.thinking += chunk
        self._draft_changed(d)

    def _on_text(self, chunk: str) -> None:
        d = self.app.model.draft
        if d is None:
            return
        d.text += chunk
        self._draft_changed(d)

    def _draft_changed(self, d: Draft) -> None:
        tl = self.app.timeline
        tl.refresh()
        if tl.on_draft:
            self.app.show_detail()

    async def _loop(self) -> None:
        app = self.app
        model = app.model
        ctx = model.context
        self.busy = True
        self.failed = False
        try:
            for _round in range(self.rounds):
                body = self._body()
                self.requests.append(body)
                model.set_draft(Draft())
                at_end = app.timeline.cursor >= len(model.rows) - 2
                app.timeline.refresh_rows()
                if at_end:
                    app.timeline.action_jump_end()
                try:
                    reply = await self.backend.reply(body, self._on_text, self._on_thinking)
                except ChatError as exc:
                    self._fail("failed", str(exc), exc.partial)
                    return
                except asyncio.CancelledError:
                    self._fail(
                        "cancelled",
                        "reply cancelled: the partial text is shown, not added; ctrl+r retries",
                    )
                    raise
                if not reply.complete:
                    self._fail(
                        "incomplete",
                        "the stream was cut before message_stop: the partial reply is shown but NOT "
                        "added to the context; ctrl+r retries",
                    )
                    return
                model.set_draft(None)
                meta: dict[str, Any] = {"timestamp": _now(), "stop_reason": reply.stop_reason}
                if reply.usage:
                    meta["usage"] = reply.usage
                if reply.model:
                    meta["model"] = reply.model
                blocks = [block_to_dict(b) for b in reply.content]
                mid = ctx.add_assistant_message(blocks, meta=meta)
                app.context_changed(keep=mid if at_end else None)
                if reply.stop_reason != "tool_use":
                    break
                # The tool calls of the message just added (never ``ctx.messages[-1]``: a strategy
                # may have evicted or reordered the window's end).
                uses = [b for b in blocks if b.get("type") == "tool_use"]
                if not uses:
                    break
                results = []
                for use in uses:
                    content, is_error = await self._run_tool(use)
                    results.append(
                        {"tool_use_id": use.get("id"), "content": content, "is_error": is_error}
                    )
                rid = ctx.add_tool_results(results, meta={"timestamp": _now()})
                app.context_changed(keep=rid if at_end else None)
                self._autosave()  # a kill mid-loop loses at most the reply in flight
            else:
                app.notify(
                    f"stopped after {self.rounds} tool rounds (tool_rounds in the config)",
                    severity="warning",
                    markup=False,
                )
            self._autosave()
        finally:
            self.busy = False

    async def _run_tool(self, use: dict[str, Any]) -> tuple[str, bool]:
        """One tool call in a thread; whatever happens, an answer (a fault is an error result)."""
        name = str(use.get("name"))
        try:
            return await asyncio.wait_for(
                asyncio.to_thread(run_tool, name, use.get("input"), self.tools), TOOL_TIMEOUT
            )
        except TimeoutError:
            return f"{one_line(name, 60)} timed out after {TOOL_TIMEOUT:g} s", True
        except Exception as exc:
            return one_line(f"{name} failed: {type(exc).__name__}: {exc}", 300), True

    def _fail(self, state: str, message: str, partial: str = "") -> None:
        app = self.app
        self.failed = True
        d = app.model.draft or Draft()
        if partial and not d.text:
            d.text = partial
        d.state = state
        d.reason = message
        app.model.set_draft(d)
        app.timeline.refresh_rows()
        if app.timeline.on_draft:
            app.show_detail()
        app.notify(message, title="reply " + state, severity="error", markup=False, timeout=12)

    # -- autosave -------------------------------------------------------------------------------
    def autosave_now(self) -> Path | None:
        """Save the chat at once, in this thread (SIGTERM/SIGHUP): the path, or None when there
        was no chat to save or the save was refused (the key in the text, an unwritable dir)."""
        if not self.autosave_enabled or self.autosave_path is None:
            return None
        from ctxview.sessions.store import save_session

        try:
            with self._save_lock:
                self._save_seq += 1
                self._saved_seq = self._save_seq
                save_session(self.autosave_path, self.app.session_document())
        except (OSError, ValueError):
            return None
        return self.autosave_path

    def _autosave(self) -> None:
        if not self.autosave_enabled:
            return
        if self.autosave_path is None:
            self.autosave_path = new_autosave_path()
        doc = self.app.session_document()
        path = self.autosave_path
        self._save_seq += 1
        seq = self._save_seq

        def save() -> None:
            from ctxview.sessions.store import save_session

            try:
                # saves run in threads, one at a time: an older snapshot never overwrites a newer
                with self._save_lock:
                    if seq < self._saved_seq:
                        return
                    self._saved_seq = seq
                    save_session(path, doc)
            except (OSError, ValueError) as exc:
                self.app.call_from_thread(
                    self.app.notify, f"autosave failed: {exc}", severity="warning", markup=False
                )

        self.app.run_worker(save, thread=True, group="autosave", exit_on_error=False)
