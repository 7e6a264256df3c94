"""The request model's types: a request, its cache break and redundancy, a session's log of
requests, compare's running totals, and what a replay is given (:class:`ReplayPlan`)."""

from __future__ import annotations

import math
from bisect import bisect_left
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TYPE_CHECKING, Any, Protocol

from ctxview.core.cache_rules import API_REASON, ASSUMPTIONS, AUTOMATIC
from ctxview.core.calibrate import CALIBRATED_FORMATS as CALIBRATED_FORMATS
from ctxview.core.formats import RECORDED_FORMATS as RECORDED_FORMATS
from ctxview.core.providers.base import RECORDED_CARRY

if TYPE_CHECKING:
    from ctxview.core.calibrate import Rates

TTL_5M = 300.0
TTL_1H = 3600.0
#: repeated tool results / texts shorter than this are not counted as redundancy
REDUNDANT_MIN_CHARS = 100

#: the reasons of a predicted break (a recorded one may also be ``unexplained``)
BREAK_REASONS = (
    "first",
    "ttl",
    "evicted",
    "compaction",
    "rewind",
    "system",
    "tools",
    "model",
    "edited",
    "notification",
    "microcompaction",
    "resume",
    "restart",
    "thinking",
)


class SessionLike(Protocol):
    format: str
    messages: list[dict[str, Any]]
    metas: list[dict[str, Any]]
    system: Any
    tools: list[Any]
    model: str | None


@dataclass(frozen=True, slots=True)
class CacheBreak:
    reason: str
    position: int

    @property
    def api_reason(self) -> str | None:
        """The reason in the words of the API's cache diagnostics (``model_changed``,
        ``system_changed``, ``tools_changed``, ``messages_changed``), None where they would
        find no change in the request (``first``, ``ttl``)."""
        return API_REASON.get(self.reason)

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "position": self.position, "api_reason": self.api_reason}


#: the reason of a diagnosed request whose recorded usage shows no break
NO_BREAK = "none"


@dataclass(frozen=True, slots=True)
class RecordedBreak:
    """A break the recorded usage shows: the request read less than the previous one's whole
    prompt. ``reason``: the predicted break's reason where ctxview predicted one, ``first``
    for a first request that read nothing, else ``unexplained`` (the API broke the cache and
    ctxview does not know why); ``none`` where the usage shows no break but the response carries
    the API's cache diagnostics (kept to show them); ``api_reason`` and ``cache_missed_input_tokens``: what the
    API's cache diagnostics said, where the file recorded them, else the predicted reason in
    the API's words."""

    reason: str
    api_reason: str | None = None
    #: the API's own diagnosis was recorded (else ``api_reason`` is ctxview's mapping)
    reported: bool = False
    cache_missed_input_tokens: int | None = None
    #: tokens the recorded usage read, and the previous request's recorded prompt
    read: int = 0
    previous: int = 0
    #: for an ``unexplained`` break, what is known of it (:func:`~.diagnose.unexplained_note`):
    #: it read only the cached head, or went through Amazon Bedrock's route
    note: str | None = None

    @property
    def is_break(self) -> bool:
        """The usage shows a break (not a hit kept only for the API's diagnosis)."""
        return self.reason != NO_BREAK

    def to_dict(self) -> dict[str, Any]:
        return {
            "reason": self.reason,
            "api_reason": self.api_reason,
            "reported_by_api": self.reported,
            "cache_missed_input_tokens": self.cache_missed_input_tokens,
            "read": self.read,
            "previous_prompt": self.previous,
            "note": self.note,
        }


@dataclass(slots=True)
class Redundancy:
    """Content present more than once in one request: ``items`` extra copies, their tokens."""

    items: int
    tokens: int
    cost_usd: float | None

    def to_dict(self) -> dict[str, Any]:
        return {"items": self.items, "tokens": self.tokens, "cost_usd": _round(self.cost_usd)}


