"""The sidebar's cache figures: the request model (``ctxview.core.requests``) run on the open
session, for the next request and the requests so far.

The simulation is O(session): :func:`predict` runs in a worker thread (see
``CtxviewApp._predict_cache``) on a snapshot taken on the UI thread by :func:`session_view`.
No widgets here.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxview.app.model import SessionModel
    from ctxview.core.requests import RequestLog

#: at most this many values per sparkline series (the sidebar buckets them to its width)
SERIES_MAX = 512


@dataclass
class CachePrediction:
    """What the request model predicts for the next request, and for the session so far."""

    #: the next request (the window as it stands): estimated input tokens and their split
    input_tokens: int
    read: int
    write: int
    uncached: int
    #: USD of the next request's input (None: the model has no price)
    cost_usd: float | None
    #: the requests so far: count, predicted hit rate (read / input) and cost (output included)
    requests: int
    hit_rate: float | None
    cost_so_far: float | None
    recorded_hit_rate: float | None
    #: per request so far (bucketed to at most SERIES_MAX values): hit rate, estimated input
    hit_series: list[float] = field(default_factory=list)
    size_series: list[float] = field(default_factory=list)
    model: str | None = None
    #: the reason the next request breaks the cache, if it does (``ttl`` is never predicted
    #: for it: it has no timestamp yet)
    cache_break: str | None = None
    seconds: float = 0.0
    #: the requests so far as the Requests view shows them, and what they were computed from
    #: (the Requests view takes them when the open session still gives the same inputs)
    so_far: SavedRequests | None = None

    #: how the request model estimated: its (calibrated) rates and the tools + system tokens
    #: (a recorded transcript has neither in it: calibrated from its usage)
    rates: Any = None
    static_tokens: int = 0
    #: the cache lifetime the next request writes with ("5m" or "1h", from recorded usage)
    ttl: str = "5m"
    #: the transcript ids of the next request's window in this replay from the start (None:
    #: not kept). The live window can differ: it is shaped by the session's own history (an
    #: earlier max or strategy, evictions that stay evicted), the replay by today's settings.
    next_window: list[int] | None = None
    #: the sub-agents' requests as they sent them (``sessions.subagents.AgentLog``), when the
    #: session is shown as sent and started any, and the totals of the requests so far with
    #: theirs (``requests``, ``input_tokens``, ``hit_rate``, ``cost_usd``, ...: ``totals()``)
    agents: list[Any] = field(default_factory=list)
    with_agents: dict[str, Any] | None = None


@dataclass
class SavedRequests:
    """The request model's log of a session view (the requests so far: the placeholder "next
    request" dropped), with the inputs it was computed from."""

    view: Any
    settings: dict[str, Any]
    prices: Any
    log: RequestLog

    def log_for(self, view: Any, settings: dict[str, Any], prices: Any) -> RequestLog | None:
        """The saved log if ``simulate(view, prices=prices, **settings)`` would give it (same
        messages and metas, by identity: the transcript replaces a message it edits; same
        settings, prices and session fields), else None."""
        mine = self.view
        if (
            settings != self.settings
            or vars(prices) != vars(self.prices)
            or len(view.messages) != len(mine.messages)
            or len(view.metas) != len(mine.metas)
        ):
            return None
        a, b = vars(view), vars(mine)
        if a.keys() != b.keys() or any(a[k] != b[k] for k in a if k not in ("messages", "metas")):
            return None
        if any(x is not y for x, y in zip(view.messages, mine.messages, strict=True)):
            return None
        if any(x is not y for x, y in zip(view.metas, mine.metas, strict=True)):
            return None
        return self.log


def requests_so_far(log: RequestLog, placeholder: bool) -> RequestLog:
    """The log of the view without the placeholder that :func:`with_next_request` appended (if
    it appended one): its last request dropped, the windows of the others kept. The requests
    and their totals are the same as a replay of the view alone (the replay is causal:
    ``tests/unit/app/test_cacheline.py`` holds it to one); ``evicted_messages`` (not shown by the
    Requests view) also counts what the placeholder's arrival evicted."""
    if not placeholder or not log.requests:
        return log
    n = len(log.requests) - 1
    return replace(
        log,
        requests=log.requests[:n],
        windows={k: w for k, w in log.windows.items() if k < n},
        notes=list(log.notes),
    )


def _bucket(values: list[float], n: int, pick: Any) -> list[float]:
    """At most ``n`` values: ``pick`` (min or max) of each run of ``values``."""
    if len(values) <= n:
        return values
    step = len(values) / n
    return [
        pick(values[int(k * step) : max(int(k * step) + 1, int((k + 1) * step))]) for k in range(n)
    ]


def session_view(model: SessionModel) -> tuple[Any, dict[str, Any]] | None:
    """(session-like snapshot, simulate() settings) of the open session for the request model:
    as sent (a recorded session) or under its max and strategy. Call on the UI thread; None when
    there is nothing to send yet."""
    from ctxview.app.request_inputs import context_settings
    from ctxview.app.request_inputs import session_view as current_view

    records = model.transcript.records
    if not records:
        return None
    view = current_view(model)
    settings = context_settings(model)
    if model.as_sent is not None and model.as_sent != "proxy":
        # as sent: the request model's own as-sent replay (compactions start it again)
        view.format = model.as_sent
        settings["max_context_messages"] = settings["strategy"] = None
    elif model.as_sent == "proxy":
        settings["max_context_messages"] = len(records) + 1
        settings["strategy"] = "seed"
    return view, settings


