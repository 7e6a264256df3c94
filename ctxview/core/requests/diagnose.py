"""The cache breaks the recorded usage shows, named beside the prediction
(:func:`recorded_breaks`): a request that read less than the previous request of its model
billed as its whole prompt broke the cache there, whatever ctxview predicted. Where ctxview
predicted a break, the recorded one takes its reason; where it did not, the break is
``unexplained`` — never a silent hit. The API's own cache diagnostics, where the file recorded
them (:func:`ctxview.core.usage.api_diagnosis`), are shown as the API gave them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxview.core.cache_rules import API_REASON
from ctxview.core.requests.types import RecordedBreak, Request
from ctxview.core.usage import api_diagnosis

#: a read this much below the previous prompt (tokens, and a share of it) is a break: the
#: recorded usage of an unbroken request reads the previous prompt to within a few tokens
SLACK_TOKENS = 1024
SLACK_SHARE = 0.05


def recorded_breaks(requests: Sequence[Request], metas: Sequence[Mapping[str, Any]]) -> int:
    """Set ``recorded_miss`` on each request whose recorded usage shows a break, or whose
    response carries the API's cache diagnostics; the number of ``unexplained`` ones."""
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
        if diag is not None:
            miss = _with_api(
                miss or RecordedBreak(_predicted(r), read=read, previous=prev or 0), diag
            )
        r.recorded_miss = miss
        previous[r.model] = total
        seen_any = True
    return unexplained


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
    return RecordedBreak(
        miss.reason,
        kind if kind is not None else miss.api_reason,
        kind is not None,
        tokens,
        miss.read,
        miss.previous,
    )