@dataclass(slots=True)
class Request:
    index: int
    #: transcript ids of the messages this request sent for the first time (the window is the
    #: ``window_size`` messages ending with the last of them)
    message_ids: list[int]
    window_size: int
    #: estimated prompt tokens: tools + system + window
    input_tokens: int
    cache_read: int
    cache_write: int
    uncached: int
    cache_break: CacheBreak | None
    #: the usage the API reported, where the file recorded it
    recorded: dict[str, int] | None
    timestamp: str | None
    cost_usd: float | None
    model: str | None = None
    #: transcript id of the response to this request (None when the file has none)
    response_id: int | None = None
    output_tokens: int = 0
    ttl: str = "5m"
    #: the API would reject this window (computed by checked replays: ``simulate(check=True)``,
    #: :func:`compare`)
    rejected: bool = False
    #: the newest message of the conversation was not in the window
    newest_dropped: bool = False
    redundancy: Redundancy | None = None
    #: a request sent on a branch the conversation later left (a Claude Code rewind): its
    #: window is ``window_size`` messages, the first ones of the current branch's window and
    #: then messages that are not in the session any more
    off_branch: bool = False
    #: the break the recorded usage shows, named (:func:`~.diagnose.recorded_breaks`)
    recorded_miss: RecordedBreak | None = None
    #: ``turn``: a request of the conversation; ``compaction``: the request that wrote a
    #: compaction's summary (:mod:`~.compaction_request`), sent before request ``index``
    kind: str = "turn"
    #: why the API would reject this window (checked replays): ``over_context_window``, else
    #: the code of the first protocol error it would answer with
    error_code: str | None = None

    @property
    def recorded_total(self) -> int | None:
        r = self.recorded
        if r is None:
            return None
        return r["input_tokens"] + r["cache_read_input_tokens"] + r["cache_creation_input_tokens"]

    @property
    def recorded_break(self) -> bool | None:
        """The recorded usage shows a cache break: cache creation above half the input."""
        total = self.recorded_total
        if total is None or self.recorded is None:
            return None
        return self.recorded["cache_creation_input_tokens"] > total / 2

    def recorded_label(self, as_sent: bool = True) -> str | None:
        """What the recorded usage says beside the prediction, where it is news: ``rec:<reason>``
        for a recorded break ctxview did not predict (``unexplained``) or the API diagnosed (its
        documented reason), and, in a log of the requests as sent (``as_sent``: a simulation
        under another max or strategy predicts other prompts than those recorded), ``rec:hit``
        for a predicted break the API did not make (it read the previous prompt); None
        otherwise (they agree, or nothing was recorded)."""
        rm = self.recorded_miss
        if rm is not None:
            if rm.reason == "unexplained" or rm.reported:
                return f"rec:{rm.api_reason if rm.reported and rm.api_reason else rm.reason}"
            return None
        brk = self.cache_break
        if as_sent and brk is not None and self.recorded is not None and brk.reason != "first":
            return "rec:hit"
        return None

    @property
    def predicted_break(self) -> bool:
        """Same rule as :attr:`recorded_break`, on the prediction."""
        return self.cache_write > self.input_tokens / 2

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "message_ids": self.message_ids,
            "window_size": self.window_size,
            "input_tokens": self.input_tokens,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "uncached": self.uncached,
            "cache_break": self.cache_break.to_dict() if self.cache_break else None,
            "recorded": self.recorded,
            "timestamp": self.timestamp,
            "cost_usd": _round(self.cost_usd),
            "model": self.model,
            "response_id": self.response_id,
            "redundancy": self.redundancy.to_dict() if self.redundancy else None,
            "off_branch": self.off_branch,
            "recorded_break": self.recorded_miss.to_dict() if self.recorded_miss else None,
            "kind": self.kind,
        }


def _round(v: float | None) -> float | None:
    return None if v is None else round(v, 6)


