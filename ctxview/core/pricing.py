"""Prices per model, kept as data with their source and date.

* :data:`PRICES`: USD per million tokens for base input, 5-minute cache writes, 1-hour cache
  writes, cache reads and output. ``config.toml`` overrides or adds models with
  ``[pricing."model-name"]`` tables (see :func:`pricing_overrides`). A model that is in neither
  has no price: :func:`cost` returns ``None`` and the caller shows a note, never a guess.
* the shortest prompt prefix a model caches, and the other cache rules:
  :mod:`ctxview.core.cache_rules`.

Model names are matched after dropping a date suffix (``-20250514``) and a bracketed variant
(``[1m]``): ``claude-opus-4-6[1m]`` prices as ``claude-opus-4-6``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

PRICES_SOURCE = (
    "Anthropic's pricing page (platform.claude.com/docs/en/about-claude/pricing, 'Model "
    "pricing') and the per-model overview pages (platform.claude.com/docs/.../models/*/overview)"
)
PRICES_DATE = "2026-11-30 (as read that day; check the page, prices change)"


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens."""

    input: float
    cache_write_5m: float
    cache_write_1h: float
    cache_read: float
    output: float

    def to_dict(self) -> dict[str, float]:
        return {
            "input": self.input,
            "cache_write_5m": self.cache_write_5m,
            "cache_write_1h": self.cache_write_1h,
            "cache_read": self.cache_read,
            "output": self.output,
        }


def _std(input_: float, output: float) -> Price:
    """The standard multipliers: 5m write x1.25, 1h write x2, read x0.1."""
    return Price(input_, input_ * 1.25, input_ * 2, input_ * 0.1, output)


#: Published list prices (USD / MTok). Only models whose rates were read from Anthropic's pages.
PRICES: dict[str, Price] = {
    # models/opus-5-5/overview: $4 / $20, cache writes $5 (5m) / $8 (1h), reads $0.20 (0.05x)
    "claude-opus-5-5": Price(4, 5, 8, 0.2, 20),
    "claude-opus-5": _std(5, 25),
    "claude-opus-4-8": _std(5, 25),
    "claude-opus-4-7": _std(5, 25),
    "claude-opus-4-6": _std(5, 25),
    "claude-opus-4-5": _std(5, 25),
    "claude-opus-4-1": _std(15, 75),
    "claude-opus-4": _std(15, 75),
    "claude-sonnet-5-5": Price(2, 2.5, 4, 0.2, 10),
    "claude-sonnet-5": Price(2, 2.5, 4, 0.2, 10),
    "claude-sonnet-4-6": _std(3, 15),  # models/sonnet-4-6/overview: $3 / $15 per MTok
    "claude-sonnet-4-5": _std(3, 15),
    "claude-sonnet-4": _std(3, 15),
    "claude-3-7-sonnet": _std(3, 15),
    "claude-haiku-4-5": _std(1, 5),
    "claude-3-5-haiku": Price(0.8, 1.0, 1.6, 0.08, 4),
    "claude-3-haiku": Price(0.25, 0.30, 0.50, 0.03, 1.25),
}

_DATE = re.compile(r"-\d{8}$")
_VARIANT = re.compile(r"\[[^\]]*\]$")
_ZERO = re.compile(r"^(claude-(?:opus|sonnet|haiku)-\d+)-0$")
#: an Amazon Bedrock id of an Anthropic model: a gateway's route or an ARN's path before it
#: (LiteLLM's ``bedrock/converse/``, ``arn:aws:bedrock:...:inference-profile/``), an inference
#: profile (``global.``, or a geography), ``anthropic.``, the model, its version (``-v1:0``)
_BEDROCK = re.compile(
    r"^(?:[^/]*/)*(?:(global|us-gov|us|eu|jp|apac|au|ca)\.)?anthropic\."
    r"(claude-[a-z0-9.-]+?)(?:-v\d+(?::\d+)?)?$"
)


def bedrock_profile(model: str) -> str | None:
    """The inference profile of an Amazon Bedrock model id (``global``, or the geography:
    ``us``, ``eu``, ``jp``, ``apac``, ``au``, ``ca``, ``us-gov``), ``""`` for a Bedrock id with
    none (one Region), None for a model id that is not Bedrock's."""
    found = _BEDROCK.match(_VARIANT.sub("", model.strip().lower()))
    return None if found is None else found.group(1) or ""


_OPENAI_DATED = re.compile(r"-\d{4}-\d{2}-\d{2}$")


