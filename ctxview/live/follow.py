"""Follow a Claude Code transcript as the agent writes it (headless).

:class:`Tail` reads only the bytes appended since the last poll and hands back complete lines (a
trailing partial line waits for its newline; one past MAX_LINE_BYTES is skipped, with the reason);
a file that was truncated or replaced (another inode, a smaller size, different first bytes) is
read again from the start. :class:`Follower` parses each new line once and keeps the parsed lines;
after a change it runs the reader's in-memory ``rebuild`` over them (responses split over several
lines merged, tool results gathered, rewinds followed, compaction marked: exactly as a full open)
and :meth:`Follower.step` compares the result with what the view already holds:

* the view's messages are a prefix of the rebuilt ones: the new ones are **appended** (the
  newest one only once a poll brought no more lines, since Claude Code writes one line per
  content block and the rebuild merges them);
* anything else (a rewind, a block arriving for a message already shown, a truncated or
  replaced file): the whole sequence is **replayed**.

Nothing here re-reads the file: the cost per change is reading the new bytes, parsing the new
lines and an in-memory rebuild. That rebuild is split at a **checkpoint**: a line where a new user
prompt follows the assistant line it names as its parent, or an assistant reply follows
the user line it names (see :meth:`Follower._advance`). Everything before it is rebuilt once and
kept; each change rebuilds only the lines after it and appends. When a line after the checkpoint
names a parent before it other than the line just before the checkpoint (a rewind across it, or a
late sibling), the whole file's lines are rebuilt instead and the checkpoint starts over. The
checkpoint moves forward every CHECKPOINT_LINES lines. ``benchmarks/bench_follow.py`` measures it
on a 3 MB transcript. (Inside ``ctxview.sessions.claude_code`` a rebuild that resumes from a
saved builder state would make this simpler.)
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from typing import Any

from ctxview.sessions.claude_code import Line, rebuild
from ctxview.sessions.fileio import fmt_bytes, open_regular, read_span
from ctxview.sessions.readers import MAX_LINE_BYTES, jsonl_record

#: bytes compared at the head of the file to notice that it was rewritten in place
FINGERPRINT_BYTES = 256
#: at most this many new bytes are read per poll (a huge jump is read over several polls)
MAX_READ = 64 * 1024 * 1024
#: the rebuild checkpoint moves forward once this many lines follow it
CHECKPOINT_LINES = 200

#: the replay reason when only the newest shown message changed (a content block written after
#: the reply was already shown: Claude Code writes one line per block)
LATE_BLOCK = "a late block of the newest reply"

Built = tuple[list[dict[str, Any]], list[dict[str, Any]], list[int], list[str]]


class Tail:
    """The complete lines appended to a file since the last :meth:`read`.

    A line still waiting for its newline is kept as a list of chunks (joined once, when it
    ends: no copy of the whole per poll); one longer than MAX_LINE_BYTES is given up at once,
    handed back as ``None`` in its place, and the rest of it, up to its newline, is dropped
    as it arrives (a line without an end, a symlink to a huge sparse file, cannot fill memory).
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        #: the chunks of the line waiting for its newline, and their length
        self._pending: list[bytes] = []
        self._pending_len = 0
        #: the line being read is over MAX_LINE_BYTES: dropped up to its newline
        self._overlong = False
        self._ident: tuple[int, int] | None = None
        self._head = b""

    @property
    def pending_bytes(self) -> int:
        """Bytes held for the line that waits for its newline."""
        return self._pending_len

    def read(self) -> tuple[bool, list[bytes | None]]:
        """(reset, lines): reset is true when the file was truncated or replaced and the lines
        are the file's from its start; a line over MAX_LINE_BYTES is ``None``. Raises OSError
        when the file cannot be read, FileRefused when it is no longer a regular file."""
        st = os.stat(self.path)
        ident = (st.st_dev, st.st_ino)
        reset = False
        if self._ident is not None and (ident != self._ident or st.st_size < self.offset):
            reset = True
        elif self._ident is not None and self._head and st.st_size != self.offset:
            with open_regular(self.path, what="transcript") as (fd, _):
                if read_span(fd, 0, len(self._head)) != self._head:
                    reset = True
        if reset:
            self.offset, self._head = 0, b""
            self._pending, self._pending_len, self._overlong = [], 0, False
        self._ident = ident
        if st.st_size == self.offset:
            return reset, []
        with open_regular(self.path, what="transcript") as (fd, _):
            data = read_span(fd, self.offset, min(st.st_size - self.offset, MAX_READ))
        if not self._head:
            self._head = data[:FINGERPRINT_BYTES]
        elif len(self._head) < FINGERPRINT_BYTES and self.offset < FINGERPRINT_BYTES:
            self._head = (self._head + data)[:FINGERPRINT_BYTES]
        self.offset += len(data)
        return reset, self._split(data)

    def _split(self, data: bytes) -> list[bytes | None]:
        *ended, rest = data.split(b"\n")
        lines: list[bytes | None] = []
        for piece in ended:
            if self._overlong:  # the end of a line already given up
                self._overlong = False
            elif self._pending_len + len(piece) > MAX_LINE_BYTES:
                lines.append(None)
            elif self._pending:
                lines.append(b"".join([*self._pending, piece]))
            else:
                lines.append(piece)
            self._pending, self._pending_len = [], 0
        if rest and not self._overlong:
            if self._pending_len + len(rest) > MAX_LINE_BYTES:
                lines.append(None)  # given up now: its newline may never come
                self._pending, self._pending_len, self._overlong = [], 0, True
            else:
                self._pending.append(rest)
                self._pending_len += len(rest)
        return lines


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
    #: why each skipped line cannot be used (``LoadedSession.skipped_reasons``)
    skipped_reasons: tuple[tuple[int, str], ...] = ()