@dataclass
class RequestLog:
    """The requests of one session under one max and strategy, and how they were estimated."""

    requests: list[Request]
    #: None when simulated as sent (no ctxview truncation)
    strategy: str | None
    max_context_messages: int | None
    #: True: the windows are what the file says was sent (no ctxview truncation)
    as_sent: bool
    model: str | None
    rates: Rates
    #: estimated tokens of tools + system (calibrated for Claude Code transcripts)
    static_tokens: int
    notes: list[str] = field(default_factory=list)
    evicted_messages: int = 0
    #: transcript ids of the windows of the requests asked for (``keep_windows``) and the last
    windows: dict[int, list[int]] = field(default_factory=dict)
    #: the arguments that reproduce this log with :func:`simulate`
    settings: dict[str, Any] = field(default_factory=dict)
    #: ``compare``'s sums (:class:`Totals`) when the replay summed instead of building
    #: ``requests`` (then empty); None otherwise
    summary: Any = None
    #: how the requests are cached (:func:`ctxview.core.cache_rules.cache_mode`)
    cache_mode: str = AUTOMATIC
    #: the requests that wrote a compaction's summary (as sent, Claude Code), each sent
    #: before the request of its ``index``: counted in the totals
    compactions: list[Request] = field(default_factory=list)

    def in_order(self) -> list[Request]:
        """The requests and the compaction requests, in the order they were sent."""
        if not self.compactions:
            return self.requests
        out: list[Request] = []
        extra = iter(self.compactions)
        nxt = next(extra, None)
        for r in self.requests:
            while nxt is not None and nxt.index <= r.index and not r.off_branch:
                out.append(nxt)
                nxt = next(extra, None)
            out.append(r)
        if nxt is not None:
            out.append(nxt)
        out.extend(extra)
        return out

    def cache_assumption(self) -> dict[str, str]:
        """The caching ctxview assumes for these requests, in words (``requests``' output)."""
        return {"mode": self.cache_mode, "text": ASSUMPTIONS[self.cache_mode]}

    def token_error(self) -> dict[str, float] | None:
        """Median and p90 of |predicted - recorded| / recorded over the requests with usage
        (as sent only: a simulated window is not what the API billed)."""
        if not self.as_sent:
            return None
        errs = sorted(
            abs(r.input_tokens - t) / t
            for r in self.requests
            if (t := r.recorded_total) is not None and t > 0
        )
        if not errs:
            return None
        return {"median": round(_quantile(errs, 0.5), 4), "p90": round(_quantile(errs, 0.9), 4)}

    def totals(self) -> dict[str, Any]:
        reqs = [*self.requests, *self.compactions] if self.compactions else self.requests
        # attribute getters mapped in C, not comprehensions (50,000 requests); the floats are
        # summed in the same order as ever
        inp = sum(map(_INPUT_TOKENS, reqs))
        read = sum(map(_CACHE_READ, reqs))
        write = sum(map(_CACHE_WRITE, reqs))
        costs = list(map(_COST, reqs))
        priced = [c for c in costs if c is not None]
        rec = [r for r in reqs if r.recorded is not None]
        rec_total = sum(r.recorded_total or 0 for r in rec)
        rec_read = sum(r.recorded["cache_read_input_tokens"] for r in rec if r.recorded)
        reds = [d for d in map(_REDUNDANCY, reqs) if d]
        red_tok = sum(map(_TOKENS, reds))
        red_cost = list(map(_COST, reds))
        out: dict[str, Any] = {
            "requests": len(reqs),
            "input_tokens": inp,
            "cache_read": read,
            "cache_write": write,
            "hit_rate": round(read / inp, 4) if inp else None,
            "cost_usd": _round(sum(costs)) if costs and None not in costs else None,
            # what is known when some requests have no price (cost_usd is then null)
            "priced_cost_usd": _round(sum(priced)) if priced else None,
            "unpriced_requests": len(costs) - len(priced),
            "recorded_hit_rate": round(rec_read / rec_total, 4) if rec_total else None,
        }
        if rec:
            out["token_error"] = self.token_error()
        out["redundant_tokens"] = red_tok
        out["redundant_cost_usd"] = _round(sum(red_cost)) if None not in red_cost else None
        return out


