"""The fast replay behind :func:`ctxview.core.requests.simulate` (built-in eviction strategies).

The reference replay drives a :class:`~ctxview.core.context.ConversationContext` message by
message and listens to its events. The four built-in strategies (``seed``, ``pair-safe``,
``token-budget``, ``low-water``) only ever evict the oldest messages after the pinned first, so a
window is always *the first message of its conversation segment plus one contiguous run*
``[lo, hi)``. Here the window is held as those three integers: its tokens and any prefix of it are
prefix-sum look-ups, each strategy's rule is a few integer steps per added message (the same
steps as :mod:`ctxview.core.strategies`, on flags computed once per message), and nothing is
copied per request.

Whether the API would reject a window (``check=True``, :func:`compare`) is counted per merged
turn as :class:`~ctxview.core.protocol.ProtocolChecker` does: a turn's problems depend only on it,
its neighbouring turns and whether it is last. The turns strictly inside a window are turns of the
whole conversation with the same neighbours, so their errors are a prefix-sum look-up over one
check of the whole conversation; only the few turns at the window's two ends are checked, and
those checks are memoised (the same ends recur across requests and across strategies).

:class:`Shared` holds everything that does not depend on the strategy, so :func:`compare` computes
it once for all strategies. ``tests/test_requests_fast.py`` holds this path against the reference
replay on generated sessions (every field of every request).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxview.core.compaction import has_compaction
from ctxview.core.limits import context_size
from ctxview.core.protocol import _ROLES, _check_turn, _turns, check_protocol
from ctxview.core.strategies import (
    STRATEGIES,
    LowWaterStrategy,
    PairSafeStrategy,
    SeedStrategy,
    TokenBudgetStrategy,
    _is_tool_result_message,
)
from ctxview.core.tokens import estimate_message, estimate_system

if TYPE_CHECKING:
    from ctxview.core.calibrate import Rates

_SEED, _PAIR, _BUDGET, _LOW = 0, 1, 2, 3
_KINDS: dict[type, int] = {
    SeedStrategy: _SEED,
    PairSafeStrategy: _PAIR,
    TokenBudgetStrategy: _BUDGET,
    LowWaterStrategy: _LOW,
}


def strategy_kind(name: str) -> int | None:
    """The fast replay's code for a registered strategy, or None (replayed the reference way):
    only the built-in classes themselves, so a strategy registered under a built-in name with
    other rules is never taken for the built-in one."""
    found = STRATEGIES.get(name)
    return None if found is None else _KINDS.get(type(found))


def _prefix(values: Sequence[int]) -> list[int]:
    out = [0] * (len(values) + 1)
    acc = 0
    for k, v in enumerate(values, 1):
        acc += v
        out[k] = acc
    return out


class Shared:
    """Per-session work that does not depend on the strategy (each part computed on first use)."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.msgs = messages
        self._roles: list[Any] | None = None
        self._is_tr: list[bool] | None = None
        self._est_prefix: list[int] | None = None
        self._tok: tuple[Rates, list[int], list[int]] | None = None
        self._keys: tuple[Rates, list[Any]] | None = None
        self._points: tuple[Any, list[tuple[Any, ...]]] | None = None
        self._errors: dict[Any, WindowErrors] = {}
        self._compaction: bool | None = None
        self._layout: tuple[list[Any], set[int], float] | None = None

    @property
    def roles(self) -> list[Any]:
        if self._roles is None:
            self._roles = [m.get("role") for m in self.msgs]
        return self._roles

    def valid_roles(self) -> bool:
        """Every message has a role a context accepts (else the reference replay raises)."""
        return all(r in _ROLES for r in self.roles)

    @property
    def is_tool_result(self) -> list[bool]:
        if self._is_tr is None:
            self._is_tr = [_is_tool_result_message(m) for m in self.msgs]  # type: ignore[arg-type]
        return self._is_tr

    @property
    def est_prefix(self) -> list[int]:
        """Prefix sums of the window's own estimate (``estimate_message``: token-budget's)."""
        if self._est_prefix is None:
            self._est_prefix = _prefix([estimate_message(m) for m in self.msgs])
        return self._est_prefix

    def tokens_of(self, rates: Rates, feats: Sequence[Any]) -> list[int]:
        """Tokens per message under ``rates`` (kept for the next strategy)."""
        if self._tok is None or self._tok[0] is not rates or len(self._tok[1]) != len(feats):
            tok = rates.tokens_many(feats)
            self._tok = (rates, tok, _prefix(tok))
        return self._tok[1]

    def token_prefix(self, rates: Rates, tok: list[int]) -> list[int]:
        """Prefix sums of ``tok`` (the tokens per message under ``rates``)."""
        if self._tok is None or self._tok[1] is not tok:
            self._tok = (rates, tok, _prefix(tok))
        return self._tok[2]

    def layout(self, session: Any) -> tuple[list[Any], set[int], float]:
        """(request points, compaction starts, default TTL): ``requests._layout``, once."""
        from ctxview.core.requests import _layout

        if self._layout is None:
            self._layout = _layout(session)
        return self._layout

    def content_keys(self, rates: Rates) -> list[Any]:
        from ctxview.core.requests import _content_keys

        if self._keys is None or self._keys[0] is not rates:
            self._keys = (rates, [_content_keys(m, rates) for m in self.msgs])
        return self._keys[1]

    def point_data(self, session: Any, points: Sequence[Any], stamp: Any) -> list[tuple[Any, ...]]:
        """Per request point: (model, recorded, output tokens, ttl hint, timestamp, seconds,
        cache key) — what the reference replay reads from each response's meta."""
        from ctxview.core.requests import _fingerprint, _recorded, parse_timestamp

        if self._points is not None and self._points[0] == stamp:
            return self._points[1]
        session_model, tools_fp, system_fp = stamp
        metas = session.metas
        is_messages = session.format == "messages"
        out: list[tuple[Any, ...]] = []
        empty: dict[str, Any] = {}
        for p in points:
            meta = metas[p.response] if p.response is not None else empty
            if not meta:
                out.append((session_model, None, None, None, None, None, None))
                continue
            m = meta.get("model")
            model = m if isinstance(m, str) else session_model
            rec, out_tok, hint = _recorded(meta) if not is_messages else (None, None, None)
            t = meta.get("timestamp")
            ts_raw = t if isinstance(t, str) else None
            key = (
                model,
                _fingerprint(meta["tools"]) if "tools" in meta else tools_fp,
                _fingerprint(meta["system"]) if "system" in meta else system_fp,
            )
            out.append((model, rec, out_tok, hint, ts_raw, parse_timestamp(ts_raw), key))
        self._points = (stamp, out)
        return out

    def has_compaction(self) -> bool:
        if self._compaction is None:
            self._compaction = any(has_compaction(m) for m in self.msgs)
        return self._compaction

    def window_errors(self, system: Any) -> WindowErrors:
        key = id(system)
        found = self._errors.get(key)
        if found is None or found.system is not system:
            found = self._errors[key] = WindowErrors(self.msgs, self.roles, system)
        return found