def openai_model_name(model: str) -> str:
    """An OpenAI model's name without its date or provider prefix: ``gpt-4o-2024-08-06`` →
    ``gpt-4o``; ``openai/gpt-5`` → ``gpt-5`` (the key of its price and its input limit)."""
    return _OPENAI_DATED.sub("", model.strip().lower().rsplit("/", 1)[-1])


def normalise_model(model: str) -> str:
    """``claude-opus-4-6[1m]`` → ``claude-opus-4-6``; ``claude-sonnet-4-20250514`` →
    ``claude-sonnet-4``; ``claude-opus-4-0`` → ``claude-opus-4``; an Amazon Bedrock id
    (``converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0``) → its Anthropic model
    (``claude-haiku-4-5``)."""
    name = _VARIANT.sub("", model.strip().lower())
    bedrock = _BEDROCK.match(name)
    if bedrock is not None:
        name = bedrock.group(2)
    name = _DATE.sub("", name)
    name = _ZERO.sub(r"\1", name)
    return name


BEDROCK_SOURCE = (
    "AWS, Amazon Bedrock User Guide, 'Global cross-Region inference' "
    "(docs.aws.amazon.com/bedrock/latest/userguide/global-cross-region-inference.html): 'Global "
    "cross-Region inference for Anthropic's Claude Sonnet 4.5 offers approximately 10% savings "
    "on both input and output token pricing compared to geographic cross-Region inference'; "
    "Anthropic's pricing page lists the global price"
)
BEDROCK_DATE = "2026-12-02 (as read that day)"
#: what a geographic inference profile (``us.``, ``eu.``, ``jp.`` ...) costs against the global
#: price (:data:`BEDROCK_SOURCE`), for the models it is documented for and the later ones
#: (assumed to keep it); older models, in one Region or any profile, cost the list price
GEOGRAPHIC_PREMIUM = 1.10
GEOGRAPHIC_PREMIUM_MODELS = frozenset(
    {
        "claude-sonnet-4-5",
        "claude-haiku-4-5",
        "claude-opus-4-5",
        "claude-opus-4-6",
        "claude-opus-4-7",
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-sonnet-4-6",
        "claude-sonnet-5",
        "claude-sonnet-5-5",
    }
)


def bedrock_price(model: str, price: Price) -> Price:
    """``price`` (the Anthropic model's list price) as Amazon Bedrock bills ``model``: with
    :data:`GEOGRAPHIC_PREMIUM` on a geographic inference profile of a model in
    :data:`GEOGRAPHIC_PREMIUM_MODELS`, else as it is."""
    profile = bedrock_profile(model)
    if (
        not profile
        or profile == "global"
        or normalise_model(model) not in GEOGRAPHIC_PREMIUM_MODELS
    ):
        return price
    k = GEOGRAPHIC_PREMIUM
    return Price(
        round(price.input * k, 6),
        round(price.cache_write_5m * k, 6),
        round(price.cache_write_1h * k, 6),
        round(price.cache_read * k, 6),
        round(price.output * k, 6),
    )


_PRICE_KEYS = ("input", "cache_write_5m", "cache_write_1h", "cache_read", "output")
#: the highest price a config may set (USD per million tokens): far above any model's, and low
#: enough that no request's cost overflows to infinity (TOML reads ``inf`` and ``1e308``)
MAX_PRICE = 1_000_000.0


def parse_price(value: Any, where: str) -> Price:
    """A ``[pricing."model"]`` table as a :class:`Price`; ValueError naming ``where``.

    ``input`` and ``output`` are required; the cache rates default to the standard multipliers
    of ``input``.
    """
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected a table of prices in USD per million tokens")
    for key in value:
        if key not in _PRICE_KEYS:
            raise ValueError(f"{where}.{key}: unknown price (known: {', '.join(_PRICE_KEYS)})")
    nums: dict[str, float] = {}
    for key in _PRICE_KEYS:
        v = value.get(key)
        if v is None:
            continue
        if (
            isinstance(v, bool)
            or not isinstance(v, (int, float))
            or not (0 <= v <= MAX_PRICE)  # NaN fails both
            or not math.isfinite(v)
        ):
            raise ValueError(
                f"{where}.{key}: expected a number from 0 to {MAX_PRICE:,.0f}, got {v!r}"[:200]
            )
        nums[key] = float(v)
    if "input" not in nums or "output" not in nums:
        raise ValueError(f"{where}: 'input' and 'output' are required")
    base = _std(nums["input"], nums["output"])
    return Price(
        nums["input"],
        nums.get("cache_write_5m", base.cache_write_5m),
        nums.get("cache_write_1h", base.cache_write_1h),
        nums.get("cache_read", base.cache_read),
        nums["output"],
    )


