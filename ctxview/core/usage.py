"""A response's recorded usage, as ctxview believes it (the request model, the app's sidebar
and the calibration read it here; headless: no Textual, no SDK)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxview.core.cache_rules import API_REASONS

#: recorded token counts above this are not believed: no model's context comes near, and a
#: damaged or forged usage of 10**30 tokens priced its requests at $10**25
MAX_RECORDED_TOKENS = 100_000_000


def _count(v: Any) -> int | None:
    """A recorded token count: an int (not a bool) from 0 to :data:`MAX_RECORDED_TOKENS`; 0
    when it is missing; None when it is anything else (the usage is then not believed)."""
    if type(v) is int:
        return v if 0 <= v <= MAX_RECORDED_TOKENS else None
    if v is None:
        return 0
    if isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= MAX_RECORDED_TOKENS:
        return int(v)
    return None


def _recorded(meta: Mapping[str, Any]) -> tuple[dict[str, int] | None, int | None, str | None]:
    """(recorded input usage, output tokens, "1h"/"5m" when the usage shows which TTL its
    cache writes used) of a response's meta."""
    u = meta.get("usage")
    if type(u) is not dict and not isinstance(u, Mapping):
        return None, None, None
    get = u.get
    inp = _count(get("input_tokens")) if get("input_tokens") is not None else None
    read = _count(get("cache_read_input_tokens"))
    write = _count(get("cache_creation_input_tokens"))
    if inp is None or read is None or write is None:  # missing, negative, absurd, not an int
        return None, None, None
    rec = {
        "input_tokens": inp,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
    }
    cc = get("cache_creation")
    hint: str | None = None
    if cc is not None and isinstance(cc, Mapping):
        h = cc.get("ephemeral_1h_input_tokens")
        m5 = cc.get("ephemeral_5m_input_tokens")
        h = h if isinstance(h, int) else 0
        m5 = m5 if isinstance(m5, int) else 0
        if h or m5:
            hint = "1h" if h >= m5 else "5m"
    out = get("output_tokens")
    return rec, out if isinstance(out, int) and 0 <= out <= MAX_RECORDED_TOKENS else None, hint


def sent_uncached(metas: Iterable[Mapping[str, Any]]) -> bool:
    """Whether a transcript's requests were sent without caching, as their usage shows: at
    least one recorded usage, and none with a ``cache_read_input_tokens`` or
    ``cache_creation_input_tokens`` field (the API reports both, 0 or not, on a request that
    asked for caching; a Claude Code sub-agent's first request through a gateway to Amazon
    Bedrock's Converse API recorded ``{"input_tokens": 16878, "output_tokens": 237}``)."""
    found = False
    for meta in metas:
        u = meta.get("usage") if meta else None
        if not isinstance(u, Mapping) or _recorded(meta)[0] is None:
            continue
        if "cache_read_input_tokens" in u or "cache_creation_input_tokens" in u:
            return False
        found = True
    return found


def recorded_usage(meta: Mapping[str, Any]) -> dict[str, int] | None:
    """The input usage a response's meta records (``input_tokens``, ``cache_read_input_tokens``,
    ``cache_creation_input_tokens``), or None when it records none this model believes."""
    return _recorded(meta)[0]


def api_diagnosis(meta: Mapping[str, Any]) -> tuple[str | None, int | None] | None:
    """(``cache_miss_reason.type``, ``cache_missed_input_tokens``) of the API's cache
    diagnostics where a response's meta records them (the response's ``diagnostics`` object,
    or its usage), else None. A type the API does not document is not believed (None); so is a
    token count that is not one."""
    found: Any = None
    missed: Any = None
    d = meta.get("diagnostics")
    if isinstance(d, Mapping):
        found = d.get("cache_miss_reason")
    u = meta.get("usage")
    if isinstance(u, Mapping):
        if found is None:
            found = u.get("cache_miss_reason")
        missed = u.get("cache_missed_input_tokens")
    if found is None and missed is None:
        return None
    kind: str | None = None
    if isinstance(found, Mapping):
        t = found.get("type")
        kind = t if isinstance(t, str) and t in API_REASONS else None
        if missed is None:
            missed = found.get("cache_missed_input_tokens")
    elif isinstance(found, str) and found in API_REASONS:
        kind = found
    tokens = _count(missed) if missed is not None else None
    if kind is None and not tokens:
        return None
    return kind, tokens


def prompt_terms(usage: Mapping[str, Any]) -> tuple[int, int, int] | None:
    """(prompt tokens, the cached part of them, output tokens) of a usage in ctxview's counts:
    how OpenAI and Gemini report it. They report no cache writes: what ctxview counts as
    written for OpenAI (the cacheable prefix the cache keeps) is its model of the cache, so a
    view saying what the API reported sums it back into the prompt. None: not all counts
    believed."""
    counts = [
        _count(usage.get(k))
        for k in (
            "input_tokens",
            "cache_read_input_tokens",
            "cache_creation_input_tokens",
            "output_tokens",
        )
    ]
    if any(c is None for c in counts):
        return None
    inp, read, write, out = (c or 0 for c in counts)
    return inp + read + write, read, out
