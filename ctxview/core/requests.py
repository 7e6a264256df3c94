"""Every request, priced: a session as the sequence of API requests it sent.

The API (small on purpose; the proxy and the TUI build on it)::

    from ctxview.core.requests import simulate, compare
    log = simulate(session)                      # as sent (Claude Code) or under its settings
    log = simulate(session, max_context_messages=20, strategy="low-water")
    for r in log.requests: r.input_tokens, r.cache_read, r.cache_write, r.cache_break, r.cost_usd
    log.totals()                                 # the `requests --json` totals
    rows = compare(session, ["seed", "pair-safe"], max_context_messages=20)

``session`` is anything with the attributes of ``ctxview.sessions.model.LoadedSession``
(``format``, ``messages``, ``metas``, ``system``, ``tools``, ``model``) — the core does not
import the readers. Per request, the meta of its response may carry ``model``, ``usage``,
``timestamp``, and ``system`` / ``tools`` where they differ from the session's (a proxy
recording has them for every request): a change breaks the cache (reasons ``model``,
``system``, ``tools``).

What a request is:

* Claude Code transcripts and ctxview sessions: one per API response (each assistant message
  of the rebuilt sequence; Claude Code's ``<synthetic>`` error replies are not API responses),
  holding the conversation up to it. Its recorded usage and timestamp are the response's.
* a bare message list: one per user (or tool_result) message added, holding it;
* a request body: one, the body.

A compaction (a Claude Code ``compact_boundary`` / compact summary, or a ``compaction`` block)
starts the conversation again: the next request holds only the summary and what followed.

A rewind: the session's ``off_branch`` list (Claude Code: the responses on branches the user
left, see ``ctxview.sessions.claude_code.off_branch_responses``) adds their requests, in the order
they were sent: each holds the first ``fork`` messages of the current branch's window and then
the abandoned branch's own (``Request.off_branch``). The first request that does not extend the
previous abandoned one breaks with ``rewind`` at the first message that differs.

An edit (a ctxview session: the meta of an edited message holds ``original`` and
``edited_at_step``, of a dropped one ``removed``): the requests before it send the message as
recorded; it is applied before the first request whose response was added after that step
(``saved_added_steps``), which breaks with ``edited`` when the edit is inside the cached prefix.

The predicted prompt cache (the model, in order of the prompt: tools → system → messages):

* the first request reads nothing, unless its recorded usage shows a read (a prefix cached by an
  earlier session: Claude Code's tools and system prompt): then it reads that much of the tools
  and system, at most;
* each request writes its whole prompt to the cache (a cache breakpoint on its last message, as
  Claude Code and ctxview's chat send it), and reads the longest prefix it shares with a still
  live earlier request; the rest is written. Nothing is left uncached unless the prompt is below
  the model's minimum cacheable length (:data:`ctxview.core.pricing.MIN_CACHEABLE`), in which
  case nothing is read or written;
* an entry lives 5 minutes (1 hour where the recorded usage shows 1h writes) from its last use,
  by the recorded timestamps; without timestamps requests are taken as back-to-back;
* a request that cannot read all of the previous request's prompt has a :class:`CacheBreak`:
  ``first``, ``model``, ``tools``, ``system``, ``compaction``, ``evicted`` (the strategy removed a
  message inside the cached prefix), ``edited``, ``rewind`` or ``ttl``, with ``position``: the
  index in this request's messages of the first message that differs (0 for the whole-prompt
  reasons).
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import gc
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import accumulate
from operator import attrgetter
from typing import Any, NamedTuple, Protocol, TypeVar, cast

from ctxview.core import requests_fast
from ctxview.core.calibrate import (
    DEFAULT_RATES,
    Delta,
    Features,
    Rates,
    fit_rates,
    message_features,
)
from ctxview.core.clearing import STRATEGY_EDITS, ContextEditing, parse_context_editing
from ctxview.core.compaction import claude_code_compaction, has_compaction
from ctxview.core.context import ContextEvent, ConversationContext
from ctxview.core.limits import context_size
from ctxview.core.pricing import Price, PriceTable, cost, min_cacheable
from ctxview.core.protocol import check_protocol
from ctxview.core.strategies import STRATEGIES
from ctxview.core.tokens import _json_len
from ctxview.core.usage import _recorded

_F = TypeVar("_F", bound=Callable[..., Any])

TTL_5M = 300.0
TTL_1H = 3600.0
#: formats whose requests are simulated as sent when neither max nor strategy is given
RECORDED_FORMATS = ("claude-code", "claude-code-web", "request")
#: the formats whose recorded usage calibrates the token estimates (:func:`calibrate`)
CALIBRATED_FORMATS = ("claude-code", "claude-code-web")
#: repeated tool results / texts shorter than this are not counted as redundancy
REDUNDANT_MIN_CHARS = 100

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

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "position": self.position}


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
    #: the API would reject this window (only computed by :func:`compare`)
    rejected: bool = False
    #: the newest message of the conversation was not in the window
    newest_dropped: bool = False
    redundancy: Redundancy | None = None
    #: a request sent on a branch the conversation later left (a Claude Code rewind): its
    #: window is ``window_size`` messages, the first ones of the current branch's window and
    #: then messages that are not in the session any more
    off_branch: bool = False

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
    #: ``compare``'s sums (``requests_fast.Totals``) when the replay summed instead of building
    #: ``requests`` (then empty); None otherwise
    summary: Any = None

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
        reqs = self.requests
        # attribute getters mapped in C, not comprehensions (50,000 requests); the floats are
        # summed in the same order as ever
        inp = sum(map(_INPUT_TOKENS, reqs))
        read = sum(map(_CACHE_READ, reqs))
        write = sum(map(_CACHE_WRITE, reqs))
        costs = list(map(_COST, reqs))
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


# -- where the requests are ------------------------------------------------------------------
class _Point(NamedTuple):  # a tuple: 50,000 of them are built per replay
    n: int  # the request holds messages [segment start, n)
    response: int | None
    #: a request off the current branch: its index in the session's ``off_branch`` list
    off: int | None = None


def request_points(session: SessionLike, roles: Sequence[Any] | None = None) -> list[_Point]:
    """Where a session sent its requests (see the module docstring). ``roles``: each message's
    role, where the caller has them already."""
    msgs, metas = session.messages, session.metas
    if session.format == "request":
        return [_Point(len(msgs), None)] if msgs else []
    if session.format == "messages":
        pts = []
        for i, m in enumerate(msgs):
            if m.get("role") == "user":
                nxt = (
                    i + 1 if i + 1 < len(msgs) and msgs[i + 1].get("role") == "assistant" else None
                )
                pts.append(_Point(i + 1, nxt))
        return pts
    new = tuple.__new__  # _Point(i, i) without the named tuple's Python __new__ (50,000 times)
    if roles is None or len(roles) != len(msgs):
        roles = [m.get("role") for m in msgs]
    return [
        new(_Point, (i, i, None))
        for i, r in enumerate(roles)
        if r == "assistant" and i > 0 and metas[i].get("model") != "<synthetic>"
    ]


def segment_starts(session: SessionLike, blocks_in: Iterable[int] | None = None) -> set[int]:
    """Indices of messages a compaction starts the conversation again at (never the first): a
    Claude Code compaction (:func:`~ctxview.core.compaction.claude_code_compaction`, where the
    TUI's simulation starts again too) or an assistant message holding a ``compaction`` block
    (the API reads nothing before it: the tokens and the cached prefix start there).
    ``blocks_in``: the only messages that may hold a ``compaction`` block, where the caller
    knows them (the others are not walked)."""
    msgs, metas = session.messages, session.metas
    n = min(len(msgs), len(metas))
    found = {i for i in range(1, n) if (meta := metas[i]) and claude_code_compaction(meta)}
    found.update(
        i
        for i in (range(n) if blocks_in is None else blocks_in)
        if 0 < i < n and msgs[i].get("role") == "assistant" and has_compaction(msgs[i])
    )
    return found


_TS_CACHE: dict[str, float | None] = {}


def parse_timestamp(ts: Any) -> float | None:
    """Seconds since the epoch of an ISO 8601 timestamp, or None."""
    if not isinstance(ts, str):
        return None
    found = _TS_CACHE.get(ts, -1.0)
    if found != -1.0:
        return found
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
        val: float | None = dt.timestamp()
    except ValueError:
        val = None
    if len(_TS_CACHE) < 100_000:
        _TS_CACHE[ts] = val
    return val


# -- calibration -----------------------------------------------------------------------------
def calibrate(
    session: SessionLike, features: Sequence[Features] | None = None
) -> tuple[Rates, int | None, int]:
    """(rates, static tokens or None, recorded requests) from a Claude Code transcript's
    recorded usage (other formats: the default rates).

    The deltas between consecutive recorded requests of one conversation segment fit the rates
    (:func:`ctxview.core.calibrate.fit_rates`); the static part (tools + system, which a Claude
    Code transcript does not contain) is then the median of recorded total minus the estimated
    messages, over the recorded requests.
    """
    if session.format not in CALIBRATED_FORMATS:
        # only a transcript's usage belongs to windows that grew by appending (a ctxview chat
        # sent truncated windows): the deltas would not measure the added messages
        return DEFAULT_RATES, None, 0
    feats = (
        list(features) if features is not None else [message_features(m) for m in session.messages]
    )
    points = request_points(session)
    starts = segment_starts(session)
    seg_of = _segment_index(len(session.messages), starts)
    deltas: list[Delta] = []
    recs: list[tuple[_Point, int]] = []
    prev: tuple[_Point, int] | None = None
    for p in points:
        rec = (
            _recorded(session.metas[p.response])[0]
            if p.response is not None and session.format not in ("messages",)
            else None
        )
        if rec is None:
            prev = None
            continue
        total = (
            rec["input_tokens"]
            + rec["cache_read_input_tokens"]
            + rec["cache_creation_input_tokens"]
        )
        if total <= 0:
            prev = None
            continue
        recs.append((p, total))
        if prev is not None and seg_of[prev[0].n - 1] == seg_of[p.n - 1] and p.n > prev[0].n:
            d = Delta(messages=p.n - prev[0].n, recorded=total - prev[1])
            for i in range(prev[0].n, p.n):
                f = feats[i]
                for k in range(6):
                    d.features[k] += f[k]
            if d.recorded > 0:
                deltas.append(d)
        prev = (p, total)
    if not recs:
        return DEFAULT_RATES, None, 0
    rates = fit_rates(deltas)
    # prefix sums: each request's messages cost O(1), not O(window) (a 100,000-message
    # transcript has 50,000 requests)
    pre = list(accumulate(rates.tokens_many(feats), initial=0))
    seg_start = _segment_start_of(len(session.messages), starts)
    residuals = sorted(total - (pre[p.n] - pre[seg_start[p.n - 1]]) for p, total in recs if p.n > 0)
    static = max(0, int(_quantile(residuals, 0.5)))
    return rates, static, len(recs)


def session_features(session: SessionLike, rates: Rates | None = None) -> list[Features]:
    """``message_features`` of every message, for :func:`calibrate` and the replay under
    ``rates`` (None: the calibrated or default rates). Only a Claude Code transcript is
    calibrated; elsewhere the default rates price every kind alike, so code is not told from
    prose (the tokens are the same, the classification is a third of the time)."""
    classify = session.format in CALIBRATED_FORMATS or (rates is not None and not rates.uniform)
    if not classify and not DEFAULT_RATES.uniform:
        classify = True
    return [message_features(m, classify) for m in session.messages]


def _segment_index(n: int, starts: set[int]) -> list[int]:
    seg, out = 0, []
    for i in range(n):
        if i in starts:
            seg += 1
        out.append(seg)
    return out


def _segment_start_of(n: int, starts: set[int]) -> list[int]:
    cur, out = 0, []
    for i in range(n):
        if i in starts:
            cur = i
        out.append(cur)
    return out


# -- the simulation --------------------------------------------------------------------------
@dataclass(slots=True)
class _Entry:
    """A cached prompt prefix: ``length`` leading window messages still identical."""

    key: tuple[Any, ...]
    length: int
    expires: float
    ttl: float
    #: a request off the current branch: the uuids of its messages after the ``length`` window
    #: messages it shares with the branch
    path: tuple[Any, ...] = ()


_NO_KEYS: tuple[tuple[Any, int], ...] = ()


def _text_key(text: Any) -> Any:
    """A text, or a hashable stand-in for a ``text`` that is not a string (a damaged session's
    object or array: it cannot be a dict key as it is)."""
    if type(text) is str:
        return text
    try:
        key = ("json", _json_key(text))
        hash(key)
        return key
    except (TypeError, RecursionError):
        return ("repr", repr(text))


def _content_keys(message: Mapping[str, Any], rates: Rates) -> Sequence[tuple[Any, int]]:
    """(key, tokens) of each sizeable tool result or text in a message (for redundancy); the
    shared empty tuple when there is none (most messages: nothing is allocated for them)."""
    content = message.get("content")
    if type(content) is not list and not isinstance(content, list):
        return _NO_KEYS
    out: list[tuple[Any, int]] | None = None
    least = REDUNDANT_MIN_CHARS
    for b in content:
        if type(b) is not dict and not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "tool_result":
            c = b.get("content", "")
            key: tuple[str, Any]
            if type(c) is str or isinstance(c, str):
                n, key = len(c), ("r", c)
            elif isinstance(c, list):
                texts = tuple(
                    _text_key(x.get("text", ""))
                    for x in c
                    if isinstance(x, dict) and x.get("type") == "text"
                )
                n = sum(len(x) for x in texts if isinstance(x, str))
                key = ("r", texts)
            else:
                continue
            if n >= least:
                if out is None:
                    out = []
                out.append((key, math.ceil(n * rates.per_char[3])))
        elif t == "text":
            text = b.get("text")
            if isinstance(text, str) and len(text) >= least:
                if out is None:
                    out = []
                out.append((("t", text), math.ceil(len(text) * rates.per_char[0])))
    return _NO_KEYS if out is None else out


def _static_tokens(session: SessionLike, rates: Rates) -> int:
    system = session.system
    chars_sys = 0
    if isinstance(system, str):
        chars_sys = len(system)
    elif isinstance(system, list):
        chars_sys = sum(
            len(b.get("text", "")) for b in system if isinstance(b, dict) and "text" in b
        )
    tools = session.tools or []
    chars_tools = _json_len(tools) if tools else 0
    return math.ceil(chars_sys * rates.per_char[0] + chars_tools * rates.per_char[2])


def _fingerprint(value: Any) -> int:
    if not value:
        return 0
    try:
        return hash(_json_key(value))
    except TypeError:
        return hash(repr(value))


def _json_key(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _json_key(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_json_key(v) for v in value)
    return value


def _gc_paused(fn: _F) -> _F:
    """Run ``fn`` without cyclic garbage collection: a replay allocates ~10 objects per request
    and builds no cycles, and with GC on (an app that froze its loaded session makes full
    collections frequent) a 50,000-request replay took twice as long."""

    @functools.wraps(fn)
    def paused(*args: Any, **kwargs: Any) -> Any:
        was = gc.isenabled()
        gc.disable()
        try:
            return fn(*args, **kwargs)
        finally:
            if was:
                gc.enable()

    return cast(_F, paused)


@_gc_paused
def simulate(
    session: SessionLike,
    *,
    max_context_messages: int | None = None,
    strategy: str | None = None,
    max_context_tokens: int | None = None,
    low_water_fraction: float | None = None,
    defaults: Mapping[str, Any] | None = None,
    prices: PriceTable | None = None,
    rates: Rates | None = None,
    check: bool = False,
    keep_windows: Iterable[int] = (),
    redundancy: bool = True,
    context_editing: ContextEditing | None = None,
    _calibration: tuple[Rates, int | None, int] | None = None,
    _feats: Sequence[Features] | None = None,
    _shared: Any = None,
    _reference: bool = False,
    _totals: Any = None,
) -> RequestLog:
    """The session's requests under a max and a strategy (see the module docstring).

    With neither ``max_context_messages`` nor ``strategy``, a recorded session (Claude Code
    transcript, request body) is simulated as it was sent: no truncation. Other formats use
    the session's own settings, then ``defaults`` (the config), like opening the file does.
    ``check=True`` also runs the protocol check on every request (``Request.rejected``: a
    protocol error, or an estimated prompt over the model's context).
    ``redundancy=False`` skips the repeated-content count (``Request.redundancy`` stays None).
    ``keep_windows``: indices of requests whose window ids to keep in ``RequestLog.windows``
    (the last request's always is).

    Under a context-editing strategy (``clear-tool-uses``, ``clear-thinking``; parameters:
    ``context_editing``, else the session's, else ``defaults["context_editing"]``) nothing is
    evicted; each request is priced as sent (cleared content at its edited size), and a request
    whose edits changed a message the previous one sent breaks the cache there (``edited``).

    The built-in eviction strategies, on a session without rewinds or timed edits, are replayed
    by :mod:`ctxview.core.requests_fast` (same results, without a ConversationContext);
    ``_reference=True`` forces the replay below.
    """
    settings = {
        "max_context_messages": max_context_messages,
        "strategy": strategy,
        "max_context_tokens": max_context_tokens,
        "low_water_fraction": low_water_fraction,
        "defaults": defaults,
        "prices": prices,
        "rates": rates,
        "context_editing": context_editing,
    }
    keep = set(keep_windows)
    windows: dict[int, list[int]] = {}
    d = dict(defaults or {})
    prices = prices or PriceTable()
    msgs, metas = session.messages, session.metas
    as_sent = (
        max_context_messages is None and strategy is None and session.format in RECORDED_FORMATS
    )
    own = getattr(session, "max_context_messages", None)
    own_strategy = getattr(session, "strategy", None)
    if as_sent:
        max_ = max(1, len(msgs) + 1)
        strat = "seed"
    else:
        max_ = _pick(max_context_messages, own, d.get("max_context_messages"), 20)
        strat = _pick(strategy, own_strategy, d.get("strategy"), "seed")
    if strat not in STRATEGIES:
        raise ValueError(f"unknown strategy {strat!r} (known: {', '.join(STRATEGIES)})")
    max_tok = _pick(
        max_context_tokens,
        getattr(session, "max_context_tokens", None),
        d.get("max_context_tokens"),
        200_000,
    )
    frac = _pick(
        low_water_fraction,
        getattr(session, "low_water_fraction", None),
        d.get("low_water_fraction"),
        0.5,
    )
    # features (characters per kind) are built where something tells the kinds apart: the
    # calibration of a Claude Code transcript, or rates that price kinds differently; under
    # uniform rates the shared walk below measures each message without them
    feats: list[Features] | None = (
        list(_feats)
        if _feats is not None
        else session_features(session, rates)
        if session.format in CALIBRATED_FORMATS or (rates is not None and not rates.uniform)
        else None
    )
    notes: list[str] = []
    clearing = strat in STRATEGY_EDITS
    if context_editing is None:
        own_ed = getattr(session, "context_editing", None)
        context_editing = parse_context_editing(
            own_ed if own_ed is not None else d.get("context_editing")
        )
    if clearing:
        cm = context_editing.context_management(strat)
        notes.append(f"context editing ({strat}): nothing is evicted; sent as edited by {cm}")
    cal = _calibration if _calibration is not None else calibrate(session, feats)
    fitted, cal_static, n_rec = cal
    rates = rates or fitted
    if rates.calibrated:
        notes.append(
            f"token estimates calibrated from {rates.samples} recorded request deltas "
            f"(characters per token: "
            + ", ".join(f"{k} {v}" for k, v in rates.chars_per_token().items())
            + ")"
        )
    if cal_static is not None and session.format in ("claude-code", "claude-code-web"):
        static = cal_static
        notes.append(
            f"system prompt and tools (not in the transcript): {static:,} tokens, calibrated "
            f"from {n_rec} recorded requests"
        )
    else:
        static = _static_tokens(session, rates)
    session_model = session.model or d.get("model")
    # what does not depend on the strategy: computed once per session in compare
    shared = _shared if _shared is not None else requests_fast.Shared(msgs)
    if feats is None and not rates.uniform:  # calibrated elsewhere (``_calibration``)
        feats = session_features(session, rates)
    tok = (
        shared.tokens_of(rates, feats)
        if feats is not None
        # (compare, which checks, replays token-budget too: its estimates from the same walk)
        else shared.uniform_tokens(rates, keys=redundancy, estimates=check)
    )
    points, starts, default_ttl = shared.layout(session)
    tools_fp = _fingerprint(session.tools)
    system_fp = _fingerprint(session.system)
    sys_text = session.system if isinstance(session.system, str) else ""

    # -- requests off the current branch (a Claude Code rewind) and edits placed in time
    off, edits, first_versions = shared.branches_and_edits(session, rates)

    # pinned messages (``pinned``: transcript ids the user pinned; a ctxview session's
    # ``saved_pinned``) are never evicted: the window is no longer first + one run
    pinned: set[int] = set(
        getattr(session, "pinned", None) or getattr(session, "saved_pinned", None) or ()
    )

    def log_of(
        out: list[Request], evicted: int, windows: dict[int, list[int]], summary: Any
    ) -> RequestLog:
        """The log of this simulation, whichever replay made ``out`` (the three below)."""
        return RequestLog(
            out,
            None if as_sent else strat,
            None if as_sent else max_,
            as_sent,
            session_model,
            rates,
            static,
            notes,
            evicted,
            windows,
            settings,
            summary,
        )

    # the fast replays (no ConversationContext) serve the built-in strategies of a session
    # without rewinds, timed edits or pins, whose roles a context takes
    fast = (
        not (_reference or off or edits or pinned)
        and shared.valid_roles()
        and not (check and shared.has_compaction())
    )
    kind = requests_fast.strategy_kind(strat) if fast else None
    if kind is not None or (fast and clearing):
        # the settings are checked as a context would check them
        ConversationContext(
            max_context_messages=max_,
            system_prompt=sys_text,
            strategy=strat,
            max_context_tokens=max_tok,
            low_water_fraction=frac,
            context_editing=context_editing,
        )
    if kind is not None:
        f_out, f_evicted, f_windows, f_min, f_price = requests_fast.replay(
            session,
            shared,
            kind=kind,
            points=points,
            starts=starts,
            tok=tok,
            rates=rates,
            static=static,
            prices=prices,
            session_model=session_model,
            default_ttl=default_ttl,
            tools_fp=tools_fp,
            system_fp=system_fp,
            sys_text=sys_text,
            max_=max_,
            max_tok=max_tok,
            frac=frac,
            check=check,
            keep=keep,
            redundancy=redundancy,
            sums=_totals,
        )
        _price_notes(notes, f_price, f_min)
        return log_of(f_out, f_evicted, f_windows, _totals)

    if fast and clearing:
        # nothing is evicted: each window is its segment's messages (a pinned message at the
        # front of the tail is held apart from it, where the edits do not see it: the reference)
        e_out, e_windows, e_min, e_price = requests_fast.replay_editing(
            session,
            shared,
            strategy=strat,
            editing=context_editing,
            points=points,
            starts=starts,
            tok=tok,
            rates=rates,
            static=static,
            prices=prices,
            session_model=session_model,
            default_ttl=default_ttl,
            tools_fp=tools_fp,
            system_fp=system_fp,
            check=check,
            keep=keep,
            redundancy=redundancy,
            sums=_totals,
        )
        _price_notes(notes, e_price, e_min)
        return log_of(e_out, 0, e_windows, _totals)

    # -- state of the replay (the reference: a ConversationContext, message by message)
    win: list[int] = []  # transcript ids of the window
    wtok = 0  # tokens of the window's messages
    dirty: int | None = None  # first window position changed since the last request
    dirty_reason = ""
    evicted_total = 0
    counts: dict[Any, int] = {}
    dup_items = 0
    dup_tokens = 0
    keys_of: dict[int, Sequence[tuple[Any, int]]] = {}
    offset = 0
    tok = list(tok)  # edits change it below: the shared list stays as computed
    if off:
        points = _merge_points(points, off, metas)
    added_steps: Mapping[int, Any] = getattr(session, "saved_added_steps", None) or {}
    for tid, original in first_versions.items():
        tok[tid] = rates.tokens(message_features(original))  # sent as recorded until the edit
    edit_i = 0
    prev_path: tuple[Any, ...] = ()
    prev_nw = 0

    def on_event(ev: ContextEvent) -> None:
        nonlocal wtok, dirty, dirty_reason, evicted_total, dup_items, dup_tokens
        if ev.kind == "edited":
            # an edit of a message inside the window: the cache is rewritten from it
            tid = offset + ev.ids[0]
            if tid not in win:
                return
            pos = win.index(tid)
            if dirty is None or pos <= dirty:
                dirty, dirty_reason = pos, "edited"
            if ev.reason != "remove" and ev.message is not None:
                new = rates.tokens(message_features(ev.message))
                wtok += new - tok[tid]
                tok[tid] = new
            if ev.reason == "remove":
                del win[pos]
                wtok -= tok[tid]
                if rejections is not None:
                    rejections.drop(tid)
                for k, t in keys_of.pop(tid, ()):
                    c = counts[k]
                    if c >= 2:
                        dup_items -= 1
                        dup_tokens -= t
                    if c <= 1:
                        del counts[k]
                    else:
                        counts[k] = c - 1
            return
        if ev.kind == "added":
            tid = offset + ev.ids[0]
            win.append(tid)
            wtok += tok[tid]
            ks = _content_keys(msgs[tid], rates) if redundancy else None
            if ks:
                keys_of[tid] = ks
                for k, t in ks:
                    c = counts.get(k, 0)
                    if c:
                        dup_items += 1
                        dup_tokens += t
                    counts[k] = c + 1
        elif ev.kind == "evicted":
            gone = [offset + i for i in ev.ids]
            evicted_total += len(gone)
            if len(gone) <= 8:
                for tid in gone:
                    pos = win.index(tid)
                    del win[pos]
                    if dirty is None or pos < dirty:
                        dirty = pos
            else:
                drop = set(gone)
                first = next(i for i, x in enumerate(win) if x in drop)
                if dirty is None or first < dirty:
                    dirty = first
                win[:] = [x for x in win if x not in drop]
            dirty_reason = dirty_reason or "evicted"
            for tid in gone:
                if rejections is not None:
                    rejections.drop(tid)
                wtok -= tok[tid]
                for k, t in keys_of.pop(tid, ()):
                    c = counts[k]
                    if c >= 2:
                        dup_items -= 1
                        dup_tokens -= t
                    if c <= 1:
                        del counts[k]
                    else:
                        counts[k] = c - 1

    def new_context() -> ConversationContext:
        ctx = ConversationContext(
            max_context_messages=max_,
            system_prompt=sys_text,
            strategy=strat,
            max_context_tokens=max_tok,
            low_water_fraction=frac,
            context_editing=context_editing,
        )
        ctx.subscribe(on_event)
        return ctx

    ctx = new_context()
    # context editing: the sent size of edited messages replaces their size in ``tok``
    orig_tok = list(tok) if clearing else tok
    saved = 0  # tokens the edits of this segment save (the trigger reads the original size)
    sf_gen: int | None = None
    sf_pos = 0
    rejections = _Rejections(msgs, session.system) if check else None
    entries: list[_Entry] = []
    ever_cached = False
    prev_key: tuple[Any, ...] | None = None
    prev_len = 0
    prev_written = False
    last_sent = 0  # transcript messages [0, last_sent) were sent in an earlier request
    out: list[Request] = []
    by_model: dict[str | None, tuple[int, bool, Price | None]] = {}
    min_notes: set[str] = set()
    price_notes: set[str] = set()
    pi = 0
    n_msgs = len(msgs)
    for i in range(n_msgs + 1):
        # requests that hold messages [.., i)
        while pi < len(points) and points[pi].n == i:
            p = points[pi]
            pi += 1
            ob = off[p.off] if p.off is not None else None
            meta = (
                ob.meta if ob is not None else metas[p.response] if p.response is not None else {}
            )
            if edit_i < len(edits) and p.response is not None:
                # the edits made before this request was sent
                step = added_steps.get(p.response)
                if isinstance(step, int):
                    edit_i = _apply_edits(edits, edit_i, step, ctx, offset, msgs, tok)
            nw = len(win)
            path = ob.path if ob is not None else ()
            if prev_path and not (nw == prev_nw and path[: len(prev_path)] == prev_path):
                # the previous request was on a branch this one is not on: a rewind
                pos = prev_nw + (_common(prev_path, path) if nw == prev_nw else 0)
                if dirty is None or pos <= dirty:
                    dirty, dirty_reason = pos, "rewind"
            model = meta.get("model") if isinstance(meta.get("model"), str) else session_model
            rec, out_tok, hint = (
                _recorded(meta) if session.format != "messages" else (None, None, None)
            )
            ttl = TTL_1H if hint == "1h" else TTL_5M if hint == "5m" else default_ttl
            ts_raw = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None
            now = parse_timestamp(ts_raw)
            key = (
                model,
                _fingerprint(meta["tools"]) if "tools" in meta else tools_fp,
                _fingerprint(meta["system"]) if "system" in meta else system_fp,
            )
            n = nw + len(path)
            total = static + wtok + (ob.tokens if ob is not None else 0)
            looked = by_model.get(model)
            if looked is None:
                looked = by_model[model] = (*min_cacheable(model), prices.get(model))
            minimum, known_min, price = looked
            if not known_min and model:
                min_notes.add(model)
            # the protocol is checked on the original messages: context editing alone changes
            # none of them, so only evictions, edits, rewinds and compactions send it back
            check_front = dirty
            if clearing:
                sf = ctx.sent_form(static + wtok + saved)
                if sf is not None:
                    if sf.generation != sf_gen:
                        sf_gen, sf_pos = sf.generation, 0
                    changed = sf.changes[sf_pos:]
                    sf_pos = len(sf.changes)
                    for cid in changed:
                        tid = offset + cid
                        sent_msg = sf.edited.get(cid)
                        new_t = (
                            rates.tokens(message_features(sent_msg))
                            if sent_msg is not None
                            else orig_tok[tid]
                        )
                        if new_t != tok[tid]:
                            wtok += new_t - tok[tid]
                            saved += tok[tid] - new_t
                            tok[tid] = new_t
                        pos = bisect.bisect_left(win, tid)
                        if pos < len(win) and win[pos] == tid and (dirty is None or pos < dirty):
                            dirty = pos
                            dirty_reason = dirty_reason or "edited"
                    total = static + wtok
            # -- what of the previous prompt survives
            brk: CacheBreak | None = None
            if dirty is not None:
                for e in entries:
                    if e.length > dirty:
                        e.length = dirty
            live = [e for e in entries if e.key == key and (now is None or e.expires >= now)]
            best = max(live, key=lambda e: e.length, default=None)
            read = 0
            reach = 0  # leading units (window messages, then off-branch ones) cached
            if best is not None:
                reach = min(best.length, nw)
                read = static + _prefix_tokens(win, tok, reach, wtok)
                if ob is not None and reach == nw:
                    ext = max(
                        (_common(e.path, path) for e in live if e.path and e.length == nw),
                        default=0,
                    )
                    reach += ext
                    read += sum(ob.path_tokens[:ext])
                if read < minimum:
                    read = 0
            if not out and rec is not None and rec["cache_read_input_tokens"] >= minimum:
                # the first request read a prefix cached before this session (Claude Code's
                # tools and system prompt are shared across sessions): as recorded, at most
                # the tools + system
                read = min(static, rec["cache_read_input_tokens"], total)
            if total < minimum:
                read = write = 0
            else:
                write = total - read
            uncached = total - read - write
            # -- why the previous prompt was not all read
            if not out:
                brk = CacheBreak("first", 0)
            elif total >= minimum:
                if not ever_cached:
                    brk = CacheBreak("first", 0)
                elif prev_key is not None and key != prev_key:
                    what = (
                        "model"
                        if key[0] != prev_key[0]
                        else "tools"
                        if key[1] != prev_key[1]
                        else "system"
                    )
                    brk = CacheBreak(what, 0)
                elif dirty is not None and dirty < prev_len:
                    brk = CacheBreak(dirty_reason or "edited", dirty)
                elif prev_written and (best is None or reach < prev_len):
                    brk = CacheBreak("ttl", reach)
            # -- the cache after this request
            if read and best is not None and now is not None:
                best.expires = max(best.expires, now + best.ttl)
            if total >= minimum:
                new = _Entry(key, nw, (now if now is not None else 0.0) + ttl, ttl, path)
                if not path and all(
                    e.key == key and e.length <= n and e.expires <= new.expires for e in entries
                ):
                    entries = [new]  # the usual case: the new entry outreaches and outlives all
                else:
                    entries.append(new)
                    entries = _prune(entries, now)
                ever_cached = True
                prev_written = True
            else:
                prev_written = False
            prev_key, prev_len = key, n
            prev_path, prev_nw = path, nw
            front = check_front
            dirty, dirty_reason = None, ""
            # -- price
            if price is None:
                price_notes.add(model or "")
            if out_tok is None:
                out_tok = tok[p.response] if p.response is not None else 0
            c = cost(
                price,
                uncached=uncached,
                cache_read=read,
                cache_write_5m=write if ttl == TTL_5M else 0,
                cache_write_1h=write if ttl == TTL_1H else 0,
                output=out_tok,
            )
            red = None
            if dup_items:
                red = Redundancy(
                    dup_items, dup_tokens, _blended(price, read, write, uncached, ttl, dup_tokens)
                )
            new_ids = []
            for x in reversed(win):
                if x < last_sent:
                    break
                new_ids.append(x)
            new_ids.reverse()
            last_sent = max(last_sent, i)
            req = Request(
                index=len(out),
                message_ids=new_ids,
                window_size=n if ob is None else nw + ob.messages,
                input_tokens=total,
                cache_read=read,
                cache_write=write,
                uncached=uncached,
                cache_break=brk,
                recorded=rec,
                timestamp=ts_raw,
                cost_usd=c,
                model=model,
                response_id=p.response,
                output_tokens=out_tok,
                ttl="1h" if ttl == TTL_1H else "5m",
                newest_dropped=i > 0 and (not win or win[-1] != i - 1),
                redundancy=red,
                off_branch=ob is not None,
            )
            if rejections is not None:
                tail_from = nw - len(new_ids) - 1
                ranges = [(tail_from, nw - 1)]
                if front is not None:
                    ranges.append((0, 1))
                    ranges.append((front - 1, front + 1))
                rejections.update(win, ranges)
                # the API's 400s: a protocol error, or a prompt over the model's context
                # (``prompt is too long``, the rule inspect and the sidebar apply)
                req.rejected = rejections.rejected(nw) or req.input_tokens > context_size(model)
            if req.index in keep or pi == len(points):
                windows[req.index] = list(win)
            out.append(req)
        if i == n_msgs:
            break
        if i in starts:
            # a compaction: the conversation starts again from here
            if win:
                dirty = 0
                dirty_reason = "compaction"
            for tid in win:
                keys_of.pop(tid, None)
            win.clear()
            counts.clear()
            wtok = dup_items = dup_tokens = saved = 0
            offset = i
            ctx = new_context()
            sf_gen = None
            if rejections is not None:
                rejections.clear()
        cid = ctx.add_message(first_versions.get(i, msgs[i]), copy=False)
        if i in pinned:  # pinned from the start, as opening the file replays it
            with contextlib.suppress(KeyError, ValueError):
                ctx.pin(cid)
    n_off = sum(1 for r in out if r.off_branch)
    if n_off:
        notes.append(
            f"{n_off} request{'s' if n_off != 1 else ''} sent on branches the conversation left "
            "(a rewind or an edited prompt): included, marked off-branch"
        )
    _price_notes(notes, price_notes, min_notes)
    return log_of(out, evicted_total, windows, None)


def _layout(
    session: SessionLike,
    roles: Sequence[Any] | None = None,
    blocks_in: Iterable[int] | None = None,
) -> tuple[list[_Point], set[int], float]:
    """(request points, compaction starts, default TTL) of a session (``roles``, ``blocks_in``:
    see :func:`request_points`, :func:`segment_starts`)."""
    hints = [h for m in session.metas if "usage" in m and (h := _recorded(m)[2]) is not None]
    default_ttl = TTL_1H if hints and hints.count("1h") * 2 >= len(hints) else TTL_5M
    return request_points(session, roles), segment_starts(session, blocks_in), default_ttl


def _price_notes(notes: list[str], price_notes: set[str], min_notes: set[str]) -> None:
    """The notes of the models without a price or a known minimum (both replays)."""
    if "" in price_notes:
        price_notes.discard("")
        notes.append("no model named: cost is null (pass a model in the config)")
    for m in sorted(price_notes):
        notes.append(
            f'no price for model {m!r}: cost is null (add [pricing."{m}"] with input and '
            "output in USD per million tokens to config.toml)"
        )
    for m in sorted(min_notes):
        notes.append(f"minimum cacheable length of model {m!r} unknown: assumed 1,024 tokens")


# -- rewinds and edits ----------------------------------------------------------------------
@dataclass(slots=True)
class _OffBranch:
    """A request off the current branch (``LoadedSession.off_branch``), ready to simulate."""

    fork: int
    meta: dict[str, Any]
    #: the lines of the abandoned branch after the fork (the unit its cache prefix is measured in)
    path: tuple[Any, ...]
    path_tokens: list[int]
    tokens: int
    #: the messages those lines make (consecutive lines of one role are one message)
    messages: int


def _off_branch_points(session: SessionLike, rates: Rates) -> list[_OffBranch]:
    """The session's requests off the current branch (Claude Code transcripts only)."""
    if session.format not in ("claude-code", "claude-code-web"):
        return []
    raw = getattr(session, "off_branch", None)
    if not isinstance(raw, list):
        return []
    out = []
    n = len(session.messages)
    for k, ob in enumerate(raw):
        if not isinstance(ob, Mapping):
            continue
        fork = ob.get("fork")
        if not isinstance(fork, int) or isinstance(fork, bool) or not 0 <= fork <= n:
            continue
        msgs = [m for m in ob.get("messages") or [] if isinstance(m, Mapping)]
        path = tuple(ob.get("path") or ())
        if len(path) != len(msgs):
            path = tuple((k, j) for j in range(len(msgs)))
        ptok = [rates.tokens(message_features(m)) for m in msgs]
        meta = {key: ob[key] for key in ("usage", "timestamp", "model") if ob.get(key) is not None}
        roles = [m.get("role") for m in msgs]
        runs = sum(1 for j, r in enumerate(roles) if j == 0 or r != roles[j - 1])
        out.append(_OffBranch(fork, meta, path, ptok, sum(ptok), runs))
    return out


def _merge_points(
    points: list[_Point], off: list[_OffBranch], metas: Sequence[Mapping[str, Any]]
) -> list[_Point]:
    """The current branch's requests and those off it, in the order they were sent: by the
    messages they share with the branch, then by time."""

    def when(p: _Point) -> float:
        meta = (
            off[p.off].meta
            if p.off is not None
            else metas[p.response]
            if p.response is not None
            else {}
        )
        t = parse_timestamp(meta.get("timestamp"))
        return t if t is not None else -1.0

    merged = [*points, *(_Point(ob.fork, None, k) for k, ob in enumerate(off))]
    merged.sort(key=lambda p: (p.n, when(p)))
    return merged


def _common(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
    k = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        k += 1
    return k


@dataclass(frozen=True, slots=True)
class _Edit:
    step: int
    tid: int
    remove: bool
    tokens: int


def _timed_edits(
    session: SessionLike, rates: Rates
) -> tuple[list[_Edit], dict[int, dict[str, Any]]]:
    """(edits with the step they were made at, in order; the recorded version of each message an
    edit replaced) of a ctxview session: messages whose meta holds ``edited_at_step`` and
    ``original`` (replaced) or ``removed``. Each response's step is ``saved_added_steps``."""
    added = getattr(session, "saved_added_steps", None)
    if not isinstance(added, Mapping) or not added:
        return [], {}
    edits: list[_Edit] = []
    originals: dict[int, dict[str, Any]] = {}
    metas = session.metas
    # the few edited messages found first (a session of 100,000 messages has a handful)
    for tid in [t for t, m in enumerate(metas) if "edited_at_step" in m]:
        meta = metas[tid]
        step = meta.get("edited_at_step")
        if not isinstance(step, int) or isinstance(step, bool):
            continue
        original = meta.get("original")
        removed = bool(meta.get("removed"))
        if not removed and not isinstance(original, Mapping):
            continue
        if isinstance(original, Mapping):
            originals[tid] = dict(original)
        edits.append(
            _Edit(step, tid, removed, rates.tokens(message_features(session.messages[tid])))
        )
    edits.sort(key=lambda e: e.step)
    return edits, originals


def _apply_edits(
    edits: list[_Edit],
    k: int,
    before_step: int,
    ctx: ConversationContext,
    offset: int,
    msgs: Sequence[Mapping[str, Any]],
    tok: list[int],
) -> int:
    """Apply to the replay's context the edits made before ``before_step`` (the step a
    response was added at); returns the index of the first edit not applied yet. The context
    reports each as an ``edited`` event (see ``on_event`` in :func:`simulate`)."""
    while k < len(edits) and edits[k].step < before_step:
        e = edits[k]
        k += 1
        local = e.tid - offset
        try:
            if local < 0:
                raise KeyError(local)
            if e.remove:
                ctx.remove_message(local)
            else:
                ctx.replace_message(local, msgs[e.tid])
        except KeyError:
            tok[e.tid] = e.tokens  # not in the window any more: nothing sent changes
    return k


def window_of(session: SessionLike, log: RequestLog, index: int) -> list[int]:
    """Transcript ids of request ``index``'s window (replays the session again if the log did
    not keep it)."""
    found = log.windows.get(index)
    if found is not None:
        return found
    again = simulate(session, keep_windows=(index,), **log.settings)
    return again.windows.get(index, [])


def _pick(*values: Any) -> Any:
    return next((v for v in values if v is not None), None)


def _prefix_tokens(win: list[int], tok: list[int], p: int, total: int) -> int:
    n = len(win)
    if p >= n:
        return total
    if p <= n // 2:
        return sum(tok[x] for x in win[:p])
    return total - sum(tok[x] for x in win[p:])


def _prune(entries: list[_Entry], now: float | None) -> list[_Entry]:
    """Drop expired entries and those another entry of the same key outlives and outreaches."""
    live = [e for e in entries if now is None or e.expires >= now]
    keep: list[_Entry] = []
    for e in reversed(live):  # newest first
        if any(k.key == e.key and k.length >= e.length and k.expires >= e.expires for k in keep):
            continue
        keep.append(e)
    keep.reverse()
    return keep


def _blended(
    price: Price | None, read: int, write: int, uncached: int, ttl: float, tokens: int
) -> float | None:
    """The cost of ``tokens`` at this request's average input rate."""
    total = read + write + uncached
    if price is None or total <= 0:
        return None
    c = cost(
        price,
        uncached=uncached,
        cache_read=read,
        cache_write_5m=write if ttl == TTL_5M else 0,
        cache_write_1h=write if ttl == TTL_1H else 0,
    )
    return None if c is None else c * tokens / total


class _Rejections:
    """Whether each request's window would be rejected, kept up to date incrementally.

    The API merges consecutive same-role messages into turns before it checks them, and a turn's
    problems depend on it and its neighbouring turns. So after a change only the turns around it
    are counted again: the changed positions are widened to the turn before and the turn after,
    and checked (``check_protocol``) on a slice with one more turn of context on each side; the
    error count of the other messages is carried over. A window holding a ``compaction`` block is
    checked whole (the API ignores everything before the last one).
    ``test_incremental_rejections_match_a_full_check`` holds it against a full check.
    """

    def __init__(self, msgs: Sequence[Mapping[str, Any]], system: Any) -> None:
        self.msgs = msgs
        self.roles = [m.get("role") for m in msgs]
        self.compaction = {i for i, m in enumerate(msgs) if has_compaction(m)}
        self.err: dict[int, int] = {}
        self.total = 0
        probe = check_protocol([{"role": "user", "content": "x"}], system)
        self.sys_errors = sum(1 for p in probe if p.severity == "error")

    def clear(self) -> None:
        self.err.clear()
        self.total = 0

    def drop(self, tid: int) -> None:
        self.total -= self.err.pop(tid, 0)

    def _turn_start(self, win: list[int], x: int) -> int:
        roles = self.roles
        role = roles[win[x]]
        if role not in _TURN_ROLES:
            return x
        while x > 0 and roles[win[x - 1]] == role:
            x -= 1
        return x

    def _turn_end(self, win: list[int], x: int) -> int:
        roles = self.roles
        role = roles[win[x]]
        if role not in _TURN_ROLES:
            return x
        last = len(win) - 1
        while x < last and roles[win[x + 1]] == role:
            x += 1
        return x

    def update(self, win: list[int], ranges: list[tuple[int, int]]) -> None:
        n = len(win)
        if self.compaction and any(t in self.compaction for t in win):
            ranges = [(0, n - 1)]
        spans = sorted((max(0, a), min(n - 1, b)) for a, b in ranges if b >= 0 and a < n)
        widened: list[tuple[int, int]] = []
        for a, b in spans:
            if a > b:
                continue
            # the turns holding a..b, and the turn before and after them
            lo = self._turn_start(win, a)
            if lo > 0:
                lo = self._turn_start(win, lo - 1)
            hi = self._turn_end(win, b)
            if hi < n - 1:
                hi = self._turn_end(win, hi + 1)
            widened.append((lo, hi))
        merged: list[list[int]] = []
        for a, b in sorted(widened):
            if merged and a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        msgs = self.msgs
        for a, b in merged:
            # one more turn of context each side, so the counted turns see their neighbours
            lo = self._turn_start(win, a - 1) if a > 0 else 0
            hi = self._turn_end(win, b + 1) + 1 if b < n - 1 else n
            counts: dict[int, int] = {}
            for p in check_protocol([msgs[t] for t in win[lo:hi]]):
                x = lo + p.index
                if p.severity == "error" and p.index >= 0 and a <= x <= b:
                    counts[x] = counts.get(x, 0) + 1
            for x in range(a, b + 1):
                tid = win[x]
                new, old = counts.get(x, 0), self.err.get(tid, 0)
                if new != old:
                    self.total += new - old
                    if new:
                        self.err[tid] = new
                    else:
                        del self.err[tid]

    def rejected(self, n: int) -> bool:
        return n == 0 or self.total > 0 or self.sys_errors > 0


_TURN_ROLES = ("user", "assistant", "system")


# -- compare ---------------------------------------------------------------------------------
@_gc_paused
def compare(
    session: SessionLike,
    strategies: Iterable[str] | None = None,
    *,
    max_context_messages: int | None = None,
    defaults: Mapping[str, Any] | None = None,
    prices: PriceTable | None = None,
    context_editing: ContextEditing | None = None,
) -> list[dict[str, Any]]:
    """One row per strategy: the same session's requests replayed under each (the
    ``compare --json`` rows)."""
    return list(
        iter_compare(
            session,
            strategies,
            max_context_messages=max_context_messages,
            defaults=defaults,
            prices=prices,
            context_editing=context_editing,
        )
    )


def iter_compare(
    session: SessionLike,
    strategies: Iterable[str] | None = None,
    *,
    max_context_messages: int | None = None,
    defaults: Mapping[str, Any] | None = None,
    prices: PriceTable | None = None,
    context_editing: ContextEditing | None = None,
) -> Iterator[dict[str, Any]]:
    """The rows of :func:`compare`, one at a time, as each strategy's replay ends (the TUI's
    Compare screen shows its progress and can stop between strategies)."""
    names = list(strategies) if strategies is not None else list(STRATEGIES)
    # the features only where the calibration reads them (elsewhere the default rates are
    # uniform: the shared walk measures the messages once for every strategy)
    feats = session_features(session) if session.format in CALIBRATED_FORMATS else None
    cal = calibrate(session, feats)
    # what does not depend on the strategy (tokens, request points, the conversation's own
    # protocol check) is computed once for all of them
    shared = requests_fast.Shared(session.messages)
    for name in names:
        log = simulate(
            session,
            max_context_messages=max_context_messages,
            strategy=name,
            defaults=defaults,
            prices=prices,
            context_editing=context_editing,
            check=True,
            redundancy=False,
            _calibration=cal,
            _feats=feats,
            _shared=shared,
            _totals=requests_fast.Totals(),
        )
        yield {"name": name, **_compare_row(log), "evicted_messages": log.evicted_messages}


def _compare_row(log: RequestLog) -> dict[str, Any]:
    """A compare row's figures: from the replay's sums when it summed (the fast replay), else
    from the requests (the same figures: ``tests/test_requests_fast.py``)."""
    sums = log.summary
    if sums is None:
        sums = requests_fast.Totals()
        for r in log.requests:
            sums.add(
                r.window_size,
                r.input_tokens,
                r.cache_read,
                r.cache_write,
                r.cost_usd,
                r.newest_dropped,
                r.rejected,
            )
    n, inp, costs = sums.requests, sums.input_tokens, sums.costs
    return {
        "requests": n,
        "rejected_requests": sums.rejected,
        "first_rejected": sums.first_rejected,
        "newest_dropped": sums.newest_dropped,
        "mean_window": round(sums.window_sum / n, 2) if n else 0,
        "input_tokens": inp,
        "cache_read": sums.cache_read,
        "cache_write": sums.cache_write,
        # as RequestLog.totals computes them
        "hit_rate": round(sums.cache_read / inp, 4) if inp else None,
        "cost_usd": _round(sum(costs)) if costs and None not in costs else None,
    }