class WindowErrors:
    """Whether the API would reject ``[first] + messages[lo:hi]`` (no ``compaction`` block in the
    conversation: the caller checks), counted per merged turn (see the module docstring)."""

    def __init__(self, msgs: Sequence[Mapping[str, Any]], roles: list[Any], system: Any) -> None:
        self.msgs = msgs
        self.roles = roles
        self.system = system
        probe = check_protocol([{"role": "user", "content": "x"}], system)
        self.sys_errors = sum(1 for p in probe if p.severity == "error")
        turns = _turns(roles)
        self.turns = turns
        turn_of = [0] * len(msgs)
        for t, (a, b) in enumerate(turns):
            for x in range(a, b):
                turn_of[x] = t
        self.turn_of = turn_of
        last = len(turns) - 1
        # errors of each turn of the whole conversation, with its own neighbours
        errs = [0] * len(turns)
        for t, (a, b) in enumerate(turns):
            pa, pb = turns[t - 1] if t > 0 else (0, 0)
            na, nb = turns[t + 1] if t < last else (0, 0)
            rels = _check_turn(
                msgs[pa:pb] if t > 0 else None,
                msgs[a:b],
                msgs[na:nb] if t < last else None,
                t == 0,
                t == last,
                False,
            )
            if rels:
                errs[t] = sum(1 for r in rels if r[2] == "error")
        self.prefix = _prefix(errs)
        self.errs = errs
        self._memo: dict[tuple[Any, ...], int] = {}
        self._front: dict[tuple[int, int], int] = {}
        self._back: dict[int, int] = {}

    def _messages(self, d: tuple[Any, ...]) -> list[Any]:
        msgs = self.msgs
        kind = d[0]
        if kind == "g":
            a, b = self.turns[d[1]]
            return list(msgs[a:b])
        if kind == "r":
            return list(msgs[d[1] : d[2]])
        if kind == "m":
            return [msgs[d[1]], *msgs[d[2] : d[3]]]
        return [msgs[d[1]]]

    def _role(self, d: tuple[Any, ...]) -> Any:
        return self.roles[self.turns[d[1]][0] if d[0] == "g" else d[1]]

    def _count(
        self,
        prev: tuple[Any, ...] | None,
        cur: tuple[Any, ...],
        nxt: tuple[Any, ...] | None,
        is_first: bool,
        is_last: bool,
    ) -> int:
        """Errors of the window turn ``cur`` between ``prev`` and ``nxt``.

        A turn's errors depend on less than its neighbours (``protocol._check_turn``): a user
        turn's on the previous turn only when that is an assistant turn (the tool_use ids it
        answers), an assistant turn's on the next turn (the results: none when there is no next
        turn, none answered when it is not a user turn) and on being last; a system turn's on
        neither (its placement rules are warnings); being first decides only warnings. The memo
        is keyed by what matters, so the same turn is checked once whatever else the window
        holds."""
        role = self._role(cur)
        if role == "user":
            ctx: Any = prev if prev is not None and self._role(prev) == "assistant" else None
        elif role == "assistant":
            if nxt is None:
                ctx = (None, is_last)
            elif self._role(nxt) == "user":
                ctx = (nxt, is_last)
            else:
                ctx = ("x", is_last)
        else:
            ctx = None
        if cur[0] == "g" and ctx == self._own_context(cur[1], role):
            own: int = self.errs[cur[1]]
            return own  # the conversation's own turn, in the same context
        key = (cur, ctx)
        found = self._memo.get(key)
        if found is None:
            if len(self._memo) > 1_000_000:
                self._memo.clear()
            found = self._memo[key] = self._check(prev, cur, nxt, is_first, is_last)
        return found

    def _own_context(self, t: int, role: Any) -> Any:
        """The context (as :meth:`_count` keys it) of turn ``t`` in the whole conversation."""
        last = len(self.turns) - 1
        if role == "user":
            if t > 0 and self.roles[self.turns[t - 1][0]] == "assistant":
                return ("g", t - 1)
            return None
        if role == "assistant":
            if t == last:
                return (None, True)
            if self.roles[self.turns[t + 1][0]] == "user":
                return (("g", t + 1), False)
            return ("x", False)
        return None

    def _check(
        self,
        prev: tuple[Any, ...] | None,
        cur: tuple[Any, ...],
        nxt: tuple[Any, ...] | None,
        is_first: bool,
        is_last: bool,
    ) -> int:
        rels = _check_turn(
            self._messages(prev) if prev is not None else None,
            self._messages(cur),
            self._messages(nxt) if nxt is not None else None,
            is_first,
            is_last,
            False,
        )
        return sum(1 for r in rels if r[2] == "error")

    def _sum(self, seq: list[tuple[Any, ...]]) -> int:
        total = 0
        last = len(seq) - 1
        for j, d in enumerate(seq):
            total += self._count(
                seq[j - 1] if j else None, d, seq[j + 1] if j < last else None, j == 0, j == last
            )
        return total

    def errors(self, first: int, lo: int, hi: int) -> int:
        """Error count of the window ``[first] + messages[lo:hi]`` (``first < lo``)."""
        if hi <= lo:
            return self._count(None, ("s", first), None, True, True)
        roles, turns, turn_of = self.roles, self.turns, self.turn_of
        ta, tb = turn_of[lo], turn_of[hi - 1]
        ga, gb = turns[ta]
        b1 = gb if gb < hi else hi
        seq: list[tuple[Any, ...]]
        if roles[first] == roles[lo] and roles[lo] in _ROLES:
            seq = [("m", first, lo, b1)]  # the API merges the first message into lo's turn
        else:
            seq = [("s", first), ("g", ta) if lo == ga and b1 == gb else ("r", lo, b1)]
        if tb == ta:
            return self._sum(seq)
        a_end, b_end = turns[tb]
        end = ("g", tb) if b_end == hi else ("r", a_end, hi)
        if tb - ta <= 4:
            seq.extend(("g", t) for t in range(ta + 1, tb))
            seq.append(end)
            return self._sum(seq)
        # the front turns (they depend on first and lo only), the turns inside (their own
        # errors), the two last turns (they depend on hi only)
        front = self._front.get((first, lo))
        if front is None:
            seq.append(("g", ta + 1))
            front = 0
            last = len(seq) - 1
            for j, d in enumerate(seq):
                nxt = seq[j + 1] if j < last else ("g", ta + 2)
                front += self._count(seq[j - 1] if j else None, d, nxt, j == 0, False)
            if len(self._front) > 1_000_000:
                self._front.clear()
            self._front[(first, lo)] = front
        back = self._back.get(hi)
        if back is None:
            back = self._count(("g", tb - 2), ("g", tb - 1), end, False, False)
            back += self._count(("g", tb - 1), end, None, False, True)
            if len(self._back) > 1_000_000:
                self._back.clear()
            self._back[hi] = back
        return front + self.prefix[tb - 1] - self.prefix[ta + 2] + back

    def rejected(self, first: int, lo: int, hi: int) -> bool:
        if first < 0:
            return True  # no messages
        return self.sys_errors > 0 or self.errors(first, lo, hi) > 0


