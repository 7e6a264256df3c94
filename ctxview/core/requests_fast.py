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
import operator
from collections.abc import Mapping, Sequence
from itertools import accumulate, islice
from typing import TYPE_CHECKING, Any

from ctxview.core.compaction import has_compaction
from ctxview.core.limits import context_size
from ctxview.core.protocol import (
    _ROLES,
    SERVER_RESULT_PARTNER,
    _check_turn,
    _turns,
    check_protocol,
)
from ctxview.core.strategies import (
    STRATEGIES,
    LowWaterStrategy,
    PairSafeStrategy,
    SeedStrategy,
    TokenBudgetStrategy,
    _is_tool_result_message,
)
from ctxview.core.tokens import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    _json_len,
    block_tokens,
    estimate_message,
    estimate_system,
)

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
    return list(accumulate(values, initial=0))


_C = CHARS_PER_TOKEN - 1  # ceil(n / c) == (n + c - 1) // c, as tokens._chars for n >= 0


def _estimate(message: Mapping[str, Any]) -> int:
    """``estimate_message``, with the usual shapes (text, text blocks, tool_results of text)
    counted inline."""
    content = message.get("content", "")
    if type(content) is str:
        return MESSAGE_OVERHEAD_TOKENS + (len(content) + _C) // CHARS_PER_TOKEN  # _chars
    if type(content) is not list:
        return estimate_message(message)
    total = MESSAGE_OVERHEAD_TOKENS
    for b in content:
        if type(b) is dict:
            t = b.get("type")
            if t == "text":
                text = b.get("text")
                if type(text) is str:
                    total += (len(text) + _C) // CHARS_PER_TOKEN
                    continue
            elif t == "tool_result":
                inner = b.get("content", "")
                if type(inner) is str:
                    total += (len(inner) + _C) // CHARS_PER_TOKEN
                    continue
        total += block_tokens(b)
    return total


_ROLE_SET = frozenset(_ROLES)


def _intern(
    keys: Sequence[tuple[Any, int]], texts: dict[Any, int], results: dict[Any, int]
) -> Sequence[tuple[int, int]]:
    """``requests._content_keys``' ``((kind, value), tokens)`` pairs as ``(int, tokens)``: one
    int per distinct key of the session (``texts`` and ``results`` number the values so far)."""
    if not keys:
        return keys  # the shared empty tuple
    out = []
    for (kind, value), t in keys:
        ids = texts if kind == "t" else results
        kid = ids.get(value)
        if kid is None:
            kid = ids[value] = len(texts) + len(results)
        out.append((kid, t))
    return out


