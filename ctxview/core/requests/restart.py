"""The tools + system + context of a Claude Code conversation segment after a compaction the
transcript recorded no request of, when the first segment's held files its prompts @-mentioned.

Claude Code sends a file a prompt @-mentions with that prompt and logs neither (2.0.76: a 28k-token
file), so the first segment's calibrated static part carries it; a compaction summarises the
prompt away and the file with it. The first request after a compaction reads from the cache the
**head** every earlier request began with (the tools, the system prompt and Claude Code's
context: 21,460, 21,478, 21,445 and 23,254 tokens in the four compactions of the tune and unseen
files followed by a request), and writes what Claude Code restores after it (the files it read
last) with the summary. Where the first segment's recorded reads show the head (a read below the
segment's static that two or more requests made: a cache break that kept only it), the segment
after the compaction starts from it (:func:`restarts`); elsewhere the first segment's static
grows by :data:`~ctxview.core.calibrate.POST_COMPACTION_GROWTH` plus what Claude Code re-attaches
(:mod:`ctxview.core.compaction_restore`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ctxview.core.calibrate import Rates
from ctxview.core.compaction_restore import restored_after

#: an @-mention of a file in a prompt: ``@`` then a path with a directory or an extension
#: (``@src/app.ts``, ``@README.md``; not ``@moduledoc`` nor an e-mail address)
MENTION = re.compile(r"(?:^|\s)@(?:[\w.~-]+/)+[\w.-]*|(?:^|\s)@[\w-]+\.[A-Za-z]\w*")


def mentions_files(messages: Sequence[Mapping[str, Any]], end: int) -> bool:
    """Whether a prompt among ``messages[:end]`` @-mentions a file (tool results and Claude
    Code's ``<system-reminder>`` texts are not prompts)."""
    for m in messages[:end]:
        if m.get("role") != "user":
            continue
        content = m.get("content")
        texts: Iterable[Any] = (
            [content]
            if isinstance(content, str)
            else (b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text")
            if isinstance(content, list)
            else ()
        )
        for t in texts:
            if (
                isinstance(t, str)
                and not t.lstrip().startswith("<system-reminder>")
                and MENTION.search(t[:20_000])
            ):
                return True
    return False


def head_read(reads: Sequence[int], static: int, floor: int = 1_024) -> int | None:
    """The head the first segment's requests began with, as their recorded reads show it: the
    largest read from ``floor`` to below ``static`` that two or more requests made (a cache
    break that kept only the head, as Amazon Bedrock's route makes them every few requests);
    None when no read shows it."""
    counts = Counter(r for r in reads if floor <= r < static)
    found = [r for r, n in counts.items() if n >= 2]
    return max(found) if found else None


def cached_head(reads: Sequence[tuple[int, int]]) -> int | None:
    """What a request that shares no message with the cached prompt reads: the tools and system
    prompt, the part of the calibrated static that every segment begins with. ``reads``:
    ``(read, static of its segment)`` of each recorded request that read only a prefix (the
    first request, warm from other sessions, or one that read less than the previous request's
    whole prompt), in file order.

    Claude Code also sends context with the first prompt and, after a compaction, what it
    restores: those are written again, not read. The first request after each of the 15
    compactions of the fresh held-out transcripts (benchmarks/truth.py) read 16,496 to 34,236
    tokens of a segment static of 42,219 to 68,661, and in 10 of them that read was one the
    file's earlier breaks or its first request had read too. The head is a read at or below its
    static that two or more requests made (once is not a pattern: a break can keep a longer
    prefix), the most frequent, the latest of a tie; None when no read repeats."""
    counts: Counter[int] = Counter()
    last: dict[int, int] = {}
    for k, (read, static) in enumerate(reads):
        if 0 < read <= static:
            counts[read] += 1
            last[read] = k
    found = [r for r, n in counts.items() if n >= 2]
    if not found:
        return None
    return max(found, key=lambda r: (counts[r], last[r]))


#: of the first segment's calibrated static, the share its head (the tools and system prompt) is
#: taken as where no recorded read shows the head: on the tune set the head read was 21,460,
#: 21,478 and 21,445 tokens of first-segment statics of 28,633, 25,928 and 33,046 (0.75, 0.83,
#: 0.65; benchmarks/truth.py); the mean
HEAD_SHARE = 0.74


def assumed_head(first_static: int) -> int | None:
    """The head of a Claude Code transcript whose recorded reads do not show it: its tools and
    system prompt as :data:`HEAD_SHARE` of the first segment's static (None when there is
    none). What Claude Code sends besides them with the first prompt (its context) is written
    again when the messages start again, not read."""
    return round(first_static * HEAD_SHARE) if first_static > 0 else None


def restarts(
    messages: Sequence[Mapping[str, Any]],
    starts: Iterable[int],
    first_end: int,
    first_reads: Sequence[int],
    first_static: int,
    rates: Rates,
) -> dict[int, int]:
    """Per compaction start after the first segment (``messages[:first_end]``), the tools +
    system + context of a segment the file recorded nothing of: the head plus what Claude Code
    re-attaches (:func:`~ctxview.core.compaction_restore.restored_after`), where a first-segment
    prompt @-mentioned a file and the first segment's reads show the head; else nothing (the
    growth rule decides)."""
    head = head_read(first_reads, first_static)
    if head is None or not mentions_files(messages, first_end):
        return {}
    later = [s for s in starts if s > 0]
    return {s: head + t for s, t in restored_after(messages, later, rates).items()}
