"""Request-level limits shared by the TUI's sidebar and ``ctxview inspect``: one rule, one
severity, so the two never disagree about a window over the model's context."""

from __future__ import annotations

from ctxview.core.protocol import Problem

#: context window in tokens per model (every current Claude model: 200k)
MODEL_CONTEXT: dict[str, int] = {"default": 200_000}

OVER_CONTEXT_CODE = "over_context_window"


def context_size(model: str | None) -> int:
    """The model's context window in tokens (200k for current Claude models)."""
    return MODEL_CONTEXT.get(model or "default", MODEL_CONTEXT["default"])


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
