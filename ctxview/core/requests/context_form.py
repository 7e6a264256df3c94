"""The context form of a request's window: the session replayed message by message through a
:class:`~ctxview.core.context.ConversationContext`, whose events say what each request's window
holds. It serves what the range form cannot: pinned messages, edits placed in time, requests off
the current branch (rewinds), strategies registered by a user, and a check of windows holding a
``compaction`` block."""

from __future__ import annotations

import bisect
import contextlib
from collections.abc import Mapping, Sequence
from typing import Any

from ctxview.core.calibrate import request_static, static_starts
from ctxview.core.clearing import STRATEGY_EDITS
from ctxview.core.context import ContextEvent, ConversationContext
from ctxview.core.limits import OVER_CONTEXT_CODE, context_size
from ctxview.core.protocol import Rejections
from ctxview.core.requests.cache import PromptCache, _common, _Entry, window_cut
from ctxview.core.requests.points import (
    _content_keys,
    _Edit,
    _fingerprint,
    _merge_points,
    request_time,
    session_cache,
    session_rules,
)
from ctxview.core.requests.types import (
    TTL_1H,
    TTL_5M,
    Redundancy,
    ReplayPlan,
    Request,
)
from ctxview.core.usage import _recorded


def replay_context(
    plan: ReplayPlan,
) -> tuple[list[Request], int, dict[int, list[int]], set[str], set[str]]:
    """(requests, evicted messages, kept windows, models of unknown minimum, models without a
    price), the window of each request being what a ConversationContext holds then; each
    request goes into ``plan.sink``: built (the list returned), or summed for compare."""
    session, rates, points, starts = plan.session, plan.rates, plan.points, plan.starts
    resends = plan.resends
    resent_from = plan.resent_from
    static, prices, session_model = plan.static, plan.prices, plan.session_model
    default_ttl, tools_fp, system_fp = plan.default_ttl, plan.tools_fp, plan.system_fp
    max_, max_tok, frac = plan.max_messages, plan.max_tokens, plan.low_water_fraction
    strat, sys_text, context_editing = plan.strategy, plan.sys_text, plan.context_editing
    check, kept, redundancy = plan.check, plan.keep, plan.redundancy
    make, keep = plan.sink.make, plan.sink.keep
    builds = plan.sink.builds
    off, edits, first_versions, pinned = plan.off, plan.edits, plan.first_versions, plan.pinned
    clearing = strat in STRATEGY_EDITS
    msgs, metas = session.messages, session.metas
    windows: dict[int, list[int]] = {}
    tok = plan.tok
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
        tok[tid] = plan.message_tokens(original)  # sent as recorded until the edit
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
                new = plan.message_tokens(ev.message)
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
    rejections = Rejections(msgs, session.system, session_rules(session)) if check else None
    cache = PromptCache.of_plan(prices, static, plan, session_cache(session))
    marks, static_marked = plan.marks, plan.static_marked
    scaled = bool(plan.scales)
    statics = plan.statics
    skeys = static_starts(statics)

    def reach_of(best: _Entry) -> tuple[int, int]:
        """(leading units cached: window messages, then off-branch ones; their tokens, tools and
        system included) of the request being priced, ``best`` holding its prefix."""
        reach = min(best.length, nw)
        read = static + _prefix_tokens(win, tok, reach, wtok)
        if ob is not None and reach == nw:
            ext = cache.path_reach(key, now, nw, path)
            reach += ext
            read += sum(ob.path_tokens[:ext])
        return reach, read

    last_sent = 0  # transcript messages [0, last_sent) were sent in an earlier request
    pi = 0
    n_msgs = len(msgs)
    for i in range(n_msgs + 1):
        # requests that hold messages [.., i)
        while pi < len(points) and points[pi].n == i:
            p = points[pi]
            index = pi
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
            if statics is not None:  # the tools + system of this segment and model
                static = cache.static = request_static(
                    statics, skeys, offset, i, model, plan.static
                )
            rec, out_tok, hint = (
                _recorded(meta) if session.format != "messages" else (None, None, None)
            )
            ttl = TTL_1H if hint == "1h" else TTL_5M if hint == "5m" else default_ttl
            ts_raw = meta.get("timestamp") if isinstance(meta.get("timestamp"), str) else None
            now = request_time(meta)
            key = (
                model,
                _fingerprint(meta["tools"]) if "tools" in meta else tools_fp,
                _fingerprint(meta["system"]) if "system" in meta else system_fp,
            )
            n = nw + len(path)
            carried = plan.carry.ids(win, i) if plan.carry is not None and win else 0
            total = static + wtok + carried + (ob.tokens if ob is not None else 0)
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
                            plan.message_tokens(sent_msg) if sent_msg is not None else orig_tok[tid]
                        )
                        if new_t != tok[tid]:
                            wtok += new_t - tok[tid]
                            saved += tok[tid] - new_t
                            tok[tid] = new_t
                        pos = bisect.bisect_left(win, tid)
                        if pos < len(win) and win[pos] == tid and (dirty is None or pos < dirty):
                            dirty = pos
                            dirty_reason = dirty_reason or "edited"
                    total = static + wtok + carried
            if plan.own and p.response in plan.own:
                total += plan.own[p.response]  # (billed after the prompt: never cached)
            if out_tok is None:
                out_tok = tok[p.response] if p.response is not None else 0
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
                (),
                0,
                0,
                None if marks is None else lambda q: static + _prefix_tokens(win, tok, q, wtok),  # noqa: B023
                reach_of,
                path,
                cut=None if marks is None else window_cut(marks, win, static_marked),
            )
            if scaled:  # a model on another tokenizer: its messages were scaled
                total = read + write + uncached
            prev_path, prev_nw = path, nw
            front = check_front
            dirty, dirty_reason = None, ""
            red = None
            if dup_items:
                red = Redundancy(dup_items, dup_tokens, red_cost)
            new_ids = []
            for x in reversed(win):
                if x < last_sent:
                    break
                new_ids.append(x)
            new_ids.reverse()
            last_sent = max(last_sent, i)
            rejected = False
            code = None
            if rejections is not None:
                tail_from = nw - len(new_ids) - 1
                ranges = [(tail_from, nw - 1)]
                if front is not None:
                    ranges.append((0, 1))
                    ranges.append((front - 1, front + 1))
                rejections.update(win, ranges)
                # the API's 400s: a prompt over the model's context (``prompt is too long``,
                # the rule inspect and the sidebar apply), or a protocol error (named in a
                # built request; compare's sums only count them)
                if total > context_size(model, getattr(session, "provider", None)):
                    rejected, code = True, OVER_CONTEXT_CODE
                elif builds:
                    code = rejections.error(win)
                    rejected = code is not None
                else:
                    rejected = rejections.rejected(nw)
            keep(
                make(  # a Request's fields, positional (the field order)
                    index,
                    new_ids,
                    n if ob is None else nw + ob.messages,
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
                    i > 0 and (not win or win[-1] != i - 1),
                    red,
                    ob is not None,
                    error_code=code,
                )
            )
            if index in kept or pi == len(points):
                windows[index] = list(win)
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
        if plan.cleared and not clearing and i in plan.cleared:
            # a microcompaction: the earlier messages it changed are sent cleared from here on
            # (a context-editing strategy simulates its own clearing instead, as the editing
            # form does)
            for tid, sent in plan.cleared[i]:
                if tid in win:
                    wtok += sent - tok[tid]
                tok[tid] = sent
        if resends and win and i in resends:
            t = resent_from.get(i)
            pos = 0 if t is None else bisect.bisect_left(win, t)
            if dirty is None or dirty > pos:
                dirty, dirty_reason = pos, resends[i]
        cid = ctx.add_message(first_versions.get(i, msgs[i]), copy=False)
        if i in pinned:  # pinned from the start, as opening the file replays it
            with contextlib.suppress(KeyError, ValueError):
                ctx.pin(cid)
    return plan.sink.requests, evicted_total, windows, cache.min_notes, cache.price_notes


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


def _prefix_tokens(win: list[int], tok: list[int], p: int, total: int) -> int:
    n = len(win)
    if p >= n:
        return total
    if p <= n // 2:
        return sum(tok[x] for x in win[:p])
    return total - sum(tok[x] for x in win[p:])