_INPUT_TOKENS = attrgetter("input_tokens")
_CACHE_READ = attrgetter("cache_read")
_CACHE_WRITE = attrgetter("cache_write")
_COST = attrgetter("cost_usd")
_REDUNDANCY = attrgetter("redundancy")
_TOKENS = attrgetter("tokens")


def _quantile(sorted_vals: Sequence[float], q: float) -> float:
    if not sorted_vals:
        return 0.0
    pos = q * (len(sorted_vals) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_vals) - 1)
    return sorted_vals[lo] + (sorted_vals[hi] - sorted_vals[lo]) * (pos - lo)


class Totals:
    """What ``compare``'s row needs of a strategy's requests, summed as the replay goes (50,000
    :class:`~ctxview.core.requests.Request` objects per strategy were most of its time): the
    same figures as the requests give (``tests/unit/core/test_request_window_sources.py``)."""

    __slots__ = (
        "cache_read",
        "cache_write",
        "costs",
        "first_rejected",
        "input_tokens",
        "newest_dropped",
        "rejected",
        "requests",
        "window_sum",
    )

    def __init__(self) -> None:
        self.requests = 0
        self.rejected = 0
        self.first_rejected: int | None = None
        self.newest_dropped = 0
        self.window_sum = 0
        self.input_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        #: each request's cost in order (summed as ``RequestLog.totals`` sums them)
        self.costs: list[float | None] = []

    def add(
        self,
        index: int,
        message_ids: list[int],
        window_size: int,
        input_tokens: int,
        cache_read: int,
        cache_write: int,
        uncached: int,
        cache_break: CacheBreak | None,
        recorded: dict[str, int] | None,
        timestamp: str | None,
        cost_usd: float | None,
        model: str | None = None,
        response_id: int | None = None,
        output_tokens: int = 0,
        ttl: str = "5m",
        rejected: bool = False,
        newest_dropped: bool = False,
        redundancy: Redundancy | None = None,
        off_branch: bool = False,
        recorded_miss: RecordedBreak | None = None,
        kind: str = "turn",
        error_code: str | None = None,
    ) -> None:
        """Count one request instead of building it: :class:`Request`'s fields, in its order
        (so a replay hands either the same arguments, see :class:`RequestSink`)."""
        self.requests += 1
        self.window_sum += window_size
        self.input_tokens += input_tokens
        self.cache_read += cache_read
        self.cache_write += cache_write
        self.costs.append(cost_usd)
        if newest_dropped:
            self.newest_dropped += 1
        if rejected:
            self.rejected += 1
            if self.first_rejected is None:
                self.first_rejected = index


#: a callable in C that drops its argument (what :meth:`Totals.add` returns is not kept)
_DROP: Callable[[Any], None] = deque(maxlen=0).append


class RequestSink:
    """Where a replay puts each request, written ``keep(make(<Request's fields, in order>))``
    by every window source: the log's sink builds :class:`Request` objects into ``requests``,
    compare's sums them into ``totals`` (``make`` is :meth:`Totals.add`, ``keep`` drops its
    None). Two bound callables rather than one method: the log's ``keep`` is the list's
    ``append`` and compare's is in C, so neither adds a Python call per request (60,000 of
    them in a compare). ``builds`` says whether the fields only a built request holds (the
    ids of the messages it sends first) are worth working out."""

    __slots__ = ("builds", "keep", "make", "requests", "totals")

    def __init__(self, totals: Totals | None = None) -> None:
        self.requests: list[Request] = []
        self.totals = totals
        self.builds = totals is None
        self.make: Callable[..., Any] = Request if totals is None else totals.add
        self.keep: Callable[[Any], Any] = self.requests.append if totals is None else _DROP