def with_next_request(view: Any) -> Any:
    """The view with a placeholder after its last message, so that the request model's last
    request is the next one (the window as it stands): an empty assistant reply ends a request
    in a transcript; a bare message list sends one per user message."""
    from ctxview.core.body import REQUEST_BODY_FORMATS

    if view.format in REQUEST_BODY_FORMATS:
        return view  # a request body is one request: the next one
    msgs, metas = list(view.messages), list(view.metas)
    if view.format == "messages":
        if msgs[-1].get("role") == "user":
            return view  # its last request is the next one: nothing to add
        msgs.append({"role": "user", "content": ""})
        metas.append({})
    else:
        msgs.append({"role": "assistant", "content": []})
        metas.append({})
    # the next request goes out after every edit made so far: the request model applies an
    # edit before the first request whose response was added after it (without a step of its
    # own the placeholder would be sent as recorded, the edits left out)
    steps = dict(getattr(view, "saved_added_steps", None) or {})
    steps[len(msgs) - 1] = sys.maxsize
    return SimpleNamespace(
        **{**vars(view), "messages": msgs, "metas": metas, "saved_added_steps": steps}
    )


def predict(
    view: Any, settings: dict[str, Any], prices: Any = None, agents: Sequence[Any] = ()
) -> CachePrediction | None:
    """Run the request model on ``view`` (from :func:`session_view`); safe in a worker thread
    (it only reads the snapshot). ``ValueError`` for settings the model refuses. ``agents``: the
    sub-agents' logs (:func:`agent_logs`), counted in ``with_agents``."""
    from ctxview.core.pricing import cost
    from ctxview.core.providers.registry import price_table
    from ctxview.core.requests import simulate

    t0 = time.perf_counter()
    prices = prices or price_table()
    sent = with_next_request(view)
    # with the repeated-content count: the Requests view shows it (and reuses this log)
    log = simulate(sent, prices=prices, **settings)
    if not log.requests:
        return None
    so_far = SavedRequests(view, dict(settings), prices, requests_so_far(log, sent is not view))
    nxt = log.requests[-1]
    # the requests so far in the order they were sent, a compaction's summary request included
    past = [r for r in log.in_order() if r is not nxt]
    kept = log.windows.get(nxt.index)  # the last request's window is always kept
    n_real = len(view.messages)  # (not the placeholder of the next request)
    next_window = None if kept is None else [i for i in kept if 0 <= i < n_real]
    price = prices.get(nxt.model)
    next_cost = cost(
        price,
        uncached=nxt.uncached,
        cache_read=nxt.cache_read,
        cache_write_5m=nxt.cache_write if nxt.ttl == "5m" else 0,
        cache_write_1h=nxt.cache_write if nxt.ttl == "1h" else 0,
    )
    inp = sum(r.input_tokens for r in past)
    read = sum(r.cache_read for r in past)
    costs = [r.cost_usd for r in past]
    rec = [r for r in past if r.recorded is not None]
    rec_total = sum(r.recorded_total or 0 for r in rec)
    rec_read = sum(r.recorded["cache_read_input_tokens"] for r in rec if r.recorded)
    hits = [r.cache_read / r.input_tokens if r.input_tokens else 0.0 for r in past]
    sizes = [float(r.input_tokens) for r in past]
    return CachePrediction(
        next_window=next_window,
        input_tokens=nxt.input_tokens,
        read=nxt.cache_read,
        write=nxt.cache_write,
        uncached=nxt.uncached,
        cost_usd=next_cost,
        requests=len(past),
        hit_rate=read / inp if inp else None,
        cost_so_far=sum(c for c in costs if c is not None)
        if costs and all(c is not None for c in costs)
        else None,
        recorded_hit_rate=rec_read / rec_total if rec_total else None,
        hit_series=_bucket(hits, SERIES_MAX, min),  # a break stays visible
        size_series=_bucket(sizes, SERIES_MAX, max),  # a peak stays visible
        model=nxt.model,
        cache_break=nxt.cache_break.reason if nxt.cache_break and past else None,
        seconds=time.perf_counter() - t0,
        so_far=so_far,
        rates=log.rates,
        static_tokens=log.static_tokens,
        ttl=nxt.ttl,
        agents=list(agents),
        with_agents=_with_agents(so_far.log, agents),
    )


def with_agents(pred: CachePrediction, agents: Sequence[Any]) -> CachePrediction:
    """``pred`` with the sub-agents' logs (:func:`agent_logs`) counted in ``with_agents``."""
    log = pred.so_far.log if pred.so_far is not None else None
    return replace(
        pred,
        agents=list(agents),
        with_agents=_with_agents(log, agents) if log is not None else None,
    )


def agent_logs(subagents: Sequence[Any], prices: Any, defaults: dict[str, Any]) -> list[Any]:
    """The requests of ``subagents`` (``sessions.subagents.SubAgent``, as a session lists them)
    as they sent them: ``sessions.subagents.agent_logs``, the rule ``requests`` applies. Reads
    their files: call in a worker."""
    from ctxview.sessions.subagents import agent_logs as logs

    return logs(list(subagents), prices=prices, defaults=defaults) if subagents else []


def _with_agents(log: RequestLog, agents: Sequence[Any]) -> dict[str, Any] | None:
    """The totals of ``log``'s requests with the sub-agents' (None: no sub-agent was read)."""
    from ctxview.sessions.subagents import totals_with_agents

    if not any(a.log is not None for a in agents):
        return None
    return totals_with_agents(log, list(agents))
