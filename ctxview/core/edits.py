"""Edits of a window, computed headlessly: drop a message pair-safely, stub its content, apply a
repair; each as a plan of ``{id: new message or None (removed)}`` (a repair's new messages
beside it, by the window message they go before) with a preview of its effect.

The changes are applied through :class:`~ctxview.core.context.ConversationContext`'s edit API
(``replace_message`` / ``remove_message``; ``readmit_message`` undoes a removal); new messages
through the session's history (``ctxview.sessions.inserts``: ids are positions in it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.core.cache_rules import min_cacheable
from ctxview.core.pricing import PriceTable, cost
from ctxview.core.protocol import Problem, ProtocolChecker
from ctxview.core.providers.registry import price_table
from ctxview.core.repair import Fix, next_version_key, repair
from ctxview.core.requests import CacheBreak
from ctxview.core.tokens import estimate_message, estimate_window
from ctxview.core.window import Entry, json_copy
from ctxview.textfmt import plural

#: What a stubbed block's content becomes (``N`` = characters removed).
STUB = "[stubbed by ctxview: {n:,} characters removed]"


@dataclass
class EditPlan:
    """Changes to window messages by id: a new message, or None to take it out of the window;
    and new messages by the id of the window message they go before (:data:`END`: after the
    window's last)."""

    what: str
    changes: dict[int, dict[str, Any] | None] = field(default_factory=dict)
    fixes: list[Fix] = field(default_factory=list)
    #: why nothing can be done (the plan is empty)
    reason: str = ""
    #: new messages (a repair's answer to a call nothing answers), in order, by the window
    #: message they go before
    inserts: dict[int, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return not self.changes and not self.inserts


#: ``EditPlan.inserts``' key for new messages after the window's last message
END = -1


@dataclass(frozen=True)
class Preview:
    errors_before: int
    errors_after: list[Problem]
    tokens_before: int
    tokens_after: int

    @property
    def tokens_saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def verdict(self) -> str:
        if not self.errors_after:
            return "valid: the API will accept the window after this edit"
        first = self.errors_after[0]
        more = len(self.errors_after) - 1
        return (
            f"rejected after this edit: {first.code}"
            + (f" (+{more} more)" if more else "")
            + f" · {plural(self.errors_before, 'error')} before it"
        )


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    return list(content) if isinstance(content, list) else []


def _btype(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else None


def applied(
    keyed: Sequence[Entry], plan: EditPlan, entries: Sequence[Entry] | None = None
) -> list[Entry]:
    """The window ``keyed`` with ``plan`` applied: a copy, the changed messages and the new ones
    under version keys of their own (for a checker memoised on the others' keys). ``entries``:
    the window by id, when ``keyed`` holds other keys. O(window)."""
    ids = entries if entries is not None else keyed
    changes, inserts = plan.changes, plan.inserts
    at = sorted(k for k, e in enumerate(ids) if e[0] in changes)
    after: list[Entry] = list(keyed)
    removed: set[int] = set()
    for k in at:
        new = changes[ids[k][0]]
        if new is None:
            removed.add(k)
        else:
            after[k] = (next_version_key(), new)
    if inserts:
        # new messages go in before the window message they are keyed by (from the last up, so
        # positions stay valid); the removed positions move up with what they follow
        for k in sorted((k for k, e in enumerate(ids) if e[0] in inserts), reverse=True):
            new_entries = [(next_version_key(), m) for m in inserts[ids[k][0]]]
            after[k:k] = new_entries
            removed = {r + len(new_entries) if r >= k else r for r in removed}
        after.extend((next_version_key(), m) for m in inserts.get(END, ()))
    if len(removed) == 1:
        del after[removed.pop()]
    elif removed:
        after = [e for k, e in enumerate(after) if k not in removed]
    return after


def preview(
    entries: Sequence[Entry],
    plan: EditPlan,
    system: Any = None,
    checker: ProtocolChecker | None = None,
    tokens_before: int | None = None,
    keys: Sequence[int] | None = None,
    errors_before: int | None = None,
) -> Preview:
    """The verdict and the tokens after ``plan``. With ``checker`` memoised on the entries' ids
    (the TUI's; ``keys``: the keys it knows them by, when not their ids) and ``tokens_before``
    (the window's messages), only the changed messages cost more than a look-up;
    ``errors_before`` (the window's error count, when the caller has it) saves a check."""
    chk = checker if checker is not None else ProtocolChecker(memo=False)
    keyed = (
        list(entries) if keys is None else [(k, e[1]) for k, e in zip(keys, entries, strict=True)]
    )
    errs_before = (
        errors_before
        if errors_before is not None
        else sum(1 for p in chk.check(keyed, system) if p.severity == "error")
    )
    after = applied(keyed, plan, entries)
    delta = 0
    by_id = dict(entries) if plan.changes else {}
    for mid, new in plan.changes.items():
        if mid in by_id:
            delta += (estimate_message(new) if new is not None else 0) - estimate_message(
                by_id[mid]
            )
    delta += sum(estimate_message(m) for new in plan.inserts.values() for m in new)
    errs = [p for p in chk.check(after, system) if p.severity == "error"]
    if tokens_before is None:
        tokens_before = sum(estimate_message(m) for _, m in entries)
    return Preview(errs_before, errs, tokens_before, tokens_before + delta)


def drop_plan(entries: Sequence[Entry], mid: int) -> EditPlan:
    """Drop window message ``mid`` pair-safely: the tool_results answering its tool_uses, and the
    tool_uses its tool_results answer, go with it (their messages too when nothing else is
    left)."""
    by_id = dict(entries)
    if mid not in by_id:
        return EditPlan("drop", reason=f"#{mid} is not in the window")
    msg = by_id[mid]
    use_ids = {str(b.get("id")) for b in _blocks(msg) if _btype(b) == "tool_use"}
    result_ids = {str(b.get("tool_use_id")) for b in _blocks(msg) if _btype(b) == "tool_result"}
    plan = EditPlan("drop", {mid: None})
    partners = 0
    for other, m in entries:
        if other == mid:
            continue
        blocks = _blocks(m)
        kept = [
            b
            for b in blocks
            if not (_btype(b) == "tool_result" and str(b.get("tool_use_id")) in use_ids)
            and not (_btype(b) == "tool_use" and str(b.get("id")) in result_ids)
        ]
        if len(kept) != len(blocks):
            partners += len(blocks) - len(kept)
            plan.changes[other] = {**json_copy(m), "content": json_copy(kept)} if kept else None
    n = len(plan.changes)
    plan.what = f"drop #{mid}" + (
        f" with {plural(partners, 'paired block')} in {plural(n - 1, 'other message')}"
        if n > 1
        else ""
    )
    return plan


def stub_plan(entries: Sequence[Entry], mid: int) -> EditPlan:
    """Replace the content of #mid's tool_result blocks (else its text blocks) with a short
    placeholder, keeping ids, types and error flags."""
    by_id = dict(entries)
    if mid not in by_id:
        return EditPlan("stub", reason=f"#{mid} is not in the window")
    msg = by_id[mid]
    content = msg.get("content")
    if isinstance(content, str):
        if len(content) <= 60:
            return EditPlan("stub", reason="the text is already short")
        new_msg = {**json_copy(msg), "content": STUB.format(n=len(content))}
        return EditPlan(f"stub the text of #{mid}", {mid: new_msg})
    blocks = json_copy(_blocks(msg))
    kind = "tool_result" if any(_btype(b) == "tool_result" for b in blocks) else "text"
    n_stubbed = 0
    for b in blocks:
        if _btype(b) != kind:
            continue
        if kind == "tool_result":
            old = b.get("content")
            size = len(old) if isinstance(old, str) else len(str(old))
            if isinstance(old, str) and old.startswith("[stubbed by ctxview"):
                continue
            b["content"] = STUB.format(n=size)
        else:
            text = b.get("text")
            if not isinstance(text, str) or len(text) <= 60:
                continue
            b["text"] = STUB.format(n=len(text))
        n_stubbed += 1
    if not n_stubbed:
        return EditPlan("stub", reason="nothing to stub: no tool_result, and no long text block")
    return EditPlan(
        f"stub {plural(n_stubbed, f'{kind} block')} of #{mid}",
        {mid: {**json_copy(msg), "content": blocks}},
    )


def repair_plan(
    entries: Sequence[Entry],
    system: Any = None,
    only: int | None = None,
    checker: ProtocolChecker | None = None,
    keys: Sequence[int] | None = None,
) -> EditPlan:
    """The repair of the window's errors (of the problems at message ``only`` when given), as
    edits: :func:`~ctxview.core.repair.repair`'s result, each changed message under its id,
    each dropped one as None, and each message it inserts (an answer to a call nothing answers:
    before a ``system`` turn, or right after the call under Chat Completions' rules) by the id of
    the window message it goes before."""
    ids = [mid for mid, _ in entries]
    msgs = [m for _, m in entries]
    pos: int | None = None
    if only is not None:
        if only not in ids:
            return EditPlan("repair", reason=f"#{only} is not in the window")
        pos = ids.index(only)
    result = repair(msgs, system, only=pos, keys=keys if keys is not None else ids, checker=checker)
    if not result.fixes:
        return EditPlan(
            "repair",
            reason=f"no safe fix: {result.unfixable[0].code}" if result.unfixable else "no errors",
        )
    plan = EditPlan("repair", fixes=result.fixes)
    kept = {o for o in result.origin if o is not None}
    pending: list[dict[str, Any]] = []
    for out, o in zip(result.messages, result.origin, strict=True):
        if o is None:
            pending.append(out)
            continue
        if pending:
            plan.inserts[ids[o]], pending = pending, []
        if out is not msgs[o]:
            plan.changes[ids[o]] = out
    if pending:
        plan.inserts[END] = pending
    for o in range(len(msgs)):
        if o not in kept:
            plan.changes[ids[o]] = None
    plan.what = "; ".join(f.detail for f in result.fixes)
    return plan


def window_tokens(entries: Sequence[Entry], system: Any = None) -> int:
    return estimate_window([m for _, m in entries], system)


@dataclass(frozen=True)
class EditCost:
    """The next request with an edit against the same request without it, priced with the
    request model's cache rule (:mod:`ctxview.core.requests`): the window as it stands is the
    cached prefix (the last request sent it, within the cache's lifetime); the next request reads
    the longest prefix it shares with it and writes the rest, and nothing is read or written
    below the model's minimum cacheable length. An edit inside the cached prefix is a cache
    break (``edited``, at the window position of the first message it changes): everything from
    there on is written again."""

    model: str | None
    #: window position of the first changed message (None: the window's messages do not change)
    position: int | None
    cache_break: CacheBreak | None
    input_before: int
    input_after: int
    read_before: int
    write_before: int
    read_after: int
    write_after: int
    uncached_before: int
    uncached_after: int
    cost_before: float | None
    cost_after: float | None
    #: why the cost is unknown ("" when it is known)
    unknown: str = ""
    #: pin: tokens of the messages pinned, which stay in every later request
    kept_tokens: int = 0
    #: USD per million tokens later requests pay for what the edit saves or keeps: the cache-read
    #: rate, or the input rate when the prompt is below the minimum cacheable length
    later_rate: float | None = None

    @property
    def tokens_saved(self) -> int:
        return self.input_before - self.input_after

    @property
    def rewritten(self) -> int:
        """Tokens the next request writes to the cache because of the edit."""
        return max(0, self.write_after - self.write_before)

    @property
    def cost_delta(self) -> float | None:
        if self.cost_before is None or self.cost_after is None:
            return None
        return self.cost_after - self.cost_before

    def short(self) -> str:
        """One line for a notice: the break and the next request's cost difference."""
        if self.position is None:
            cache = "no cache write"
        elif self.cache_break is None:
            cache = "below the minimum cacheable length"
        else:
            cache = (
                f"cache break at window position {self.position}: "
                f"~{self.write_after:,} tokens written again"
            )
        delta = self.cost_delta
        money = (
            "next request: cost unknown"
            if delta is None
            else f"next request {'+' if delta >= 0 else '-'}${abs(delta):.4f}"
        )
        return f"{cache} · {money}"

    def lines(self) -> list[str]:
        """What the preview says, one line each (no untrusted text but the model's name, which
        the caller sanitises)."""
        out: list[str] = []
        if self.position is None:
            out.append("prompt cache: the window does not change now: nothing written again")
        elif self.cache_break is None:
            out.append(
                f"prompt cache: below the model's minimum cacheable length: nothing cached, "
                f"~{self.input_after:,} tokens sent uncached"
            )
        else:
            out.append(
                f"prompt cache: break (edited) at window position {self.position}: "
                f"~{self.read_after:,} tokens still read, ~{self.write_after:,} written again "
                f"(was ~{self.read_before:,} read, ~{self.write_before:,} written)"
            )
        delta = self.cost_delta
        if delta is None:
            out.append(f"next request: cost unknown ({self.unknown})")
        elif self.position is None:
            out.append(
                f"next request: unchanged (${self.cost_after or 0:.4f}, input side, at "
                f"{self.model} prices)"
            )
        else:
            sign = "+" if delta >= 0 else "-"
            after, before = self.cost_after or 0.0, self.cost_before or 0.0
            # enough decimals for the two figures to differ as they do ("$0.0009 instead of
            # $0.0009 (-$0.0001)" read as a contradiction)
            p = 4
            while p < 6 and after != before and f"{after:.{p}f}" == f"{before:.{p}f}":
                p += 1
            out.append(
                f"next request: ${after:.{p}f} instead of ${before:.{p}f}"
                f" ({sign}${abs(delta):.{p}f}, input side, at {self.model} prices)"
            )
        rate = self.later_rate or 0.0
        below = self.input_after > 0 and self.read_after == 0 and self.write_after == 0
        how = "uncached" if below else "as cache reads"
        if self.tokens_saved > 0:
            money = (
                _per_request("-", self.tokens_saved * rate / 1e6, how) if delta is not None else ""
            )
            out.append(f"later requests: ~{self.tokens_saved:,} fewer tokens each{money}")
        if self.kept_tokens > 0:
            money = (
                _per_request("+", self.kept_tokens * rate / 1e6, how) if delta is not None else ""
            )
            out.append(
                f"later requests: ~{self.kept_tokens:,} pinned tokens stay in each once the "
                f"strategy would have evicted them{money}"
            )
        return out


def _writes(tokens: int, ttl: str) -> dict[str, int]:
    """``pricing.cost``'s cache-write arguments for ``tokens`` written with ``ttl``."""
    return {"cache_write_1h": tokens} if ttl == "1h" else {"cache_write_5m": tokens}


def edit_cost(
    entries: Sequence[Entry],
    plan: EditPlan,
    *,
    static_tokens: int,
    model: str | None,
    prices: PriceTable | None = None,
    tokens: Sequence[int] | None = None,
    kept_tokens: int = 0,
    estimate: Callable[[Mapping[str, Any]], int] | None = None,
    ttl: str = "5m",
) -> EditCost:
    """Price ``plan`` over the next request (see :class:`EditCost`). ``ttl``: the cache
    lifetime its writes pay for (``"1h"``: twice the input price, ``"5m"``: 1.25 times; the
    request model's, from the session's recorded usage). ``static_tokens``: tools +
    system; ``tokens``: the entries' estimates when known (the TUI's), else estimated here with
    ``estimate`` (default :func:`estimate_message`; the request model's calibrated rates where it
    has them), which also prices the changed messages. One pass over the window: O(window), no
    replay of the session."""
    est = estimate or estimate_message
    toks = list(tokens) if tokens is not None else [est(m) for _, m in entries]
    changes = plan.changes
    position: int | None = None
    prefix = 0
    delta = 0
    inserts = plan.inserts
    for k, ((mid, _), t) in enumerate(zip(entries, toks, strict=True)):
        if mid in inserts:
            if position is None:
                position = k
                prefix = sum(toks[:k])
            delta += sum(est(m) for m in inserts[mid])
        if mid in changes:
            if position is None:
                position = k
                prefix = sum(toks[:k])
            new = changes[mid]
            delta += (est(new) if new is not None else 0) - t
    if END in inserts:
        if position is None:
            position = len(entries)
            prefix = sum(toks)
        delta += sum(est(m) for m in inserts[END])
    total_before = static_tokens + sum(toks)
    total_after = total_before + delta
    minimum = min_cacheable(model)[0]

    def split(total: int, read: int) -> tuple[int, int, int]:
        if total < minimum:
            return 0, 0, total
        if read < minimum:
            read = 0
        return read, total - read, 0

    rb, wb, ub = split(total_before, total_before)
    ra, wa, ua = split(total_after, static_tokens + prefix if position is not None else total_after)
    brk = (
        CacheBreak("edited", position)
        if position is not None and total_after >= minimum and total_before >= minimum
        else None
    )
    table = prices if prices is not None else price_table()
    price = table.get(model)
    unknown = ""
    if not model:
        unknown = "no model named: set one in the config"
    elif price is None:
        unknown = f"no price for model {model!r}: config.toml [pricing] sets one"
    return EditCost(
        model,
        position,
        brk,
        total_before,
        total_after,
        rb,
        wb,
        ra,
        wa,
        ub,
        ua,
        cost(price, uncached=ub, cache_read=rb, **_writes(wb, ttl)),
        cost(price, uncached=ua, cache_read=ra, **_writes(wa, ttl)),
        unknown,
        kept_tokens,
        None if price is None else price.input if total_after < minimum else price.cache_read,
    )


def _per_request(sign: str, usd: float, how: str) -> str:
    """`` (-$0.0012 a request as cache reads)``; an amount that rounds to nothing at four
    decimals is said as under a hundredth of a cent, never ``-$0.0000``."""
    if round(usd, 4) == 0:
        return f" ({sign}under $0.0001 a request {how})"
    return f" ({sign}${usd:.4f} a request {how})"