def recorded_carry(metas: Sequence[Any]) -> list[Any] | None:
    """Per message, the carry its file recorded (:data:`RECORDED_CARRY`), or None where no
    message has one."""
    found = [m.get(RECORDED_CARRY) if m else None for m in metas]
    return found if any(type(v) is int for v in found) else None


class TurnCarry:
    """What each request window's messages carry beyond their estimates while in the current
    turn (a provider's ``TokenModel.carry``: OpenAI's hidden reasoning items, Gemini's joined
    signature records), in O(1) a window: the same rule as ``TokenModel.carried_tokens``
    (``tests/unit/core/test_request_carry.py`` holds them equal)."""

    __slots__ = ("after", "prefix")

    def __init__(
        self,
        messages: Sequence[Any],
        carry: Callable[[Any], tuple[bool, int]],
        recorded: Sequence[Any] | None = None,
    ) -> None:
        #: ``after[n]``: where the current turn of a window ending before message ``n`` starts
        #: (after the last message before ``n`` that starts a turn); ``prefix[n]``: what
        #: messages ``[0, n)`` carry. ``recorded``: per message, what the file recorded it
        #: carries (a Codex response's reasoning tokens, ``meta["reasoning_tokens"]``), in
        #: place of the carry's estimate; None where it recorded nothing
        self.after = after = [0]
        self.prefix = prefix = [0]
        start = total = 0
        for i, message in enumerate(messages):
            starts, tokens = carry(message)
            if recorded is not None and type(known := recorded[i]) is int:
                tokens = known
            if starts:
                start = i + 1
            else:
                total += tokens
            after.append(start)
            prefix.append(total)

    @property
    def any(self) -> bool:
        return self.prefix[-1] > 0

    def window(self, first: int, lo: int, hi: int) -> int:
        """Of the window ``[first] + [lo, hi)`` (``first`` < 0: ``[lo, hi)``)."""
        p, t = self.prefix, self.after[hi]
        if t > lo:  # the message starting the turn is in the window
            return p[hi] - p[t] if hi > t else 0
        # none is after ``first``: the turn runs from ``first`` on (a message starting a turn
        # carries nothing)
        n = p[hi] - p[lo] if hi > lo else 0
        return n + p[first + 1] - p[first] if 0 <= first < lo else n

    def head(self, first: int, lo: int, hi: int, end: int) -> int:
        """Of the window ``[first] + [lo, hi)``, what its messages before ``end`` carry (``lo
        <= end <= hi``): the carried items are sent where they stand, so a cached prefix of
        the window holds its share (the turn is the whole window's)."""
        p, t = self.prefix, self.after[hi]
        if t > lo:
            return p[end] - p[t] if end > t else 0
        n = p[end] - p[lo] if end > lo else 0
        return n + p[first + 1] - p[first] if 0 <= first < lo else n

    def ids(self, window: Sequence[int], hi: int) -> int:
        """Of a window of sorted message ids, all before ``hi``."""
        p, after, t = self.prefix, self.after, self.after[hi]
        k = bisect_left(window, t)
        if len(window) - k == hi - t:  # the whole current turn is in the window
            n = p[hi] - p[t]
        else:
            n = sum(p[x + 1] - p[x] for x in window[k:])
        if t and (k == 0 or window[k - 1] != t - 1):
            # the message that started the turn is not in the window: it runs back to the
            # window's latest message that starts one
            for x in reversed(window[:k]):
                if after[x + 1] == x + 1:
                    break
                n += p[x + 1] - p[x]
        return n


