"""Follow a Codex CLI rollout as Codex writes it (headless).

The :class:`~ctxview.live.follow.Follower` of Claude Code transcripts, with the Codex reader's
rebuild (:func:`ctxview.sessions.codex.read_codex`, in memory over the lines parsed so far): the
tail, the line parsing, the append-or-replay comparison are the same. What differs:

* a rollout only grows (no rewinds), and a response's usage arrives after its items (an
  ``event_msg`` ``token_count`` line): the newest response's items are shown once its usage
  came, a later message began, or a poll brought nothing new; a usage that arrives for a reply
  already shown replays the session (``a reply's usage arrived``), so what is shown is always
  what a full open would show;
* the rebuild is split at a **checkpoint**: a user message item (no response is open there).
  The lines before it are rebuilt once; each change rebuilds the lines after it, seeded with the
  records whose state the reader carries across (the ``session_meta``, the newest
  ``turn_context`` and ``token_count`` before the checkpoint), and appends. The checkpoint moves
  forward every CHECKPOINT_LINES lines.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxview.live.follow import CHECKPOINT_LINES, Built, Follower, Update
from ctxview.sessions.codex import read_codex
from ctxview.sessions.model import SessionError

#: the replay reason when a reply already shown gets its usage
LATE_USAGE = "a reply's usage arrived"
#: the newest messages shown that are watched for a usage arriving late
LATE_WINDOW = 64


def _is_user_item(record: dict[str, Any]) -> bool:
    payload = record.get("payload")
    return (
        record.get("type") == "response_item"
        and isinstance(payload, dict)
        and payload.get("type") == "message"
        and payload.get("role") == "user"
    )


def _token_count(record: dict[str, Any]) -> bool:
    payload = record.get("payload")
    return (
        record.get("type") == "event_msg"
        and isinstance(payload, dict)
        and payload.get("type") == "token_count"
    )


@dataclass
class CodexFollower(Follower):
    #: the seeds of the lines after the checkpoint (records before it the reader carries state
    #: from) and the index of the first line after it
    _seeds: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    #: the applied response starts that had no usage yet
    _waiting: set[int] = field(default_factory=set)

    def _read(self, records: list[tuple[int, dict[str, Any]]]) -> Built:
        try:
            session = read_codex(self.path, records, {})
        except SessionError:  # no message yet
            return [], [], [], []
        return session.messages, session.metas, list(session.skipped_lines), []

    def _rebuild(self) -> Built:
        self.rebuilds += 1
        lines = self.lines
        if not self._cp:
            self.full_rebuilds += 1
            built = self._read([(ln.number, ln.record) for ln in lines])
        else:
            tail = self._read([*self._seeds, *((ln.number, ln.record) for ln in lines[self._cp :])])
            head = self._prefix
            built = (head[0] + tail[0], head[1] + tail[1], head[2] + tail[2], head[3] + tail[3])
        if len(lines) - self._cp > CHECKPOINT_LINES:
            self._move_checkpoint(built)
        return built

    def _move_checkpoint(self, built: Built) -> None:
        """The checkpoint goes to the newest user message item; the messages read from the lines
        before it become the prefix (cut from ``built``, by the line each message came from)."""
        lines = self.lines
        for c in range(len(lines) - 1, self._cp, -1):
            if not _is_user_item(lines[c].record):
                continue
            first = lines[c].number
            metas = built[1]
            cut = next((i for i, m in enumerate(metas) if m.get("line", 0) >= first), len(metas))
            unusable = [n for n in built[2] if n < first]
            self._prefix = (built[0][:cut], metas[:cut], unusable, [])
            # the seeds carried on from the last checkpoint, updated by the lines since
            known = {rec.get("type"): (n, rec) for n, rec in self._seeds}
            meta = known.get("session_meta")
            context = known.get("turn_context")
            count = known.get("event_msg")
            for ln in lines[self._cp : c]:
                kind = ln.record.get("type")
                if kind == "session_meta" and meta is None:
                    meta = (ln.number, ln.record)
                elif kind == "turn_context":
                    context = (ln.number, ln.record)
                elif _token_count(ln.record):
                    count = (ln.number, ln.record)
            self._seeds = [s for s in (meta, context, count) if s is not None]
            self._cp = c
            return

    def _drop_checkpoint(self) -> None:
        super()._drop_checkpoint()
        self._seeds = []
        self._waiting = set()

    def _ready(
        self, messages: list[dict[str, Any]], metas: list[dict[str, Any]], quiet: bool
    ) -> int:
        """All once a poll brought nothing new; else up to the newest response still waiting
        for its usage (its items come first, its token_count after)."""
        if quiet:
            return len(messages)
        start = len(messages)
        while start > 0 and messages[start - 1].get("role") == "assistant":
            start -= 1
        if start < len(messages) and "usage" not in metas[start]:
            return start
        return len(messages)

    def _late_change(self, metas: list[dict[str, Any]]) -> str:
        """A reply shown before its usage came has it now: shown again."""
        if any(i < len(metas) and "usage" in metas[i] for i in self._waiting):
            return LATE_USAGE
        return ""

    def step(self, quiet: bool) -> Update | None:
        update = super().step(quiet)
        if self._built is not None:
            # the newest replies shown without their usage (only the newest: a usage comes
            # right after its response, and a session that records none is not scanned whole)
            metas, n = self._built[1], min(len(self.applied), len(self._built[1]))
            self._waiting = {
                i
                for i in range(max(0, n - LATE_WINDOW), n)
                if self.applied[i].get("role") == "assistant"
                and not metas[i].get("same_response")
                and "usage" not in metas[i]
            }
        return update
