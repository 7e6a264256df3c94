"""A session's requests replayed under a max and a strategy (:func:`simulate`), and under each
strategy in turn (:func:`compare`).

Each request's window comes from one of two sources (:func:`window_source` names which):

* ``"range"`` — the built-in eviction strategies keep the first message and one contiguous run,
  so the window is three integers (:func:`~.range_form.replay_range`);
* ``"editing"`` — the context-editing strategies evict nothing: the window is the segment
  (:func:`~.range_form.replay_editing`);
* ``"context"`` — everything else (pins, edits placed in time, rewinds, strategies registered
  by a user, a check of windows holding a ``compaction`` block): a
  :class:`~ctxview.core.context.ConversationContext` replayed message by message
  (:func:`~.context_form.replay_context`).
"""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import fields
from operator import attrgetter
from typing import Any, TypeVar, cast

from ctxview.core.cache_rules import (
    ASSUMPTIONS,
    AUTOMATIC,
    BREAKPOINTS,
    CACHE_MODES,
    NONE,
    _marked,
    cache_mode,
    marked_messages,
)
from ctxview.core.calibrate import Features, Rates
from ctxview.core.clearing import STRATEGY_EDITS, ContextEditing, parse_context_editing
from ctxview.core.context import ConversationContext
from ctxview.core.pricing import PriceTable
from ctxview.core.providers.registry import price_table, provider
from ctxview.core.requests.cache import _price_notes
from ctxview.core.requests.compaction_request import compaction_requests
from ctxview.core.requests.context_form import replay_context
from ctxview.core.requests.diagnose import recorded_breaks, unexplained_summary
from ctxview.core.requests.points import (
    Calibration,
    _fingerprint,
    cache_refreshes,
    calibrate,
    cleared_tokens,
    first_messages_uncached,
    head_kept_warm,
    history_resends,
    own_results,
    provider_tokens,
    resent_from,
    session_features,
    static_of,
)
from ctxview.core.requests.range_form import replay_editing, replay_range, strategy_kind
from ctxview.core.requests.shared import Shared
from ctxview.core.requests.types import (
    CALIBRATED_FORMATS,
    RECORDED_FORMATS,
    ReplayPlan,
    Request,
    RequestLog,
    RequestSink,
    SessionLike,
    Totals,
    _round,
    recorded_carry,
)
from ctxview.core.strategies import STRATEGIES
from ctxview.core.usage import sent_uncached
from ctxview.textfmt import plural

