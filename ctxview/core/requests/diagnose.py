"""The cache breaks the recorded usage shows, named beside the prediction
(:func:`recorded_breaks`): a request that read less than the previous request of its model
billed as its whole prompt broke the cache there, whatever ctxview predicted. Where ctxview
predicted a break, the recorded one takes its reason; where it did not, the break is
``unexplained`` — never a silent hit. The API's own cache diagnostics, where the file recorded
them (:func:`ctxview.core.usage.api_diagnosis`), are shown as the API gave them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ctxview.core.cache_rules import API_REASON
from ctxview.core.pricing import bedrock_profile
from ctxview.core.requests.types import RecordedBreak, Request
from ctxview.core.usage import api_diagnosis

#: a read this much below the previous prompt (tokens, and a share of it) is a break: the
#: recorded usage of an unbroken request reads the previous prompt to within a few tokens
SLACK_TOKENS = 1024
SLACK_SHARE = 0.05


#: Amazon Bedrock's message ids (a Claude response through Bedrock's route)
BEDROCK_MESSAGE = "msg_bdrk_"
#: a read this close to the cached head (tokens) read only the head
HEAD_SLACK = 64

BEDROCK_NOTE = (
    "Amazon Bedrock: a cross-Region inference profile sends each request to one of its "
    "geography's Regions, and AWS does not document where a cache entry lives (reads of an "
    "older request's whole prompt seconds later, as separate caches per Region would give)"
)
HEAD_NOTE = (
    "read only the cached head (the tools and system prompt, {head:,} tokens) and wrote every "
    "message again: the client changed its first message, or the API did not find the entry "
    "(anthropics/claude-code issues 87966, 91514)"
)
NOTHING_NOTE = "read nothing within the TTL: the entry was not found"
SHRANK_NOTE = (
    "the recorded prompt shrank by {tokens:,} tokens: the client left out history the "
    "transcript does not record (a clearing of earlier tool results), the cache broke there"
)


def unexplained_note(
    meta: Mapping[str, Any] | None,
    model: str | None,
    read: int,
    head: int | None,
    total: int = 0,
    previous: int = 0,
) -> str | None:
    """What is known of a recorded break ctxview did not predict: the route of an Amazon
    Bedrock response (its message id, or a Bedrock model id), else a recorded prompt
    (``total``) smaller than the ``previous`` one by more than the slack (history left out that
    the transcript does not show), a read of only the cached ``head``, or of nothing; None for
    a read of another prefix."""
    mid = meta.get("message_id") if meta else None
    if (isinstance(mid, str) and mid.startswith(BEDROCK_MESSAGE)) or (
        model and bedrock_profile(model) is not None
    ):
        return BEDROCK_NOTE
    if previous - total > SLACK_TOKENS:
        return SHRANK_NOTE.format(tokens=previous - total)
    if head is not None and abs(read - head) <= HEAD_SLACK:
        return HEAD_NOTE.format(head=head)
    if read == 0:
        return NOTHING_NOTE
    return None


def recorded_breaks(
    requests: Sequence[Request], metas: Sequence[Mapping[str, Any]], head: int | None = None
) -> int:
    """Set ``recorded_miss`` on each request whose recorded usage shows a break, or whose
    response carries the API's cache diagnostics; the number of ``unexplained`` ones.
    ``head``: the cached head of the tools and system prompt, where the calibration found it
    (an unexplained break that read only it says so)."""
    previous: dict[Any, int] = {}
    seen_any = False
    unexplained = 0
    n_metas = len(metas)
    for r in requests:
        rec = r.recorded
        rid = r.response_id
        meta = metas[rid] if rid is not None and 0 <= rid < n_metas else None
        diag = api_diagnosis(meta) if meta and _diagnosed(meta) else None
        if rec is None:
            if diag is not None:
                r.recorded_miss = _with_api(RecordedBreak(_predicted(r)), diag)
            continue
        read = rec["cache_read_input_tokens"]
        total = rec["input_tokens"] + read + rec["cache_creation_input_tokens"]
        prev = previous.get(r.model)
        miss: RecordedBreak | None = None
        if prev is None:
            if read == 0 and total > 0:
                reason = r.cache_break.reason if r.cache_break is not None else None
                miss = RecordedBreak(
                    reason or ("first" if not seen_any else "unexplained"),
                    API_REASON.get(reason or "first"),
                    previous=0,
                )
        elif read + max(SLACK_TOKENS, SLACK_SHARE * prev) < prev:
            b = r.cache_break
            reason = b.reason if b is not None else "unexplained"
            miss = RecordedBreak(reason, API_REASON.get(reason), read=read, previous=prev)
        if miss is not None and miss.reason == "unexplained":
            unexplained += 1
            note = unexplained_note(meta, r.model, read, head, total, prev or 0)
            if note is not None:
                miss = replace(miss, note=note)
        if diag is not None:
            miss = _with_api(
                miss or RecordedBreak(_predicted(r), read=read, previous=prev or 0), diag
            )
        r.recorded_miss = miss
        previous[r.model] = total
        seen_any = True
    return unexplained


def unexplained_summary(requests: Sequence[Request], unexplained: int) -> str:
    """The note on a log's ``unexplained`` recorded breaks: their count, and how many went
    through Amazon Bedrock's route or read only the cached head."""
    notes = [
        r.recorded_miss.note
        for r in requests
        if r.recorded_miss is not None and r.recorded_miss.reason == "unexplained"
    ]
    bedrock = sum(1 for n in notes if n == BEDROCK_NOTE)
    head = sum(1 for n in notes if n is not None and n.startswith("read only the cached head"))
    shrank = sum(1 for n in notes if n is not None and n.startswith("the recorded prompt shrank"))
    known = [
        f"{bedrock} through Amazon Bedrock, whose cache placement is not documented"
        if bedrock
        else "",
        f"{shrank} where the recorded prompt shrank (history the transcript does not record)"
        if shrank
        else "",
        f"{head} read only the cached tools and system prompt" if head else "",
    ]
    detail = "; ".join(k for k in known if k)
    return (
        f"{unexplained} recorded cache break{'s' if unexplained != 1 else ''} ctxview did not "
        "predict (unexplained: the API read less than the previous prompt"
        + (f"; {detail})" if detail else ")")
    )


def _diagnosed(meta: Mapping[str, Any]) -> bool:
    """Whether a response's meta may hold the API's cache diagnostics (most hold none: the
    look-up is skipped)."""
    if "diagnostics" in meta:
        return True
    u = meta.get("usage")
    return isinstance(u, Mapping) and ("cache_miss_reason" in u or "cache_missed_input_tokens" in u)


def _predicted(r: Request) -> str:
    return r.cache_break.reason if r.cache_break is not None else "unexplained"


def _with_api(miss: RecordedBreak, diag: tuple[str | None, int | None]) -> RecordedBreak:
    kind, tokens = diag
    return replace(
        miss,
        api_reason=kind if kind is not None else miss.api_reason,
        reported=kind is not None,
        cache_missed_input_tokens=tokens,
    )
