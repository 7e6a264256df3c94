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

from ctxview.core.cache_rules import API_REASON, TTL_GRACE_SECONDS
from ctxview.core.pricing import bedrock_profile
from ctxview.core.requests.points import parse_timestamp
from ctxview.core.requests.types import NO_BREAK, TTL_1H, TTL_5M, RecordedBreak, Request
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
TTL_EDGE_NOTE = (
    "sent {over:.1f} s past its entry's {ttl} TTL, within the {grace:g} s ctxview allows for "
    "when the API timed the entry (the client's hooks and the network): it had expired"
)
LESS_THAN_READ_NOTE = (
    "read less than the previous request read from the cache ({before:,} tokens): the request "
    "changed within that prefix (the tools or system prompt, where it was the cached head), or "
    "the entry was not found"
)
PREFIX_NOTE = (
    "read {read:,} of the previous prompt's {previous:,} tokens within the TTL: the entry of the "
    "whole previous prompt was not found, a shorter cached prefix was"
)
#: an unexplained break the API's own diagnostics put on the client (its reason, and the part)
CLIENT_CHANGED_NOTE = (
    "the API's cache diagnostics say the client changed its {part} since the previous request "
    "({reason}); the transcript records them unchanged: what changed is not in the file"
)
#: the API's diagnoses that name a part of the request the client changed
CLIENT_CHANGED_PART = {
    "messages_changed": "earlier messages",
    "system_changed": "system prompt",
    "tools_changed": "tools",
    "model_changed": "model",
}
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
    gap: float | None = None,
    ttl: float = TTL_5M,
    before: int | None = None,
) -> str | None:
    """What is known of a recorded break ctxview did not predict: the route of an Amazon
    Bedrock response (its message id, or a Bedrock model id), else a recorded prompt
    (``total``) smaller than the ``previous`` one by more than the slack (history left out that
    the transcript does not show), a request sent past its entry's ``ttl`` by less than the
    grace (``gap``: seconds since the previous request was sent), a read of only the cached
    ``head``, or of nothing, or of less than the previous request read (``before``: given where
    that request read only a prefix, the first of its model or a break itself); else the read of
    a shorter prefix (None when there is no ``previous`` prompt to name)."""
    mid = meta.get("message_id") if meta else None
    if (isinstance(mid, str) and mid.startswith(BEDROCK_MESSAGE)) or (
        model and bedrock_profile(model) is not None
    ):
        return BEDROCK_NOTE
    if previous - total > SLACK_TOKENS:
        return SHRANK_NOTE.format(tokens=previous - total)
    if gap is not None and ttl < gap <= ttl + TTL_GRACE_SECONDS:
        return TTL_EDGE_NOTE.format(
            over=gap - ttl, ttl="5-minute" if ttl == TTL_5M else "1-hour", grace=TTL_GRACE_SECONDS
        )
    if head is not None and abs(read - head) <= HEAD_SLACK:
        return HEAD_NOTE.format(head=head)
    if read == 0:
        return NOTHING_NOTE
    if before is not None and read + SLACK_TOKENS < before:
        return LESS_THAN_READ_NOTE.format(before=before)
    if previous > read:
        return PREFIX_NOTE.format(read=read, previous=previous)
    return None


def recorded_breaks(
    requests: Sequence[Request], metas: Sequence[Mapping[str, Any]], head: int | None = None
) -> int:
    """Set ``recorded_miss`` on each request whose recorded usage shows a break, or whose
    response carries the API's cache diagnostics; the number of ``unexplained`` ones.
    ``head``: the cached head of the tools and system prompt, where the calibration found it
    (an unexplained break that read only it says so)."""
    previous: dict[Any, int] = {}
    #: per model: when its previous request was sent, and what it read where that was only a
    #: prefix of its prompt
    sent: dict[Any, float] = {}
    reads: dict[Any, int] = {}
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
        at = parse_timestamp((meta or {}).get("request_sent")) or parse_timestamp(r.timestamp)
        last_at = sent.get(r.model)
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
            note = unexplained_note(
                meta,
                r.model,
                read,
                head,
                total,
                prev or 0,
                at - last_at if at is not None and last_at is not None else None,
                TTL_1H if r.ttl == "1h" else TTL_5M,
                reads.get(r.model),
            )
            if note is not None:
                miss = replace(miss, note=note)
        if diag is not None and miss is not None and miss.reason == "unexplained":
            part = CLIENT_CHANGED_PART.get(diag[0] or "")
            if part is not None and (miss.note is None or miss.note.startswith(_READ_NOTES)):
                # the API's word outranks the guess: the client changed it, the cache kept it
                miss = replace(miss, note=CLIENT_CHANGED_NOTE.format(part=part, reason=diag[0]))
        if diag is not None:
            # the API's diagnosis is shown as it came; where the usage shows no break (the
            # request read the previous prompt: Claude Code's responses carry `unavailable` or
            # `previous_message_not_found` on such hits) it is not called one
            miss = _with_api(miss or RecordedBreak(NO_BREAK, read=read, previous=prev or 0), diag)
        r.recorded_miss = miss
        previous[r.model] = total
        if prev is None or read + max(SLACK_TOKENS, SLACK_SHARE * prev) < prev:
            reads[r.model] = read  # a prefix only: a later break that reads less is named by it
        else:
            reads.pop(r.model, None)
        if at is not None:
            sent[r.model] = at
        seen_any = True
    return unexplained


#: the notes a client-change diagnosis replaces, all beginning so: what the request read, with
#: a guess between the client and the cache (a shrunk prompt, a TTL edge or Bedrock's route
#: stay: they say more than the API's part)
_READ_NOTES = "read "


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
    edge = sum(1 for n in notes if n is not None and n.startswith("sent "))
    client = sum(1 for n in notes if n is not None and n.startswith("the API's cache diagnostics"))
    known = [
        f"{bedrock} through Amazon Bedrock, whose cache placement is not documented"
        if bedrock
        else "",
        f"{shrank} where the recorded prompt shrank (history the transcript does not record)"
        if shrank
        else "",
        f"{head} read only the cached tools and system prompt" if head else "",
        f"{edge} sent at the TTL's edge, within its grace" if edge else "",
        f"{client} where the API's diagnostics say the client changed the request"
        if client
        else "",
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
