"""Compaction blocks: the API ignores everything before the last ``compaction`` block.

A ``compaction`` block (Anthropic's server-side compaction, ``context_management``) stands for the
conversation before it. The API neither checks nor bills what precedes the last one, so the
protocol checker, the token estimates and the timeline (``compacted`` rows) all start there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

#: the meta key, on each message of a compaction's replacement history, of the tokens that new
#: history holds beyond the messages the file shows (a Codex summary the rollout does not hold:
#: :func:`ctxview.sessions.codex.compaction_hidden`)
COMPACTION_HIDDEN = "compaction_hidden"
#: the meta key, on the first message after a Codex turn was interrupted, of the hosted web
#: searches (their messages) whose results the requests from there on are no longer billed: they
#: send each as its item alone (:func:`ctxview.sessions.codex.read_codex`,
#: :func:`ctxview.core.requests.points.cleared_tokens`)
RESULTS_UNBILLED = "results_unbilled"


#: the key, on a ``compaction`` block, that marks it as one the API reads what precedes (a Codex
#: replacement history's compaction item: Codex sends every item of the history, and the API
#: bills them; :func:`ctxview.sessions.codex.read_codex` sets it): such a block cuts nothing
KEEPS_HISTORY = "keeps_history"


def cuts_history(block: Any) -> bool:
    """A ``compaction`` block the API ignores what precedes (not :data:`KEEPS_HISTORY`)."""
    return (
        (type(block) is dict or isinstance(block, Mapping))
        and block.get("type") == "compaction"
        and not block.get(KEEPS_HISTORY)
    )


def has_compaction(message: Any) -> bool:
    """A message holds a ``compaction`` block the API ignores what precedes
    (:func:`cuts_history`): the tokens, the protocol check and the window start there."""
    content = (
        message.get("content") if type(message) is dict or isinstance(message, Mapping) else None
    )
    if type(content) is not list and not isinstance(content, list):
        return False
    for b in content:  # a loop, not any(genexpr): this runs for every message of a replay
        if (
            (type(b) is dict or isinstance(b, Mapping))
            and b.get("type") == "compaction"
            and not b.get(KEEPS_HISTORY)
        ):
            return True
    return False


def claude_code_compaction(meta: Mapping[str, Any] | None) -> bool:
    """A message's meta marks a Claude Code compaction (its ``compact_boundary`` or summary):
    the agent's next request held only the summary and what followed. The TUI's simulation
    starts again there (``ConversationContext.start_again``); a ``compaction`` block does not
    restart it: the agent keeps sending what precedes one (recorded requests the API accepted
    do), the API ignores it."""
    if not meta:
        return False
    return meta.get("compact_boundary") is not None or bool(meta.get("compact_summary"))


def last_compaction(messages: Sequence[Any]) -> tuple[int, int] | None:
    """``(message index, block index)`` of the last ``compaction`` block that cuts what precedes
    it (:func:`cuts_history`), or None."""
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        content = (
            message.get("content")
            if (type(message) is dict or isinstance(message, Mapping))
            else None
        )
        if not isinstance(content, list):
            continue
        for j in range(len(content) - 1, -1, -1):
            if cuts_history(content[j]):
                return i, j
    return None


def effective_messages(messages: Sequence[Any]) -> tuple[int, list[Any]]:
    """``(start, messages)``: what the API reads, from the last compaction block on.

    ``start`` is the index of the first message read; that message keeps only its blocks from the
    compaction block on. Without a compaction block: ``(0, list(messages))``.
    """
    found = last_compaction(messages)
    if found is None:
        return 0, list(messages)
    i, j = found
    first = dict(messages[i])
    first["content"] = list(first["content"])[j:]
    return i, [first, *messages[i + 1 :]]
