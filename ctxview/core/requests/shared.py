"""The per-session work every replay of a session reads, whatever the strategy (:class:`Shared`):
:func:`~ctxview.core.requests.compare` computes it once for all strategies."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ctxview.core.calibrate import message_features
from ctxview.core.compaction import has_compaction
from ctxview.core.protocol import _ROLE_SET, ANTHROPIC_RULES, RuleSet, WindowErrors
from ctxview.core.requests.points import (
    _NO_KEYS,
    _content_keys,
    _fingerprint,
    _layout,
    _off_branch_points,
    _prefix,
    _timed_edits,
    request_time,
)
from ctxview.core.requests.types import REDUNDANT_MIN_CHARS, TurnCarry
from ctxview.core.strategies import _is_tool_result_message, joins_previous
from ctxview.core.tokens import (
    CHARS_PER_TOKEN,
    MESSAGE_OVERHEAD_TOKENS,
    _json_len,
    block_tokens,
    estimate_message,
)
from ctxview.core.usage import _recorded

if TYPE_CHECKING:
    from ctxview.core.calibrate import Rates
    from ctxview.core.providers.base import TokenModel

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


def _intern(
    keys: Sequence[tuple[Any, int]], texts: dict[Any, int], results: dict[Any, int]
) -> Sequence[tuple[int, int]]:
    """``points._content_keys``' ``((kind, value), tokens)`` pairs as ``(int, tokens)``: one
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
        #: (what counted them: rates or a token model, the tokens, their prefix sums)
        self._tok: tuple[Any, list[int], list[int]] | None = None
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
        self._carry: tuple[TokenModel, TurnCarry | None] | None = None

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

    def first_calls_tools(self) -> bool:
        """The first message is an assistant message holding a tool_use: a context keeps the
        messages answering it with it, as pinned ones (the range forms know no pins)."""
        first = self.msgs[0] if self.msgs else None
        if not isinstance(first, dict) or first.get("role") != "assistant":
            return False
        content = first.get("content")
        return isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "tool_use" for b in content
        )

    @property
    def is_assistant(self) -> list[bool]:
        if self._is_asst is None:
            self._is_asst = [r == "assistant" for r in self.roles]
        return self._is_asst

    @property
    def is_tool_result(self) -> list[bool]:
        if self._is_tr is None:
            self._is_tr = [_is_tool_result_message(m) for m in self.msgs]
        return self._is_tr

    def joins_beyond_results(self) -> bool:
        """A message other than a tool_result one belongs with the message before it (a Codex
        developer message between a call and its output, the item after a stored reasoning
        item): the eviction rules then read :class:`~ctxview.core.strategies.JoinsPrevious`,
        not :attr:`is_tool_result` alone."""
        msgs, tr = self.msgs, self.is_tool_result
        return any(
            r in ("system", "assistant") and not tr[i] and joins_previous(msgs, i)
            for i, r in enumerate(self.roles)
        )

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

    def model_tokens(self, counted: TokenModel) -> list[int]:
        """Tokens per message by a provider's token model (``TokenModel.estimate``), kept for
        the next strategy."""
        if self._tok is None or self._tok[0] is not counted:
            estimate = counted.estimate
            tok = [int(estimate(m)) for m in self.msgs]
            self._tok = (counted, tok, _prefix(tok))
        return self._tok[1]

    def turn_carry(self, counted: TokenModel | None) -> TurnCarry | None:
        """What the windows carry by ``counted``'s ``carry`` (None: nothing carried)."""
        if counted is None or counted.carry is None:
            return None
        if self._carry is None or self._carry[0] is not counted:
            found = TurnCarry(self.msgs, counted.carry)
            self._carry = (counted, found if found.any else None)
        return self._carry[1]

    def uniform_tokens(self, rates: Rates, keys: bool, estimates: bool = False) -> list[int]:
        """Tokens per message under uniform ``rates`` (:attr:`Rates.uniform`), and with ``keys``
        the redundancy keys (:meth:`content_keys`) too, in one walk of the blocks: under those
        rates a message's tokens depend only on its characters and fixed tokens, so no
        :data:`~ctxview.core.calibrate.Features` tuple is built (the same tokens as
        ``rates.tokens_many(session_features(...))``: each term is a multiple of 1/8, so the
        float sums are exact in any order; ``tests/unit/core/test_request_window_sources.py`` holds them equal).
        Messages of other shapes are measured by ``message_features`` and ``_content_keys``.
        With ``estimates``, token-budget's own estimate (:attr:`est_prefix`) comes from the same
        walk."""

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
        """(request points, compaction starts, default TTL): ``points._layout``, once."""
        if self._layout is None:
            # with the walk's roles, and only its unusual messages asked for compaction blocks
            self._layout = _layout(session, self.roles, self._unusual)
        return self._layout

    def branches_and_edits(
        self, session: Any, rates: Rates
    ) -> tuple[list[Any], list[Any], dict[int, Any]]:
        """(requests off the current branch, edits placed in time, the recorded versions those
        replaced): ``points._off_branch_points`` and ``_timed_edits``, once per rates (the
        replays only read them)."""

        if self._edits is None or self._edits[0] is not rates:
            self._edits = (rates, _off_branch_points(session, rates), *_timed_edits(session, rates))
        return self._edits[1], self._edits[2], self._edits[3]

    def content_keys(self, rates: Rates) -> list[Any]:
        """Per message, ``points._content_keys`` with each key replaced by a small int (the
        same int for equal keys): the replay counts them in a dict of ints, hashing no tuple of
        a long text twice per message."""

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
            out.append((model, rec, out_tok, hint, ts_raw, request_time(meta), key))
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

    def window_errors(self, system: Any, rules: RuleSet = ANTHROPIC_RULES) -> WindowErrors:
        key = (id(system), rules.provider)
        found = self._errors.get(key)
        if found is None or found.system is not system or found.rules is not rules:
            found = self._errors[key] = WindowErrors(self.msgs, self.roles, system, rules)
        return found
