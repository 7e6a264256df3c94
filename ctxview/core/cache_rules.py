"""The prompt-cache rules as Anthropic documents them, kept as data with their source and date.

The cache step (:class:`ctxview.core.requests.cache.PromptCache`) reads its minimums, TTLs and
grace from here; the request log names its break reasons in the API's words through
:data:`API_REASON`; :func:`cache_mode` says whether a request body or message list asks for
caching at all. Nothing here imports another ctxview module but the model-name normaliser.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxview.core.pricing import normalise_model

SOURCE = (
    "Anthropic's prompt-caching documentation "
    "(platform.claude.com/docs/en/build-with-claude/prompt-caching: 'How prompt caching works', "
    "'Automatic caching', 'Cache limitations', 'What invalidates the cache', 'Cache lifetime') "
    "and cache diagnostics (platform.claude.com/docs/en/build-with-claude/cache-diagnostics)"
)
DATE = "2026-12-02 (as read that day; the minimums change with new models)"
#: where a figure was read second-hand: the stored copy of the prompt-caching page did not hold
#: its minimums table that day
SECONDARY = (
    "minimums of the 5.x, Opus 4.7/4.8 and Sonnet 4.6 models as quoted from that table by "
    "dev.to/creeta 'Claude's prompt cache fails silently below 1,024 tokens' (2026) and "
    "anthropics/anthropic-sdk-python issue 1194; 'What invalidates the cache' as summarised by "
    "dev.to/ji_ai 'Claude Prompt Caching: Why cache_read_input_tokens Stays 0'"
)

#: cache breakpoints one request may set (``cache_control`` on blocks, plus the top-level one of
#: automatic caching, which takes one of the four slots)
MAX_BREAKPOINTS = 4
#: a breakpoint finds an earlier cache entry only if that entry ends within this many content
#: blocks before it ("the system checks for cache hits at previous content block boundaries,
#: up to about 20 blocks before the breakpoint")
LOOKBACK_BLOCKS = 20
#: automatic caching: one ``cache_control`` at the top level of the request body puts the
#: breakpoint on the last cacheable block and moves it forward as the conversation grows
AUTOMATIC_FIELD = "cache_control"

#: the order the prompt is cached in; a change in one part breaks that part and every later one
PARTS = ("tools", "system", "messages")
#: what a change breaks ('What invalidates the cache'): change -> the parts whose cache it loses
INVALIDATES: dict[str, tuple[str, ...]] = {
    "model": ("tools", "system", "messages"),  # each model has its own cache
    "tools": ("tools", "system", "messages"),  # tool definitions: the whole cache
    "web_search": ("system", "messages"),
    "citations": ("system", "messages"),
    "speed": ("system", "messages"),
    "system": ("system", "messages"),
    "tool_choice": ("messages",),
    "images": ("messages",),  # adding or removing an image anywhere in the prompt
    "thinking": ("messages",),  # thinking parameters (enabled, disabled, budget)
    "messages": ("messages",),  # from the first message that differs on
}

#: entry lifetimes: 5 minutes by default, 1 hour with ``"ttl": "1h"``; each read refreshes the
#: entry for its whole TTL at no cost
TTL_SECONDS: dict[str, float] = {"5m": 300.0, "1h": 3600.0}
#: how far past its TTL an entry is still taken as live, by the file's clock: a request is timed
#: by the user or tool-result line written last before it (a response's own line is logged after
#: it streamed: :func:`~ctxview.core.requests.points.request_time`), while the API times the
#: entry from when it processed the request (hooks and the network in between). On the unseen2
#: transcripts, 5-minute entries were read 296.8 s and 313.4 s after the previous request was
#: sent and missed after 325.5 s, 328.1 s and 356.7 s. Where a response has no line before it,
#: its own timestamp stands in: between consecutive requests the two clocks differ by under 16 s
#: either way for 95% of the tune set's 486 requests (p5 -15.1 s, p95 +16.2 s). A break is
#: predicted only past TTL + grace.
TTL_GRACE_SECONDS = 16.0


@dataclass(frozen=True, slots=True)
class Minimum:
    """The shortest prompt prefix (tokens) a model caches: below it nothing is read or
    written, and the request is billed at the input rate. ``documented``: read from Anthropic's
    table; else ``basis`` says what is assumed, and why."""

    tokens: int
    documented: bool = True
    basis: str = ""


_ASSUMED_5 = "assumed 512 tokens, as Claude Opus 5, Fable 5 and Mythos 5 (the same generation)"
#: minimum cacheable length per model ('Cache limitations'), names as
#: :func:`ctxview.core.pricing.normalise_model` leaves them
MINIMUMS: dict[str, Minimum] = {
    "claude-opus-5": Minimum(512),
    "claude-fable-5": Minimum(512),
    "claude-mythos-5": Minimum(512),
    "claude-opus-5-5": Minimum(512, False, _ASSUMED_5),
    "claude-fable-5-1": Minimum(512, False, _ASSUMED_5),
    "claude-mythos-5-1": Minimum(512, False, _ASSUMED_5),
    "claude-sonnet-5": Minimum(1024),
    "claude-haiku-5-5": Minimum(
        4096, False, "assumed 4,096 tokens, as Claude Haiku 4.5 (the latest Haiku documented)"
    ),
    "claude-opus-4-8": Minimum(1024),
    "claude-opus-4-7": Minimum(2048),
    "claude-opus-4-6": Minimum(4096),
    "claude-opus-4-5": Minimum(4096),
    "claude-opus-4-1": Minimum(1024),
    "claude-opus-4": Minimum(1024),
    "claude-sonnet-4-6": Minimum(1024),
    "claude-sonnet-4-5": Minimum(1024),
    "claude-sonnet-4": Minimum(1024),
    "claude-3-7-sonnet": Minimum(1024),
    "claude-3-5-sonnet": Minimum(1024),
    "claude-haiku-4-5": Minimum(4096),
    "claude-3-5-haiku": Minimum(2048),
    "claude-3-haiku": Minimum(2048),
}
#: a model in no row of :data:`MINIMUMS`
DEFAULT_MINIMUM = Minimum(1024, False, "unknown: assumed 1,024 tokens (the most common minimum)")

#: ctxview's break reasons in the words of the API's cache diagnostics
#: (``diagnostics.cache_miss_reason.type``); None where the diagnostics would find no
#: divergence in the request itself (an expired entry) or have nothing to compare with
API_REASON: dict[str, str | None] = {
    "first": None,
    "ttl": None,
    "model": "model_changed",
    "system": "system_changed",
    "tools": "tools_changed",
    "evicted": "messages_changed",
    "compaction": "messages_changed",
    "rewind": "messages_changed",
    "edited": "messages_changed",
    "notification": "messages_changed",
    "microcompaction": "messages_changed",
    "resume": "messages_changed",
    # a new Claude Code process rebuilt the system prompt's dynamic part (environment, git
    # status): the API's diagnostics said system_changed (:func:`~ctxview.core.requests.points.history_resends`)
    "restart": "system_changed",
    "thinking": "messages_changed",
    "unexplained": None,
}
#: the reasons the API's cache diagnostics give
API_REASONS = (
    "model_changed",
    "system_changed",
    "tools_changed",
    "messages_changed",
    "previous_message_not_found",
    "unavailable",
)

#: where the thinking rule below was read: the prompt-caching page's "Caching with thinking
#: blocks" (its 'Cache invalidation patterns'), as captured on two dates
THINKING_SOURCE = (
    "platform.claude.com/docs/en/build-with-claude/prompt-caching, 'Caching with thinking "
    "blocks': 'On Opus 4.5+ and Sonnet 4.6+, thinking blocks are preserved by default even when "
    "non-tool-result user content is added, so the cache remains valid; on earlier Opus/Sonnet "
    "models and all Haiku models, cache gets invalidated when non-tool-result user content is "
    "added, causing all previous thinking blocks to be stripped from context' (captured "
    "2026-06-29); 'On Opus 4.5+, Sonnet 4.6+, and Haiku 5.5, thinking blocks are preserved' "
    "(quoted as fetched 2026-10-08)"
)
THINKING_DATE = "2026-12-02 (as read that day)"
#: per model family, the first version whose API keeps earlier turns' thinking blocks when a
#: user message that is not only tool results arrives; earlier versions, and every Claude 3
#: model, strip them (and the cache breaks where the first stripped block was). A family not
#: here (Fable, Mythos) or a name that does not parse is taken as keeping them: every model
#: released after that rule keeps them (``preserved-thinking``: Claude Fable 5.1 and later
#: check the blocks sent back, they do not drop them)
THINKING_KEPT_FROM: dict[str, tuple[int, int]] = {
    "opus": (4, 5),
    "sonnet": (4, 6),
    "haiku": (5, 5),
}
_FAMILY_VERSION = re.compile(r"^claude-(opus|sonnet|haiku)-(\d+)(?:-(\d+))?$")


@functools.lru_cache(maxsize=256)
def strips_thinking(model: str | None) -> bool:
    """Whether the API strips the thinking blocks of earlier turns from a request of ``model``
    once a user message that is not only tool results is added (:data:`THINKING_SOURCE`):
    Claude 3 models, Opus before 4.5, Sonnet before 4.6, Haiku before 5.5."""
    if not model:
        return False
    name = normalise_model(model)
    if name.startswith("claude-3-"):
        return True
    m = _FAMILY_VERSION.match(name)
    if m is None:
        return False
    version = (int(m.group(2)), int(m.group(3) or 0))
    return version < THINKING_KEPT_FROM[m.group(1)]


_SONNET_4_OR_5 = re.compile(r"^claude-sonnet-[45](-\d+)?$")


def minimum(model: str | None) -> Minimum:
    """The minimum cacheable length of ``model``: its row of :data:`MINIMUMS`; any Sonnet 4.x
    or 5.x point release not in it (Sonnet 5.5) has the documented "Sonnet 4.x/5" row's; else
    :data:`DEFAULT_MINIMUM` (an assumption, stated where it is used)."""
    if model:
        name = normalise_model(model)
        found = MINIMUMS.get(name)
        if found is not None:
            return found
        if _SONNET_4_OR_5.match(name):
            return _SONNET
    return DEFAULT_MINIMUM


_SONNET = Minimum(1024)


def min_cacheable(model: str | None) -> tuple[int, bool]:
    """(minimum cacheable tokens, documented) of ``model`` (:func:`minimum`)."""
    m = minimum(model)
    return m.tokens, m.documented


# -- whether a request asks for caching -------------------------------------------------------
#: caching as Claude Code sends it: a breakpoint on the end of every request (its recorded
#: usage shows the writes), or as a ctxview session is assumed to be sent
AUTOMATIC = "automatic"
#: ``cache_control`` on blocks: cached up to the last breakpoint
BREAKPOINTS = "breakpoints"
#: no ``cache_control`` anywhere: the API caches nothing
NONE = "none"

CACHE_MODES = (AUTOMATIC, BREAKPOINTS, NONE)

ASSUMPTIONS: dict[str, str] = {
    AUTOMATIC: "every request cached up to its last message (a breakpoint at its end, as "
    "automatic caching or Claude Code sets it)",
    BREAKPOINTS: "cached up to the last block marked cache_control in each request",
    NONE: "no cache_control anywhere (or, in a transcript, no cache field in any recorded "
    "usage): nothing cached, every input token at the base rate (as the API prices it)",
}


def _marked(value: Any, depth: int = 0) -> bool:
    """A ``cache_control`` on a block of ``value`` (blocks, messages, tools, nested results)."""
    if depth > 6:
        return False
    if isinstance(value, Mapping):
        if value.get("cache_control") is not None:
            return True
        content = value.get("content")
        return isinstance(content, list) and _marked(content, depth + 1)
    if isinstance(value, list):
        return any(_marked(v, depth + 1) for v in value)
    return False


def cache_mode(
    fmt: str,
    messages: Iterable[Mapping[str, Any]],
    system: Any = None,
    tools: Any = None,
    params: Mapping[str, Any] | None = None,
) -> str:
    """How a session's requests are cached: :data:`AUTOMATIC`, :data:`BREAKPOINTS` or
    :data:`NONE`. A request body (``fmt == "request"``) or a bare message list
    (``"messages"``) is cached only as it asks: a top-level ``cache_control`` (``params``) is
    automatic caching, one on a block of the messages, system or tools a breakpoint, none
    anywhere no caching. Every other format is taken as automatic (Claude Code marks the end of
    each request; a ctxview session is assumed to be sent so)."""
    if fmt not in ("request", "messages"):
        return AUTOMATIC
    if params and params.get(AUTOMATIC_FIELD) is not None:
        return AUTOMATIC
    if _marked(system) or _marked(tools) or any(_marked(m) for m in messages):
        return BREAKPOINTS
    return NONE


def marked_messages(messages: Iterable[Mapping[str, Any]]) -> list[int]:
    """Indices of the messages holding a block marked ``cache_control``."""
    return [i for i, m in enumerate(messages) if _marked(m)]
