"""What a provider is to ctxview: one interface for every API whose sessions it opens.

A provider names the API (``name``, ``label``) and carries its truths, each written once in the
module that owns it and only referred to here:

* ``rules``: which protocol rules of :mod:`ctxview.core.protocol` apply to its requests, each in
  the provider's own error text (:class:`~ctxview.core.protocol.RuleSet`);
* ``tokens``: its offline token estimate of one canonical message, and whether recorded usage of
  a format calibrates it (:class:`TokenModel`);
* ``cache``: how its prompt cache works (:class:`CacheModel`: explicit breakpoints with a write
  charge, or automatic prefix caching in fixed steps with none);
* ``usage``: its recorded usage in the canonical counts (:class:`Usage`; OpenAI's
  ``cached_tokens`` is a part of ``prompt_tokens``, Anthropic's cache counts are apart from
  ``input_tokens``);
* ``prices``: USD per million tokens per model, as data with its source, the day it was read
  and the day each price took effect (:class:`~ctxview.core.pricing.PriceBook`);
* ``write_body``: the request body it takes for a window (:class:`BodyParts` in, the wire body
  out); a message read from a file keeps its wire item in ``meta["wire"]``, and the writer gives
  it back verbatim, so an opened request body is written back byte for byte in JSON.

Every file format is read into ONE canonical message form (Anthropic-shaped: role
user/assistant, blocks ``text`` / ``image`` / ``tool_use`` / ``tool_result`` / ``thinking``),
one canonical message per wire message or input item: the views, strategies and the request
model know nothing of providers beyond this interface.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.core.cache_rules import Minimum
from ctxview.core.pricing import PriceBook
from ctxview.core.protocol import Problem, RuleSet

__all__ = [
    "BodyParts",
    "CacheModel",
    "Minimum",
    "PriceBook",
    "Provider",
    "RuleSet",
    "TokenModel",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class Usage:
    """One response's recorded input usage in the canonical counts, which add up to the whole
    prompt: ``uncached + cache_read + cache_write``. ``cache_write_1h``: the part of
    ``cache_write`` written for an hour (Anthropic); ``output``: the output tokens, when
    recorded."""

    uncached: int
    cache_read: int = 0
    cache_write: int = 0
    cache_write_1h: int = 0
    output: int | None = None

    @property
    def prompt(self) -> int:
        return self.uncached + self.cache_read + self.cache_write

    def as_meta(self) -> dict[str, Any]:
        """The usage in the keys a message's ``meta["usage"]`` holds for the request model
        (:mod:`ctxview.core.usage`: Anthropic's separate counts, the canonical ones)."""
        out: dict[str, Any] = {
            "input_tokens": self.uncached,
            "cache_read_input_tokens": self.cache_read,
            "cache_creation_input_tokens": self.cache_write,
        }
        if self.cache_write_1h:
            out["cache_creation"] = {
                "ephemeral_1h_input_tokens": self.cache_write_1h,
                "ephemeral_5m_input_tokens": self.cache_write - self.cache_write_1h,
            }
        if self.output is not None:
            out["output_tokens"] = self.output
        return out


@dataclass(frozen=True, slots=True)
class CacheModel:
    """How a provider caches prompts.

    ``kind``: ``"breakpoints"`` (the request marks what to cache: Anthropic's
    ``cache_control``; a write is charged) or ``"prefix"`` (every prompt's prefix is cached
    automatically: OpenAI). ``minimum(model)``: the shortest prefix cached. ``step``: a cached
    prefix is a multiple of this many tokens past the minimum (OpenAI: 128; 1 where the cache
    holds any length). ``write_charge``: a write costs more than the input rate.
    ``ttls``: the lifetimes a request can ask for, in seconds, the first the default.
    ``key_field``: the request field that routes requests to the same cache (OpenAI's
    ``prompt_cache_key``), or None. ``source``, ``date``: where the rules were read, and when.
    """

    kind: str
    minimum: Callable[[str | None], Minimum]
    step: int
    write_charge: bool
    ttls: Mapping[str, float]
    key_field: str | None
    source: str
    date: str

    def cached_length(self, tokens: int, model: str | None) -> int:
        """How many tokens of a ``tokens``-long matching prefix the cache can hold: 0 below the
        model's minimum, else rounded down to the step (the minimum is reached in steps)."""
        least = self.minimum(model).tokens
        if tokens < least:
            return 0
        if self.step <= 1:
            return tokens
        return least + (tokens - least) // self.step * self.step


#: the meta key of what a message carries while in the current turn, as its file recorded it
#: (a Codex response's hidden reasoning: its ``reasoning_output_tokens``), in place of
#: :attr:`TokenModel.carry`'s estimate (``ctxview.core.requests.types.TurnCarry``)
RECORDED_CARRY = "reasoning_tokens"


def carried_by(
    carry: Callable[[Mapping[str, Any]], tuple[bool, int]], messages: Sequence[Mapping[str, Any]]
) -> int:
    """What the messages of the current turn (after the last message that starts one) carry,
    by ``carry`` (:attr:`TokenModel.carry`). Read from the end: a long session costs only its
    last turn."""
    n = 0
    for message in reversed(messages):
        starts, tokens = carry(message)
        if starts:
            break
        n += tokens
    return n


#: :attr:`Route.api`: Google's two APIs answering ``generateContent`` bodies
GEMINI_API = "gemini-api"
VERTEX_AI = "vertex-ai"
_API_LABELS = {GEMINI_API: "Gemini API", VERTEX_AI: "Vertex AI"}


@dataclass(frozen=True, slots=True)
class Route:
    """Where a request went, as the file knows it from the request's URL (a proxy recording's or
    a cassette's path; a lone request body does not say): the API (:data:`GEMINI_API`,
    :data:`VERTEX_AI`; None: a path that names neither) and whether the endpoint streamed the
    answer (``streamGenerateContent``). The same body can be billed differently by route
    (:meth:`TokenModel.of`)."""

    api: str | None
    streamed: bool

    def label(self) -> str:
        """``Vertex AI, streamed`` (as the views say it)."""
        api = _API_LABELS.get(self.api or "", "API not known")
        return f"{api}, {'streamed' if self.streamed else 'not streamed'}"

    def to_dict(self) -> dict[str, Any]:
        return {"api": self.api, "streamed": self.streamed, "text": self.label()}


#: how a token model's :attr:`TokenModel.note` begins in the request log's notes (a view that
#: shows only how the tokens were counted picks these)
TOKEN_NOTE = "tokens: "


@dataclass(frozen=True, slots=True)
class TokenModel:
    """A provider's token estimate of one canonical message (``estimate``), and the file formats
    whose recorded usage fits it (``calibrated_formats``: their requests grew by appending, so
    request-to-request deltas of the usage measure the added messages; see
    :mod:`ctxview.core.calibrate`)."""

    estimate: Callable[[Mapping[str, Any]], int]
    calibrated_formats: frozenset[str]
    #: what the estimate is (shown beside the figures)
    basis: str
    #: the system prompt's tokens (with any fixed cost every request adds), and the tool
    #: definitions' (in the session's form); None: :mod:`ctxview.core.tokens`' estimate
    system: Callable[[Any], int] | None = None
    tools: Callable[[Any], int] | None = None
    #: the request's other fields billed as input (OpenAI's structured-output schema), counted
    #: with the tools; None: none are
    params: Callable[[Mapping[str, Any]], int] | None = None
    #: tokens a window's messages are billed beyond their estimates, which only their order
    #: shows (OpenAI: the hidden reasoning items of the current turn; Gemini: the joined
    #: signature records of the current turn's calls), as each message's part: (it starts a
    #: turn, the tokens it carries while it is in the current turn). One rule for a window
    #: (:meth:`carried_tokens`, :func:`carried_by`) and for the request model's windows
    #: (``ctxview.core.requests.shared.turn_carry``); None: nothing is carried
    carry: Callable[[Mapping[str, Any]], tuple[bool, int]] | None = None
    #: what a request (messages, tools, other fields) is billed for that its body does not show,
    #: so that no estimate from the file can match its usage (OpenAI: a stored response it
    #: continues, server-side tools, files the API reads); None: nothing
    unmeasured: (
        Callable[[Sequence[Mapping[str, Any]], Any, Mapping[str, Any] | None], list[str]] | None
    ) = None
    #: the estimate counts the messages of a file with recorded usage better than rates fitted
    #: to that usage (the request model then fits only the system prompt + tools to it)
    counts_own: bool = False
    #: what the request log should say of the estimate, beginning :data:`TOKEN_NOTE` (Gemini:
    #: the text counted by Gemini's own vocabulary, or a vocabulary file that could not be
    #: used); None: nothing
    note: str | None = None
    #: the token model of a request to one model from a file of one format by one route, where
    #: the model's family and the API change what is billed (OpenAI: GPT-4o frames a message in
    #: 4 tokens, the reasoning models in 3; Gemini's families bill tools, calls and signatures
    #: differently, and Vertex AI's streamed usage no function declarations); None: this one
    #: for every model
    select: Callable[[str | None, str, Route | None], TokenModel] | None = None

    def of(self, model: str | None, fmt: str = "", route: Route | None = None) -> TokenModel:
        """The token model of a request to ``model`` read from a file of format ``fmt``, sent
        by ``route`` (None: not known)."""
        return self if self.select is None else self.select(model, fmt, route)

    def for_session(self, session: Any) -> TokenModel:
        """The token model of a session's requests: :meth:`of` its model, its format (the wire
        format it was saved from) and its route, where it knows them."""
        fmt = getattr(session, "wire_format", None) or session.format
        return self.of(getattr(session, "model", None), fmt, getattr(session, "route", None))

    def system_tokens(self, system: Any) -> int:
        if self.system is not None:
            return self.system(system)
        from ctxview.core.tokens import estimate_system

        return estimate_system(system)

    def tools_tokens(self, tools: Any) -> int:
        if self.tools is not None:
            return self.tools(tools)
        from ctxview.core.tokens import estimate_tools

        return estimate_tools(tools)

    def params_tokens(self, params: Mapping[str, Any] | None) -> int:
        return self.params(params) if self.params is not None and params else 0

    def unmeasured_parts(
        self, messages: Sequence[Mapping[str, Any]], tools: Any, params: Mapping[str, Any] | None
    ) -> list[str]:
        return self.unmeasured(messages, tools, params) if self.unmeasured is not None else []

    def carried_tokens(self, messages: Sequence[Mapping[str, Any]]) -> int:
        return carried_by(self.carry, messages) if self.carry is not None else 0

    def request_tokens(
        self,
        messages: Sequence[Mapping[str, Any]],
        system: Any,
        tools: Any,
        params: Mapping[str, Any] | None,
    ) -> int:
        """A whole request's estimate: its messages (with what they carry), system prompt, tool
        definitions and the other fields billed as input (:meth:`of` the request's model
        first)."""
        return (
            sum(self.estimate(m) for m in messages)
            + self.carried_tokens(messages)
            + self.static_tokens(system, tools, params)
        )

    def static_tokens(self, system: Any, tools: Any, params: Mapping[str, Any] | None) -> int:
        """What a request sends besides its messages: the system prompt, the tool definitions
        and the other fields billed as input (the request model's ``static``)."""
        return self.system_tokens(system) + self.tools_tokens(tools) + self.params_tokens(params)


@dataclass(frozen=True, slots=True)
class BodyParts:
    """What a request body is written from: the window's canonical messages and, per message,
    its meta (a message read from a provider's file holds its wire item in ``meta["wire"]``),
    and the request's settings."""

    model: Any
    messages: Sequence[Mapping[str, Any]]
    metas: Sequence[Mapping[str, Any]] = ()
    system: Any = None
    tools: Sequence[Any] = ()
    params: Mapping[str, Any] = field(default_factory=dict)
    max_tokens: Any = None
    context_management: Any = None
    #: the file format the session was read from (``LoadedSession.format``): which of a
    #: provider's bodies to write (OpenAI: Chat Completions or Responses)
    format: str = ""
    #: the wire messages the system prompt was read from (``LoadedSession.system_wire``),
    #: written back as they were while the system prompt is unchanged
    system_wire: Sequence[Any] = ()

    def wire(self, i: int) -> Any:
        """Message ``i``'s wire item as read, or None (a message ctxview built or edited)."""
        if i < len(self.metas):
            return self.metas[i].get("wire")
        return None


@dataclass(frozen=True, slots=True)
class Provider:
    """One API ctxview reads sessions of (see the module docstring)."""

    #: registry name: ``"anthropic"``, ``"openai"``, ``"gemini"``
    name: str
    #: what the header and reports call it
    label: str
    rules: RuleSet
    tokens: TokenModel
    cache: CacheModel
    prices: PriceBook
    #: a response's recorded usage (its wire form) in the canonical counts, or None when it
    #: records none that is believed
    usage: Callable[[Mapping[str, Any]], Usage | None]
    write_body: Callable[[BodyParts], dict[str, Any]]
    #: the file formats this provider's readers give (``LoadedSession.format``)
    formats: frozenset[str] = frozenset()
    #: the rule set of one session, by its format and request fields, where it is not always
    #: ``rules`` (OpenAI: Chat Completions' or the Responses API's)
    select_rules: Callable[[str, Mapping[str, Any]], RuleSet] | None = None

    #: what a request body's fields alone tell about it, as warnings (a Responses body that
    #: continues a stored response: the turns before it are not in the file)
    request_notes: Callable[[Mapping[str, Any]], list[Problem]] | None = None

    #: where each message of a window stands in the body ``write_body`` writes: the name of
    #: the body's array and each message's first item in it (Chat Completions: after the
    #: leading system messages; a message written as several items, a turn of tool results,
    #: takes as many), then where the last one ends. None: the Messages API's form,
    #: ``messages.N`` for message N
    wire_starts: Callable[[BodyParts], tuple[str, list[int]]] | None = None

    def notes(self, params: Mapping[str, Any]) -> list[Problem]:
        return self.request_notes(params) if self.request_notes is not None else []

    #: the rule set of a request to one model, where a model has rules others lack (Gemini 3
    #: validates thought signatures): the format's rule set, the format and the model in, the
    #: model's rule set out
    model_rules: Callable[[RuleSet, str, str | None], RuleSet] | None = None

    def rules_for(
        self, fmt: str, params: Mapping[str, Any] | None = None, model: str | None = None
    ) -> RuleSet:
        """The rule set a session of format ``fmt`` (request fields ``params``) to ``model`` is
        checked by."""
        rules = self.rules if self.select_rules is None else self.select_rules(fmt, params or {})
        return rules if self.model_rules is None else self.model_rules(rules, fmt, model)
