"""Whether the API would reject each window of the context form (any window: pins, edits,
rewinds), kept up to date as the replay goes: the turns around each change are checked again
with :func:`~ctxview.core.protocol.check_protocol`.

The range form (``[first] + messages[lo:hi]``) asks
:class:`~ctxview.core.protocol.WindowErrors`, the protocol module's index of the same rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxview.core.compaction import has_compaction
from ctxview.core.protocol import check_protocol


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
