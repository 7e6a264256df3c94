"""The predicted prompt cache, one request at a time (:class:`PromptCache`): what a request
reads and writes, why it could not read all of the previous prompt, the entries it leaves, and
its cost through :func:`ctxview.core.pricing.cost`. Every window source calls it: only the
tokens of a window's first messages differ between them."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from ctxview.core.cache_rules import AUTOMATIC, LOOKBACK_BLOCKS, NONE, TTL_GRACE_SECONDS, minimum
from ctxview.core.pricing import Price, PriceTable, costs
from ctxview.core.providers.anthropic import CACHE as ANTHROPIC_CACHE
from ctxview.core.providers.base import CacheModel
from ctxview.core.requests.types import TTL_5M, CacheBreak, ReplayPlan


@dataclass(slots=True)
class _Entry:
    """A cached prompt prefix: ``length`` leading window messages still identical."""

    key: tuple[Any, ...]
    length: int
    #: when it expires: last use + TTL + :data:`~ctxview.core.cache_rules.TTL_GRACE_SECONDS`
    expires: float
    ttl: float
    #: a request off the current branch: the uuids of its messages after the ``length`` window
    #: messages it shares with the branch
    path: tuple[Any, ...] = ()


def _price_notes(notes: list[str], price_notes: set[str], min_notes: set[str]) -> None:
    """The notes of the models without a price or a known minimum."""
    if "" in price_notes:
        price_notes.discard("")
        # (only another API's file can name none: a Claude session takes the config's model)
        notes.append(
            "no model named: cost is null (the file names none; the config's model prices "
            "Claude sessions only)"
        )
    for m in sorted(price_notes):
        notes.append(
            f'no price for model {m!r}: cost is null (add [pricing."{m}"] with input and '
            "output in USD per million tokens to config.toml)"
        )
    for m in sorted(min_notes):
        notes.append(f"minimum cacheable length of model {m!r} {minimum(m).basis}")


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


def _common(a: tuple[Any, ...], b: tuple[Any, ...]) -> int:
    k = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        k += 1
    return k


_LENGTH = attrgetter("length")
_FIRST = CacheBreak("first", 0)


class PromptCache:
    """The prompt cache as a replay's requests leave it (see the package docstring for the
    model). One call a request, :meth:`settle`, gives its read, write, uncached tokens, cache
    break and cost; the window source says how many tokens a prefix of its window holds."""

    __slots__ = (
        "_breaks",
        "by_model",
        "cold",
        "entries",
        "ever_cached",
        "first_cached",
        "first_uncached",
        "head",
        "head_warm",
        "min_notes",
        "mode",
        "prev_key",
        "prev_len",
        "prev_written",
        "price_notes",
        "prices",
        "refreshes",
        "requests",
        "rules",
        "scales",
        "static",
        "warm",
    )

    @classmethod
    def of_plan(
        cls, prices: PriceTable, static: int, plan: ReplayPlan, rules: CacheModel
    ) -> PromptCache:
        """The cache a replay's requests go through, as its plan sets it up (every window
        source starts from the same one)."""
        return cls(
            prices,
            static,
            plan.cache_mode,
            plan.scales,
            rules,
            plan.head,
            plan.first_uncached,
            plan.refreshes,
            plan.head_warm,
        )

    def __init__(
        self,
        prices: PriceTable,
        static: int,
        mode: str = AUTOMATIC,
        scales: Mapping[str | None, float] | None = None,
        rules: CacheModel | None = None,
        head: int | None = None,
        first_uncached: bool = False,
        refreshes: Sequence[float] = (),
        head_warm: bool = False,
    ) -> None:
        self.prices = prices
        #: the first request caches the tools and system only (its breakpoint is not on its
        #: messages: :func:`~ctxview.core.requests.points.first_messages_uncached`)
        self.first_uncached = first_uncached
        #: when requests no response of which is replayed read the longest cached prompt (and
        #: refreshed its TTL), in order; consumed as the requests pass them
        self.refreshes = list(refreshes)
        #: the provider's cache (its minimum per model, the step a cached prefix grows in);
        #: Anthropic's by default
        self.rules = rules if rules is not None else ANTHROPIC_CACHE
        #: :data:`~ctxview.core.cache_rules.AUTOMATIC`, ``BREAKPOINTS`` or ``NONE`` (nothing is
        #: cached: every token is billed at the input rate)
        self.mode = mode
        #: per model: its tokens for the same text against the rates' (another tokenizer);
        #: the window's message tokens of its requests are scaled, the tools + system are not
        #: (they are calibrated per model already)
        self.scales = scales or {}
        #: tokens of the tools and system prompt
        self.static = static
        #: of those, the part a request that shares no message with a cached prompt still reads
        #: (the recorded reads show it: :func:`~ctxview.core.requests.restart.cached_head`);
        #: None: all of ``static``
        self.head = head
        self.entries: list[_Entry] = []
        #: (key, tokens) of the prefix the first request read from a cache other sessions left
        #: (its recorded read): with 1-hour entries they keep it warm, and a request whose own
        #: entry expired still reads it (:meth:`settle`)
        self.warm: tuple[tuple[Any, ...], int] | None = None
        #: the first request's recorded usage read nothing: no other session had cached this
        #: conversation's tools and system (:meth:`settle`)
        self.cold = False
        #: after a first request that cached the tools and system alone: what its recorded
        #: usage read and wrote to the cache, which the next request reads (:meth:`settle`)
        self.first_cached: int | None = None
        #: :attr:`warm` stays warm after 5-minute entries expired too
        #: (:func:`~ctxview.core.requests.points.head_kept_warm`)
        self.head_warm = head_warm
        self.ever_cached = False
        self.prev_key: tuple[Any, ...] | None = None
        self.prev_len = 0
        self.prev_written = False
        #: requests settled so far
        self.requests = 0
        #: one frozen break per (reason, position): most breaks recur
        self._breaks: dict[tuple[str, int], CacheBreak] = {}
        self.by_model: dict[str | None, tuple[int, Price | None]] = {}
        #: models of unknown minimum, models without a price ("" for no model named)
        self.min_notes: set[str] = set()
        self.price_notes: set[str] = set()

    def model(self, model: str | None) -> tuple[int, Price | None]:
        """(minimum cacheable tokens, price) of ``model``, noting what is unknown."""
        found = self.by_model.get(model)
        if found is None:
            rule = self.rules.minimum(model)
            price = self.prices.get(model)
            if not rule.documented and model and self.mode != NONE:
                self.min_notes.add(model)
            if price is None:
                self.price_notes.add(model or "")
            found = self.by_model[model] = (rule.tokens, price)
        return found

    def _refresh(self, now: float) -> None:
        """The reads of :attr:`refreshes` before ``now``: each refreshes the longest entry live
        then."""
        pending = self.refreshes
        while pending and pending[0] <= now:
            t = pending.pop(0)
            live = [e for e in self.entries if e.expires >= t]
            if live:
                e = max(live, key=_LENGTH)
                e.expires = max(e.expires, t + e.ttl + TTL_GRACE_SECONDS)

    def path_reach(
        self, key: tuple[Any, ...], now: float | None, length: int, path: tuple[Any, ...]
    ) -> int:
        """How many of ``path`` (a request off the current branch: its messages after the
        ``length`` it shares with the branch) a live entry off a branch holds too."""
        return max(
            (
                _common(e.path, path)
                for e in self.entries
                if e.path
                and e.length == length
                and e.key == key
                and (now is None or e.expires >= now)
            ),
            default=0,
        )

    def settle(
        self,
        key: tuple[Any, ...],
        now: float | None,
        ttl: float,
        n: int,
        total: int,
        recorded: Mapping[str, int] | None,
        dirty: int | None,
        dirty_reason: str,
        output: int,
        repeated: int | None,
        run: Sequence[int] = (),
        base: int = 0,
        off: int = 0,
        prefix: Callable[[int], int] | None = None,
        reach_of: Callable[[_Entry], tuple[int, int]] | None = None,
        path: tuple[Any, ...] = (),
        cut: int | None = None,
    ) -> tuple[int, int, int, CacheBreak | None, float | None, float | None]:
        """(read, write, uncached, cache break, cost, cost of the ``repeated`` tokens) of a
        request of ``n`` messages, ``total`` tokens (tools and system included) and ``output``
        tokens; the cache after it. Its prompt is ``read + write + uncached`` tokens: ``total``
        unless the model's tokenizer scales its messages (``scales``). ``key``: (model, tools, system); ``dirty``: the first
        message changed since the previous request, and why.

        The longest live entry of ``key`` holds the window's first ``q`` messages; their
        tokens, tools and system included, are the window source's to say: ``base + run[off +
        q]`` (a window of prefix sums, for ``0 < q < n``), or ``prefix(q)`` (``q < n``), or
        ``reach_of(entry)`` gives (q, tokens) whatever the entry (a request off the current
        branch, ``path``: its last ``len(path)`` messages).

        ``cut`` (breakpoints on blocks): the request is cached up to its first ``cut`` window
        messages (0: the tools and system alone; -1: nothing); None: up to its end."""
        if self.mode == NONE:
            return self._uncached(key, total, output, repeated)
        if cut is None and self.first_uncached and not self.requests:
            cut = 0
        if self.refreshes and now is not None:
            self._refresh(now)
        # -- the longest live entry, once the window changed from its message ``dirty`` on
        entries = self.entries
        if dirty is not None:
            for e in entries:
                if e.length > dirty:
                    e.length = dirty
        if len(entries) == 1:  # the usual case
            e = entries[0]
            best = e if e.key == key and (now is None or e.expires >= now) else None
        else:
            live = [e for e in entries if e.key == key and (now is None or e.expires >= now)]
            best = max(live, key=_LENGTH, default=None)
            if (
                best is not None
                and not best.path
                and len(live) < len(entries)
                and best.length + LOOKBACK_BLOCKS < n
            ):
                # the longest entry left once a longer one expired ends more messages (each at
                # least a block) before this request's breakpoint than the API looks back
                best = None
        read = reach = 0
        if best is not None:
            if reach_of is not None:
                reach, read = reach_of(best)
            else:
                length = best.length
                reach = length if length < n else n
                if reach >= n:
                    read = total
                elif prefix is not None:
                    read = prefix(reach)
                elif reach:
                    read = base + run[off + reach]
                else:
                    read = self.static
            head = self.head
            if (
                not reach
                and n
                and head is not None
                and head < read
                # after a first request that cached the tools and system alone, all of them
                and not (self.first_uncached and self.requests == 1)
            ):
                # no message shared: the tools and system alone, as far as every segment
                # caches them alike (what Claude Code sends with the messages besides them
                # is written again after a compaction or a resend)
                read = head
            if not reach and dirty_reason == "tools" and self.cold:
                # Claude Code's tools changed (its first tool search loaded deferred tools) in
                # a conversation whose first request read nothing: no other session had cached
                # the new tools either, so not even the head is read. In
                # tests/acceptance/unseen4/claude_code (Claude Code 2.1.91 and 2.1.119) each of
                # the three such first searches read 0 tokens, where warm sessions read the head
                read = 0
        elif (
            (ttl > TTL_5M or self.head_warm) and (kept := self.warm) is not None and kept[0] == key
        ):
            # every entry of this conversation expired, but the prefix the first request read
            # warm from other sessions is kept warm by them (1-hour entries: the client's
            # other sessions use them within the hour; a newer Claude Code's 5-minute
            # sessions read it too: ``head_warm``)
            read = kept[1] if kept[1] < total else total
        # (one call a request, the state on slots read once: a replay makes 50,000 of them)
        found = self.by_model.get(key[0])
        minimum, price = found if found is not None else self.model(key[0])
        scale = self.scales.get(key[0], 1.0) if self.scales else 1.0
        if scale != 1.0:  # the messages of a model on another tokenizer
            st = self.static
            total = st + round((total - st) * scale)
            if read > st:
                read = st + round((read - st) * scale)
        if read < minimum:
            read = 0
        elif self.rules.step > 1:  # a prefix is cached in whole steps past the minimum
            read = minimum + (read - minimum) // self.rules.step * self.rules.step
        requests = self.requests
        warm = False
        if not requests and recorded is not None and recorded["cache_read_input_tokens"] >= minimum:
            # the first request read a prefix cached before this file starts (Claude Code's
            # tools and system prompt are shared across sessions; a resumed session's history):
            # as recorded, at most the whole prompt
            read = min(recorded["cache_read_input_tokens"], total)
            warm = True
            self.warm = (key, read)
        elif not requests and recorded is not None and not recorded["cache_read_input_tokens"]:
            self.cold = True
        if not requests and self.first_uncached and recorded is not None:
            self.first_cached = (
                recorded["cache_read_input_tokens"] + recorded["cache_creation_input_tokens"]
            )
        elif (
            requests == 1 and self.first_cached and best is not None and not reach and dirty is None
        ):
            # Claude Code 2.1.159-2.1.205 cached the tools and system alone on the first
            # request: the next one reads what that request's usage billed as cache read plus
            # cache creation, not the calibrated tools and system (a median over the whole
            # session). In tests/acceptance/unseen3 and unseen4, 18 of the 19 such second
            # requests read exactly that sum (the calibrated static was 3,336 tokens off at the
            # median); the other read less (gitsync_5ed1d306)
            read = min(self.first_cached, total)
        # what this request caches: its whole prompt, or up to its last breakpoint
        cached = n
        cacheable = total
        if cut is not None and cut < n:
            cached = cut
            cacheable = (
                -1
                if cut < 0
                else prefix(cut)
                if prefix is not None
                else base + run[off + cut]
                if cut
                else self.static
            )
            if scale != 1.0 and cacheable > self.static:
                cacheable = self.static + round((cacheable - self.static) * scale)
        if total < minimum or cacheable < minimum:
            if total < minimum:
                read = 0
            write = 0
        else:
            if self.rules.step > 1:
                step = self.rules.step
                cacheable = minimum + (cacheable - minimum) // step * step
            write = cacheable - read if cacheable > read else 0
        # -- why the previous prompt was not all read
        brk: CacheBreak | None = None
        if not requests:
            if not warm:
                brk = _FIRST
        elif total >= minimum:
            prev_key = self.prev_key
            if not self.ever_cached:
                brk = _FIRST
            elif prev_key is not None and key != prev_key:
                what = (
                    "model"
                    if key[0] != prev_key[0]
                    else "tools"
                    if key[1] != prev_key[1]
                    else "system"
                )
                brk = CacheBreak(what, 0)
            elif dirty is not None and dirty < self.prev_len:
                bkey = (dirty_reason or "edited", dirty)
                brk = self._breaks.get(bkey)
                if brk is None:
                    brk = self._breaks[bkey] = CacheBreak(*bkey)
            elif self.prev_written and (best is None or reach < self.prev_len):
                brk = CacheBreak("ttl", reach)
        # -- the cache after this request
        if read and best is not None and now is not None:
            best.expires = max(best.expires, now + best.ttl + TTL_GRACE_SECONDS)
        if write or (cacheable >= minimum and read):
            expires = (now if now is not None else 0.0) + ttl + TTL_GRACE_SECONDS
            entries = self.entries
            if path:
                entries.append(_Entry(key, cached - len(path), expires, ttl, path))
                self.entries = _prune(entries, now)
            elif len(entries) == 1:
                e = entries[0]
                if e.key == key and e.length <= cached and e.expires <= expires:
                    # the new entry outreaches and outlives the only one: it is updated in
                    # place (the usual case; nothing else holds it)
                    e.length, e.expires, e.ttl, e.path = cached, expires, ttl, ()
                else:
                    self.entries = _prune([e, _Entry(key, cached, expires, ttl)], now)
            elif all(e.key == key and e.length <= cached and e.expires <= expires for e in entries):
                self.entries = [_Entry(key, cached, expires, ttl)]
            else:
                entries.append(_Entry(key, cached, expires, ttl))
                self.entries = _prune(entries, now)
            self.ever_cached = True
            self.prev_written = True
        else:
            self.prev_written = False
        self.prev_key = key
        self.prev_len = cached if cut is not None else n
        self.requests = requests + 1
        uncached = total - read - write
        # -- the price (``pricing.costs``)
        if price is None:
            return read, write, uncached, brk, None, None
        if ttl == TTL_5M:
            c, inp = costs(price, uncached, read, write, 0, output)
        else:
            c, inp = costs(price, uncached, read, 0, write, output)
        return (
            read,
            write,
            uncached,
            brk,
            c,
            inp * repeated / total if repeated is not None and total > 0 else None,
        )

    def _uncached(
        self, key: tuple[Any, ...], total: int, output: int, repeated: int | None
    ) -> tuple[int, int, int, CacheBreak | None, float | None, float | None]:
        """A request of a session that asks for no caching: every input token at the base
        rate, no break (there is no cache to break)."""
        self.requests += 1
        found = self.by_model.get(key[0])
        price = (found if found is not None else self.model(key[0]))[1]
        if price is None:
            return 0, 0, total, None, None, None
        c, inp = costs(price, total, 0, 0, 0, output)
        return (
            0,
            0,
            total,
            None,
            c,
            inp * repeated / total if repeated is not None and total > 0 else None,
        )


def breakpoint_cut(
    marks: Sequence[int], lo: int, hi: int, static_marked: bool, first: int = -1
) -> int:
    """Where a window of ``[first] + [lo, hi)`` transcript messages (``first`` < 0: none) is
    cached to when only blocks marked ``cache_control`` set breakpoints (``marks``: the sorted
    ids of the messages holding one): the number of window messages up to the last marked one;
    0 when none is marked but the tools or system are (``static_marked``); -1 when nothing is."""
    k = bisect_right(marks, hi - 1) - 1
    if k >= 0 and marks[k] >= lo:
        return marks[k] - lo + (2 if first >= 0 else 1)
    if first >= 0:
        k = bisect_right(marks, first) - 1
        if k >= 0 and marks[k] == first:
            return 1
    return 0 if static_marked else -1


def window_cut(marks: Sequence[int], window: Sequence[int], static_marked: bool) -> int:
    """:func:`breakpoint_cut` of a window given as its sorted transcript ids."""
    marked = set(marks)
    for j in range(len(window) - 1, -1, -1):
        if window[j] in marked:
            return j + 1
    return 0 if static_marked else -1
