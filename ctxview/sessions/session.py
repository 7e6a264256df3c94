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

import re
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxview.core.calibrate import CALIBRATED_FORMATS, DEFAULT_RATES
from ctxview.core.context import ContextEvent, ConversationContext
from ctxview.core.ledger import Compaction, LedgerScanner
from ctxview.core.transcript import Transcript
from ctxview.sessions.model import LoadedSession

if TYPE_CHECKING:
    from ctxview.core.protocol import Problem, ProtocolChecker, RuleSet
    from ctxview.core.providers.base import BodyParts, TokenModel
    from ctxview.core.requests.next_request import NextRequest
    from ctxview.sessions.subagents import SubAgent


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
    #: what the facts below memoise, dropped when the transcript changes (:meth:`_changed`)
    _tool_index: dict[str, tuple[int, int]] | None = field(default=None, init=False, repr=False)
    _compacted_ids: set[int] | None = field(default=None, init=False, repr=False)
    _ledger: LedgerScanner = field(default_factory=LedgerScanner, init=False, repr=False)
    _steps_of: tuple[int, set[int]] | None = field(default=None, init=False, repr=False)
    _subagents: list[SubAgent] | None = field(default=None, init=False, repr=False)
    #: the request model's calibration of the file (``points.Calibration``), once computed
    _calibration: Any = field(default=None, init=False, repr=False)
    #: (messages and metas counted, {model: the next request's ``NextRequest``})
    _next: tuple[tuple[int, int], dict[str | None, NextRequest]] | None = field(
        default=None, init=False, repr=False
    )
    #: (metas counted, the messages microcompactions cleared, as the next request sends them)
    _cleared: tuple[int, dict[int, dict[str, Any]]] | None = field(
        default=None, init=False, repr=False
    )

    def calibration(self) -> tuple[Any, int | None]:
        """(rates, system prompt + tools over the file) as the request model prices a request
        of this file (``ctxview.core.requests.points.calibrate``): a transcript's fitted to its
        recorded usage, the defaults elsewhere. The file's, so computed once."""
        if self.session.format not in CALIBRATED_FORMATS:
            # (the request model itself is not imported for a file it never calibrates)
            return DEFAULT_RATES, None
        found = self._fit()
        return found.rates, found.static

    def _fit(self) -> Any:
        """The request model's ``Calibration`` of a calibrated format's file."""
        if self._calibration is None:
            memo = self.session.calibration_memo
            if memo is not None and memo[0] is self.session.messages:
                self._calibration = memo[1]
            else:
                from ctxview.core.requests.points import calibrate

                self._calibration = calibrate(self.session)
                self.session.calibration_memo = (self.session.messages, self._calibration)
        return self._calibration

    def next_request(self, model: str | None = None) -> NextRequest:
        """What the request model prices the request after the file's last message with beside
        its messages (``ctxview.core.requests.next_request``: its segment's and model's tools +
        system, each message as sent then, the recorded reasoning it carries, its model's
        tokenizer scale), for ``model`` (default the file's). ``inspect``, the app's sidebar
        and the last row of ``requests`` give one figure so. Calibrated formats only."""
        s = self.session
        model = model or s.model
        key = (len(s.messages), len(s.metas))
        if self._next is None or self._next[0] != key:
            self._next = (key, {})
        found = self._next[1].get(model)
        if found is None:
            from ctxview.core.requests.next_request import next_request

            found = self._next[1][model] = next_request(s, self._fit(), model)
        return found

    def calibrated_static(self, model: str | None = None) -> int | None:
        """The system prompt + tools the next request carries, where the file's usage
        calibrates them (a Claude Code transcript, a Codex rollout: its segment's and model's
        figure, as ``requests`` prices its requests); None for other formats."""
        if self.session.format not in CALIBRATED_FORMATS:
            return None
        return self.next_request(model).static

    def sent_tokens(
        self,
        mid: int,
        message: Mapping[str, Any],
        estimate: Callable[[Mapping[str, Any]], int] | None = None,
    ) -> int:
        """Tokens of transcript message ``mid`` as the next request sends it: the request
        model's figure where it counts the recorded message otherwise than its estimate (a
        Codex rollout's hosted searches at what its usage measured, sent as their items alone
        after an interrupt; a microcompaction's cleared results), else ``estimate`` (default
        :meth:`message_estimate`) of the message as sent (:meth:`microcompacted`)."""
        if self.session.format in CALIBRATED_FORMATS:
            msgs = self.session.messages
            if 0 <= mid < len(msgs) and msgs[mid] is message:
                found = self.next_request().sent.get(mid)
                if found is not None:
                    return found
        return (estimate or self.message_estimate())(self.microcompacted(mid, message))

    def billed_messages(
        self,
        entries: Sequence[tuple[int, Mapping[str, Any]]],
        tokens: int,
        model: str | None = None,
    ) -> int:
        """What the next request is billed for its window ``entries`` ((transcript id, message
        as sent), in order) whose messages count ``tokens``: with what they carry
        (:meth:`carried_tokens`), at ``model``'s tokenizer scale (a calibrated file's)."""
        total = tokens + (self.carried_tokens(entries) if entries else 0)
        if self.session.format not in CALIBRATED_FORMATS or not self._fit().scales:
            return total
        return self.next_request(model).billed(total)

    def repair_checker(self) -> ProtocolChecker:
        """The checker a repair finds and re-checks problems with: the session's provider's,
        for its format (an OpenAI file is repaired by Chat Completions' or the Responses API's
        rules, never by the Messages API's)."""
        from ctxview.core.protocol import ProtocolChecker

        return ProtocolChecker(memo=True, rules=self.protocol_rules)

    @property
    def token_model(self) -> TokenModel:
        """The provider's token model for the session's model and format (Gemini's model
        families bill tools, calls and thought signatures differently)."""
        from ctxview.core.providers.registry import provider

        return provider(self.provider).tokens.for_session(self.session)

    def message_estimate(self) -> Callable[[Mapping[str, Any]], int]:
        """Tokens of one message as the request model counts them: under the calibrated rates
        for a transcript with recorded usage, else the session provider's estimate. The one
        estimate of the sidebar, the timeline, ``inspect`` and the request model."""
        rates = self.calibration()[0]
        if not rates.calibrated:
            return self.token_model.estimate
        from ctxview.core.calibrate import message_features

        return lambda m: int(rates.tokens(message_features(m)))

    def microcompacted(self, mid: int, message: Mapping[str, Any]) -> Mapping[str, Any]:
        """Transcript message ``mid`` as the next request sends it: with the tool results a
        Claude Code microcompaction cleared, cleared (the transcript shows them as recorded;
        ``ctxview.core.requests.points.cleared_messages``), else ``message`` itself."""
        metas = self.session.metas
        if self._cleared is None or self._cleared[0] != len(metas):
            from ctxview.core.microcompact import cleared_messages

            self._cleared = (len(metas), cleared_messages(self.session))
        return self._cleared[1].get(mid, message)

    def carried_tokens(self, entries: Sequence[tuple[int, Mapping[str, Any]]]) -> int:
        """What the provider bills for the window ``entries`` ((transcript id, message), in
        order) beyond their messages' estimates (OpenAI: the hidden reasoning of the current
        turn): as the file recorded it where it did (a Codex response's reasoning tokens, the
        request model's figure), else the provider's estimate; none under calibrated rates,
        which were fitted on the whole usage."""
        if self.calibration()[0].calibrated:
            return 0
        if self.session.format in CALIBRATED_FORMATS:
            found = self.next_request().carried([i for i, _ in entries], len(self.session.messages))
            if found is not None:
                return found
        return self.token_model.carried_tokens([m for _, m in entries])

    def __post_init__(self) -> None:
        # registered after the replay: a 100,000-message load sends no event through it. Through
        # a weak reference: the transcript holding the session would make a reference cycle,
        # and a replaced session would wait for the cyclic GC instead of going at once.
        ref = weakref.ref(self)

        def changed(event: ContextEvent) -> None:
            session = ref()
            if session is not None:
                session._changed(event)

        self.transcript.listeners.append(changed)
        # as sent: nothing is truncated, however long it grows (follow, chat); max follows the
        # window's size as each message is added (not a setting change)
        self.context._max_follows_size = self.as_sent is not None

    def _changed(self, event: ContextEvent) -> None:
        self._compacted_ids = None
        if event.kind in ("added", "edited"):
            self._tool_index = None
        if event.kind == "edited":
            self._ledger.reset()  # an edit may add or remove a compaction block

    @property
    def subagents(self) -> list[SubAgent]:
        """The sub-agents this session started (Claude Code), each linked to its tool call;
        their messages are read when one is opened (:meth:`SubAgent.load`)."""
        if self._subagents is None:
            from ctxview.sessions.subagents import subagents_of

            self._subagents = subagents_of(self.session)
        return self._subagents

    def subagent_for(self, tool_use_id: str) -> SubAgent | None:
        """The sub-agent a ``Task``/``Agent`` tool call started, or None."""
        return next(
            (a for top in self.subagents for a in top.walk() if a.tool_use_id == tool_use_id),
            None,
        )

    def subagent_of_message(self, mid: int) -> SubAgent | None:
        """The sub-agent started by a call of message ``mid`` (or answered by its tool_result),
        or None."""
        from ctxview.sessions.subagents import call_ids

        record = self.transcript.get(mid) if 0 <= mid < len(self.transcript) else None
        if record is None or not self.subagents:
            return None
        for tid in call_ids(record.message):
            found = self.subagent_for(tid)
            if found is not None:
                return found
        return None

    @property
    def provider(self) -> str:
        """The name of the API the session's requests go to (``LoadedSession.provider``)."""
        return self.session.provider

    @property
    def protocol_rules(self) -> RuleSet:
        """The protocol rules its requests are checked by: its provider's, for its format."""
        from ctxview.core.providers.registry import provider

        s = self.session
        return provider(self.provider).rules_for(
            s.wire_format or s.format, s.request_params, s.model
        )

    @property
    def system(self) -> Any:
        """The system prompt as sent (``ConversationContext.system_sent``)."""
        return self.context.system_sent

    def model_name(self, defaults: Mapping[str, Any], model: str | None = None) -> str:
        """The model a request goes to: ``model`` (a flag, the app's choice), else the file's,
        else the config's (an Anthropic model: another provider's session falls back to none,
        and its body names none)."""
        fallback = defaults.get("model") if self.provider == "anthropic" else None
        return str(model or self.session.model or fallback or "")

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

        if self.provider != "anthropic":
            return self._provider_body(defaults, model, tools, context_management)
        return build_request(
            self.context,
            model=self.model_name(defaults, model),
            max_tokens=max_tokens or self.max_tokens(defaults),
            system=self.system,
            tools=self.session.tools if tools is None else tools,
            params=self.session.request_params,
            context_management=context_management,
        )

    def _provider_body(
        self,
        defaults: Mapping[str, Any],
        model: str | None,
        tools: list[Any] | None,
        context_management: bool | None,
    ) -> dict[str, Any]:
        """:meth:`request_body` in the session provider's wire form: the window's messages as
        sent (edited, cleared), each message's wire item back while it is unchanged."""
        from ctxview.core.providers.registry import provider

        return provider(self.provider).write_body(
            self._body_parts(defaults, model, tools, context_management)
        )

    def _body_parts(
        self,
        defaults: Mapping[str, Any],
        model: str | None = None,
        tools: list[Any] | None = None,
        context_management: bool | None = None,
    ) -> BodyParts:
        from ctxview.core.providers.base import BodyParts

        ctx = self.context
        cm = context_management
        if cm is None and ctx.edits_messages:
            cm = ctx.context_editing.server_side
        sf = ctx.sent_form() if ctx.edits_messages and not cm else None
        edited = sf.edited if sf is not None else {}
        entries = ctx.entries()
        s = self.session
        return BodyParts(
            model=self.model_name(defaults, model) or None,
            messages=[edited.get(i, m) for i, m in entries],
            # an edited message is written from its blocks, never as the wire item it was
            # read from (which would send the edit's original)
            metas=[{} if i in edited else self.transcript[i].meta for i, _ in entries],
            system=self.system,
            tools=s.tools if tools is None else tools,
            params=s.request_params,
            format=s.wire_format or s.format,
            system_wire=s.system_wire,
        )

    def wire_place(self, index: int, block: int | None = None) -> str:
        """Where message ``index`` of the window (its block ``block``) stands in the request
        body, as its API numbers it: ``messages.3.content.1`` (the Messages API), or the item
        of another API's array (Chat Completions: ``messages[4]``, counted after the leading
        system messages; a turn of tool results written as several ``tool`` messages: the
        block's own)."""
        from ctxview.core.providers.registry import provider

        starts = provider(self.provider).wire_starts
        if starts is None or not 0 <= index < len(self.context):
            return f"messages.{index}" + (f".content.{block}" if block is not None else "")
        name, at = starts(self._body_parts({}))
        first, end = at[index], at[index + 1]
        if block is not None and end - first > 1:
            first += min(block, end - first - 1)
        return f"{name}[{first}]"

    def fix_dict(self, fix: Any) -> dict[str, Any]:
        """A repair's fix (:class:`~ctxview.core.repair.Fix`) as ``inspect --json`` and
        ``repair --json`` give it: its place in the body (``path``), its detail in the body's
        numbering."""
        return {
            **fix.to_dict(),
            "path": self.wire_place(fix.index) if fix.index >= 0 else None,
            "detail": self.wire_text(fix.detail),
        }

    def wire_text(self, text: str) -> str:
        """``text`` (a fix's detail, written in the Messages API's ``messages.N.content.M``)
        with each place said as :meth:`wire_place` says it."""
        from ctxview.core.providers.registry import provider

        if provider(self.provider).wire_starts is None:
            return text
        return _MESSAGES_PATH.sub(
            lambda m: self.wire_place(
                int(m.group(1)), int(m.group(2)) if m.group(2) is not None else None
            ),
            text,
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
            provider=s.provider,
            wire_format=s.wire_format or s.format,
            system_wire=s.system_wire,
            route=(
                {"api": s.route.api, "streamed": s.route.streamed} if s.route is not None else None
            ),
        )

    def protocol_problems(self) -> list[Problem]:
        """The API's rules over the window (what makes it answer 400)."""
        from ctxview.core.protocol import Problem, check_protocol
        from ctxview.core.providers.registry import provider

        fields = [
            Problem(-1, "invalid_request_field", "error", why)
            for why in self.session.invalid_fields.values()
        ]
        notes = provider(self.provider).notes(self.session.request_params)
        window = self.window_messages()
        return (
            fields
            + notes
            + self.sent_problems(check_protocol(window, self.system, self.protocol_rules), window)
        )

    def sent_problems(self, problems: Sequence[Problem], window: Sequence[Any]) -> list[Problem]:
        """``problems`` less those of a transcript's trailing response shown as sent: the
        response that ends an agent's transcript was no part of any request sent (the next one
        would carry it), and Claude Code writes it one content block a line, so a file read
        while it is written ends on its thinking alone. ``final_thinking`` there is a response
        still being written, not an error; a request body's last message, or a simulated
        window, was or will be sent as it is, and keeps it."""
        if self.as_sent not in ("claude-code", "claude-code-web") or not window:
            return list(problems)
        last = len(window) - 1
        msgs = self.session.messages
        if window[last] is not (msgs[-1] if msgs else None):
            return list(problems)
        return [p for p in problems if not (p.code == "final_thinking" and p.index == last)]

    def window_messages(self) -> list[dict[str, Any]]:
        return [m for _, m in self.context.entries()]

    def summary(self, model: str | None = None) -> dict[str, Any]:
        """What ``ctxview inspect --json`` prints (``model``: the one the request goes to, for
        the context-window check; default the file's)."""
        from ctxview.core.compaction import effective_messages, has_compaction
        from ctxview.core.limits import context_problem
        from ctxview.sessions.request import token_breakdown
        from ctxview.sessions.subagents import subagent_files

        ctx = self.context
        session = self.session
        window = self.window_messages()
        # the API's rules, then what ctxview notes about the window itself (max+1, budget, newest)
        problems = self.protocol_problems() + ctx.window_notes()
        # messages as the API reads them (from the last compaction block on; as sent, under a
        # context-editing strategy)
        entries = ctx.sent_entries() if ctx.edits_messages else ctx.entries()
        if any(has_compaction(m) for _, m in entries):
            # the API ignores what precedes a compaction
            start, kept = effective_messages([m for _, m in entries])
            entries = [(i, m) for (i, _), m in zip(entries[start:], kept, strict=True)]
        sent = [m for _, m in entries]
        estimate = self.message_estimate()
        # each message as the next request sends it, as ``requests`` counts it (under a
        # context-editing strategy: as ctxview's editing sends it)
        tokens = (
            sum(estimate(m) for m in sent)
            if ctx.edits_messages
            else sum(self.sent_tokens(i, m, estimate) for i, m in entries)
        )
        model = model or session.model
        breakdown = token_breakdown(
            self.system,
            session.tools,
            self.billed_messages(entries, tokens, model),
            self.calibrated_static(model),
            self.token_model,
            session.request_params,
        )
        # the sidebar's rule: system + tools + window against the model's context
        over = context_problem(sum(breakdown.values()), model, provider=session.provider)
        if over is not None:
            problems.append(over)
        return {
            "file": session.path,
            "format": session.format,
            "provider": session.provider,
            **session.route_fields(),
            # "as sent": a recorded session's window as it went to the API (no truncation);
            # "simulated": under the max and strategy
            "mode": "as sent" if self.as_sent is not None else "simulated",
            "messages_total": len(self.transcript),
            "max_context_messages": ctx.max_context_messages,
            "strategy": ctx.strategy,
            "window": {
                "ids": ctx.window_ids,
                "size": len(ctx),
                # the whole request: system + tools + messages (as the app's sidebar counts it)
                "estimated_tokens": sum(breakdown.values()),
                "token_breakdown": breakdown,
                # what the request is billed for that the file does not show (the estimate
                # cannot cover it): a stored response it continues, server-side tools, files
                "billed_not_in_file": self.token_model.unmeasured_parts(
                    sent, session.tools, session.request_params
                ),
            },
            "pinned_id": ctx.pinned_id,
            "pinned_ids": ctx.pinned_ids,
            "evicted": [
                {"id": r.id, "evicted_at_step": r.evicted_step}
                for r in self.transcript.records
                if r.evicted_step is not None
            ],
            # each with its place in the request body (``path``), as the API numbers it
            "problems": [
                {
                    **p.to_dict(),
                    "path": self.wire_place(p.index, p.block) if p.index >= 0 else None,
                }
                for p in problems
            ],
            # what repair would do, under the session provider's rules
            "fixes": _fixes(window, self.system, problems, self),
            "skipped_lines": session.skipped_lines,
            # Claude Code: lines whose parent is not in the file, message lines on no branch
            "dangling_parents": session.dangling_parents,
            "unplaced_lines": session.unplaced_lines,
            "skipped": session.skipped(),
            # what the reader says of the file (turns it does not keep, candidates not shown, …)
            "warnings": list(session.warnings),
            "subagents": subagent_files(session),
            **_editing_summary(ctx),
        }

    # -- what each message is to the next request ------------------------------------------------
    def ledger(self) -> list[Compaction]:
        """Every compaction of the session (``ctxview.core.ledger``); new messages are scanned
        once, as they are added."""
        scanner = self._ledger
        records = self.transcript.records
        if scanner.scanned >= len(records):
            return scanner.entries
        return scanner.feed((r.message, r.meta) for r in records[scanner.scanned :])

    def compaction_at(self, mid: int) -> Compaction | None:
        """The compaction whose conversation starts again at message ``mid``."""
        for c in self.ledger():
            if c.id == mid:
                return c
        return None

    def claude_code_compaction_of(self, mid: int) -> Compaction | None:
        """The Claude Code compaction that replaced message ``mid`` (None if none did; a
        ``compaction`` block's messages are compacted by the context itself)."""
        if mid in self.compacted_ids():
            return None
        for c in self.ledger():
            if c.kind == "claude-code" and mid < c.id:
                return c
        return None

    def compacted_ids(self) -> set[int]:
        """The window's messages before its last compaction block (the API ignores them)."""
        if self._compacted_ids is None:
            self._compacted_ids = set(self.context.compacted_ids)
        return self._compacted_ids

    def compaction_steps(self) -> set[int]:
        """The steps at which a Claude Code compaction's first message came: what left the
        window at one of them was replaced by it (nothing else leaves then: the summary starts
        the window again, ``ConversationContext.start_again``; as sent, the records before it
        are restored as evicted at that step)."""
        ledger = self.ledger()
        if self._steps_of is None or self._steps_of[0] != len(ledger):
            steps = set()
            for c in ledger:
                start = self.transcript.get(c.id) if c.kind == "claude-code" else None
                if start is not None:
                    steps.add(start.added_step)
            self._steps_of = (len(ledger), steps)
        return self._steps_of[1]

    def left_at_compaction(self, mid: int) -> bool:
        """Message ``mid`` left the window at a Claude Code compaction (as sent, or in a
        simulation, which starts again at its summary). Steps are saved with a session, so a
        reopened one tells the same."""
        rec = self.transcript.get(mid)
        if rec is None or rec.evicted_step is None:
            return False
        return mid < self.compacted_before or rec.evicted_step in self.compaction_steps()

    def claude_code_compacted_before(self) -> int:
        """Ids below this were replaced by Claude Code's last compaction (0: none)."""
        for c in reversed(self.ledger()):
            if c.kind == "claude-code":
                return c.id
        return 0

    def sent_message(self, mid: int) -> dict[str, Any] | None:
        """The message as a context-editing strategy sends it, when that differs from the
        message recorded (None otherwise)."""
        if not self.context.edits_messages:
            return None
        sf = self.context.sent_form()
        return sf.edited.get(mid) if sf is not None else None

    def status(self, mid: int) -> str:
        """What message ``mid`` is to the next request: ``pinned``, ``kept``, ``evicted``,
        ``compacted``, ``cleared``, ``edited`` or ``dropped``."""
        status = self.transcript.status(mid)
        if status != "evicted" and mid in self.compacted_ids():
            return "compacted"  # before the last compaction block: the API ignores it
        if status == "evicted" and self.left_at_compaction(mid):
            return "compacted"  # in the window when a compaction replaced it
        if status == "kept" and mid < self.claude_code_compacted_before():
            # replaced by Claude Code's summary: later requests lacked it (the pinned message
            # stays pinned: ctxview's window sends it)
            return "compacted"
        if status == "kept" and self.sent_message(mid) is not None:
            return "cleared"  # context editing sends it with tool results / thinking cleared
        if status == "kept" and self.transcript.edited(mid):
            return "edited"  # what is sent differs from what was recorded
        if status == "evicted" and self.transcript[mid].meta.get("removed"):
            return "dropped"  # an edit (or a repair) took it out of the window
        return status

    # -- tool pairs ------------------------------------------------------------------------------
    def _tools(self) -> dict[str, tuple[int, int]]:
        """tool id -> (the message with its tool_use, the one with its result; -1: none)."""
        if self._tool_index is None:
            idx: dict[str, tuple[int, int]] = {}
            for rec in self.transcript.records:
                content = rec.message.get("content")
                if not isinstance(content, list):
                    continue
                for b in content:
                    if not isinstance(b, Mapping):
                        continue
                    if b.get("type") == "tool_use" and isinstance(b.get("id"), str):
                        use, res = idx.get(b["id"], (-1, -1))
                        idx[b["id"]] = (rec.id, res)
                    elif b.get("type") == "tool_result" and isinstance(b.get("tool_use_id"), str):
                        use, res = idx.get(b["tool_use_id"], (-1, -1))
                        idx[b["tool_use_id"]] = (use, rec.id)
            self._tool_index = idx
        return self._tool_index

    def partner(self, mid: int) -> int | None:
        """For a tool_result message, the message with its tool_use; for a tool_use, its result."""
        content = self.transcript[mid].message.get("content")
        if not isinstance(content, list):
            return None
        idx = self._tools()
        for b in content:
            if not isinstance(b, Mapping):
                continue
            if b.get("type") == "tool_result":
                use = idx.get(str(b.get("tool_use_id")), (-1, -1))[0]
                if use >= 0:
                    return use
            if b.get("type") == "tool_use":
                res = idx.get(str(b.get("id")), (-1, -1))[1]
                if res >= 0:
                    return res
        return None


#: a place in a fix's detail: ``messages.N`` or ``messages.N.content.M``
_MESSAGES_PATH = re.compile(r"\bmessages\.(\d+)(?:\.content\.(\d+))?")


def _fixes(
    window: list[Any], system: Any, problems: list[Any], rep: Session
) -> list[dict[str, Any]]:
    """What ``ctxview repair`` would do (only computed when the window has an error)."""
    if not any(p.severity == "error" for p in problems):
        return []
    from ctxview.core.repair import repair

    return [rep.fix_dict(f) for f in repair(window, system, checker=rep.repair_checker()).fixes]


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
