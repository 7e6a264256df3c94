"""The summary ``ctxview inspect`` prints of a replayed file (and ``chat --no-tui``'s verdict)."""

from __future__ import annotations

from typing import Any


def inspect_summary(rep: Any, model: str | None = None) -> dict[str, Any]:
    from ctxview.core.limits import context_problem
    from ctxview.core.protocol import check_protocol
    from ctxview.core.tokens import estimate_window
    from ctxview.sessions.request import token_breakdown

    ctx = rep.context
    window = [m for _, m in ctx.entries()]
    # the API's rules, then what ctxview notes about the window itself (max+1, budget, newest)
    problems = check_protocol(window, rep.session.system) + ctx.window_notes()
    system = rep.session.system if isinstance(rep.session.system, list) else ctx.system_prompt
    # messages as the API reads them (from the last compaction block on; as sent, under a
    # context-editing strategy)
    sent = [m for _, m in ctx.sent_entries()] if ctx.edits_messages else window
    breakdown = token_breakdown(system, rep.session.tools, estimate_window(sent))
    # the sidebar's rule: system + tools + window against the model's context
    over = context_problem(sum(breakdown.values()), model or rep.session.model)
    if over is not None:
        problems.append(over)
    return {
        "file": rep.session.path,
        "format": rep.session.format,
        "messages_total": len(rep.transcript),
        "max_context_messages": ctx.max_context_messages,
        "strategy": ctx.strategy,
        "window": {
            "ids": ctx.window_ids,
            "size": len(ctx),
            # the whole request: system + tools + messages (as the app's sidebar counts it)
            "estimated_tokens": sum(breakdown.values()),
            "token_breakdown": breakdown,
        },
        "pinned_id": ctx.pinned_id,
        "pinned_ids": ctx.pinned_ids,
        "evicted": [
            {"id": r.id, "evicted_at_step": r.evicted_step}
            for r in rep.transcript.records
            if r.evicted_step is not None
        ],
        "problems": [p.to_dict() for p in problems],
        "fixes": _fixes(window, rep.session.system, problems),
        "skipped_lines": rep.session.skipped_lines,
        "subagents": rep.session.subagents,
        **_editing_summary(ctx),
    }


def _fixes(window: list[Any], system: Any, problems: list[Any]) -> list[dict[str, Any]]:
    """What ``ctxview repair`` would do (only computed when the window has an error)."""
    if not any(p.severity == "error" for p in problems):
        return []
    from ctxview.core.repair import repair

    return [f.to_dict() for f in repair(window, system).fixes]


def _editing_summary(ctx: Any) -> dict[str, Any]:
    """``context_editing``: what a context-editing strategy sends edited (ids, and the API's
    ``applied_edits`` as estimated); nothing for the other strategies."""
    sf = ctx.sent_form() if ctx.edits_messages else None
    if sf is None:
        return {}
    return {
        "context_editing": {
            "cleared_ids": sorted(sf.edited),
            "applied_edits": sf.applied_edits(),
            "context_management": ctx.context_editing.context_management(ctx.strategy),
        }
    }
