"""Request-level limits shared by the TUI's sidebar and ``ctxview inspect``: one rule, one
severity, so the two never disagree about a window over the model's context."""

from __future__ import annotations

import re

from ctxview.core.pricing import normalise_model, openai_model_name
from ctxview.core.protocol import Problem

MODEL_CONTEXT_SOURCE = (
    "Anthropic's per-model overview pages (platform.claude.com/docs/en/models/*/overview: "
    "'Context window') and their 'compares to the current lineup' tables"
)
MODEL_CONTEXT_DATE = "2026-11-30"
_1M, _200K = 1_000_000, 200_000
#: context window in tokens per model (names as :func:`ctxview.core.pricing.normalise_model`
#: leaves them: no date suffix, no ``[1m]``); ``default`` for a model not in the table
MODEL_CONTEXT: dict[str, int] = {
    "claude-fable-5-1": _1M,
    "claude-fable-5": _1M,
    "claude-mythos-5-1": _1M,
    "claude-mythos-5": _1M,
    "claude-opus-5-5": _1M,
    "claude-opus-5": _1M,
    "claude-opus-4-8": _1M,
    "claude-opus-4-7": _1M,
    "claude-opus-4-6": _1M,
    "claude-sonnet-5-5": _1M,
    "claude-sonnet-5": _1M,
    "claude-sonnet-4-6": _1M,
    "claude-haiku-5-5": _1M,
    # 200k (Sonnet 4 and 4.5 reach 1M only with the context-1m beta: ``[1m]`` in the name)
    "claude-opus-4-5": _200K,
    "claude-opus-4-1": _200K,
    "claude-opus-4": _200K,
    "claude-sonnet-4-5": _200K,
    "claude-sonnet-4": _200K,
    "claude-haiku-4-5": _200K,
    "claude-3-7-sonnet": _200K,
    "claude-3-5-haiku": _200K,
    "claude-3-5-sonnet": _200K,
    "claude-3-haiku": _200K,
    "default": _200K,
}

#: Gemini 2.0 to 3.x take 1,048,576 input tokens (the Gemini API's model pages; models.dev @
#: f3fc692 providers/google/models/*.toml ``context``)
GEMINI_CONTEXT = 1_048_576

#: OpenAI: the most input tokens a request may hold (models.dev @ f3fc692
#: providers/openai/models/*.toml ``[limit]``: ``input`` where given, else ``context``). Names
#: without a date suffix or an ``openai/`` prefix.
OPENAI_INPUT: dict[str, int] = {
    # GPT-5.5 (2026-04-23): a 1,050,000-token context with 128k of output, as GPT-5.4's
    # (vercel.com/ai-gateway/models/openai/gpt-5.5, docs.venice.ai/models/gpt-5-5-pro: 922k in)
    "gpt-5.5": 922_000,
    "gpt-5.5-pro": 922_000,
    "gpt-5.4": 922_000,
    "gpt-5.4-mini": 272_000,
    "gpt-5.4-nano": 272_000,
    "gpt-5.3-codex": 272_000,
    # Codex CLI records its window as 121,600 for it: 95 % of 128,000 (it keeps 5 % back)
    "gpt-5.3-codex-spark": 128_000,
    "gpt-5.2": 272_000,
    "gpt-5.2-codex": 272_000,
    "gpt-5.1": 272_000,
    "gpt-5.1-codex": 272_000,
    "gpt-5": 272_000,
    "gpt-5-codex": 272_000,
    "gpt-5-mini": 272_000,
    "gpt-5-nano": 272_000,
    "gpt-4.1": 1_047_576,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1-nano": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4o-mini": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
}
#: the OpenAI models whose input limit is below their context (the rest of it is the output's),
#: GPT-5 and every model of its generation: the API words the error by that limit
#: (``tests/acceptance/error_texts.md``)
_OPENAI_INPUT_LIMITED = "gpt-5"

OVER_CONTEXT_CODE = "over_context_window"
_SIZES: dict[tuple[str | None, str | None], int] = {}


_GENERATION = re.compile(r"(gpt-\d+)(?:[.-]|$)")


