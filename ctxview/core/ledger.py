"""The compaction ledger: every compaction of a session, with what it replaced.

Two kinds are found in the messages and their metas (as ``ctxview.sessions`` reads them):

* ``claude-code``: a Claude Code ``compact_boundary`` (the reader keeps its ``compactMetadata``
  in the meta of the message after it: ``trigger`` manual / auto and ``preTokens``, the size of
  the conversation when it was compacted). The message after the boundary is the compact summary
  (meta ``compact_summary``); the conversation goes on from it.
* ``block``: a ``compaction`` block (Anthropic's server-side compaction, ``context_management``)
  in an assistant message: it stands for the conversation before it. The size before is the
  recorded input of the response that carries the block (the request that was compacted).

For each: the tokens after are the next request's recorded input size (``input_tokens +
cache_read_input_tokens + cache_creation_input_tokens`` of the next response with usage), and the
messages it replaced are those since the previous compaction (or the start).

:class:`LedgerScanner` keeps the ledger up to date as messages are appended (a chat, a followed
transcript): each message is looked at once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ctxview.core.compaction import has_compaction


@dataclass(slots=True)
class Compaction:
    #: transcript id of the first message after the compaction: the summary (Claude Code) or the
    #: message holding the ``compaction`` block
    id: int
    kind: str  # "claude-code" | "block"
    #: "manual" / "auto" (Claude Code's compactMetadata), "server" for a block, None if unknown
    trigger: str | None
    tokens_before: int | None
    tokens_after: int | None
    #: transcript id of the summary message (None when the boundary has none)
    summary_id: int | None
    #: ids [replaced_from, id) are what the compaction replaced
    replaced_from: int

    @property
    def replaced(self) -> range:
        return range(self.replaced_from, self.id)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "trigger": self.trigger,
            "tokens_before": self.tokens_before,
            "tokens_after": self.tokens_after,
            "summary_id": self.summary_id,
            "replaced": [self.replaced_from, self.id - 1] if self.id > self.replaced_from else None,
        }


class Indexable(Protocol):
    """A list, or any read-only view indexable by position (the app's transcript columns)."""

    def __len__(self) -> int: ...

    def __getitem__(self, i: int, /) -> Any: ...


def recorded_input(meta: Mapping[str, Any]) -> int | None:
    """The recorded size of the request a response answered (None without usage)."""
    u = meta.get("usage")
    if not isinstance(u, Mapping):
        return None
    total = 0
    seen = False
    for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        v = u.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            total += v
            seen = True
    return total if seen else None


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None


class LedgerScanner:
    """The ledger of a growing list of messages: :meth:`scan` looks only at the new ones."""

    def __init__(self) -> None:
        self.entries: list[Compaction] = []
        self.scanned = 0
        #: the last compaction, until the first response after it gave its size after
        self._waiting: Compaction | None = None

    def reset(self) -> None:
        self.entries.clear()
        self.scanned = 0
        self._waiting = None

    def scan(self, messages: Indexable, metas: Indexable) -> list[Compaction]:
        """The ledger of ``messages`` (and their ``metas``), looking only at those after the
        ones scanned before."""
        n = len(messages)
        pairs = ((messages[i], metas[i] if i < len(metas) else {}) for i in range(self.scanned, n))
        return self.feed(pairs)

    def feed(
        self, pairs: Iterable[tuple[Mapping[str, Any], Mapping[str, Any]]]
    ) -> list[Compaction]:
        """The ledger after the next messages, given as (message, meta) pairs in order."""
        entries = self.entries
        i = self.scanned - 1
        look = self._look
        for message, meta in pairs:
            i += 1
            if (
                self._waiting is None
                and "compact_boundary" not in meta
                and "compact_summary" not in meta
            ):
                # the common case: nothing to look at but a compaction block
                if message.get("role") != "assistant":
                    continue
                content = message.get("content")
                if type(content) is not list:
                    continue
                for b in content:
                    if type(b) is dict and b.get("type") == "compaction":
                        break
                else:
                    continue
            look(i, message, meta)
        self.scanned = i + 1
        return entries

    def _look(self, i: int, message: Mapping[str, Any], meta: Mapping[str, Any]) -> None:
        entries = self.entries
        last = entries[-1] if entries else None
        waiting = self._waiting
        role = message.get("role")
        if (
            waiting is not None
            and i > waiting.id
            and role == "assistant"
            and meta.get("model") != "<synthetic>"  # Claude Code's error replies: no request
        ):
            # the size after: the next request's (its response's recorded usage, if any)
            waiting.tokens_after = recorded_input(meta)
            self._waiting = None
        cb = meta.get("compact_boundary")
        if cb is not None:
            cm = cb if isinstance(cb, Mapping) else {}
            trigger = cm.get("trigger")
            entries.append(
                Compaction(
                    id=i,
                    kind="claude-code",
                    trigger=trigger if isinstance(trigger, str) else None,
                    tokens_before=_int(cm.get("preTokens")),
                    tokens_after=None,
                    summary_id=i if meta.get("compact_summary") else None,
                    replaced_from=last.id if last is not None else 0,
                )
            )
            if role == "assistant":  # the first response after it
                entries[-1].tokens_after = recorded_input(meta)
            else:
                self._waiting = entries[-1]
            return
        if meta.get("compact_summary") and last is not None and last.summary_id is None:
            if last.kind == "claude-code" and i <= last.id + 2:
                last.summary_id = i  # a summary written just after its boundary
            return
        if role == "assistant" and has_compaction(message):
            entries.append(
                Compaction(
                    id=i,
                    kind="block",
                    trigger="server",
                    tokens_before=recorded_input(meta),
                    tokens_after=None,
                    summary_id=i,
                    replaced_from=last.id if last is not None else 0,
                )
            )
            self._waiting = entries[-1]


def compaction_ledger(messages: Indexable, metas: Indexable) -> list[Compaction]:
    """Every compaction of a session, in order."""
    return LedgerScanner().scan(messages, metas)