_F = TypeVar("_F", bound=Callable[..., Any])
_RECORDED = attrgetter("recorded")


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
    cache: str | None = None,
    _calibration: Calibration | None = None,
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

    ``cache``: how the requests are cached (:data:`ctxview.core.cache_rules.CACHE_MODES`),
    in place of what the session asks for (:func:`~ctxview.core.cache_rules.cache_mode`: a
    bare message list or request body with no ``cache_control`` caches nothing).

    :func:`window_source` names the replay that gives each request's window;
    ``_reference=True`` forces the context form (the one the others are held to).
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
        "cache": cache,
    }
    keep = set(keep_windows)
    windows: dict[int, list[int]] = {}
    d = dict(defaults or {})
    prices = prices or price_table()
    msgs = session.messages
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
    fitted, cal_static, n_rec, statics, scales = cal[:5]
    head = cal.head
    # the head the recorded reads show (an unexplained break that read it says so)
    head_seen = head if cal.head_seen else None
    rates = rates or fitted
    if rates.calibrated:
        notes.append(
            f"token estimates calibrated from {rates.samples} recorded request deltas "
            f"(characters per token: "
            + ", ".join(f"{k} {v}" for k, v in rates.chars_per_token().items())
            + ")"
        )
    counted = provider_tokens(session, rates)
    static = static_of(session, rates, cal_static, counted)
    if cal_static is not None and session.format in CALIBRATED_FORMATS:
        spread = sorted(set((statics or {}).values()))
        notes.append(
            # (a Codex rollout holds its system prompt, not its tools)
            (
                "system prompt and tools (the tools not in the file)"
                if session.system
                else "system prompt and tools (not in the transcript)"
            )
            + f": {static:,} tokens, calibrated "
            f"from {n_rec} recorded requests"
            + (
                f" (per segment and model: {spread[0]:,} to {spread[-1]:,})"
                if len(spread) > 1
                else ""
            )
        )
    else:
        statics = scales = head = head_seen = None
    told = _token_note(session)
    if told is not None:
        notes.append(told)
    if scales:
        notes.append(
            "tokenizers: "
            + ", ".join(f"{m} ×{v:.2f}" for m, v in sorted(scales.items(), key=str))
            + " the tokens of the same text (Claude Opus 4.7 and later: about 1.3×)"
        )
    # the config's model is a Claude model: another API's file that names none stays unnamed
    # (priced at no model's rates, never at Claude's)
    anthropic = getattr(session, "provider", "anthropic") == "anthropic"
    session_model = session.model or (d.get("model") if anthropic else None)
    # what does not depend on the strategy: computed once per session in compare
    shared = _shared if _shared is not None else Shared(msgs)
    if feats is None and not rates.uniform:  # calibrated elsewhere (``_calibration``)
        feats = session_features(session, rates)
    tok = (
        shared.model_tokens(counted)
        if counted is not None
        else shared.tokens_of(rates, feats)
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
    if cache is not None and cache not in CACHE_MODES:
        raise ValueError(f"unknown cache mode {cache!r} (known: {', '.join(CACHE_MODES)})")
    mode = cache or cache_mode(
        session.format,
        msgs,
        session.system,
        session.tools,
        getattr(session, "request_params", None),
    )
    if (
        cache is None
        and session.format in ("claude-code", "claude-code-web")
        and sent_uncached(session.metas)
    ):
        # what the API reported is the evidence: no cache read nor write field in any usage
        mode = NONE
        notes.append(
            "cache: the recorded usage reports no cache reads or writes (no "
            "cache_read_input_tokens nor cache_creation_input_tokens): sent without caching, "
            "every input token at the base rate"
        )
    elif mode != AUTOMATIC or session.format == "messages":
        notes.append(
            f"cache: {ASSUMPTIONS[mode]}"
            + (
                " (a bare message list carries no request body: ctxview assumes no top-level "
                "cache_control; --cache automatic prices it as automatic caching would)"
                if session.format == "messages" and cache is None
                else ""
            )
        )
    plan = ReplayPlan(
        session,
        shared,
        strat,
        max_,
        max_tok,
        frac,
        context_editing,
        rates,
        static,
        session_model,
        prices,
        tok,
        points,
        starts,
        default_ttl,
        tools_fp,
        system_fp,
        sys_text,
        check,
        keep,
        redundancy,
        off,
        edits,
        first_versions,
        pinned,
        RequestSink(_totals),
        mode,
        marked_messages(msgs) if mode == BREAKPOINTS else None,
        mode == BREAKPOINTS and (_marked(session.system) or _marked(session.tools)),
        statics if statics and len(set(statics.values())) > 1 else None,
        scales,
        history_resends(session),
        resent_from(session),
        cleared_tokens(
            session, rates, None if counted is None else counted.estimate, cal.search_tokens
        )
        if session.format in CALIBRATED_FORMATS
        else {},
        measure=None if counted is None else counted.estimate,
        head=head,
        carry=shared.turn_carry(counted, recorded_carry(session.metas)),
        first_uncached=first_messages_uncached(session),
        head_warm=head_kept_warm(session),
        refreshes=cache_refreshes(session),
        own=own_results(session, cal.search_tokens) or None
        if session.format in CALIBRATED_FORMATS
        else None,
    )
    source = "context" if _reference else window_source(plan)
    if source != "context":
        # the settings are checked as a context would check them
        ConversationContext(
            max_context_messages=max_,
            system_prompt=sys_text,
            strategy=strat,
            max_context_tokens=max_tok,
            low_water_fraction=frac,
            context_editing=context_editing,
        )
    out: list[Request]
    if source == "range":
        kind = strategy_kind(strat)
        assert kind is not None
        out, evicted, windows, min_notes, price_notes = replay_range(plan, kind)
    elif source == "editing":
        out, windows, min_notes, price_notes = replay_editing(plan)
        evicted = 0
    else:
        out, evicted, windows, min_notes, price_notes = replay_context(plan)
        n_off = sum(1 for r in out if r.off_branch)
        if n_off:
            notes.append(
                f"{plural(n_off, 'request')} sent on branches the conversation "
                "left (a rewind or an edited prompt): included, marked off-branch"
            )
    _price_notes(notes, price_notes, min_notes)
    summaries: list[Request] = []
    if as_sent and plan.sink.builds and session.format in ("claude-code", "claude-code-web"):
        summaries = compaction_requests(plan, out)
        if summaries:
            notes.append(
                f"{plural(len(summaries), 'compaction request')} (Claude Code sending the "
                "conversation with its compact instruction to have the summary written): "
                "modelled from the prompt before it, counted in the totals"
            )
    if out and (any(map(_RECORDED, out)) or any("diagnostics" in m for m in session.metas if m)):
        unexplained = recorded_breaks(out, session.metas, head_seen)
        if unexplained:
            notes.append(unexplained_summary(out, unexplained))
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
        plan.sink.totals,
        mode,
        summaries,
    )


