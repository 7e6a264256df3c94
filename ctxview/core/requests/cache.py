"""The predicted prompt cache's parts: an entry (a cached prefix), pruning, the cost of a part
of a request at its average rate, and the notes on models without a price or minimum."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxview.core.pricing import Price, cost
from ctxview.core.requests.types import TTL_1H, TTL_5M


@dataclass(slots=True)
class _Entry:
    """A cached prompt prefix: ``length`` leading window messages still identical."""

    key: tuple[Any, ...]
    length: int
    expires: float
    ttl: float
    #: a request off the current branch: the uuids of its messages after the ``length`` window
    #: messages it shares with the branch
    path: tuple[Any, ...] = ()


def _price_notes(notes: list[str], price_notes: set[str], min_notes: set[str]) -> None:
    """The notes of the models without a price or a known minimum (both replays)."""
    if "" in price_notes:
        price_notes.discard("")
        notes.append("no model named: cost is null (pass a model in the config)")
    for m in sorted(price_notes):
        notes.append(
            f'no price for model {m!r}: cost is null (add [pricing."{m}"] with input and '
            "output in USD per million tokens to config.toml)"
        )
    for m in sorted(min_notes):
        notes.append(f"minimum cacheable length of model {m!r} unknown: assumed 1,024 tokens")


def _prune(entries: list[_Entry], now: float | None) -> list[_Entry]:
    """Drop expired entries and those another entry of the same key outlives and outreaches."""
    live = [e for e in entries if now is None or e.expires >= now]
    keep: list[_Entry] = []
    for e in reversed(live):  # newest first
        if any(k.key == e.key and k.length >= e.length and k.expires >= e.expires for k in keep):
            continue
        keep.append(e)
    keep.reverse()
    return keep


def _blended(
    price: Price | None, read: int, write: int, uncached: int, ttl: float, tokens: int
) -> float | None:
    """The cost of ``tokens`` at this request's average input rate."""
    total = read + write + uncached
    if price is None or total <= 0:
        return None
    c = cost(
        price,
        uncached=uncached,
        cache_read=read,
        cache_write_5m=write if ttl == TTL_5M else 0,
        cache_write_1h=write if ttl == TTL_1H else 0,
    )
    return None if c is None else c * tokens / total
