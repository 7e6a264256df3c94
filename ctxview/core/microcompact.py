"""A Claude Code microcompaction: earlier tool results cleared in place (a
``microcompact_boundary`` line; the reader marks the message the next request sent first,
``meta["microcompact"]``). The transcript keeps the results as they were first sent; the requests
after it send them cleared. Light (no request model): ``inspect`` and the app estimate the next
request with it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class _Session(Protocol):
    @property
    def messages(self) -> Sequence[Mapping[str, Any]]: ...

    @property
    def metas(self) -> Sequence[Mapping[str, Any]]: ...


#: what Claude Code sends in place of a tool result's content a microcompaction cleared
CLEARED_TOOL_RESULT = "[Old tool result content cleared]"


def note_result_holders(
    msgs: Sequence[Mapping[str, Any]], lo: int, hi: int, holder: dict[str, int]
) -> None:
    """Notes in ``holder`` (tool_use id -> transcript id) the first of ``msgs[lo:hi]`` holding
    each tool result: where a microcompaction that names the id cleared it."""
    for k in range(lo, hi):
        content = msgs[k].get("content")
        if msgs[k].get("role") == "user" and isinstance(content, list):
            for b in content:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    tid = b.get("tool_use_id")
                    if isinstance(tid, str):
                        holder.setdefault(tid, k)


def cleared_versions(session: _Session) -> dict[int, list[tuple[int, dict[str, Any]]]]:
    """Per message at which a Claude Code transcript's client cleared earlier tool results (a
    ``microcompact_boundary``: ``meta["microcompact"]``), (transcript id, message as the
    requests from then on send it) of each earlier message holding one: its cleared results'
    content :data:`CLEARED_TOOL_RESULT` (those of earlier microcompactions too). The transcript
    keeps the results as they were first sent."""
    metas = session.metas
    marked = [i for i, m in enumerate(metas) if m and "microcompact" in m]
    if not marked:
        return {}
    msgs = session.messages
    holder: dict[str, int] = {}
    cleared: set[str] = set()
    out: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    done = 0
    for i in marked:
        note_result_holders(msgs, done, min(i, len(msgs)), holder)
        done = max(done, i)
        info = metas[i]["microcompact"]
        ids = info.get("cleared") if isinstance(info, Mapping) else None
        new = {t for t in ids or () if isinstance(t, str) and t in holder and t not in cleared}
        if not new:
            continue
        cleared |= new
        changed = sorted({holder[t] for t in new})
        out[i] = [(k, _cleared(msgs[k], cleared)) for k in changed]
    return out


def cleared_messages(session: _Session) -> dict[int, dict[str, Any]]:
    """Each message a microcompaction changed, by transcript id, as the requests after the last
    one send it (the next request's view of the window)."""
    out: dict[int, dict[str, Any]] = {}
    for _, changed in sorted(cleared_versions(session).items()):
        out.update(changed)
    return out


def _cleared(message: Mapping[str, Any], ids: set[str]) -> dict[str, Any]:
    """``message`` with the content of its tool results in ``ids`` cleared."""
    content = [
        {**b, "content": CLEARED_TOOL_RESULT}
        if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in ids
        else b
        for b in message.get("content") or ()
    ]
    return {**message, "content": content}