@dataclass
class Follower:
    path: str
    #: the messages the view holds (as rebuilt), to compare the next rebuild with
    applied: list[dict[str, Any]] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    bad: list[int] = field(default_factory=list)
    #: why each bad or unusable line cannot be used
    reasons: dict[int, str] = field(default_factory=dict)
    line_no: int = 0
    _tail: Tail | None = None
    _built: Built | None = None
    _reset_reason: str = ""
    #: rebuilds run: of the lines after the checkpoint, and of every line
    rebuilds: int = 0
    full_rebuilds: int = 0
    #: the checkpoint: lines[:_cp] are rebuilt as _prefix; their uuids, the last one's uuid
    _cp: int = 0
    _prefix: Built = field(default_factory=lambda: ([], [], [], []))
    _prefix_uuids: set[str] = field(default_factory=set)
    _leaf: str | None = None
    _checked: int = 0
    #: the skipped lines the last update carried
    _reported: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        self._tail = Tail(self.path)

    def poll(self) -> bool:
        """Read what was appended; true when new complete lines arrived (or the file reset)."""
        assert self._tail is not None
        reset, raw = self._tail.read()
        if reset:
            self.lines, self.bad, self.line_no = [], [], 0
            self.reasons.clear()
            self._reset_reason = "the file was truncated or replaced"
            self._drop_checkpoint()
        for chunk in raw:
            self.line_no += 1
            if chunk is None:
                self.bad.append(self.line_no)
                self.reasons[self.line_no] = f"longer than {fmt_bytes(MAX_LINE_BYTES)}"
                continue
            text = chunk.strip()
            if not text:
                continue
            try:
                record, reason = jsonl_record(text.decode("utf-8-sig"))
            except UnicodeDecodeError as exc:
                record, reason = None, f"not UTF-8 text (invalid byte at column {exc.start + 1})"
            if record is None:
                self.bad.append(self.line_no)
                self.reasons[self.line_no] = reason
            else:
                self.lines.append(Line(self.line_no, record))
        if reset or raw:
            self._built = None
            return True
        return False

    def step(self, quiet: bool) -> Update | None:
        """Compare the rebuilt sequence with what the view holds. ``quiet``: the last poll
        brought nothing new, so the newest message is complete and may be shown too.

        Skipped lines reach the view only through an update (the one place it says so): when
        lines were skipped and no message changed, the update appends nothing."""
        if self._built is None:
            self._built = self._rebuild()
        messages, metas, unusable, warnings = self._built
        skipped = tuple(sorted(set(self.bad) | set(unusable)))
        update = self._update(messages, metas, warnings, skipped, quiet)
        if update is None and not set(skipped) <= set(self._reported):
            update = Update("append", (), (), skipped_lines=skipped)
        if update is not None:
            self._reported = skipped
            update = replace(update, skipped_reasons=tuple(sorted(self.reasons.items())))
        return update

    def _update(
        self,
        messages: list[dict[str, Any]],
        metas: list[dict[str, Any]],
        warnings: list[str],
        skipped: tuple[int, ...],
        quiet: bool,
    ) -> Update | None:
        n = len(self.applied)
        ready = self._ready(messages, metas, quiet)
        reason, self._reset_reason = self._reset_reason, ""
        reason = reason or self._late_change(metas)
        if reason or len(messages) < n or messages[:n] != self.applied:
            if not messages and not n:
                return None
            late = (
                not reason
                and n > 0
                and len(messages) >= n
                and messages[: n - 1] == self.applied[: n - 1]
            )
            self.applied = list(messages)
            return Update(
                "replay",
                tuple(messages),
                tuple(metas),
                reason
                or (LATE_BLOCK if late else "the transcript changed above its end (a rewind)"),
                skipped,
                tuple(warnings),
                self.recorded_model(metas),
            )
        if ready > n:
            self.applied.extend(messages[n:ready])
            return Update(
                "append",
                tuple(messages[n:ready]),
                tuple(metas[n:ready]),
                skipped_lines=skipped,
            )
        return None

    def _ready(
        self, messages: list[dict[str, Any]], metas: list[dict[str, Any]], quiet: bool
    ) -> int:
        """How many rebuilt messages may be shown: all once a poll brought nothing new, else
        all but the newest (Claude Code writes a reply one block a line)."""
        return len(messages) if quiet else len(messages) - 1

    def _late_change(self, metas: list[dict[str, Any]]) -> str:
        """Why messages already shown must be shown again though they read the same (a format
        that completes a message's meta later), or ""."""
        return ""

    # -- the checkpointed rebuild ------------------------------------------------------------------
    def _drop_checkpoint(self) -> None:
        self._cp, self._prefix, self._prefix_uuids, self._leaf, self._checked = (
            0,
            ([], [], [], []),
            set(),
            None,
            0,
        )

    def _crosses(self) -> bool:
        """A line after the checkpoint hangs off a line before it other than the last one."""
        for ln in self.lines[max(self._cp, self._checked) :]:
            parent = ln.parent
            if parent is not None and parent != self._leaf and parent in self._prefix_uuids:
                return True
        self._checked = len(self.lines)
        return False

    def _rebuild(self) -> Built:
        self.rebuilds += 1
        if self._cp and self._crosses():
            self._drop_checkpoint()
        if not self._cp:
            self.full_rebuilds += 1
            built = rebuild(self.lines, reasons=self.reasons)
        else:
            tail = rebuild(self.lines[self._cp :], reasons=self.reasons)
            head = self._prefix
            built = (
                head[0] + tail[0],
                head[1] + tail[1],
                head[2] + tail[2],
                head[3] + tail[3],
            )
        if len(self.lines) - self._cp > CHECKPOINT_LINES:
            self._advance()
        return built

    def _advance(self) -> None:
        """Move the checkpoint to the newest line that starts a new message after a complete one:
        a user prompt answering its assistant parent, or an assistant reply to its user parent
        (the tool results before it are all in)."""
        lines = self.lines
        for c in range(len(lines) - 1, self._cp, -1):
            ln, before = lines[c], lines[c - 1]
            if (
                before.uuid is None
                or ln.parent != before.uuid
                or ln.record.get("isSidechain")
                or before.record.get("isSidechain")
            ):
                continue
            if ln.type == "user" and before.type == "assistant":
                if not _is_prompt(ln.record.get("message")):
                    continue
                want = "assistant"
            elif ln.type == "assistant" and before.type == "user":
                # a new response, not the next block of one whose tool results came between
                if _message_id(ln) is None or _message_id(ln) == self._last_response_id(c):
                    continue
                want = "user"
            else:
                continue
            prefix = rebuild(lines[:c], reasons=self.reasons)
            self.full_rebuilds += 1
            if not prefix[0] or prefix[0][-1].get("role") != want:
                return
            self._cp, self._prefix, self._leaf = c, prefix, before.uuid
            self._prefix_uuids = {u for x in lines[:c] if (u := x.uuid) is not None}
            self._checked = c
            return

    def _last_response_id(self, c: int) -> str | None:
        """The message id of the newest assistant line before line index c."""
        for k in range(c - 1, max(self._cp, c - 2000) - 1, -1):
            if self.lines[k].type == "assistant":
                return _message_id(self.lines[k])
        return None

    @property
    def pending(self) -> bool:
        """A rebuilt message is not shown yet (the newest, waiting for a quiet poll)."""
        return self._built is None or len(self._built[0]) > len(self.applied)

    @staticmethod
    def recorded_model(metas: list[dict[str, Any]]) -> str | None:
        """The model the last of these messages that names one was answered by."""
        for m in reversed(metas):
            if isinstance(m.get("model"), str):
                return str(m["model"])
        return None


def _message_id(line: Line) -> str | None:
    msg = line.record.get("message")
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else None


def _is_prompt(message: Any) -> bool:
    """A user message with text of its own (not tool results)."""
    if not isinstance(message, dict):
        return False
    content = message.get("content")
    if isinstance(content, str):
        return bool(content.strip())
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "text" for b in content)
    )


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
