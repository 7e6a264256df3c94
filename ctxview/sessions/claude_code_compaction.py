"""Claude Code compactions and broken parent chains, for the branch the reader follows
(``claude_code._select``): where the lines after a compaction hang, which messages a compaction
kept, what a reader says of lines it could not place (:class:`Placement`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxview.sessions.claude_code_lines import Line, recorded_total


@dataclass
class Placement:
    """How the lines of a transcript were placed on the current branch, for the notices a
    reader shows: nothing that cannot be placed is dropped without saying so."""

    #: (line number, parent uuid) of lines whose parent is not in the file: the branch went on
    #: from the message line written before them
    dangling_parents: list[tuple[int, str]] = field(default_factory=list)
    #: line numbers of the compactions (``compact_boundary``) whose next lines hang off the
    #: pre-compaction line, re-hung on the compaction's summary
    spliced_compactions: list[int] = field(default_factory=list)
    #: main-thread message lines on no branch: neither sent with the current branch nor with a
    #: request off it (a rewind)
    unplaced_lines: list[int] = field(default_factory=list)


#: a request after a compaction that billed at least this share of the compaction's
#: ``preTokens`` was sent the whole history, not the summary
_FULL_HISTORY_SHARE = 0.9


def placement_notes(placement: Placement) -> list[str]:
    """The notices a reader adds to its warnings for a :class:`Placement`."""
    notes: list[str] = []
    dangling = placement.dangling_parents
    if dangling:
        where = ", ".join(str(n) for n, _ in dangling[:8]) + (" ..." if len(dangling) > 8 else "")
        notes.append(
            f"{len(dangling)} line{'s name' if len(dangling) != 1 else ' names'} a parent that is "
            f"not in the file (line{'s' if len(dangling) != 1 else ''} {where}): the "
            "conversation was followed on from the message line written before "
            + ("each" if len(dangling) != 1 else "it")
        )
    for n in placement.spliced_compactions:
        notes.append(
            f"line {n}: the lines after this compaction hang off the line before it; they were "
            "read after its summary, as Claude Code sent them"
        )
    unplaced = placement.unplaced_lines
    if unplaced:
        where = ", ".join(map(str, unplaced[:8])) + (" ..." if len(unplaced) > 8 else "")
        notes.append(
            f"{len(unplaced)} message line{'s are' if len(unplaced) != 1 else ' is'} on no branch "
            f"of the conversation and left out (line{'s' if len(unplaced) != 1 else ''} {where})"
        )
    return notes


def compaction_splices(
    main: list[Line], position: dict[int, int], by_uuid: dict[str, Line]
) -> tuple[dict[int, Line], list[int]]:
    """Lines written after a ``compact_boundary`` that hang off a line before it (Claude Code
    2.1.2xx writes a manual ``/compact``'s caveat, command and output lines under the
    pre-compaction line, after the boundary and its summary): ``id(line) -> the line to hang it
    on`` (the last line of the boundary's own chain written before it: the summary), and the
    boundaries' line numbers.

    The recorded usage decides where it can: when the first response under such a line billed
    at least 90% of the boundary's ``preTokens``, its request held the whole history (no
    summary), and the line keeps its parent."""
    splices: dict[int, Line] = {}
    spliced: list[int] = []
    bounds = [
        k
        for k, ln in enumerate(main)
        if ln.type == "system" and ln.uuid and ln.record.get("subtype") == "compact_boundary"
    ]
    for j, kb in enumerate(bounds):
        start = bounds[j - 1] + 1 if j else 0
        end = bounds[j + 1] if j + 1 < len(bounds) else len(main)
        boundary = main[kb]
        # the boundary's own lines after it (its summary), then the messages the compaction
        # kept: written before it, hanging off its summary (``preservedSegment``)
        after: set[str | None] = {boundary.uuid}
        for ln in main[kb + 1 : end]:
            if ln.parent in after and ln.uuid:
                after.add(ln.uuid)
        kept: set[str | None] = set()
        for ln in main[start:kb]:
            if (ln.parent in after or ln.parent in kept) and ln.uuid:
                kept.add(ln.uuid)
        own = {boundary.uuid}
        tail = boundary
        meta = boundary.record.get("compactMetadata")
        pre = meta.get("preTokens") if isinstance(meta, dict) else None
        for k in range(kb + 1, end):
            ln = main[k]
            if ln.parent in own and ln.uuid:
                own.add(ln.uuid)
                tail = ln
                continue
            parent = by_uuid.get(ln.parent) if ln.parent else None
            if (
                parent is None
                or position[id(parent)] >= kb
                or ln.uuid is None
                or parent.uuid in kept
            ):
                continue
            if isinstance(pre, int) and pre > 0:
                billed = _first_billed_under(main, k, end)
                if billed is not None and billed >= _FULL_HISTORY_SHARE * pre:
                    continue
            splices[id(ln)] = tail
            if not spliced or spliced[-1] != boundary.number:
                spliced.append(boundary.number)
    return splices, spliced


def _first_billed_under(main: list[Line], k: int, end: int) -> int | None:
    """The recorded input of the first response that descends from ``main[k]`` before ``end``."""
    under = {main[k].uuid}
    for ln in main[k + 1 : end]:
        if ln.parent in under and ln.uuid:
            under.add(ln.uuid)
            if ln.type == "assistant":
                total = recorded_total(ln)
                if total is not None:
                    return total
    return None


def kept_after_summaries(
    selected: list[Line], kept_after: dict[int, list[Line]], position: dict[int, int]
) -> list[Line]:
    """``selected`` with the messages each compaction kept (written before its boundary, hung
    after its summary) moved after the summary, where the requests after it sent them: the
    kept lines' span of the file (their responses' other lines and tool results with them)."""
    out = list(selected)
    for bid, kept in kept_after.items():
        lo = min(position[id(ln)] for ln in kept)
        hi = max(position[id(ln)] for ln in kept)
        span = [ln for ln in out if lo <= position[id(ln)] <= hi]
        moving = {id(ln) for ln in span}
        rest = [ln for ln in out if id(ln) not in moving]
        b = next(k for k, ln in enumerate(rest) if id(ln) == bid)
        # after the boundary and its summary (the user lines right after it)
        k = b + 1
        while k < len(rest) and rest[k].type == "user" and rest[k].record.get("isCompactSummary"):
            k += 1
        out = rest[:k] + span + rest[k:]
    return out


def microcompact_note(line: Line) -> str:
    """What a reader says of a ``microcompact_boundary`` line: Claude Code cleared the content
    of earlier tool results there (``microcompactMetadata.compactedToolIds``), and the requests
    after it sent them cleared, which the rebuilt messages (as recorded) do not show and the
    request model prices (``ctxview.core.requests.points.cleared_tokens``)."""
    meta = line.record.get("microcompactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    ids = meta.get("compactedToolIds")
    n = len(ids) if isinstance(ids, list) else 0
    saved = meta.get("tokensSaved")
    saved_text = f", about {saved:,} tokens" if isinstance(saved, int) else ""
    return (
        f"line {line.number}: Claude Code cleared {n} earlier tool result"
        f"{'s' if n != 1 else ''} here (microcompact{saved_text}); the requests after it sent "
        "them cleared: the messages show them as recorded, the requests price them cleared"
    )


def microcompact_info(line: Line) -> dict[str, Any]:
    """What the request model needs of a ``microcompact_boundary`` line: the ids of the tool
    results Claude Code cleared (``cleared``) and the tokens it says that saved (or None)."""
    meta = line.record.get("microcompactMetadata")
    meta = meta if isinstance(meta, dict) else {}
    ids = meta.get("compactedToolIds")
    saved = meta.get("tokensSaved")
    return {
        "cleared": [i for i in ids if isinstance(i, str)] if isinstance(ids, list) else [],
        "tokens_saved": saved if isinstance(saved, int) and not isinstance(saved, bool) else None,
    }
