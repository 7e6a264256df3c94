"""What the request model (``ctxview.core.requests``) is given for the open session: the
transcript as it stands now (edits included), its system prompt and tools, and the price table
of the config. Shared by the Requests view and the Compare screen."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxview.app.model import SessionModel
    from ctxview.config import Config
    from ctxview.core.pricing import PriceTable


def session_view(m: SessionModel) -> SimpleNamespace:
    """The open session as a ``SessionLike``: the transcript's current messages and metas (a
    session that was edited or chatted on is a ctxview session, not the file it came from)."""
    records = m.transcript.records
    loaded = m.session
    same = len(records) == len(loaded.messages)
    return SimpleNamespace(
        path=loaded.path,
        format=loaded.format if same else "ctxview",
        messages=[r.message for r in records],
        metas=[r.meta for r in records],
        system=loaded.system if same and loaded.system else m.context.system_prompt,
        tools=m.tools,
        model=m.model,
        # a rewind's abandoned requests (Claude Code), and the step each message was added at:
        # the request model places edits (``edited_at_step``) between the requests
        off_branch=loaded.off_branch if same else [],
        saved_added_steps={r.id: r.added_step for r in records},
        # pinned messages are never evicted (the request model pins them as they are added)
        pinned=sorted(m.context.pinned_ids),
        # the API the requests go to, as ``ctxview requests`` reads it from the file: an
        # OpenTelemetry trace's format names no provider, and without these its Gemini calls
        # were counted, cached and checked as Anthropic's (an edited session keeps them, as
        # saving it does)
        provider=getattr(loaded, "provider", "anthropic"),
        route=getattr(loaded, "route", None),
        wire_format=getattr(loaded, "wire_format", None) or loaded.format,
        request_params=getattr(loaded, "request_params", None) or {},
    )


def price_table(config: Config) -> PriceTable:
    """The pricing table with the config's overrides (the built-in table if they are invalid:
    the config's own error was already shown when it was loaded)."""
    from ctxview.config import price_overrides
    from ctxview.core.providers.registry import price_table as table

    try:
        return table(price_overrides(config))
    except ValueError:
        return table()


def context_settings(m: SessionModel) -> dict[str, Any]:
    """The live context's max, strategy and token settings as ``simulate`` arguments."""
    ctx = m.context
    return {
        "max_context_messages": ctx.max_context_messages,
        "strategy": ctx.strategy,
        "max_context_tokens": ctx.max_context_tokens,
        "low_water_fraction": ctx.low_water_fraction,
        "context_editing": ctx.context_editing,
    }