class Shared:
    """Per-session work that does not depend on the strategy (each part computed on first use)."""

    def __init__(self, messages: Sequence[Mapping[str, Any]]) -> None:
        self.msgs = messages
        self._roles: list[Any] | None = None
        self._valid_roles: bool | None = None
        self._is_asst: list[bool] | None = None
        self._is_tr: list[bool] | None = None
        self._est_prefix: list[int] | None = None
        self._tok: tuple[Rates, list[int], list[int]] | None = None
        self._keys: tuple[Rates, list[Any]] | None = None
        self._points: tuple[Any, list[tuple[Any, ...]]] | None = None
        self._errors: dict[Any, WindowErrors] = {}
        self._compaction: bool | None = None
        self._thinking: bool | None = None
        self._edits: tuple[Rates, list[Any], list[Any], dict[int, Any]] | None = None
        self._layout: tuple[list[Any], set[int], float] | None = None
        #: after :meth:`uniform_tokens`: the messages whose content it did not recognise (only
        #: they can hold a ``compaction`` block)
        self._unusual: list[int] | None = None

    @property
    def roles(self) -> list[Any]:
        if self._roles is None:
            self._roles = [m.get("role") for m in self.msgs]
        return self._roles

    def valid_roles(self) -> bool:
        """Every message has a role a context accepts (else the reference replay raises)."""
        if self._valid_roles is None:
            try:  # one C-level pass (an unhashable role is not a role)
                self._valid_roles = _ROLE_SET.issuperset(self.roles)
            except TypeError:
                self._valid_roles = False
        return self._valid_roles

    @property
    def is_assistant(self) -> list[bool]:
        if self._is_asst is None:
            self._is_asst = [r == "assistant" for r in self.roles]
        return self._is_asst

    @property
    def is_tool_result(self) -> list[bool]:
        if self._is_tr is None:
            self._is_tr = [_is_tool_result_message(m) for m in self.msgs]  # type: ignore[arg-type]
        return self._is_tr

    @property
    def est_prefix(self) -> list[int]:
        """Prefix sums of the window's own estimate (``estimate_message``: token-budget's)."""
        if self._est_prefix is None:
            self._est_prefix = _prefix([_estimate(m) for m in self.msgs])
        return self._est_prefix

    def tokens_of(self, rates: Rates, feats: Sequence[Any]) -> list[int]:
        """Tokens per message under ``rates`` (kept for the next strategy)."""
        if self._tok is None or self._tok[0] is not rates or len(self._tok[1]) != len(feats):
            tok = rates.tokens_many(feats)
            self._tok = (rates, tok, _prefix(tok))
        return self._tok[1]

    def uniform_tokens(self, rates: Rates, keys: bool, estimates: bool = False) -> list[int]:
        """Tokens per message under uniform ``rates`` (:attr:`Rates.uniform`), and with ``keys``
        the redundancy keys (:meth:`content_keys`) too, in one walk of the blocks: under those
        rates a message's tokens depend only on its characters and fixed tokens, so no
        :data:`~ctxview.core.calibrate.Features` tuple is built (the same tokens as
        ``rates.tokens_many(session_features(...))``: each term is a multiple of 1/8, so the
        float sums are exact in any order; ``tests/test_requests_fast.py`` holds them equal).
        Messages of other shapes are measured by ``message_features`` and ``_content_keys``.
        With ``estimates``, token-budget's own estimate (:attr:`est_prefix`) comes from the same
        walk."""
        from ctxview.core.calibrate import message_features
        from ctxview.core.requests import _NO_KEYS, REDUNDANT_MIN_CHARS, _content_keys

        if not rates.uniform:
            raise ValueError("uniform_tokens: the rates tell kinds apart")
        if (
            self._tok is not None
            and self._tok[0] is rates
            and len(self._tok[1]) == len(self.msgs)
            and (not keys or (self._keys is not None and self._keys[0] is rates))
            and (not estimates or self._est_prefix is not None)
        ):
            return self._tok[1]
        ov = rates.overhead
        p = rates.per_char[0]
        least = REDUNDANT_MIN_CHARS
        ceil = math.ceil
        tok: list[int] = []
        add = tok.append
        found: list[Any] = []
        add_keys = found.append
        roles: list[Any] = []
        add_role = roles.append
        unusual: list[int] = []
        texts: dict[Any, int] = {}  # the keys as small ints (see :meth:`content_keys`)
        results: dict[Any, int] = {}
        est: list[int] = []  # estimate_message of each (``_estimate``)
        add_est = est.append
        cpt = CHARS_PER_TOKEN
        for i, m in enumerate(self.msgs):
            add_role(m.get("role"))
            content = m.get("content", "")
            if type(content) is str:  # no keys: only blocks are keyed
                k = len(content)
                add(ceil(ov + k * p))
                if keys:
                    add_keys(_NO_KEYS)
                if estimates:
                    add_est(MESSAGE_OVERHEAD_TOKENS + (k + _C) // cpt)
                continue
            if type(content) is list:
                n = 0
                e = MESSAGE_OVERHEAD_TOKENS  # each block's characters rounded up apart
                out: list[tuple[Any, int]] | None = None
                for b in content:
                    if type(b) is not dict:
                        break
                    t = b.get("type")
                    if t == "text" or t == "tool_result":  # keyed apart: a text, a result
                        if t == "text":
                            x, ids = b.get("text"), texts
                        else:
                            x, ids = b.get("content", ""), results
                        if type(x) is not str:
                            break
                        k = len(x)
                        n += k
                        e += (k + _C) // cpt
                        if k >= least and keys:
                            if out is None:
                                out = []
                            kid = ids.get(x)
                            if kid is None:
                                kid = ids[x] = len(texts) + len(results)
                            out.append((kid, ceil(k * p)))
                    elif t == "tool_use":
                        k = len(str(b.get("name", ""))) + _json_len(b.get("input", {}))
                        n += k
                        e += (k + _C) // cpt
                    else:
                        break
                else:  # every block of a usual shape
                    add(ceil(ov + n * p))
                    if keys:
                        add_keys(_NO_KEYS if out is None else out)
                    if estimates:
                        add_est(e)
                    continue
            unusual.append(i)
            add(rates.tokens(message_features(m, False)))
            if keys:
                add_keys(_intern(_content_keys(m, rates), texts, results))
            if estimates:
                add_est(_estimate(m))
        self._tok = (rates, tok, _prefix(tok))
        if self._roles is None:
            self._roles = roles
        self._unusual = unusual
        if keys:
            self._keys = (rates, found)
        if estimates:
            self._est_prefix = _prefix(est)
        return tok

    def token_prefix(self, rates: Rates, tok: list[int]) -> list[int]:
        """Prefix sums of ``tok`` (the tokens per message under ``rates``)."""
        if self._tok is None or self._tok[1] is not tok:
            self._tok = (rates, tok, _prefix(tok))
        return self._tok[2]

    def layout(self, session: Any) -> tuple[list[Any], set[int], float]:
        """(request points, compaction starts, default TTL): ``requests._layout``, once."""
        from ctxview.core.requests import _layout

        if self._layout is None:
            # with the walk's roles, and only its unusual messages asked for compaction blocks
            self._layout = _layout(session, self.roles, self._unusual)
        return self._layout

    def branches_and_edits(
        self, session: Any, rates: Rates
    ) -> tuple[list[Any], list[Any], dict[int, Any]]:
        """(requests off the current branch, edits placed in time, the recorded versions those
        replaced): ``requests._off_branch_points`` and ``_timed_edits``, once per rates (the
        replays only read them)."""
        from ctxview.core.requests import _off_branch_points, _timed_edits

        if self._edits is None or self._edits[0] is not rates:
            self._edits = (rates, _off_branch_points(session, rates), *_timed_edits(session, rates))
        return self._edits[1], self._edits[2], self._edits[3]

    def content_keys(self, rates: Rates) -> list[Any]:
        """Per message, ``requests._content_keys`` with each key replaced by a small int (the
        same int for equal keys): the replay counts them in a dict of ints, hashing no tuple of
        a long text twice per message."""
        from ctxview.core.requests import _content_keys

        if self._keys is None or self._keys[0] is not rates:
            texts: dict[Any, int] = {}
            results: dict[Any, int] = {}
            self._keys = (
                rates,
                [_intern(_content_keys(m, rates), texts, results) for m in self.msgs],
            )
        return self._keys[1]

    def point_data(self, session: Any, points: Sequence[Any], stamp: Any) -> list[tuple[Any, ...]]:
        """Per request point: (model, recorded, output tokens, ttl hint, timestamp, seconds,
        cache key) — what the reference replay reads from each response's meta."""
        from ctxview.core.requests import _fingerprint, parse_timestamp
        from ctxview.core.usage import _recorded

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

    def has_thinking(self) -> bool:
        """Whether an assistant message holds a thinking block (else the thinking edit changes
        nothing)."""
        if self._thinking is None:
            thinking = ("thinking", "redacted_thinking")
            self._thinking = any(
                r == "assistant"
                and type(c := m.get("content")) is list
                and any(isinstance(b, dict) and b.get("type") in thinking for b in c)
                for m, r in zip(self.msgs, self.roles, strict=True)
            )
        return self._thinking

    def has_compaction(self) -> bool:
        if self._compaction is None:
            msgs, unusual = self.msgs, self._unusual
            self._compaction = (
                any(has_compaction(m) for m in msgs)
                if unusual is None
                else any(has_compaction(msgs[i]) for i in unusual)
            )
        return self._compaction

    def window_errors(self, system: Any) -> WindowErrors:
        key = id(system)
        found = self._errors.get(key)
        if found is None or found.system is not system:
            found = self._errors[key] = WindowErrors(self.msgs, self.roles, system)
        return found


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


class Totals:
    """What ``compare``'s row needs of a strategy's requests, summed as the replay goes (50,000
    :class:`~ctxview.core.requests.Request` objects per strategy were most of its time): the
    same figures as the requests give (``tests/test_requests_fast.py``)."""

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
        window: int,
        total: int,
        read: int,
        write: int,
        cost: float | None,
        newest_dropped: bool,
        rejected: bool,
    ) -> int:
        """Count one request (instead of building it); returns its index."""
        index = self.requests
        self.requests = index + 1
        self.window_sum += window
        self.input_tokens += total
        self.cache_read += read
        self.cache_write += write
        self.costs.append(cost)
        if newest_dropped:
            self.newest_dropped += 1
        if rejected:
            self.rejected += 1
            if self.first_rejected is None:
                self.first_rejected = index
        return index


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
    sums: Totals | None = None,
) -> tuple[list[Any], int, dict[int, list[int]], set[str], set[str]]:
    """(requests, evicted messages, kept windows, models of unknown minimum, models without a
    price): the reference replay's results, computed on ``[first] + [lo, hi)`` windows.

    With ``sums``, no request is built: their row's sums go into it (and the list is empty)."""
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
    asst = shared.is_assistant if kind != _SEED else []
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
    made = 0  # requests made so far (built, or summed into ``sums``)
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
    default_key = (session_model, tools_fp, system_fp)
    for i in range(n_msgs + 1):
        # requests that hold messages [.., i)
        while at[pi] == i:
            p = points[pi]
            model, rec, out_tok, hint, ts_raw, now, key = pdata[pi]
            pi += 1
            if key is None:  # a response without its own meta: one tuple for all of them
                key = default_key if model is session_model else (model, tools_fp, system_fp)
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
            if not made and rec is not None and rec["cache_read_input_tokens"] >= minimum:
                read = min(static, rec["cache_read_input_tokens"], total)
            if total < minimum:
                read = write = 0
            else:
                write = total - read
            uncached = total - read - write
            # -- why the previous prompt was not all read
            if not made:
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
                    (s4 + 0 * price.output) / 1_000_000 * dup_tokens / total
                    if dup_items and total > 0
                    else None
                )
            made += 1
            if sums is not None:
                # compare: the sums of its row instead of a Request (see :class:`Totals`)
                index = sums.add(
                    n,
                    total,
                    read,
                    write,
                    c,
                    i > 0 and (first < 0 or (hi - 1 if hi > lo else first) != i - 1),
                    werr is not None
                    and (total > context_size(model) or werr.rejected(first, lo, hi)),
                )
                if index in keep or pi == n_points:
                    windows[index] = [first, *range(lo, hi)] if first >= 0 else []
                continue
            red = Redundancy(dup_items, dup_tokens, red_cost) if dup_items else None
            if first < 0:
                new_ids: list[int] = []
            else:
                a = lo if lo > last_sent else last_sent
                # the usual one or two new messages without a range object
                new_ids = [a, a + 1] if hi - a == 2 else [a] if hi - a == 1 else list(range(a, hi))
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
                # a prompt over the model's context (``prompt is too long``: no need to count
                # its protocol errors), or a protocol error
                req.rejected = total > context_size(model) or werr.rejected(first, lo, hi)
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


