"""The Messages API request body ctxview would send next."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxview.core.context import ConversationContext

if TYPE_CHECKING:
    from ctxview.core.providers.base import TokenModel


def build_request(
    context: ConversationContext,
    *,
    model: str,
    max_tokens: int,
    system: Any = None,
    tools: list[Any] | None = None,
    params: dict[str, Any] | None = None,
    context_management: bool | None = None,
) -> dict[str, Any]:
    """The body (:meth:`ConversationContext.request_body`) of the window's next request: the
    window's ``messages``, the context's system prompt unless ``system`` is given.

    Under a context-editing strategy the messages are the edited copy ctxview computes, unless
    ``context_management`` (default: the context's ``server_side`` setting): then the full
    messages and the ``context_management`` block that asks the API to edit them (beta
    ``context-management-2025-06-27``; ``client.beta.messages.create(**body, betas=[...])``)."""
    return context.request_body(
        model=model,
        max_tokens=max_tokens,
        system=system if system is not None else context.system_prompt,
        tools=tools,
        params=params,
        context_management=context_management,
    )


#: the breakdown's key for a transcript's system prompt + tools, calibrated from its usage
CALIBRATED_KEY = "system_and_tools_calibrated"


def token_breakdown(
    system: Any,
    tools: Any,
    message_tokens: int,
    calibrated: int | None = None,
    model: TokenModel | None = None,
    params: Mapping[str, Any] | None = None,
) -> dict[str, int]:
    """The one definition of a request's estimated size, used by the app and ``inspect``:
    the system prompt, the tool definitions and the window's messages (everything sent). A
    Claude Code transcript holds no system prompt nor tools, though its requests carried them:
    ``calibrated`` (``Session.calibrated_static``, the request model's figure) stands for both.
    ``model``: the session provider's token model for the request's model
    (``TokenModel.of``), where it counts system and tools its way; the request's other fields
    it bills as input (``params``: OpenAI's structured-output schema) count with the tools."""
    from ctxview.core.tokens import estimate_system, estimate_tools

    out = {
        "system": model.system_tokens(system) if model is not None else estimate_system(system),
        "tools": (
            model.tools_tokens(tools or []) + model.params_tokens(params)
            if model is not None
            else estimate_tools(tools)
        ),
        "messages": message_tokens,
    }
    if calibrated is not None:
        # the request model's figure is the system prompt + tools the requests carried (the
        # recorded prompts beyond their messages): a file that holds its system prompt (a Codex
        # rollout's base instructions) has it in there already
        out["system"] = out["tools"] = 0
        out[CALIBRATED_KEY] = calibrated
    return out


def breakdown_text(b: dict[str, int]) -> str:
    """``system 22 · tools 134 · messages 310`` (numbers as ``fmt_tokens``); a transcript's
    ``system + tools ~27k (calibrated) · messages 4.7k``."""
    from ctxview.textfmt import fmt_tokens

    if CALIBRATED_KEY in b:
        static = b[CALIBRATED_KEY] + b.get("system", 0) + b.get("tools", 0)
        return (
            f"system + tools ~{fmt_tokens(static)} (calibrated) · "
            f"messages {fmt_tokens(b.get('messages', 0))}"
        )
    return " · ".join(f"{k} {fmt_tokens(v)}" for k, v in b.items())