@dataclass(slots=True)
class ReplayPlan:
    """What every window source replays: the session, its settings resolved (max, strategy,
    budget, context editing, rates, prices) and the per-session facts computed once (tokens,
    request points, compaction starts, cache keys, rewinds, timed edits, pins)."""

    session: SessionLike
    #: ``shared.Shared``: the per-session work every strategy reads
    shared: Any
    strategy: str
    max_messages: int
    max_tokens: int
    low_water_fraction: float
    #: ``clearing.ContextEditing``
    context_editing: Any
    rates: Rates
    #: estimated tokens of tools + system
    static: int
    session_model: str | None
    #: ``pricing.PriceTable``
    prices: Any
    #: tokens per message (the shared list: a replay that changes it copies it)
    tok: list[int]
    #: request points (``points.Point``), compaction starts, the TTL of an unmarked write
    points: list[Any]
    starts: set[int]
    default_ttl: float
    tools_fp: int
    system_fp: int
    sys_text: str
    check: bool
    keep: set[int]
    redundancy: bool
    #: requests off the current branch, edits placed in time, the recorded versions they replaced
    off: list[Any]
    edits: list[Any]
    first_versions: dict[int, Any]
    #: transcript ids pinned from the start
    pinned: set[int]
    #: where each request goes: built into a log, or summed into compare's totals
    sink: RequestSink = field(default_factory=RequestSink)
    #: how the requests are cached (:func:`ctxview.core.cache_rules.cache_mode`); under
    #: ``breakpoints``, the sorted ids of the messages holding a ``cache_control`` and whether
    #: the tools or system hold one
    cache_mode: str = AUTOMATIC
    marks: list[int] | None = None
    static_marked: bool = False
    #: the tools + system per (segment's first message, model) where they differ (calibrated
    #: from a transcript's usage), else None: ``static`` for every request
    statics: dict[tuple[int, str | None], int] | None = None
    #: per model on another tokenizer than the rates': its tokens for the same text, relative
    scales: dict[str | None, float] | None = None
    #: messages at which the client sent the history again from the start, and why
    #: (:func:`~.points.history_resends`)
    resends: dict[int, str] = field(default_factory=dict)
    #: of those, the ones that changed the history from a later message on (a microcompaction:
    #: :func:`~.points.microcompactions`): the transcript id of the first message changed
    resent_from: dict[int, int] = field(default_factory=dict)
    #: per message at which a microcompaction cleared earlier tool results, (transcript id,
    #: tokens as sent from then on) of each message it changed (:func:`~.points.cleared_tokens`)
    cleared: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    #: tokens of one message as the requests count it, where not under ``rates``: the session
    #: provider's token model (:func:`~.points.provider_tokens`); None: ``rates``
    measure: Callable[[Any], int] | None = None
    #: of the tools + system, what a request sharing no message with a cached prompt reads
    #: (calibrated: :func:`~.restart.cached_head`); None: all of them
    head: int | None = None
    #: what each window's messages carry beyond their tokens while in the current turn (the
    #: provider's token model's ``carry``); None: nothing
    carry: TurnCarry | None = None
    #: the first request caches its tools and system only, its messages go uncached
    #: (:func:`~.points.first_messages_uncached`)
    first_uncached: bool = False
    #: the prefix the first request read warm stays warm after 5-minute entries expired too
    #: (:func:`~.points.head_kept_warm`)
    head_warm: bool = False
    #: when requests the transcript holds no response of read the cached prompt
    #: (:func:`~.points.cache_refreshes`)
    refreshes: list[float] = field(default_factory=list)
    #: per response (its first message), what its own request was billed beyond its window:
    #: the results of the hosted web searches the response ran (:func:`~.points.own_results`)
    own: dict[int, int] | None = None

    def message_tokens(self, message: Any, classify: bool = True) -> int:
        """Tokens of one message as sent (an edited one too): the provider's estimate, else
        under ``rates`` (``classify=False``: code counted as prose, for uniform rates)."""
        if self.measure is not None:
            return self.measure(message)
        from ctxview.core.calibrate import message_features

        return self.rates.tokens(message_features(message, classify))