def replay(
    session: Any,
    shared: Shared,
    *,
    kind: int,
    points: Sequence[Any],
    starts: set[int],
    tok: list[int],
    rates: Rates,
    static: int,
    prices: Any,
    session_model: str | None,
    default_ttl: float,
    tools_fp: int,
    system_fp: int,
    sys_text: str,
    max_: int,
    max_tok: int,
    frac: float,
    check: bool,
    keep: set[int],
    redundancy: bool,
) -> tuple[list[Any], int, dict[int, list[int]], set[str], set[str]]:
    """(requests, evicted messages, kept windows, models of unknown minimum, models without a
    price): the reference replay's results, computed on ``[first] + [lo, hi)`` windows."""
    from ctxview.core.pricing import min_cacheable
    from ctxview.core.requests import (
        TTL_1H,
        TTL_5M,
        CacheBreak,
        Redundancy,
        Request,
        _Entry,
        _prune,
    )

    msgs = session.messages
    n_msgs = len(msgs)
    P = shared.token_prefix(rates, tok)
    pdata = shared.point_data(session, points, (session_model, tools_fp, system_fp))
    ckeys = shared.content_keys(rates) if redundancy else None
    is_tr = shared.is_tool_result if kind != _SEED else []
    asst = [r == "assistant" for r in shared.roles] if kind != _SEED else []
    EP = shared.est_prefix if kind == _BUDGET else []
    sys_tokens = estimate_system(sys_text) if kind == _BUDGET else 0
    werr = shared.window_errors(session.system) if check else None

    def min_keep(lo: int, hi: int) -> int:
        n = hi - lo
        if n == 0:
            return 0
        if not is_tr[hi - 1]:
            return 1
        k = 1
        while k < n:
            k += 1
            x = hi - k
            if asst[x]:
                return k
            if not is_tr[x]:
                return k - 1
        return k

    def safe_cut(lo: int, hi: int, cut: bool, keep: int) -> int:
        """How many to evict (``strategies.safe_cut``)."""
        n = hi - lo
        floor = min_keep(lo, hi)
        keep = min(n, max(keep, floor))
        if keep < n or cut:
            while keep > floor and is_tr[hi - keep]:
                keep -= 1
        return n - keep if keep < n else 0

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
    entries: list[Any] = []
    ever_cached = False
    prev_key: tuple[Any, ...] | None = None
    prev_len = 0
    prev_written = False
    last_sent = 0
    out: list[Any] = []
    windows: dict[int, list[int]] = {}
    by_model: dict[str | None, tuple[int, bool, Any]] = {}
    min_notes: set[str] = set()
    price_notes: set[str] = set()
    low_target = max(2, math.floor(max_ * frac)) - 1
    breaks: dict[tuple[str, int], Any] = {}
    pi = 0
    n_points = len(points)
    # where each request is (a sentinel past the end: no bound check per message)
    at = [p.n for p in points]
    at.append(-1)
    any_starts = bool(starts)
    for i in range(n_msgs + 1):
        # requests that hold messages [.., i)
        while at[pi] == i:
            p = points[pi]
            model, rec, out_tok, hint, ts_raw, now, key = pdata[pi]
            pi += 1
            if key is None:
                key = (model, tools_fp, system_fp)
            ttl = TTL_1H if hint == "1h" else TTL_5M if hint == "5m" else default_ttl
            if first >= 0:
                n = 1 + hi - lo
                wtok = tok[first] + P[hi] - P[lo]
            else:
                n = wtok = 0
            total = static + wtok
            looked = by_model.get(model)
            if looked is None:
                looked = by_model[model] = (*min_cacheable(model), prices.get(model))
            minimum, known_min, price = looked
            if not known_min and model:
                min_notes.add(model)
            # -- what of the previous prompt survives
            brk = None
            if dirty is not None:
                for e in entries:
                    if e.length > dirty:
                        e.length = dirty
            if len(entries) == 1:  # the usual case
                e = entries[0]
                best = e if e.key == key and (now is None or e.expires >= now) else None
            else:
                live = [e for e in entries if e.key == key and (now is None or e.expires >= now)]
                best = max(live, key=lambda e: e.length, default=None)
            read = 0
            if best is not None:
                q = best.length if best.length < n else n
                if q >= n:
                    read = static + wtok
                elif q > 0:
                    read = static + tok[first] + P[lo + q - 1] - P[lo]
                else:
                    read = static
                if read < minimum:
                    read = 0
            if not out and rec is not None and rec["cache_read_input_tokens"] >= minimum:
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
                    bkey = (dirty_reason or "edited", dirty)
                    brk = breaks.get(bkey)
                    if brk is None:  # frozen: one object per (reason, position) is shared
                        brk = breaks[bkey] = CacheBreak(*bkey)
                elif prev_written and (best is None or best.length < prev_len):
                    brk = CacheBreak("ttl", best.length if best else 0)
            # -- the cache after this request
            if read and best is not None and now is not None:
                best.expires = max(best.expires, now + best.ttl)
            if total >= minimum:
                expires = (now if now is not None else 0.0) + ttl
                if len(entries) == 1:
                    e = entries[0]
                    if e.key == key and e.length <= n and e.expires <= expires:
                        # the new entry replaces the only one: updated in place (the usual
                        # case; nothing else holds it)
                        e.length, e.expires, e.ttl = n, expires, ttl
                    else:
                        entries = _prune([e, _Entry(key, n, expires, ttl)], now)
                elif all(e.key == key and e.length <= n and e.expires <= expires for e in entries):
                    entries = [_Entry(key, n, expires, ttl)]
                else:
                    entries.append(_Entry(key, n, expires, ttl))
                    entries = _prune(entries, now)
                ever_cached = True
                prev_written = True
            else:
                prev_written = False
            prev_key, prev_len = key, n
            dirty, dirty_reason = None, ""
            # -- price
            if out_tok is None:
                out_tok = tok[p.response] if p.response is not None else 0
            # ``pricing.cost`` and ``requests._blended``, inline: the same terms in the same
            # order, so the same floats (``tests/test_requests_fast.py``)
            if price is None:
                price_notes.add(model or "")
                c = None
                red_cost = None
            else:
                s4 = (
                    uncached * price.input
                    + read * price.cache_read
                    + (write if ttl == TTL_5M else 0) * price.cache_write_5m
                    + (write if ttl == TTL_1H else 0) * price.cache_write_1h
                )
                c = (s4 + out_tok * price.output) / 1_000_000
                red_cost = (
                    (s4 + 0 * price.output) / 1_000_000 * dup_tokens / total if total > 0 else None
                )
            red = Redundancy(dup_items, dup_tokens, red_cost) if dup_items else None
            if first < 0:
                new_ids: list[int] = []
            else:
                new_ids = list(range(lo if lo > last_sent else last_sent, hi))
                if first >= last_sent:
                    new_ids.insert(0, first)
            if i > last_sent:
                last_sent = i
            index = len(out)
            req = Request(  # positional (the field order), 50,000 times
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
                False,
                i > 0 and (first < 0 or (hi - 1 if hi > lo else first) != i - 1),
                red,
            )
            if werr is not None:
                # a protocol error, or a prompt over the model's context (``prompt is too long``)
                req.rejected = werr.rejected(first, lo, hi) or req.input_tokens > context_size(
                    model
                )
            if index in keep or pi == n_points:
                windows[index] = [first, *range(lo, hi)] if first >= 0 else []
            out.append(req)
        if i == n_msgs:
            break
        if any_starts and i in starts:
            # a compaction: the conversation starts again from here
            if first >= 0:
                dirty = 0
                dirty_reason = "compaction"
            first = -1
            lo = hi = 0
            cut = False
            counts.clear()
            dup_items = dup_tokens = 0
        # -- add message i
        if first < 0:
            first = i
            lo = hi = i + 1
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
        L = hi - lo
        ev = 0
        if kind == _SEED:
            ev = L + 1 - max_
            if ev > L:
                ev = L
        elif kind == _PAIR:
            if max_ - 1 < L or cut:
                ev = safe_cut(lo, hi, cut, max_ - 1)
        elif kind == _LOW:
            if max_ < L + 1:
                ev = safe_cut(lo, hi, cut, low_target)
            elif cut:
                ev = safe_cut(lo, hi, cut, L)
        else:  # token-budget: evictions happen in steps, each may set cut
            keep_n = max_ - 1
            start = lo
            if keep_n < L:
                e = L - max(keep_n, min_keep(lo, hi))
                if e > 0:
                    lo += min(e, L)
                    cut = True
            floor = min_keep(lo, hi)
            head = sys_tokens + EP[first + 1] - EP[first]
            while hi - lo > floor and head + EP[hi] - EP[lo] > max_tok:
                lo += 1
                cut = True
            if cut:
                e = safe_cut(lo, hi, cut, hi - lo)
                if e > 0:
                    lo += e
            ev = lo - start
            lo = start
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
    return out, evicted_total, windows, min_notes, price_notes