def _openai_limit(name: str) -> int | None:
    """The input limit of an OpenAI model by its name: its own; else, for a newer model of a
    known generation (``gpt-5.6-terra``), the largest of that generation's. ctxview does not
    hold a model it does not know to a smaller limit than its generation's: a request the API
    would take must never be reported as over the context."""
    found = OPENAI_INPUT.get(name)
    if found is not None:
        return found
    gen = _GENERATION.match(name)
    if gen is None:
        return None
    family = [v for k, v in OPENAI_INPUT.items() if (m := _GENERATION.match(k)) and m[1] == gen[1]]
    return max(family, default=None)


def _is_gemini(model: str) -> bool:
    return model.strip().lower().rsplit("/", 1)[-1].startswith("gemini-")


def _api(model: str | None, provider: str | None) -> str:
    """Whose API the request goes to: the session's provider when known (a Gemini body names
    its model in the URL, not the body), else the model's name."""
    if provider in ("gemini", "openai"):
        return provider
    if model and _is_gemini(model):
        return "gemini"
    if model and _openai_limit(openai_model_name(model)) is not None:
        return "openai"
    return "anthropic"


def context_size(model: str | None, provider: str | None = None) -> int:
    """The most input tokens the model takes: :data:`MODEL_CONTEXT`, 1M for a name that asks for
    the 1M-context variant (Claude Code's ``claude-sonnet-4-5[1m]``), :data:`GEMINI_CONTEXT`
    for a Gemini model (or a Gemini session that names none), :data:`OPENAI_INPUT`, 200k for
    a model in none of them."""
    key = (model, provider)
    found = _SIZES.get(key)
    if found is None:
        api = _api(model, provider)
        if api == "gemini":
            found = GEMINI_CONTEXT
        elif not model:
            found = MODEL_CONTEXT["default"]
        elif model.strip().lower().endswith("[1m]"):
            found = _1M
        elif (limit := _openai_limit(openai_model_name(model))) is not None:
            found = limit
        else:
            found = MODEL_CONTEXT.get(normalise_model(model), MODEL_CONTEXT["default"])
        if len(_SIZES) < 1000:
            _SIZES[key] = found
    return found


def context_problem(
    tokens: int, model: str | None, *, exact: bool = False, provider: str | None = None
) -> Problem | None:
    """An ``over_context_window`` error when a request of ``tokens`` (system + tools + window;
    estimated unless ``exact``) is larger than the model's context (``provider``: the session's,
    see :func:`context_size`), else None. The API answers such a request with a 400, worded
    here as that API words it (Anthropic's ``prompt is too long``, OpenAI's
    ``context_length_exceeded`` texts, Gemini's ``INVALID_ARGUMENT``). Index 0: the problem is
    the whole request's."""
    size = context_size(model, provider)
    if tokens <= size:
        return None
    how = "" if exact else " (estimated)"
    # in the words of the model's API (tests/acceptance/error_texts.md, "Over the context");
    # its count is ctxview's estimate unless ``exact``
    api = _api(model, provider)
    name = openai_model_name(model) if model else ""
    if api == "gemini":
        text = (
            f"The input token count ({tokens}) exceeds the maximum number of tokens "
            f"allowed ({size}).{how}"
        )
    elif api == "openai" and name.startswith(_OPENAI_INPUT_LIMITED):
        text = (
            f"Input tokens exceed the configured limit of {size} tokens. Your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages.{how}"
        )
    elif api == "openai":
        text = (
            f"This model's maximum context length is {size} tokens. However, your messages "
            f"resulted in {tokens} tokens. Please reduce the length of the messages.{how}"
        )
    else:
        text = (
            f"prompt is too long: {tokens:,} tokens{how} > {size:,} maximum (the model's context)"
        )
    return Problem(0, OVER_CONTEXT_CODE, "error", text)


def over_context_words(model: str | None, provider: str | None = None) -> str:
    """The first words of the model's API's answer to a prompt over its context."""
    api = _api(model, provider)
    if api == "gemini":
        return "The input token count exceeds the maximum number of tokens allowed"
    if api == "openai":
        return "context_length_exceeded"
    return "prompt is too long"
