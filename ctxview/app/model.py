"""What the UI shows about a session (no widgets here).

Keeps the row list of the timeline (with the gap and ledger markers), per-message row text and
token estimates, the protocol problems of the window by row, the verdict and the cache line,
and records which messages each operation evicted so the timeline can animate them. What each
message is to the next request (status, tool pairs, compactions, the system prompt as sent) is
the :class:`~ctxview.sessions.session.Session`'s.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import Any

from ctxview.core.calibrate import CALIBRATED_FORMATS
from ctxview.core.context import ContextEvent, ConversationContext
from ctxview.core.ledger import Compaction
from ctxview.core.limits import MODEL_CONTEXT as MODEL_CONTEXT  # the rule lives in core.limits
from ctxview.core.limits import context_size as context_size
from ctxview.core.protocol import Problem, ProtocolChecker
from ctxview.core.tokens import estimate_message
from ctxview.core.transcript import Transcript
from ctxview.sessions.model import LoadedSession
from ctxview.sessions.rowtext import row_text
from ctxview.sessions.session import Session
from ctxview.textfmt import counted, fmt_tokens, id_ranges, plural

GAP = -1  #: the row id of the gap marker
DRAFT = -2  #: the row id of a reply being streamed (or cut), which is not in the context
SYNC_TOKEN_LIMIT = 20_000  #: sessions up to this size get token estimates before first paint
#: a transcript is calibrated (``Session.calibration``: a fit over every request) before first
#: paint up to this size, in the token worker above it
SYNC_CALIBRATION_LIMIT = 5_000
#: row ids at or below this are compaction ledger markers: ``MARK_BASE - id`` stands before the
#: message ``id`` the compaction starts the conversation again at (see ctxview.core.ledger)
MARK_BASE = -10


def marker_row(mid: int) -> int:
    """The row id of the ledger marker before message ``mid``."""
    return MARK_BASE - mid


def marker_id(row_id: int) -> int | None:
    """The message a ledger marker row stands before (None for any other row id)."""
    return MARK_BASE - row_id if row_id <= MARK_BASE else None


#: the strategy choice (sidebar, palette, s) that shows a recorded session as it was sent
AS_SENT = "as sent"
#: bigger windows (a recorded session as sent) get their first protocol check in a worker: the
#: timeline and the verdict do not wait for it (later checks are memoised, so cheap)
CHECK_SYNC_LIMIT = 5_000


@dataclass(frozen=True, slots=True)
class RowInfo:
    role: str
    summary: str
    preview: str
    tokens: int
    error: bool  # a tool_result with is_error


@dataclass
class Draft:
    """A reply in flight or one that did not complete: shown, never added to the context."""

    text: str = ""
    state: str = "streaming"  # streaming | incomplete | cancelled | failed
    thinking: str = ""  #: extended thinking streamed before the text
    reason: str = ""


@dataclass
class Eviction:
    ids: list[int]
    tokens: int
    reason: str

    def describe(self) -> str:
        n = len(self.ids)
        return f"evicted {id_ranges(self.ids, 4)} · {plural(n, 'message')} · {fmt_tokens(self.tokens)} tokens"


class SessionModel:
    """A session as the UI sees it: the rows of the timeline and what a screen shows of them.
    What each message is to the next request (status, tool pairs, compactions, the message as
    sent) is the :class:`~ctxview.sessions.session.Session`'s (``replay``), memoised there."""

    def __init__(
        self, replay: Session, path: str | None, model: str, tools: list[Any] | None = None
    ) -> None:
        self.replay = replay
        self.path = path
        self.model = model
        self.session: LoadedSession = replay.session
        self.tools: list[Any] = list(tools if tools is not None else self.session.tools)
        #: tokens of one message: the request model's estimate (calibrated on a transcript;
        #: for a big session the default until the token worker brings it: :meth:`install_tokens`)
        self.estimate: Callable[[Mapping[str, Any]], int] = estimate_message
        #: a transcript's system prompt + tools, calibrated from its usage (once known)
        self.calibrated_static: int | None = None
        self.show_evicted = True
        #: changed since it was opened or saved (an edit, a pin, a setting, the system prompt):
        #: the title says so, and quitting or opening another file asks first
        self._unsaved = False
        #: counts the changes (each ``unsaved = True``); ``saved_revision``: the one last saved
        #: (or opened), so undoing back to it leaves nothing unsaved
        self.revision = 0
        self.saved_revision = 0
        #: the request model's figures for the next request (ctxview.app.cacheline), computed
        #: off the UI thread; None until then
        self.cache_prediction: Any = None
        #: the sub-agents' requests as sent, with the prices they were computed with (read in the
        #: cache figures' worker, once: ``Figures._agent_logs``); None until then
        self.agent_logs: tuple[dict[str, Any], list[Any]] | None = None
        self._recorded: tuple[int, list[int], tuple[int, int] | None] | None = None
        self._info: dict[int, RowInfo] = {}
        #: per-message token estimates by id, and their prefix sums (_pre[i] = sum(_tok[:i])),
        #: so any run of ids costs O(1); filled at once for small sessions, by a worker for big ones
        self._tok: list[int] = []
        self._pre: list[int] = [0]
        self._ready = False  # True once _tok covers every message
        self._problems: list[Problem] | None = None
        self._checker = ProtocolChecker(rules=replay.protocol_rules)
        self._checked = False  # the checker has checked this window once (memoised since)
        self._problem_ids: dict[int, list[Problem]] | None = None
        #: gap runs' (first, last) -> how they left (:meth:`gap_gone`)
        self._gone: dict[tuple[int, int], str] = {}
        self._n_compacted: int | None = None
        #: ids an edit or a repair took out of the window (``meta["removed"]``), sorted
        self._removed_ids: list[int] | None = None
        self.rows: list[int] = []
        self._window_ids: list[int] = []
        self._window_dirty = True
        self.pending: list[Eviction] = []
        self.draft: Draft | None = None
        self._prev_window: list[int] = self.context.window_ids
        self.cache_prefix_tokens = 0
        self.cache_write_tokens = 0
        #: the lowest id an edit changed since the last after_change (the cache is rewritten
        #: from there)
        self._edited_from: int | None = None
        #: edited ids -> the key their current version is checked under
        self._versions: dict[int, int] = {}
        self._window_total = 0
        # after the Session's own listener (registered when it was built): its memoised facts
        # are dropped before this one asks for them
        self.transcript.listeners.append(self._on_event)
        n = len(self.transcript)
        if n <= SYNC_TOKEN_LIMIT and (
            n <= SYNC_CALIBRATION_LIMIT or self.session.format not in CALIBRATED_FORMATS
        ):
            self.install_tokens(
                *compute_tokens([r.message for r in self.transcript.records], replay)
            )
        self.rebuild_rows()

    # -- core objects ---------------------------------------------------------------------------
    @property
    def context(self) -> ConversationContext:
        return self.replay.context

    @property
    def transcript(self) -> Transcript:
        return self.replay.transcript

    @property
    def name(self) -> str:
        return Path(self.path).name if self.path else "new chat"

    @property
    def unsaved(self) -> bool:
        return self._unsaved

    @unsaved.setter
    def unsaved(self, value: bool) -> None:
        if value:
            self.revision += 1
        else:
            self.saved_revision = self.revision
        self._unsaved = value

    def restore_revision(self, revision: int) -> None:
        """Back at ``revision`` (an undo of every change since it): unsaved unless it is the
        one saved."""
        self.revision = revision
        self._unsaved = revision != self.saved_revision

    @property
    def as_sent(self) -> str | None:
        """The recorded format when the session is shown as it was sent (no ctxview
        truncation), None for a simulation under max and strategy (see :meth:`mode_label`)."""
        return self.replay.as_sent

    @property
    def compacted_before(self) -> int:
        """As sent: the ids before this one were compacted (a Claude Code compaction)."""
        return self.replay.compacted_before

    @property
    def system(self) -> Any:
        """The system prompt as sent (the Session's: a file's blocks until it is changed)."""
        return self.replay.system

    # -- events ----------------------------------------------------------------------------------
    @property
    def window_ids(self) -> list[int]:
        """The context's window ids, recomputed only after the context changed."""
        if self._window_dirty:
            self._window_ids = self.context.window_ids
            self._window_dirty = False
        return self._window_ids

    def _on_event(self, event: ContextEvent) -> None:
        self._window_dirty = True
        self._problems = None
        self._problem_ids = None
        self._gone.clear()
        self._n_compacted = None
        if event.kind == "edited":
            self._removed_ids = None
        if event.kind == "evicted":
            ids = list(event.ids)
            self.pending.append(Eviction(ids, self.sum_ids(ids), event.reason))
        if event.kind == "added":
            if self.tokens_ready and event.message is not None:
                self._append_tokens(event.ids[0], self.estimate(event.message))
        elif event.kind == "edited":
            self._edited(event)

    def _edited(self, event: ContextEvent) -> None:
        """A message changed under its id: its row, estimate and the memoised checks (keyed by
        ids) are stale."""
        mid = event.ids[0]
        self._edited_from = mid if self._edited_from is None else min(mid, self._edited_from)
        if event.message is not None:
            # the checker is memoised on ids: the new version is checked under a key of its own
            # (repair's counter; imported on the first edit, not by the first screen)
            from ctxview.core.repair import next_version_key

            self._versions[mid] = next_version_key()
        self._info.pop(mid, None)
        if event.message is not None and self.tokens_ready and mid < len(self._tok):
            self._tok[mid] = self.estimate(event.message)
            self._pre = list(accumulate(self._tok, initial=0))

    def take_evictions(self) -> list[Eviction]:
        """Evictions since the last call (for the animation and the notification)."""
        out, self.pending = self.pending, []
        return out

    def after_change(self) -> None:
        """Call after an operation on the context: rows and the cache line follow."""
        new = self.window_ids
        if self.tokens_ready:
            self._update_cache(self._prev_window, new, self._edited_from)
        self._edited_from = None
        self._prev_window = new
        self.rebuild_rows()

    # -- rows ------------------------------------------------------------------------------------
    def rebuild_rows(self) -> None:
        """Timeline rows: every message id, with a GAP marker where the window is cut.

        The window is the pinned message plus a suffix-like run of the newest, so rows are built
        with C-speed range extends, not a Python loop over 100,000 ids.
        """
        self._build_rows()
        self._insert_markers()
        if self.draft is not None:
            self.rows.append(DRAFT)

    # -- what each message is to the next request: the Session's -------------------------------
    def ledger(self) -> list[Compaction]:
        return self.replay.ledger()

    def compaction_at(self, mid: int) -> Compaction | None:
        """The compaction whose marker stands before message ``mid``."""
        return self.replay.compaction_at(mid)

    def claude_code_compaction_of(self, mid: int) -> Compaction | None:
        return self.replay.claude_code_compaction_of(mid)

    def sent_message(self, mid: int) -> dict[str, Any] | None:
        return self.replay.sent_message(mid)

    def status(self, mid: int) -> str:
        return self.replay.status(mid)

    def partner(self, mid: int) -> int | None:
        return self.replay.partner(mid)

    def _insert_markers(self) -> None:
        """A marker row before each compaction's first message (after the gap marker when that
        message is hidden among the evicted ones)."""
        entries = self.ledger()
        if not entries:
            return
        rows = self.rows
        for c in entries:
            pos = bisect.bisect_left(_KeyView(rows), c.id)
            if pos < len(rows) and rows[pos] == GAP:
                pos += 1
            rows.insert(pos, marker_row(c.id))

    def compacted_count(self) -> int:
        """How many messages left the window at a Claude Code compaction (a simulation's
        sidebar tells them apart from the strategy's evictions); cached until the next change."""
        if self._n_compacted is None:
            steps = self.replay.compaction_steps()
            self._n_compacted = (
                sum(1 for r in self.transcript.records if r.evicted_step in steps) if steps else 0
            )
        return self._n_compacted

    def _removed(self) -> list[int]:
        if self._removed_ids is None:
            self._removed_ids = [r.id for r in self.transcript.records if r.meta.get("removed")]
        return self._removed_ids

    def gap_gone(self, first: int, last: int) -> str:
        """How the messages ``first..last`` (a gap row's run) left: ``evicted``, ``dropped``
        (an edit or a repair took it out: :meth:`status`), ``compacted``, or those that apply
        joined by "or" (a run may hold several: what the strategy evicted before a compaction,
        then what was in the window when it came). Cached until the next change."""
        key = (first, last)
        found = self._gone.get(key)
        if found is None:
            if last < self.compacted_before:
                found = "compacted"
            else:
                steps = self.replay.compaction_steps()
                get = self.transcript.get
                n = dropped = 0
                if steps:
                    for i in range(first, last + 1):
                        rec = get(i)
                        if rec is None:
                            continue
                        if i < self.compacted_before or rec.evicted_step in steps:
                            n += 1
                        elif rec.meta.get("removed"):
                            dropped += 1
                else:
                    removed = self._removed()
                    dropped = bisect.bisect_right(removed, last) - bisect.bisect_left(
                        removed, first
                    )
                total = last - first + 1
                found = " or ".join(
                    word
                    for word, k in (
                        ("evicted", total - n - dropped),
                        ("dropped", dropped),
                        ("compacted", n),
                    )
                    if k
                )
            self._gone[key] = found
        return found

    def gap_run(self, row: int) -> tuple[int, int]:
        """(first, last) ids of the evicted run that the GAP row ``row`` stands for; O(log n)."""
        k = row - 1
        while k >= 0 and self.rows[k] <= MARK_BASE:
            k -= 1  # (a ledger marker is not a message)
        prev = self.rows[k] if k >= 0 else -1  # the window message before the gap
        window = self._window_ids
        k = bisect.bisect_right(window, prev)
        nxt = window[k] if k < len(window) else len(self.transcript)
        return prev + 1, nxt - 1

    def _build_rows(self) -> None:
        n = len(self.transcript)
        window = self.window_ids
        rows: list[int] = []
        if not window:
            self.rows = list(range(n)) if self.show_evicted else []
            return
        prev = -1
        for wid in window:
            if wid != prev + 1:  # a run of evicted ids (prev+1 .. wid-1)
                rows.append(GAP)
                if self.show_evicted:
                    rows.extend(range(prev + 1, wid))
            rows.append(wid)
            prev = wid
        if prev + 1 < n:  # evicted after the last window message (not produced by strategies)
            rows.append(GAP)
            if self.show_evicted:
                rows.extend(range(prev + 1, n))
        self.rows = rows

    def set_draft(self, draft: Draft | None) -> None:
        had = self.rows and self.rows[-1] == DRAFT
        self.draft = draft
        if draft is not None and not had:
            self.rows.append(DRAFT)
        elif draft is None and had:
            self.rows.pop()

    def row_of(self, mid: int) -> int | None:
        """Row index of message id (None if hidden)."""
        if self.show_evicted:
            # rows are increasing ids with GAP markers in between: search by value
            lo = bisect.bisect_left(_KeyView(self.rows), mid)
            for r in range(max(0, lo - 2), min(len(self.rows), lo + 3)):
                if self.rows[r] == mid:
                    return r
            return None
        try:
            return self.rows.index(mid)
        except ValueError:
            return None

    def last_usage(self) -> tuple[int, Mapping[str, Any]] | None:
        """The newest message with API usage (id, usage); looks back at most 200 messages."""
        records = self.transcript.records
        for rec in reversed(records[-200:]):
            u = rec.meta.get("usage")
            if isinstance(u, Mapping):
                return rec.id, u
        return None

    def evicted_count(self) -> int:
        return len(self.transcript) - self.transcript.window_size

    # -- as sent or simulated --------------------------------------------------------------------
    def mode_label(self) -> str:
        """``as sent`` (a recorded session, no ctxview truncation), ``simulated: seed, max 20``
        (a recorded session under ctxview's max and strategy), or ``seed, max 20`` (ctxview's
        own window: a chat, a message list)."""
        if self.as_sent is not None:
            return "as sent"
        ctx = self.context
        settings = (
            ctx.strategy  # context editing: max does not apply
            if ctx.edits_messages
            else f"{ctx.strategy}, max {ctx.max_context_messages:,}"
        )
        return f"simulated: {settings}" if as_sent_possible(self) else settings

    def recorded_sizes(self) -> tuple[list[int], tuple[int, int] | None]:
        """The recorded input size (``input_tokens`` + cache read + cache write) of every
        response with usage, in order, and (id, size) of the newest; kept up to date as
        messages are added (O(new messages))."""
        from ctxview.core.usage import recorded_usage

        records = self.transcript.records
        done, sizes, last = self._recorded or (0, [], None)
        for rec in records[done:]:
            if "usage" not in rec.meta:
                continue
            u = recorded_usage(rec.meta)  # the request model's rule: what is believed
            if u is None:
                continue
            size = sum(u.values())
            sizes.append(size)
            last = (rec.id, size)
        self._recorded = (len(records), sizes, last)
        return sizes, last

    # -- per message -----------------------------------------------------------------------------
    def tokens(self, mid: int) -> int:
        if mid < len(self._tok):
            return self._tok[mid]
        return self.estimate(self.transcript[mid].message)

    @property
    def tokens_ready(self) -> bool:
        return self._ready

    def install_tokens(
        self,
        toks: list[int],
        estimate: Callable[[Mapping[str, Any]], int] = estimate_message,
        calibrated_static: int | None = None,
    ) -> None:
        """Install estimates for ids 0..len(toks)-1 (from a worker), made by ``estimate`` (the
        request model's, with the system prompt + tools it calibrated); later ids are estimated
        now."""
        self.estimate = estimate
        self.calibrated_static = calibrated_static
        for rec in self.transcript.records[len(toks) :]:
            toks.append(self.estimate(rec.message))
        self._tok = toks
        self._pre = list(accumulate(toks, initial=0))
        self._ready = True
        self._prev_window = self.window_ids
        self._update_cache(self._prev_window, self._prev_window)

    def _append_tokens(self, mid: int, value: int) -> None:
        if mid == len(self._tok):
            self._tok.append(value)
            self._pre.append(self._pre[-1] + value)

    def sum_ids(self, ids: list[int]) -> int:
        """Tokens of a sorted list of ids: O(number of runs) with the prefix sums."""
        if not ids:
            return 0
        if not self.tokens_ready:
            return sum(self.tokens(i) for i in ids[:5000])
        pre = self._pre
        if ids[-1] - ids[0] == len(ids) - 1:  # one contiguous run
            return pre[ids[-1] + 1] - pre[ids[0]]
        if len(ids) > 1 and ids[-1] - ids[1] == len(ids) - 2:  # pinned + a contiguous tail
            return self._tok[ids[0]] + pre[ids[-1] + 1] - pre[ids[1]]
        return sum(self._tok[i] for i in ids)

    def info(self, mid: int) -> RowInfo:
        info = self._info.get(mid)
        if info is None:
            record = self.transcript[mid]
            role, summary, preview, error = row_text(record.message, record.meta)
            info = RowInfo(role, summary, preview, self.tokens(mid), error)
            self._info[mid] = info
        return info

    def row_status(self, mid: int) -> str:
        """The status word of a timeline row: :meth:`status`, and ``summary`` for the summary
        of the last compaction while it is in the window (also when it is the pinned first
        message: a session continued from a summary starts with it; the row keeps the pinned
        colour)."""
        status = self.status(mid)
        if status in ("kept", "pinned"):
            entries = self.ledger()
            if entries and entries[-1].summary_id == mid:
                return "summary"
        return status

    # -- protocol --------------------------------------------------------------------------------
    @property
    def checker(self) -> ProtocolChecker:
        """The checker memoised on this window's ids (a repair re-checks with it)."""
        return self._checker

    def check_keys(self, entries: list[tuple[int, Any]]) -> list[int] | None:
        """The keys the checker knows the window's messages by (None: their ids)."""
        v = self._versions
        return [v.get(i, i) for i, _ in entries] if v else None

    def check_entries(self) -> list[tuple[int, Any]]:
        """The window as the checker takes it (keyed by id, or by version after an edit)."""
        entries = self.context.entries()
        keys = self.check_keys(entries)
        if keys is not None:
            entries = [(k, e[1]) for k, e in zip(keys, entries, strict=True)]
        return entries

    @property
    def problems(self) -> list[Problem]:
        if self._problems is None:
            entries = self.check_entries()
            found = self._checker.check(entries, self.system)
            self._problems = self.replay.sent_problems(found, [m for _, m in entries])
            self._checked = True
        return self._problems

    @property
    def problems_pending(self) -> bool:
        """True while a big window's first check is left to a worker (:meth:`install_check`):
        what only displays problems shows none yet instead of waiting."""
        return not self._checked and self._problems is None and len(self.context) > CHECK_SYNC_LIMIT

    def install_check(self, checker: ProtocolChecker, problems: list[Problem], step: int) -> bool:
        """Take a worker's first check of the window (with its memoised checker) if the window
        is still the one it checked."""
        if self._problems is not None or step != self.context.step:
            return False
        window = self.replay.window_messages()
        self._checker, self._checked = checker, True
        self._problems = self.replay.sent_problems(problems, window)
        self._problem_ids = None
        return True

    def problems_for(self, mid: int) -> list[Problem]:
        if self.problems_pending:
            return []
        if self._problem_ids is None:
            ids = self.window_ids
            by: dict[int, list[Problem]] = {}
            for p in self.problems:
                if 0 <= p.index < len(ids):
                    by.setdefault(ids[p.index], []).append(p)
            self._problem_ids = by
        return self._problem_ids.get(mid, [])

    def verdict(self, wait: bool = True) -> tuple[str, str, str]:
        """(state, short text, first problem) of the next request: state is ``ok``, ``bad`` or
        ``empty`` (nothing to send yet: not an error before anything was typed); with
        ``wait=False``, ``checking`` while a worker checks a big window."""
        if len(self.context) == 0:
            return "empty", "no messages yet", ""
        if not wait and self.problems_pending:
            return "checking", f"checking {counted(len(self.context), 'message')}…", ""
        errors = [p for p in self.problems if p.severity == "error"]
        if self.tokens_ready:
            # the request-level rule inspect applies too: a window over the model's context
            from ctxview.core.limits import context_problem

            over = context_problem(self.window_tokens, self.model, provider=self.replay.provider)
            if over is not None:
                errors.append(over)
        if errors:
            n = len(errors)
            return "bad", f"✗ {plural(n, 'problem')}", errors[0].message
        warnings = len(self.problems)
        warn = f" ({plural(warnings, 'warning')})" if warnings else ""
        return "ok", f"✓ valid{warn}", ""

    def error_ids(self) -> list[int]:
        ids = self.window_ids
        return sorted(
            {
                ids[p.index]
                for p in self.problems
                if p.severity == "error" and 0 <= p.index < len(ids)
            }
        )

    # -- tokens and cache ------------------------------------------------------------------------
    @property
    def overhead_tokens(self) -> int:
        """The system prompt + tools: a Claude Code transcript's calibrated from its usage (the
        request model's figure), else estimated from the session's own."""
        b = self.token_breakdown(messages=0)
        return sum(b.values())

    @property
    def window_tokens(self) -> int:
        """The request's estimated size: system + tools + the window's messages (the one
        definition, ``ctxview.sessions.request.token_breakdown``; ``inspect`` says the same)."""
        return self.overhead_tokens + self.message_tokens()

    def message_tokens(self) -> int:
        """Estimated tokens of the window's messages as the API reads them: from the last
        compaction block on (the messages before it are ``compacted``: neither read nor billed)."""
        from ctxview.core.providers.registry import provider

        carried = provider(self.session.provider).tokens.carry is not None
        entries = self.context.sent_entries() if carried or self.replay.compacted_ids() else []
        if self.replay.compacted_ids():
            from ctxview.core.compaction import effective_messages, has_compaction

            if any(has_compaction(m) for _, m in entries):
                # the API ignores what precedes a compaction
                start, kept = effective_messages([m for _, m in entries])
                entries = [(i, m) for (i, _), m in zip(entries[start:], kept, strict=True)]
            # the provider's own estimate (not a transcript's calibrated rates)
            estimate = self.replay.token_model.estimate
            tokens = sum(estimate(m) for _, m in entries)
        else:
            sf = self.context.sent_form() if self.context.edits_messages else None
            tokens = self.sum_ids(self.window_ids) - (sf.cleared_tokens if sf is not None else 0)
        # with what they carry, at the model's tokenizer scale: as the request model bills the
        # next request (``Session.billed_messages``; the file's model, as the tokens were counted)
        if not carried:
            entries = []
        return self.replay.billed_messages(entries, tokens)

    def block_tokens(self, block: Any, role: str = "user") -> int:
        """Estimated tokens of one content block, by the provider's own estimate (an OpenAI
        audio clip counts by its length, a Gemini part by Gemini's rules): the block in a
        message of its own, less that message's framing. Anthropic's blocks by
        :func:`ctxview.core.tokens.block_tokens`."""
        from ctxview.core.tokens import block_tokens

        if self.session.provider == "anthropic":
            return block_tokens(block)
        estimate = self.replay.token_model.estimate
        alone = estimate({"role": role, "content": [block]})
        return max(0, alone - estimate({"role": role, "content": []}))

    def token_breakdown(self, messages: int | None = None) -> dict[str, int]:
        """The request's estimate by part (``messages``: the window's, when already known)."""
        from ctxview.sessions.request import token_breakdown

        return token_breakdown(
            self.system,
            self.tools,
            self.message_tokens() if messages is None else messages,
            self.calibrated_static,
            self.replay.token_model,
            self.session.request_params,
        )

    def _update_cache(self, old: list[int], new: list[int], edited_from: int | None = None) -> None:
        """The prefix of the request the last change left unchanged (still a cache hit) against
        the rest, which must be written to the cache again (an edit rewrites from the first
        message it changed)."""
        if len(old) <= len(new) and new[: len(old)] == old:
            k = len(old)
        else:
            k = 0
            limit = min(len(old), len(new))
            while k < limit and old[k] == new[k]:
                k += 1
        if edited_from is not None:
            k = min(k, bisect.bisect_left(new, edited_from))
        prefix = self.overhead_tokens + self.sum_ids(new[:k])
        self.cache_prefix_tokens = prefix
        self.cache_write_tokens = self.sum_ids(new[k:])

    def token_series(self, width: int) -> list[float]:
        """Tokens per window message, bucketed to at most ``width`` values (for a sparkline)."""
        ids = self.window_ids
        tok = self._tok
        vals = [float(tok[i]) for i in ids] if self._ready else [float(self.tokens(i)) for i in ids]
        if len(vals) <= width or width <= 0:
            return vals
        step = len(vals) / width
        return [
            max(vals[int(k * step) : max(int(k * step) + 1, int((k + 1) * step))])
            for k in range(width)
        ]