def replay_editing(
    session: Any,
    shared: Shared,
    *,
    strategy: str,
    editing: Any,
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
    check: bool,
    keep: set[int],
    redundancy: bool,
    sums: Totals | None = None,
) -> tuple[list[Any], dict[int, list[int]], set[str], set[str]]:
    """(requests, kept windows, models of unknown minimum, models without a price) under a
    context-editing strategy (``clear-tool-uses``, ``clear-thinking``), as the reference replay
    computes them, without a ConversationContext.

    Nothing is evicted, so the window of a request at ``i`` is its segment's messages
    ``[offset, i)`` (the caller sends sessions with rewinds or edits placed in time to the
    reference replay). The edited copy is :class:`~ctxview.core.clearing.SentForm`'s, followed
    with :meth:`~ctxview.core.clearing.SentForm.follow`; the window's tokens are prefix sums of
    the original tokens less what the edits saved (a Fenwick tree of the savings per message
    gives any prefix), and the first message an edit changed breaks the cache there."""
    from ctxview.core.calibrate import message_features
    from ctxview.core.clearing import SentForm
    from ctxview.core.pricing import cost, min_cacheable
    from ctxview.core.requests import (
        TTL_1H,
        TTL_5M,
        CacheBreak,
        Redundancy,
        Request,
        _blended,
        _Entry,
        _prune,
    )

    msgs = session.messages
    n_msgs = len(msgs)
    P = shared.token_prefix(rates, tok)
    pdata = shared.point_data(session, points, (session_model, tools_fp, system_fp))
    ckeys = shared.content_keys(rates) if redundancy else None
    werr = shared.window_errors(session.system) if check else None
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
    entries: list[Any] = []
    ever_cached = False
    prev_key: tuple[Any, ...] | None = None
    prev_len = 0
    prev_written = False
    last_sent = 0
    out: list[Any] = []
    made = 0  # requests made so far (built, or summed into ``sums``)
    windows: dict[int, list[int]] = {}
    by_model: dict[str | None, tuple[int, bool, Any]] = {}
    sizes: dict[str | None, int] = {}  # context_size per model
    min_notes: set[str] = set()
    price_notes: set[str] = set()
    breaks: dict[tuple[str, int], Any] = {}
    pi = 0
    default_key = (session_model, tools_fp, system_fp)
    n_points = len(points)
    for i in range(n_msgs + 1):
        # requests that hold messages [offset, i)
        while pi < n_points and points[pi].n == i:
            p = points[pi]
            model, rec, out_tok, hint, ts_raw, now, key = pdata[pi]
            pi += 1
            if key is None:  # a response without its own meta: one tuple for all of them
                key = default_key if model is session_model else (model, tools_fp, system_fp)
            ttl = TTL_1H if hint == "1h" else TTL_5M if hint == "5m" else default_ttl
            nw = i - offset
            original = P[i] - P[offset]
            looked = by_model.get(model)
            if looked is None:
                looked = by_model[model] = (*min_cacheable(model), prices.get(model))
            minimum, known_min, price = looked
            if not known_min and model:
                min_notes.add(model)
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
                        tok[tid] - rates.tokens(message_features(sent_msg, classify))
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
            total = static + wtok
            # -- what of the previous prompt survives
            brk = None
            if dirty is not None:
                for e in entries:
                    if e.length > dirty:
                        e.length = dirty
            if len(entries) == 1:
                e = entries[0]
                best = e if e.key == key and (now is None or e.expires >= now) else None
            else:
                live = [e for e in entries if e.key == key and (now is None or e.expires >= now)]
                best = max(live, key=lambda e: e.length, default=None)
            read = 0
            reach = 0
            if best is not None:
                reach = best.length if best.length < nw else nw
                if reach >= nw:
                    read = static + wtok
                else:
                    end = offset + reach
                    read = static + P[end] - P[offset]
                    if end > top:  # every saving is before the end
                        read -= saved
                    elif end == top:  # every saving but the one at the end is before it
                        read -= saved - cut.get(top, 0)
                    else:  # (a saving may be negative: a placeholder longer than its result)
                        if base is None:  # (the savings before the segment stay as they are)
                            base = saved_before(offset)
                        read -= saved_before(end) - base
                if read < minimum:
                    read = 0
            if not made and rec is not None and rec["cache_read_input_tokens"] >= minimum:
                read = min(static, rec["cache_read_input_tokens"], total)
            if total < minimum:
                read = write = 0
            else:
                write = total - read
            uncached = total - read - write
            # -- why the previous prompt was not all read
            if not made:
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
                    if brk is None:
                        brk = breaks[bkey] = CacheBreak(*bkey)
                elif prev_written and (best is None or reach < prev_len):
                    brk = CacheBreak("ttl", reach)
            # -- the cache after this request
            if read and best is not None and now is not None:
                best.expires = max(best.expires, now + best.ttl)
            if total >= minimum:
                expires = (now if now is not None else 0.0) + ttl
                if len(entries) == 1:  # the usual case
                    e = entries[0]
                    if e.key == key and e.length <= nw and e.expires <= expires:
                        # the new entry replaces the only one: updated in place (nothing else
                        # holds it), as in ``replay``
                        e.length, e.expires, e.ttl = nw, expires, ttl
                    else:
                        entries = _prune([e, _Entry(key, nw, expires, ttl)], now)
                elif all(e.key == key and e.length <= nw and e.expires <= expires for e in entries):
                    entries = [_Entry(key, nw, expires, ttl)]
                else:
                    entries.append(_Entry(key, nw, expires, ttl))
                    entries = _prune(entries, now)
                ever_cached = True
                prev_written = True
            else:
                prev_written = False
            prev_key, prev_len = key, nw
            dirty, dirty_reason = None, ""
            # -- price
            if price is None:
                price_notes.add(model or "")
            if out_tok is None:
                out_tok = tok[p.response] - cut.get(p.response, 0) if p.response is not None else 0
            c = cost(
                price,
                uncached=uncached,
                cache_read=read,
                cache_write_5m=write if ttl == TTL_5M else 0,
                cache_write_1h=write if ttl == TTL_1H else 0,
                output=out_tok,
            )
            made += 1
            if sums is not None:
                # compare: the sums of its row instead of a Request (see :class:`Totals`)
                rejected = False
                if werr is not None:
                    size = sizes.get(model)
                    if size is None:
                        size = sizes[model] = context_size(model)
                    rejected = total > size or (
                        werr.rejected(offset, offset + 1, i) if nw else werr.rejected(-1, 0, 0)
                    )
                index = sums.add(
                    nw, total, read, write, c, i > 0 and (nw == 0 or offset + nw != i), rejected
                )
                if index in keep or pi == n_points:
                    windows[index] = list(range(offset, i))
                continue
            red = None
            if dup_items:
                red = Redundancy(
                    dup_items, dup_tokens, _blended(price, read, write, uncached, ttl, dup_tokens)
                )
            new_ids = list(range(offset if offset > last_sent else last_sent, i))
            if i > last_sent:
                last_sent = i
            index = len(out)
            req = Request(
                index=index,
                message_ids=new_ids,
                window_size=nw,
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
                newest_dropped=i > 0 and (nw == 0 or offset + nw != i),
                redundancy=red,
            )
            if werr is not None:
                # a prompt over the model's context (``prompt is too long``), or a protocol
                # error: the protocol is checked on the original messages (the edits alone
                # change none of its rules' outcomes)
                size = sizes.get(model)
                if size is None:
                    size = sizes[model] = context_size(model)
                req.rejected = total > size or (
                    werr.rejected(offset, offset + 1, i) if nw else werr.rejected(-1, 0, 0)
                )
            if index in keep or pi == n_points:
                windows[index] = list(range(offset, i))
            out.append(req)
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
        if ckeys is not None:
            ks = ckeys[i]
            if ks:
                for k, t in ks:
                    c0 = counts.get(k, 0)
                    if c0:
                        dup_items += 1
                        dup_tokens += t
                    counts[k] = c0 + 1
    return out, windows, min_notes, price_notes
