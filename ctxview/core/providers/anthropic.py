"""Anthropic's Messages API as a provider: its rules, token estimate, prompt cache, prices and
request body are the modules ctxview was built on, referred to here, never copied:
:mod:`ctxview.core.protocol` (every rule, in the API's words), :mod:`ctxview.core.tokens` and
:mod:`ctxview.core.calibrate`, :mod:`ctxview.core.cache_rules`, :mod:`ctxview.core.pricing`,
:mod:`ctxview.core.usage` and :mod:`ctxview.core.body`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxview.core import cache_rules
from ctxview.core.body import request_body
from ctxview.core.calibrate import CALIBRATED_FORMATS
from ctxview.core.pricing import ANTHROPIC_PRICES
from ctxview.core.protocol import ANTHROPIC_RULES
from ctxview.core.providers.base import BodyParts, CacheModel, Provider, TokenModel, Usage
from ctxview.core.tokens import estimate_message
from ctxview.core.usage import _recorded


def usage(wire: Mapping[str, Any]) -> Usage | None:
    """A Messages API response's ``usage`` (or a meta holding it under ``"usage"``) in the
    canonical counts: Anthropic's are the canonical ones (``input_tokens`` is the uncached
    part; cache reads and writes are counted apart from it)."""
    meta = wire if "usage" in wire else {"usage": wire}
    rec, out, hint = _recorded(meta)
    if rec is None:
        return None
    write = rec["cache_creation_input_tokens"]
    u = meta["usage"]
    cc = u.get("cache_creation") if isinstance(u, Mapping) else None
    h1 = cc.get("ephemeral_1h_input_tokens") if isinstance(cc, Mapping) else None
    return Usage(
        rec["input_tokens"],
        rec["cache_read_input_tokens"],
        write,
        h1 if isinstance(h1, int) and 0 <= h1 <= write else (write if hint == "1h" else 0),
        out,
    )


def write_body(parts: BodyParts) -> dict[str, Any]:
    """The Messages API body of a window (:func:`ctxview.core.body.request_body`): canonical
    messages are Anthropic's own, so they are the wire form."""
    return request_body(
        model=parts.model,
        messages=list(parts.messages),
        max_tokens=parts.max_tokens,
        system=parts.system,
        tools=list(parts.tools),
        params=parts.params,
        context_management=parts.context_management,
    )


#: the file formats read into Anthropic sessions
FORMATS = frozenset(("ctxview", "request", "messages", "claude-code", "claude-code-web", "proxy"))

CACHE = CacheModel(
    kind="breakpoints",
    minimum=cache_rules.minimum,
    step=1,
    write_charge=True,
    ttls=cache_rules.TTL_SECONDS,
    key_field=None,
    source=cache_rules.SOURCE,
    date=cache_rules.DATE,
)

PROVIDER = Provider(
    name="anthropic",
    label="Anthropic",
    rules=ANTHROPIC_RULES,
    tokens=TokenModel(
        estimate_message,
        frozenset(CALIBRATED_FORMATS) & FORMATS,
        "4 characters a token and 4 tokens a message (images and PDFs by Anthropic's "
        "formulas), calibrated from recorded usage where a transcript has it",
    ),
    cache=CACHE,
    prices=ANTHROPIC_PRICES,
    usage=usage,
    write_body=write_body,
    formats=FORMATS,
)