def as_sent_possible(model: SessionModel) -> bool:
    """True for a recorded session, which can be shown as it was sent."""
    from ctxview.sessions.replay import as_sent_format

    return model.as_sent is not None or as_sent_format(model.session) is not None


def compute_tokens(
    messages: list[dict[str, Any]], replay: Session
) -> tuple[list[int], Callable[[Mapping[str, Any]], int], int | None]:
    """(token estimates of messages, the estimate that made them, the calibrated system prompt +
    tools) as the request model counts them (``Session.message_estimate``: a transcript's
    calibration is O(session), so a big one's runs in a worker thread: this only reads)."""
    estimate = replay.message_estimate()
    # each as the next request sends it (``Session.sent_tokens``: a tool result a
    # microcompaction cleared, a hosted search at what the file's usage measured)
    sent = replay.sent_tokens
    toks = [sent(i, m, estimate) for i, m in enumerate(messages)]
    return toks, estimate, replay.calibrated_static()


class _KeyView:
    """rows as a sorted sequence for bisect (GAP markers take their neighbour's value)."""

    def __init__(self, rows: list[int]) -> None:
        self.rows = rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int) -> int:
        v = self.rows[i]
        if v == DRAFT:
            return 1 << 60
        if v == GAP:
            return self[i + 1] if i + 1 < len(self.rows) else 1 << 60
        if v <= MARK_BASE:
            return MARK_BASE - v  # a ledger marker sorts as the message it stands before
        return v
