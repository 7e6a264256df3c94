"""The providers ctxview knows, by name (:func:`provider`), and what spans them all: one price
table holding every provider's prices (:func:`price_table`)."""

from __future__ import annotations

from collections.abc import Mapping

from ctxview.core.pricing import Price, PriceTable
from ctxview.core.providers import anthropic, gemini, openai
from ctxview.core.providers.base import Provider

#: the provider of a session that names none
DEFAULT = "anthropic"

_PROVIDERS: dict[str, Provider] = {
    anthropic.PROVIDER.name: anthropic.PROVIDER,
    openai.PROVIDER.name: openai.PROVIDER,
    gemini.PROVIDER.name: gemini.PROVIDER,
}


def names() -> tuple[str, ...]:
    return tuple(_PROVIDERS)


def provider_of_format(fmt: str) -> Provider:
    """The provider whose readers give the file format ``fmt`` (Anthropic's for any other)."""
    for p in _PROVIDERS.values():
        if fmt in p.formats:
            return p
    return _PROVIDERS[DEFAULT]


def provider(name: str | None = None) -> Provider:
    """The provider called ``name`` (None: :data:`DEFAULT`); KeyError naming the known ones."""
    key = name or DEFAULT
    found = _PROVIDERS.get(key)
    if found is None:
        raise KeyError(f"unknown provider {key!r} (known: {', '.join(_PROVIDERS)})")
    return found


def price_table(overrides: Mapping[str, Price] | None = None) -> PriceTable:
    """Every provider's prices, ``config.toml``'s overrides on top (model names do not clash
    across providers: ``claude-*``, ``gpt-*``/``o*``, ``gemini-*``)."""
    return PriceTable(overrides, tuple(p.prices for p in _PROVIDERS.values()))
