"""Follow a Claude Code transcript as the agent writes it (headless).

:class:`Tail` reads only the bytes appended since the last poll and hands back complete lines (a
trailing partial line waits for its newline); a file that was truncated or replaced (another
inode, a smaller size, different first bytes) is read again from the start. :class:`Follower`
parses each new line once and keeps the parsed lines; after a change it runs the reader's
in-memory ``rebuild`` over them (responses split over several lines merged, tool results gathered,
rewinds followed, compaction marked: exactly as a full open) and :meth:`Follower.step` compares
the result with what the view already holds:

* the view's messages are a prefix of the rebuilt ones: the new ones are **appended** (the
  newest one only once a poll brought no more lines, since Claude Code writes one line per
  content block and the rebuild merges them);
* anything else (a rewind, a block arriving for a message already shown, a truncated or
  replaced file): the whole sequence is **replayed**.

Nothing here re-reads the file: the cost per change is reading the new bytes, parsing the new
lines and the in-memory rebuild (``benchmarks/bench_follow.py`` measures it on a 3 MB transcript).
A rebuild that took a "tail" entry point in ``ctxview.sessions.claude_code`` (re-selecting only the
branch from the last fork) would make the last part cheaper.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

from ctxview.sessions.claude_code import Line, rebuild

#: bytes compared at the head of the file to notice that it was rewritten in place
FINGERPRINT_BYTES = 256
#: at most this many new bytes are read per poll (a huge jump is read over several polls)
MAX_READ = 64 * 1024 * 1024


class Tail:
    """The complete lines appended to a file since the last :meth:`read`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.partial = b""
        self._ident: tuple[int, int] | None = None
        self._head = b""

    def read(self) -> tuple[bool, list[bytes]]:
        """(reset, lines): reset is true when the file was truncated or replaced and the lines
        are the file's from its start. Raises OSError when the file cannot be read."""
        st = os.stat(self.path)
        ident = (st.st_dev, st.st_ino)
        reset = False
        if self._ident is not None and (ident != self._ident or st.st_size < self.offset):
            reset = True
        elif self._ident is not None and self._head and st.st_size != self.offset:
            with open(self.path, "rb") as fh:
                if fh.read(len(self._head)) != self._head:
                    reset = True
        if reset:
            self.offset, self.partial, self._head = 0, b"", b""
        self._ident = ident
        if st.st_size == self.offset:
            return reset, []
        with open(self.path, "rb") as fh:
            fh.seek(self.offset)
            data = fh.read(min(st.st_size - self.offset, MAX_READ))
        if not self._head:
            self._head = data[:FINGERPRINT_BYTES]
        elif len(self._head) < FINGERPRINT_BYTES and self.offset < FINGERPRINT_BYTES:
            self._head = (self._head + data)[:FINGERPRINT_BYTES]
        self.offset += len(data)
        *complete, self.partial = (self.partial + data).split(b"\n")
        return reset, complete


@dataclass(frozen=True)
class Update:
    """What the view should do: append these messages, or replay all of them."""

    kind: str  # "append" | "replay"
    messages: tuple[dict[str, Any], ...]
    metas: tuple[dict[str, Any], ...]
    reason: str = ""
    skipped_lines: tuple[int, ...] = ()
    warnings: tuple[str, ...] = ()
    model: str | None = None


@dataclass
class Follower:
    path: str
    #: the messages the view holds (as rebuilt), to compare the next rebuild with
    applied: list[dict[str, Any]] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    bad: list[int] = field(default_factory=list)
    line_no: int = 0
    _tail: Tail | None = None
    _built: tuple[list[dict[str, Any]], list[dict[str, Any]], list[int], list[str]] | None = None
    _reset_reason: str = ""
    #: rebuilds run and their total CPU seconds (for the benchmark and the report)
    rebuilds: int = 0

    def __post_init__(self) -> None:
        self._tail = Tail(self.path)

    def poll(self) -> bool:
        """Read what was appended; true when new complete lines arrived (or the file reset)."""
        assert self._tail is not None
        reset, raw = self._tail.read()
        if reset:
            self.lines, self.bad, self.line_no = [], [], 0
            self._reset_reason = "the file was truncated or replaced"
        for chunk in raw:
            self.line_no += 1
            text = chunk.strip()
            if not text:
                continue
            try:
                record = json.loads(text)
            except (ValueError, RecursionError):
                self.bad.append(self.line_no)
                continue
            if isinstance(record, dict):
                self.lines.append(Line(self.line_no, record))
            else:
                self.bad.append(self.line_no)
        if reset or raw:
            self._built = None
            return True
        return False

    def step(self, quiet: bool) -> Update | None:
        """Compare the rebuilt sequence with what the view holds. ``quiet``: the last poll
        brought nothing new, so the newest message is complete and may be shown too."""
        if self._built is None:
            self._built = rebuild(self.lines)
            self.rebuilds += 1
        messages, metas, unusable, warnings = self._built
        n = len(self.applied)
        ready = len(messages) if quiet else len(messages) - 1
        reason, self._reset_reason = self._reset_reason, ""
        if reason or len(messages) < n or messages[:n] != self.applied:
            if not messages and not n:
                return None
            self.applied = list(messages)
            return Update(
                "replay",
                tuple(messages),
                tuple(metas),
                reason or "the transcript changed above its end (a rewind, or a late block)",
                tuple(sorted(set(self.bad) | set(unusable))),
                tuple(warnings),
                self._model(metas),
            )
        if ready > n:
            self.applied.extend(messages[n:ready])
            return Update("append", tuple(messages[n:ready]), tuple(metas[n:ready]))
        return None

    @property
    def pending(self) -> bool:
        """A rebuilt message is not shown yet (the newest, waiting for a quiet poll)."""
        return self._built is None or len(self._built[0]) > len(self.applied)

    @staticmethod
    def _model(metas: list[dict[str, Any]]) -> str | None:
        for m in reversed(metas):
            if isinstance(m.get("model"), str):
                return str(m["model"])
        return None


class Backoff:
    """Polling intervals: FAST after a change, growing by half up to SLOW while nothing changes.

    SLOW plus one FAST poll (the newest message waits for a quiet poll) stays under the 0.5 s a
    new line may take to appear."""

    FAST = 0.05
    SLOW = 0.3

    def __init__(self) -> None:
        self.interval = self.FAST

    def next(self, changed: bool) -> float:
        self.interval = self.FAST if changed else min(self.SLOW, self.interval * 1.5)
        return self.interval
