"""The range form of a request's window: the built-in strategies replayed without a
:class:`~ctxview.core.context.ConversationContext`.

The four built-in eviction strategies (``seed``, ``pair-safe``, ``token-budget``,
``low-water``) only ever evict the oldest messages after the pinned first, so a window is always
*the first message of its conversation segment plus one contiguous run* ``[lo, hi)``
(:func:`replay_range`). Here the window is held as those three integers: its tokens and any
prefix of it are prefix-sum look-ups, each strategy's eviction rule is the function of integers
a :class:`~ctxview.core.window.Window` runs too (``strategies.seed_evictions`` and the others),
called with the range's numbers and flags computed once per message, and nothing is copied per
request. The context-editing strategies (``clear-tool-uses``,
``clear-thinking``) evict nothing: a window is its segment's messages ``[offset, i)``
(:func:`replay_editing`).

Whether the API would reject a window is counted by :class:`~ctxview.core.protocol.WindowErrors`.
``tests/unit/core/test_request_window_sources.py`` holds these replays against the context form on generated
sessions (every field of every request).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ctxview.core.calibrate import request_static, static_starts
from ctxview.core.clearing import SentForm
from ctxview.core.limits import OVER_CONTEXT_CODE, context_size
from ctxview.core.requests.cache import PromptCache, breakpoint_cut
from ctxview.core.requests.points import session_cache, session_rules
from ctxview.core.requests.types import (
    TTL_1H,
    TTL_5M,
    Redundancy,
    ReplayPlan,
    TurnCarry,
)
from ctxview.core.strategies import (
    STRATEGIES,
    EvictionRule,
    JoinsPrevious,
    LowWaterStrategy,
    PairSafeStrategy,
    SeedStrategy,
    TokenBudgetStrategy,
    seed_evictions,
    token_budget_evictions,
)
from ctxview.core.tokens import estimate_system

_BUILT_IN = (SeedStrategy, PairSafeStrategy, TokenBudgetStrategy, LowWaterStrategy)
_KINDS: dict[type, int] = {c: k for k, c in enumerate(_BUILT_IN)}
#: each built-in strategy's eviction rule, by :func:`strategy_kind`
_RULES: tuple[EvictionRule, ...] = tuple(c.rule for c in _BUILT_IN)


def strategy_kind(name: str) -> int | None:
    """The fast replay's code for a registered strategy, or None (replayed the reference way):
    only the built-in classes themselves, so a strategy registered under a built-in name with
    other rules is never taken for the built-in one."""
    found = STRATEGIES.get(name)
    return None if found is None else _KINDS.get(type(found))


def _carried_prefix(
    carry: TurnCarry, base: int, P: Sequence[int], first: int, lo: int, hi: int
) -> Callable[[int], int]:
    """The tokens of the window ``[first] + [lo, hi)``'s first ``q`` messages, what they
    carry included (:meth:`TurnCarry.head`)."""
    return lambda q: base + P[lo + q - 1] + carry.head(first, lo, hi, lo + q - 1)


def replay_range(
    plan: ReplayPlan, kind: int
) -> tuple[list[Any], int, dict[int, list[int]], set[str], set[str]]:
    """(requests, evicted messages, kept windows, models of unknown minimum, models without a
    price) of a built-in eviction strategy (``kind``: :func:`strategy_kind`), computed on
    ``[first] + [lo, hi)`` windows.

    Each request goes into ``plan.sink``: built (the list returned), or summed for compare."""
    session, shared, tok, rates = plan.session, plan.shared, plan.tok, plan.rates
    points, starts, static, prices = plan.points, plan.starts, plan.static, plan.prices
    resends = plan.resends
    resent_from = plan.resent_from
    cleared = plan.cleared
    session_model, default_ttl = plan.session_model, plan.default_ttl
    tools_fp, system_fp = plan.tools_fp, plan.system_fp
    max_, max_tok, frac = plan.max_messages, plan.max_tokens, plan.low_water_fraction
    check, kept, redundancy = plan.check, plan.keep, plan.redundancy
    make, keep = plan.sink.make, plan.sink.keep
    # the new messages' ids: only a built request holds them (compare's sums skip the work)
    ids = plan.sink.builds
    sys_text = plan.sys_text
    msgs = session.messages
    n_msgs = len(msgs)
    P = shared.token_prefix(rates, tok)
    own_tok = False  # tok and P are this replay's copies
    p_valid = n_msgs  # P[: p_valid + 1] are the sums of tok as it is now
    pdata = shared.point_data(session, points, (session_model, tools_fp, system_fp))
    ckeys = shared.content_keys(rates) if redundancy else None
    rule = _RULES[kind]
    is_tr = shared.is_tool_result if rule is not seed_evictions else []
    answers = rule is not seed_evictions and shared.joins_beyond_results()
    asst = shared.is_assistant if rule is not seed_evictions else []
    # token-budget's estimates: the window's from prefix sums, each message's for its rule
    budget = rule is token_budget_evictions
    EP = shared.est_prefix if budget else []
    est = [EP[x + 1] - EP[x] for x in range(n_msgs)] if budget else []
    sys_tokens = estimate_system(sys_text) if budget else 0
    head = tokens = 0
    werr = shared.window_errors(session.system, session_rules(session)) if check else None
    carry = plan.carry

    # -- state of the replay: the window is [first] + [lo, hi)
    first = -1
    lo = hi = 0
    cut = False
    dirty: int | None = None
    dirty_reason = ""
    evicted_total = 0
    counts: dict[Any, int] = {}
    dup_items = 0
    dup_tokens = 0
    cache = PromptCache.of_plan(prices, static, plan, session_cache(session))
    marks, static_marked = plan.marks, plan.static_marked
    scaled = bool(plan.scales)
    statics, seg0 = plan.statics, 0
    skeys = static_starts(statics)
    last_sent = 0
    windows: dict[int, list[int]] = {}
    pi = 0
    n_points = len(points)
    # where each request is (a sentinel past the end: no bound check per message)
    at = [p.n for p in points]
    at.append(-1)
    any_starts = bool(starts)
    default_key = (session_model, tools_fp, system_fp)
    for i in range(n_msgs + 1):
        # requests that hold messages [.., i)
        while at[pi] == i:
            if p_valid < i:  # (a request reads P up to its message i at most)
                for j in range(p_valid, i):
                    P[j + 1] = P[j] + tok[j]
                p_valid = i
            p = points[pi]
            model, rec, out_tok, hint, ts_raw, now, key = pdata[pi]
            index = pi
            pi += 1
            if key is None:  # a response without its own meta: one tuple for all of them
                key = default_key if model is session_model else (model, tools_fp, system_fp)
            ttl = TTL_1H if hint == "1h" else TTL_5M if hint == "5m" else default_ttl
            if statics is not None:  # the tools + system of this segment and model
                static = cache.static = request_static(statics, skeys, seg0, i, model, plan.static)
            if first >= 0:
                n = 1 + hi - lo
                wtok = tok[first] + P[hi] - P[lo]
                if carry is not None:
                    wtok += carry.window(first, lo, hi)
            else:
                n = wtok = 0
            total = static + wtok
            if plan.own and p.response in plan.own:
                total += plan.own[p.response]  # (billed after the prompt: never cached)
            # -- what of the previous prompt survives
            if out_tok is None:
                out_tok = tok[p.response] if p.response is not None else 0
            # the window's first q messages (0 < q < n): ``tok[first] + P[lo + q - 1] - P[lo]``
            read, write, uncached, brk, c, red_cost = cache.settle(
                key,
                now,
                ttl,
                n,
                total,
                rec,
                dirty,
                dirty_reason,
                out_tok,
                dup_tokens if dup_items else None,
                P,
                static + tok[first] - P[lo] if first >= 0 else 0,
                lo - 1,
                # a carried item is cached where it stands in the prompt
                prefix=None
                if carry is None or first < 0
                else _carried_prefix(carry, static + tok[first] - P[lo], P, first, lo, hi),
                cut=None
                if marks is None
                else breakpoint_cut(marks, lo, hi, static_marked, first)
                if first >= 0
                else -1,
            )
            if scaled:  # a model on another tokenizer: its messages were scaled
                total = read + write + uncached
            dirty, dirty_reason = None, ""
            red = Redundancy(dup_items, dup_tokens, red_cost) if dup_items else None
            rejected = False
            code = None
            if werr is not None:
                # a prompt over the model's context (``prompt is too long``: no need to
                # count its protocol errors), or a protocol error (named in a built request;
                # compare's sums only count them)
                if total > context_size(model, getattr(session, "provider", None)):
                    rejected, code = True, OVER_CONTEXT_CODE
                elif ids:
                    code = werr.error(first, lo, hi)
                    rejected = code is not None
                else:
                    rejected = werr.rejected(first, lo, hi)
            if first < 0 or not ids:
                new_ids: list[int] = []
            else:
                a = lo if lo > last_sent else last_sent
                # the usual one or two new messages without a range object
                new_ids = [a, a + 1] if hi - a == 2 else [a] if hi - a == 1 else list(range(a, hi))
                if first >= last_sent:
                    new_ids.insert(0, first)
            if i > last_sent:
                last_sent = i
            keep(
                make(  # a Request's fields, positional (the field order), 50,000 times
                    index,
                    new_ids,
                    n,
                    total,
                    read,
                    write,
                    uncached,
                    brk,
                    rec,
                    ts_raw,
                    c,
                    model,
                    p.response,
                    out_tok,
                    "1h" if ttl == TTL_1H else "5m",
                    rejected,
                    i > 0 and (first < 0 or (hi - 1 if hi > lo else first) != i - 1),
                    red,
                    error_code=code,
                )
            )
            if index in kept or pi == n_points:
                windows[index] = [first, *range(lo, hi)] if first >= 0 else []
        if i == n_msgs:
            break
        if any_starts and i in starts:
            # a compaction: the conversation starts again from here
            seg0 = i
            if first >= 0:
                dirty = 0
                dirty_reason = "compaction"
            first = -1
            lo = hi = 0
            cut = False
            counts.clear()
            dup_items = dup_tokens = 0
        if cleared and i in cleared:
            # a microcompaction (or a hosted search measured, or its results unbilled): the
            # earlier messages it changed are sent at their new size from here on (the shared
            # lists stay as computed: this replay's copies are changed). P is brought up to date
            # as far as a request reads it, not all again here: a Codex session has one such
            # message per search
            if not own_tok:
                tok, P, own_tok = list(tok), list(P), True
            for tid, sent in cleared[i]:
                tok[tid] = sent
                if tid < p_valid:
                    p_valid = tid
        if resends and first >= 0 and i in resends:
            t = resent_from.get(i)
            # the window: ``first``, then ``lo`` to ``hi``
            pos = 0 if t is None or t <= first else 1 + max(0, t - lo)
            if dirty is None or dirty > pos:
                dirty, dirty_reason = pos, resends[i]
        # -- add message i
        if first < 0:
            first = i
            lo = hi = i + 1
            if budget:
                head = sys_tokens + EP[i + 1] - EP[i]
        else:
            hi = i + 1
        if ckeys is not None:
            ks = ckeys[i]
            if ks:
                for k, t in ks:
                    c0 = counts.get(k, 0)
                    if c0:
                        dup_items += 1
                        dup_tokens += t
                    counts[k] = c0 + 1
        # -- the strategy's truncation: how many of the oldest tail messages leave
        if budget:
            tokens = head + EP[hi] - EP[lo]
        flags = JoinsPrevious(msgs, lo) if answers else is_tr
        ev = rule(lo, hi, cut, max_, frac, max_tok, flags, asst, None, tokens, est)
        if ev > 0:
            gone_from = lo
            lo += ev
            cut = True
            evicted_total += ev
            if dirty is None or dirty > 1:
                dirty = 1
            dirty_reason = dirty_reason or "evicted"
            if ckeys is not None:
                for tid in range(gone_from, lo):
                    for k, t in ckeys[tid] or ():
                        c0 = counts[k]
                        if c0 >= 2:
                            dup_items -= 1
                            dup_tokens -= t
                        if c0 <= 1:
                            del counts[k]
                        else:
                            counts[k] = c0 - 1
    return plan.sink.requests, evicted_total, windows, cache.min_notes, cache.price_notes


def replay_editing(
    plan: ReplayPlan,
) -> tuple[list[Any], dict[int, list[int]], set[str], set[str]]:
    """(requests, kept windows, models of unknown minimum, models without a price) under a
    context-editing strategy (``clear-tool-uses``, ``clear-thinking``).

    Nothing is evicted, so the window of a request at ``i`` is its segment's messages
    ``[offset, i)`` (sessions with rewinds or edits placed in time take the context form). The
    edited copy is :class:`~ctxview.core.clearing.SentForm`'s, followed with
    :meth:`~ctxview.core.clearing.SentForm.follow`; the window's tokens are prefix sums of the
    original tokens less what the edits saved (a Fenwick tree of the savings per message gives
    any prefix), and the first message an edit changed breaks the cache there."""
    session, shared, tok, rates = plan.session, plan.shared, plan.tok, plan.rates
    points, starts, static, prices = plan.points, plan.starts, plan.static, plan.prices
    resends = plan.resends
    resent_from = plan.resent_from
    session_model, default_ttl = plan.session_model, plan.default_ttl
    tools_fp, system_fp = plan.tools_fp, plan.system_fp
    check, kept, redundancy = plan.check, plan.keep, plan.redundancy
    make, keep = plan.sink.make, plan.sink.keep
    # the new messages' ids: only a built request holds them (compare's sums skip the work)
    ids = plan.sink.builds
    strategy, editing = plan.strategy, plan.context_editing
    msgs = session.messages
    n_msgs = len(msgs)
    P = shared.token_prefix(rates, tok)
    pdata = shared.point_data(session, points, (session_model, tools_fp, system_fp))
    ckeys = shared.content_keys(rates) if redundancy else None
    werr = shared.window_errors(session.system, session_rules(session)) if check else None
    classify = not rates.uniform
    # what the edits saved: per message (sent = tok - saved), and as a Fenwick tree, brought up
    # to date only when a prefix inside the savings is asked for (a usual replay never does:
    # the cache breaks at the newest saving, whose prefix is ``saved`` less that saving)
    cut: dict[int, int] = {}
    tree = [0] * (n_msgs + 1)
    unsummed: list[tuple[int, int]] = []  # (message, change) not in the tree yet

    def saved_before(x: int) -> int:
        """Tokens the edits saved on messages [0, x)."""
        if unsummed:
            for tid, d in unsummed:
                y = tid + 1
                while y <= n_msgs:
                    tree[y] += d
                    y += y & -y
            unsummed.clear()
        total = 0
        while x > 0:
            total += tree[x]
            x &= x - 1
        return total

    offset = 0
    saved = 0  # tokens the edits of this segment save
    base: int | None = None  # saved_before(offset)
    top = -1  # no saving of this segment is on a message after this one

    def read_of(q: int) -> int:
        """Tokens of the segment's first ``q`` messages as sent, tools and system included."""
        nonlocal base
        end = offset + q
        read: int = static + P[end] - P[offset]
        if end > top:  # every saving is before the end
            return read - saved
        if end == top:  # every saving but the one at the end is before it
            return read - (saved - cut.get(top, 0))
        # (a saving may be negative: a placeholder longer than its result)
        if base is None:  # (the savings before the segment stay as they are)
            base = saved_before(offset)
        return read - (saved_before(end) - base)

    sf = SentForm(strategy, editing)
    # without a thinking block, the thinking edit never changes a message
    follow = strategy != "clear-thinking" or shared.has_thinking()
    sf_gen: int | None = None
    sf_pos = 0
    dirty: int | None = None
    dirty_reason = ""
    counts: dict[Any, int] = {}
    dup_items = 0
    dup_tokens = 0
    cache = PromptCache.of_plan(prices, static, plan, session_cache(session))
    marks, static_marked = plan.marks, plan.static_marked
    scaled = bool(plan.scales)
    statics = plan.statics
    skeys = static_starts(statics)
    last_sent = 0
    windows: dict[int, list[int]] = {}
    sizes: dict[str | None, int] = {}  # context_size per model
    pi = 0
    default_key = (session_model, tools_fp, system_fp)
    n_points = len(points)
    for i in range(n_msgs + 1):
        # requests that hold messages [offset, i)
        while pi < n_points and points[pi].n == i:
            p = points[pi]
            model, rec, out_tok, hint, ts_raw, now, key = pdata[pi]
            index = pi
            pi += 1
            if key is None:  # a response without its own meta: one tuple for all of them
                key = default_key if model is session_model else (model, tools_fp, system_fp)
            ttl = TTL_1H if hint == "1h" else TTL_5M if hint == "5m" else default_ttl
            if statics is not None:  # the tools + system of this segment and model
                static = cache.static = request_static(
                    statics, skeys, offset, i, model, plan.static
                )
            nw = i - offset
            original = P[i] - P[offset]
            # -- the edits: the trigger reads the original prompt's size
            if follow:
                sf.follow(msgs, offset, nw, static + original)
            if sf.generation != sf_gen:
                sf_gen, sf_pos = sf.generation, 0
            changes = sf.changes
            if sf_pos < len(changes):
                edited = sf.edited
                for cid in changes[sf_pos:]:
                    tid = offset + cid
                    sent_msg = edited.get(cid)
                    was = cut.get(tid, 0)
                    now_cut = (
                        # (uniform rates: code need not be told from prose, the same tokens)
                        tok[tid] - plan.message_tokens(sent_msg, classify)
                        if sent_msg is not None
                        else 0
                    )
                    if now_cut != was:
                        saved += now_cut - was
                        if now_cut:
                            cut[tid] = now_cut
                            if tid > top:
                                top = tid
                        else:
                            del cut[tid]
                        unsummed.append((tid, now_cut - was))
                    if cid < nw and (dirty is None or cid < dirty):
                        dirty = cid
                        dirty_reason = dirty_reason or "edited"
                sf_pos = len(changes)
            wtok = original - saved
            if plan.carry is not None and nw:
                wtok += plan.carry.window(-1, offset, i)
            total = static + wtok
            if plan.own and p.response in plan.own:
                total += plan.own[p.response]
            # -- what of the previous prompt survives
            if out_tok is None:
                out_tok = tok[p.response] - cut.get(p.response, 0) if p.response is not None else 0
            read, write, uncached, brk, c, red_cost = cache.settle(
                key,
                now,
                ttl,
                nw,
                total,
                rec,
                dirty,
                dirty_reason,
                out_tok,
                dup_tokens if dup_items else None,
                (),
                0,
                0,
                read_of,
                cut=None if marks is None else breakpoint_cut(marks, offset, i, static_marked),
            )
            if scaled:  # a model on another tokenizer: its messages were scaled
                total = read + write + uncached
            dirty, dirty_reason = None, ""
            rejected = False
            code = None
            if werr is not None:
                # a prompt over the model's context (``prompt is too long``), or a protocol
                # error: the protocol is checked on the original messages (the edits alone
                # change none of its rules' outcomes)
                size = sizes.get(model)
                if size is None:
                    size = sizes[model] = context_size(model, getattr(session, "provider", None))
                window = (offset, offset + 1, i) if nw else (-1, 0, 0)
                if total > size:
                    rejected, code = True, OVER_CONTEXT_CODE
                elif ids:  # (named in a built request; compare's sums only count them)
                    code = werr.error(*window)
                    rejected = code is not None
                else:
                    rejected = werr.rejected(*window)
            red = Redundancy(dup_items, dup_tokens, red_cost) if dup_items else None
            new_ids = list(range(offset if offset > last_sent else last_sent, i)) if ids else []
            if i > last_sent:
                last_sent = i
            keep(
                make(  # a Request's fields, positional (the field order)
                    index,
                    new_ids,
                    nw,
                    total,
                    read,
                    write,
                    uncached,
                    brk,
                    rec,
                    ts_raw,
                    c,
                    model,
                    p.response,
                    out_tok,
                    "1h" if ttl == TTL_1H else "5m",
                    rejected,
                    i > 0 and (nw == 0 or offset + nw != i),
                    red,
                    error_code=code,
                )
            )
            if index in kept or pi == n_points:
                windows[index] = list(range(offset, i))
        if i == n_msgs:
            break
        if i in starts:
            # a compaction: the conversation starts again from here
            if i > offset:
                dirty = 0
                dirty_reason = "compaction"
            counts.clear()
            dup_items = dup_tokens = saved = 0
            offset = i
            base = None
            top = -1
            sf = SentForm(strategy, editing)
            sf_gen = None
        if resends and i > offset and i in resends:
            t = resent_from.get(i)
            pos = 0 if t is None else max(0, t - offset)  # (the window: the segment)
            if dirty is None or dirty > pos:
                dirty, dirty_reason = pos, resends[i]
        if ckeys is not None:
            ks = ckeys[i]
            if ks:
                for k, t in ks:
                    c0 = counts.get(k, 0)
                    if c0:
                        dup_items += 1
                        dup_tokens += t
                    counts[k] = c0 + 1
    return plan.sink.requests, windows, cache.min_notes, cache.price_notes
