"""How a context counts tokens (``ConversationContext(token_counter=...)``): the offline
estimate, calibrated rates (:class:`~ctxview.core.calibrate.Rates`, fitted from a session's
recorded usage), or a callback that counts a whole request (the SDK's ``count_tokens``).

Per-message counters keep the window's running total in O(1) an add. A request callback is
asked once for the whole request when a count is needed (the ``token-budget`` strategy, a
strategy function's budget, ``estimated_tokens``); where a strategy needs each message's share,
the per-message estimates are scaled to the callback's total.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ctxview.core.tokens import _json_len, estimate_message, estimate_system, estimate_tools

if TYPE_CHECKING:
    from ctxview.core.calibrate import Rates

#: a whole request's input tokens: called with ``{"system": ..., "messages": [...], "tools":
#: [...]}`` (empty parts left out), e.g.
#: ``lambda r: client.messages.count_tokens(model=MODEL, **r).input_tokens``
RequestCounter = Callable[[dict[str, Any]], int]


class Estimate:
    """The offline estimate (:mod:`ctxview.core.tokens`)."""

    name = "estimate"

    def message(self, message: Mapping[str, Any]) -> int:
        return estimate_message(message)

    def system(self, system: Any) -> int:
        return estimate_system(system)

    def tools(self, tools: Any) -> int:
        return estimate_tools(tools)


class ModelEstimate(Estimate):
    """A provider's offline estimate for the request's model (its
    :class:`~ctxview.core.providers.base.TokenModel`): a session of another API counts its
    messages, system prompt and tools by that API's rules, as ``inspect`` does."""

    def __init__(self, tokens: Any, model: str | None, fmt: str = "", route: Any = None) -> None:
        self._tokens = tokens.of(model, fmt, route)

    def message(self, message: Mapping[str, Any]) -> int:
        return int(self._tokens.estimate(message))

    def system(self, system: Any) -> int:
        return int(self._tokens.system_tokens(system))

    def tools(self, tools: Any) -> int:
        return int(self._tokens.tools_tokens(tools)) if tools else 0


class RatesCounter(Estimate):
    """Calibrated rates: tokens per character of each kind, and framing per message."""

    name = "rates"

    def __init__(self, rates: Rates) -> None:
        from ctxview.core.calibrate import message_features

        self.rates = rates
        self._features = message_features

    def message(self, message: Mapping[str, Any]) -> int:
        return self.rates.tokens(self._features(message))

    def system(self, system: Any) -> int:
        if not system:
            return 0
        whole = self.rates.tokens(self._features({"role": "user", "content": system}))
        return max(0, whole - math.ceil(self.rates.overhead))

    def tools(self, tools: Any) -> int:
        # tool schemas are JSON: the rate of the JSON kind
        return math.ceil(_json_len(tools) * self.rates.per_char[2]) if tools else 0


ESTIMATE = Estimate()


def counter_for(spec: object) -> tuple[Estimate, RequestCounter | None]:
    """The per-message counter and the request callback (None: none) ``spec`` asks for:
    ``None`` or ``"estimate"``, a ``Rates``, a counter (an :class:`Estimate`: a provider's, by
    :class:`ModelEstimate`), or a callable counting a request."""
    from ctxview.core.calibrate import Rates

    if spec is None or spec == "estimate":
        return ESTIMATE, None
    if isinstance(spec, Estimate):
        return spec, None
    if isinstance(spec, Rates):
        return RatesCounter(spec), None
    if callable(spec):
        return ESTIMATE, spec
    raise ValueError(
        "token_counter must be None or 'estimate', a ctxview.core.calibrate.Rates, or a "
        f"function counting a request's tokens, got {type(spec).__name__}"
    )