@dataclass(frozen=True, slots=True)
class PriceBook:
    """One provider's published prices as data: USD per million tokens per model (names as
    ``normalise`` leaves them), where they were read (``source``, ``url``), the day they were
    read (``date``) and the day each took effect (``effective``: per model, else
    ``effective_default``; prices change, and a session is priced as of today's list)."""

    provider: str
    prices: Mapping[str, Price]
    normalise: Callable[[str], str]
    source: str
    url: str
    date: str
    effective_default: str = ""
    effective: Mapping[str, str] = field(default_factory=dict)
    #: the price a model id bills at, from its model's list price (a route's premium)
    adjust: Callable[[str, Price], Price] | None = None

    def get(self, model: str) -> Price | None:
        found = self.prices.get(self.normalise(model))
        return found if found is None or self.adjust is None else self.adjust(model, found)

    def effective_date(self, model: str) -> str:
        return self.effective.get(self.normalise(model), self.effective_default)

    def describe(self, model: str | None = None) -> str:
        when = self.effective_date(model) if model else self.effective_default
        since = f"; in effect since {when}" if when else ""
        return f"{self.source} ({self.url}), {self.date}{since}"


ANTHROPIC_PRICES = PriceBook(
    "anthropic",
    PRICES,
    normalise_model,
    PRICES_SOURCE,
    "https://platform.claude.com/docs/en/about-claude/pricing",
    PRICES_DATE,
    adjust=bedrock_price,
)


class PriceTable:
    """The providers' price books (:data:`ANTHROPIC_PRICES` unless ``books`` are given; every
    provider's: ``ctxview.core.providers.registry.price_table``) with overrides (from
    ``config.toml``) on top. A model's price is the first book's that lists it."""

    def __init__(
        self,
        overrides: Mapping[str, Price] | None = None,
        books: Sequence[PriceBook] = (ANTHROPIC_PRICES,),
    ) -> None:
        self._over = {normalise_model(k): v for k, v in (overrides or {}).items()}
        self._exact = dict(overrides or {})
        self.books = tuple(books)

    def _book(self, model: str) -> tuple[PriceBook, Price] | None:
        for book in self.books:
            price = book.get(model)
            if price is not None:
                return book, price
        return None

    def book(self, model: str | None) -> PriceBook | None:
        """The built-in book that prices ``model`` (None: no book lists it)."""
        found = self._book(model) if model else None
        return found[0] if found is not None else None

    def get(self, model: str | None) -> Price | None:
        if not model:
            return None
        if model in self._exact:
            return self._exact[model]
        over = self._over.get(normalise_model(model))
        if over is not None:
            return over
        found = self._book(model)
        return found[1] if found is not None else None

    def source(self, model: str | None) -> str:
        if model and (model in self._exact or normalise_model(model) in self._over):
            return "config.toml [pricing]"
        found = self._book(model) if model else None
        if found is not None and found[0] is not ANTHROPIC_PRICES:
            return found[0].describe(model)
        if model and bedrock_profile(model) is not None:
            return (
                f"{PRICES_SOURCE}, {PRICES_DATE}; Amazon Bedrock: {BEDROCK_SOURCE}, {BEDROCK_DATE}"
            )
        return f"{PRICES_SOURCE}, {PRICES_DATE}"


def costs(
    price: Price,
    uncached: int,
    cache_read: int,
    cache_write_5m: int,
    cache_write_1h: int,
    output: int,
) -> tuple[float, float]:
    """(USD of one request's tokens, USD of its input tokens alone): one sum for both (a replay
    prices every request, and the repeated content of most at the input's rate)."""
    inp = (
        uncached * price.input
        + cache_read * price.cache_read
        + cache_write_5m * price.cache_write_5m
        + cache_write_1h * price.cache_write_1h
    )
    return (inp + output * price.output) / 1_000_000, inp / 1_000_000


def cost(
    price: Price | None,
    *,
    uncached: int,
    cache_read: int,
    cache_write_5m: int = 0,
    cache_write_1h: int = 0,
    output: int = 0,
) -> float | None:
    """USD for one request's tokens; ``None`` when the model has no price."""
    if price is None:
        return None
    return costs(price, uncached, cache_read, cache_write_5m, cache_write_1h, output)[0]