def window_source(plan: ReplayPlan) -> str:
    """Where each request's window comes from: ``"range"`` (a built-in eviction strategy),
    ``"editing"`` (a context-editing strategy) or ``"context"`` (a ConversationContext).

    The range forms need a window a context would hold as first + one run (or the whole
    segment): no pins (nor a first message holding a tool_use, whose answers a context pins),
    no edits placed in time, no requests off the branch, every role one a
    context takes, a strategy that is the built-in class itself, and, when windows are checked,
    no ``compaction`` block (a window holding one is checked whole)."""
    shared = plan.shared
    if (
        plan.off
        or plan.edits
        or plan.pinned
        or not shared.valid_roles()
        or (plan.check and shared.has_compaction())
        or shared.first_calls_tools()
    ):
        return "context"
    if strategy_kind(plan.strategy) is not None:
        return "range"
    if plan.strategy in STRATEGY_EDITS:
        return "editing"
    return "context"


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
    cache: str | None = None,
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
            cache=cache,
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
    cache: str | None = None,
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
    shared = Shared(session.messages)
    for name in names:
        log = simulate(
            session,
            max_context_messages=max_context_messages,
            strategy=name,
            defaults=defaults,
            prices=prices,
            context_editing=context_editing,
            cache=cache,
            check=True,
            redundancy=False,
            _calibration=cal,
            _feats=feats,
            _shared=shared,
            _totals=Totals(),
        )
        yield {"name": name, **compare_row(log), "evicted_messages": log.evicted_messages}


#: a request's fields in their order (what :meth:`Totals.add` takes)
_FIELDS = attrgetter(*(f.name for f in fields(Request)))


def compare_row(log: RequestLog) -> dict[str, Any]:
    """A compare row's figures: from the replay's sums when it summed (the fast replay), else
    from the requests (the same figures: ``tests/unit/core/test_request_window_sources.py``)."""
    sums = log.summary
    if sums is None:
        sums = Totals()
        for r in log.requests:
            sums.add(*_FIELDS(r))
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


def _token_note(session: Any) -> str | None:
    """What the session provider's token model says of its estimate (a vocabulary in use or
    one that could not be used), or None."""
    name = getattr(session, "provider", None)
    try:
        return provider(name if isinstance(name, str) else None).tokens.for_session(session).note
    except KeyError:  # a provider ctxview does not know
        return None
