"""Request-level limits shared by the TUI's sidebar and ``ctxview inspect``: one rule, one
severity, so the two never disagree about a window over the model's context."""

from __future__ import annotations

from ctxview.core.pricing import normalise_model
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

OVER_CONTEXT_CODE = "over_context_window"
_SIZES: dict[str | None, int] = {}


def context_size(model: str | None) -> int:
    """The model's context window in tokens: :data:`MODEL_CONTEXT`, 1M for a name that asks for
    the 1M-context variant (Claude Code's ``claude-sonnet-4-5[1m]``), 200k for a model not in
    the table."""
    found = _SIZES.get(model)
    if found is None:
        if not model:
            found = MODEL_CONTEXT["default"]
        elif model.strip().lower().endswith("[1m]"):
            found = _1M
        elif model.strip().lower().rsplit("/", 1)[-1].startswith("gemini-"):
            found = GEMINI_CONTEXT
        else:
            found = MODEL_CONTEXT.get(normalise_model(model), MODEL_CONTEXT["default"])
        if len(_SIZES) < 1000:
            _SIZES[model] = found
    return found


def context_problem(tokens: int, model: str | None, *, exact: bool = False) -> Problem | None:
    """An ``over_context_window`` error when a request of ``tokens`` (system + tools + window;
    estimated unless ``exact``) is larger than the model's context, else None. The API answers
    such a request with 400 ``prompt is too long``. Index 0: the problem is the whole request's."""
    size = context_size(model)
    if tokens <= size:
        return None
    how = "" if exact else " (estimated)"
    return Problem(
        0,
        OVER_CONTEXT_CODE,
        "error",
        f"prompt is too long: {tokens:,} tokens{how} > {size:,} maximum (the model's context)",
    )
