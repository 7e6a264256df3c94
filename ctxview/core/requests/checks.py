"""Whether the API would reject a request's window, kept up to date as the replay goes.

:class:`WindowErrors` serves the range form of a window (``[first] + messages[lo:hi]``):
counted per merged turn as :class:`~ctxview.core.protocol.ProtocolChecker` does: a turn's
problems depend only on it, its neighbouring turns and whether it is last. The turns strictly
inside a window are turns of the whole conversation with the same neighbours, so their errors
are a prefix-sum look-up over one check of the whole conversation; only the few turns at the
window's two ends are checked, and those checks are memoised (the same ends recur across
requests and across strategies).

:class:`_Rejections` serves the context form (any window: pins, edits, rewinds): the turns
around each change are checked again with :func:`~ctxview.core.protocol.check_protocol`.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from itertools import islice
from typing import Any

from ctxview.core.compaction import has_compaction
from ctxview.core.protocol import (
    _ROLES,
    SERVER_RESULT_PARTNER,
    _check_turn,
    _turns,
    check_protocol,
)
from ctxview.core.requests.points import _prefix

_ROLE_SET = frozenset(_ROLES)

#: assistant block types whose rules span the merged turn (thinking order, the final block,
#: server tools pairing inside the turn): a message holding one is checked by ``_check_turn``
_TURN_TYPES = frozenset(
    ("thinking", "redacted_thinking", "server_tool_use", "mcp_tool_use", *SERVER_RESULT_PARTNER)
)

Piece = tuple[
    int, int, int
]  #: ``(head, a, b)``: ``[messages[head]] + messages[a:b]``, head -1: none


class WindowErrors:
    """Whether the API would reject ``[first] + messages[lo:hi]`` (no ``compaction`` block in the
    conversation: the caller checks), counted per merged turn (see the module docstring).

    A window turn is a *piece*: ``(head, a, b)``, the messages ``[messages[head]] +
    messages[a:b]`` of one role (``head`` is the window's first message when the API merges it
    into the turn after it, else -1). Its errors are counted from a summary of each message made
    once (``_summarise``), exactly as ``protocol._check_turn`` counts them:

    * the errors that depend on nothing but the message and its role (empty content except an
      assistant's, empty or blank text blocks except an assistant's, a tool_result outside a user
      message, a tool_use outside an assistant message, an invalid role) add up (``cf``);
    * a user turn after an assistant turn: its tool_results against the tool_use ids of that
      turn (orphans, duplicates, and one error when a result does not lead); after anything
      else, every tool_result is an orphan (one error each, so they add up too);
    * an assistant turn with tool_uses: one error when the next turn (a user turn's results;
      anything else answers none) leaves one unanswered, none when it is the window's last;
    * an assistant message whose rules span its merged turn (thinking, server tool blocks,
      blank text, a final text block ending in whitespace, empty content) or any block of a
      shape the summary does not model: its piece is checked by ``_check_turn`` itself.
    """

    def __init__(self, msgs: Sequence[Mapping[str, Any]], roles: list[Any], system: Any) -> None:
        self.msgs = msgs
        self.roles = roles
        self.system = system
        probe = check_protocol([{"role": "user", "content": "x"}], system)
        self.sys_errors = sum(1 for p in probe if p.severity == "error")
        self._summarise()
        n = len(roles)
        try:  # the usual conversation: valid roles, alternating: each message is a turn
            single = _ROLE_SET.issuperset(roles) and not any(
                map(operator.eq, roles, islice(roles, 1, None))
            )
        except TypeError:  # an unhashable role
            single = False
        if single:  # (what _turns gives then, without a loop in Python)
            turns = list(zip(range(n), range(1, n + 1), strict=True))
            self.turn_of = list(range(n))
        else:
            turns = _turns(roles)
            self.turn_of = [t for t, (a, b) in enumerate(turns) for _ in range(b - a)]
        self.turns = turns
        last = len(turns) - 1
        # errors of each turn of the whole conversation, with its own neighbours (the usual
        # one-message turns inline, as _eval counts them)
        errs: list[int] = []
        append = errs.append
        cf, kind, uses, res = self._cf, self._kind, self._uses, self._res
        for t, (a, b) in enumerate(turns):
            if b - a == 1:
                k = kind[a]
                if k == 0:
                    append(cf[a])  # nothing in it depends on a neighbour
                    continue
                if k == 1:
                    role = roles[a]
                    if role == "assistant":
                        if t == last:
                            append(cf[a])
                            continue
                        na, nb = turns[t + 1]
                        if nb - na == 1:
                            found = res.get(na) if roles[na] == "user" else None
                            if found is None:
                                append(cf[a] + 1)  # none answered
                                continue
                            ua = uses[a]
                            if len(ua) == 1 and len(found) == 1:  # one use, one result
                                append(cf[a] + (ua[0] != found[0][0]))
                                continue
                            answered = {tid for tid, _ in found}
                            append(cf[a] + any(u not in answered for u in ua))
                            continue
                    elif role == "user" and t > 0:
                        pa, pb = turns[t - 1]
                        if pb - pa == 1 and roles[pa] == "assistant":
                            expected = uses.get(pa)
                            e = cf[a]
                            if expected is None:
                                append(e + len(res[a]))  # all orphans
                                continue
                            ra = res[a]
                            if len(ra) == 1:  # one result: an orphan, or misplaced, or right
                                tid, leads = ra[0]
                                append(e + (1 if tid not in expected else not leads))
                                continue
                            seen: set[str] = set()
                            misplaced = False
                            for tid, leads in res[a]:
                                if tid not in expected or tid in seen:
                                    e += 1
                                else:
                                    seen.add(tid)
                                    if not leads:
                                        misplaced = True
                            append(e + misplaced)
                            continue
            append(
                self._eval(
                    -1,
                    a,
                    b,
                    (-1, *turns[t - 1]) if t > 0 else None,
                    (-1, *turns[t + 1]) if t < last else None,
                    t == last,
                )
            )
        self.prefix = _prefix(errs)
        self.errs = errs
        self._front: dict[int, int] = {}
        self._back: dict[int, int] = {}

    # -- the summary of each message -----------------------------------------------------------
    def _summarise(self) -> None:
        msgs, roles = self.msgs, self.roles
        n = len(msgs)
        cf = [0] * n  #: errors that add up
        kind = [
            0
        ] * n  #: 0: nothing else; 1: tool_uses (assistant) or tool_results (user); 2: checked whole
        nres = [0] * n  #: tool_result blocks of a user message
        uses: dict[int, list[str]] = {}  #: tool_use ids of an assistant message
        res: dict[int, list[tuple[str, bool]]] = {}  #: (tool_use_id, no other block before it)
        other = [False] * n  #: a user message holds a block that is not a tool_result
        slow = False
        for i in range(n):
            m = msgs[i]
            role = roles[i]
            if type(m) is not dict:
                slow = True
                continue
            if role not in _ROLES:
                cf[i] = 1  # invalid_role (a turn of its own)
                continue
            content = m.get("content")
            if type(content) is str:
                if not content:
                    if role == "assistant":
                        kind[i] = 2  # empty unless the window's last message
                    else:
                        cf[i] = 1
                continue
            if type(content) is not list:
                if content is None:
                    if role == "assistant":
                        kind[i] = 2
                    else:
                        cf[i] = 1
                elif isinstance(content, (str, list)):
                    slow = True  # a subclass: leave it all to _check_turn
                continue
            if not content:
                if role == "assistant":
                    kind[i] = 2
                else:
                    cf[i] = 1
                continue
            c = 0
            k = 0
            if role == "assistant":
                u: list[str] | None = None
                for b in content:
                    if type(b) is not dict:
                        if isinstance(b, Mapping):
                            slow = True
                        k = 2
                        continue
                    t = b.get("type")
                    if t == "text":
                        tx = b.get("text")
                        if tx == "" or tx is None:
                            c += 1
                        elif type(tx) is not str or not tx.strip():
                            k = 2  # blank: an error unless the merged turn has a tool_use
                    elif t == "tool_use":
                        if u is None:
                            u = []
                        u.append(str(b.get("id")))
                    elif t == "tool_result":
                        c += 1
                    elif type(t) is not str or t in _TURN_TYPES:
                        k = 2
                tail = content[-1]
                if type(tail) is dict and tail.get("type") == "text":
                    tx = tail.get("text")
                    if type(tx) is not str or tx != tx.rstrip():
                        k = 2  # trailing whitespace: an error in the window's final block
                if u is not None:
                    uses[i] = u
                    if k == 0:
                        k = 1
            elif role == "user":
                r: list[tuple[str, bool]] | None = None
                seen_other = False
                for b in content:
                    if type(b) is not dict:
                        if isinstance(b, Mapping):
                            slow = True
                        seen_other = True
                        continue
                    t = b.get("type")
                    if t == "tool_result":
                        if r is None:
                            r = []
                        r.append((str(b.get("tool_use_id")), not seen_other))
                        continue
                    seen_other = True
                    if t == "text":
                        tx = b.get("text")
                        if tx == "" or tx is None or (isinstance(tx, str) and not tx.strip()):
                            c += 1
                    elif t == "tool_use":
                        c += 1
                    elif t is not None and type(t) is not str:
                        k = 2
                other[i] = seen_other
                if r is not None:
                    res[i] = r
                    nres[i] = len(r)
                    if k == 0:
                        k = 1
            else:  # system: its placement rules are warnings
                for b in content:
                    if type(b) is not dict:
                        if isinstance(b, Mapping):
                            slow = True
                        continue
                    t = b.get("type")
                    if t == "text":
                        tx = b.get("text")
                        if tx == "" or tx is None or (isinstance(tx, str) and not tx.strip()):
                            c += 1
                    elif t == "tool_result" or t == "tool_use":
                        c += 1
                    elif t is not None and type(t) is not str:
                        k = 2
            cf[i] = c
            kind[i] = k
        self._cf, self._kind, self._nres = cf, kind, nres
        self._uses, self._res, self._other = uses, res, other
        self._cfp = _prefix(cf)
        self._nresp = _prefix(nres)
        self._kp = _prefix([1 if k else 0 for k in kind])
        self._xp = _prefix([1 if k == 2 else 0 for k in kind])
        self._slow = slow

    # -- one window turn -----------------------------------------------------------------------
    def _list(self, p: Piece) -> list[Any]:
        head, a, b = p
        part = list(self.msgs[a:b])
        return [self.msgs[head], *part] if head >= 0 else part

    def _role(self, p: Piece) -> Any:
        return self.roles[p[0] if p[0] >= 0 else p[1]]

    def _ids_of_uses(self, p: Piece) -> list[str]:
        head, a, b = p
        uses = self._uses
        out: list[str] = list(uses.get(head, ())) if head >= 0 else []
        if self._kp[b] > self._kp[a]:
            for x in range(a, b):
                u = uses.get(x)
                if u is not None:
                    out.extend(u)
        return out

    def _ids_of_results(self, p: Piece) -> set[str]:
        head, a, b = p
        res = self._res
        out: set[str] = set()
        if head >= 0 and head in res:
            out.update(tid for tid, _ in res[head])
        if self._kp[b] > self._kp[a]:
            for x in range(a, b):
                r = res.get(x)
                if r is not None:
                    out.update(tid for tid, _ in r)
        return out

    def _eval(
        self, head: int, a: int, b: int, prev: Piece | None, nxt: Piece | None, is_last: bool
    ) -> int:
        """Errors of the window turn ``(head, a, b)`` between ``prev`` and ``nxt`` (pieces, or
        None at the window's ends)."""
        kind, KP = self._kind, self._kp
        if head >= 0:
            np_ = (kind[head] != 0) + KP[b] - KP[a]
            cfs = self._cf[head] + self._cfp[b] - self._cfp[a]
        else:
            np_ = KP[b] - KP[a]
            cfs = self._cfp[b] - self._cfp[a]
        if not np_:
            return cfs
        if self._slow or (head >= 0 and kind[head] == 2) or self._xp[b] > self._xp[a]:
            rels = _check_turn(
                self._list(prev) if prev is not None else None,
                self._list((head, a, b)),
                self._list(nxt) if nxt is not None else None,
                prev is None,
                is_last,
                False,
            )
            return sum(1 for r in rels if r[2] == "error")
        role = self.roles[head if head >= 0 else a]
        if role == "user":
            expected = (
                self._ids_of_uses(prev)
                if prev is not None and self._role(prev) == "assistant"
                else None
            )
            if not expected:  # every tool_result is an orphan
                nr = self._nres
                return cfs + (nr[head] if head >= 0 else 0) + self._nresp[b] - self._nresp[a]
            exp = set(expected)
            seen: set[str] = set()
            leading = True
            misplaced = False
            errors = cfs
            res, other = self._res, self._other
            for x in ([head] if head >= 0 else []) + list(range(a, b)):
                r = res.get(x)
                if r is not None:
                    for tid, first_blocks in r:
                        if tid not in exp or tid in seen:
                            errors += 1  # orphan_tool_result, duplicate_tool_result
                        else:
                            seen.add(tid)
                            if not (leading and first_blocks):
                                misplaced = True
                if other[x]:
                    leading = False
            return errors + misplaced  # tool_result_not_first
        if role == "assistant":
            if nxt is None:
                return cfs
            used = self._ids_of_uses((head, a, b))
            answered = self._ids_of_results(nxt) if self._role(nxt) == "user" else set()
            return cfs + any(tid not in answered for tid in used)  # unanswered_tool_use
        return cfs

    def _sum(self, seq: list[Piece]) -> int:
        total = 0
        last = len(seq) - 1
        ev = self._eval
        for j, p in enumerate(seq):
            total += ev(*p, seq[j - 1] if j else None, seq[j + 1] if j < last else None, j == last)
        return total

    def errors(self, first: int, lo: int, hi: int) -> int:
        """Error count of the window ``[first] + messages[lo:hi]`` (``first < lo``)."""
        if hi <= lo:
            return self._eval(first, 0, 0, None, None, True)
        roles, turns, turn_of = self.roles, self.turns, self.turn_of
        ta, tb = turn_of[lo], turn_of[hi - 1]
        if tb - ta > 4:
            # the front turns (they depend on first and lo only), the turns inside (their own
            # errors), the two last turns (they depend on hi only)
            ga, gb = turns[ta]
            errs = self.errs
            front = -1
            if not self._slow and self._kind[first] != 2 and self._xp[gb] == self._xp[lo]:
                # the usual fronts, counted without a memo
                rl = roles[lo]
                cfp, nrp = self._cfp, self._nresp
                if roles[first] == rl and rl in _ROLES:
                    if rl != "assistant":  # merged into one turn, after none: orphans all
                        front = (
                            self._cf[first]
                            + self._nres[first]
                            + cfp[gb]
                            - cfp[lo]
                            + nrp[gb]
                            - nrp[lo]
                            + errs[ta + 1]
                        )
                elif lo == ga and self._kind[first] == 0:
                    # a first message no neighbour changes, then lo's whole turn after it
                    if rl == "user":  # after no tool_use: orphans all
                        front = cfp[gb] - cfp[ga] + nrp[gb] - nrp[ga]
                    else:
                        front = errs[ta]
                    front += self._cf[first] + errs[ta + 1]
            key = first * (len(roles) + 1) + lo
            if front < 0:
                front = self._front.get(key, -1)
            if front < 0:
                if roles[first] == roles[lo] and roles[lo] in _ROLES:
                    seq: list[Piece] = [(first, lo, gb)]  # the API merges them into one turn
                else:
                    seq = [(first, 0, 0), (-1, lo, gb)]
                seq.append((-1, *turns[ta + 1]))
                seq.append((-1, *turns[ta + 2]))
                front = 0
                ev = self._eval
                for j in range(len(seq) - 1):
                    front += ev(*seq[j], seq[j - 1] if j else None, seq[j + 1], False)
                if len(self._front) > 1_000_000:
                    self._front.clear()
                self._front[key] = front
            a_end, b_end = turns[tb]
            if hi == b_end and (roles[a_end] != "assistant" or self._kp[b_end] == self._kp[a_end]):
                # the last turn whole, its errors not depending on being last
                return front + self.prefix[tb + 1] - self.prefix[ta + 2]
            back = self._back.get(hi)
            if back is None:
                end = (-1, a_end, hi)
                before = (-1, *turns[tb - 1])
                back = self._eval(*before, (-1, *turns[tb - 2]), end, False)
                back += self._eval(*end, before, None, True)
                if len(self._back) > 1_000_000:
                    self._back.clear()
                self._back[hi] = back
            return front + self.prefix[tb - 1] - self.prefix[ta + 2] + back
        gb = turns[ta][1]
        b1 = gb if gb < hi else hi
        if roles[first] == roles[lo] and roles[lo] in _ROLES:
            seq = [(first, lo, b1)]
        else:
            seq = [(first, 0, 0), (-1, lo, b1)]
        seq.extend((-1, *turns[t]) for t in range(ta + 1, tb))
        if tb > ta:
            seq.append((-1, turns[tb][0], hi))
        return self._sum(seq)

    def rejected(self, first: int, lo: int, hi: int) -> bool:
        if first < 0:
            return True  # no messages
        return self.sys_errors > 0 or self.errors(first, lo, hi) > 0


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
