"""A session file's requests as ``ctxview requests`` computes them: the main conversation's
request log and, when it is shown as sent, every sub-agent's (``ctxview.sessions.subagents``).
The one place the command line and the fleet scan get them from."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxview.core.pricing import PriceTable
from ctxview.core.requests import RequestLog, simulate
from ctxview.sessions.model import LoadedSession
from ctxview.sessions.subagents import AgentLog, agent_logs, link_compactions, subagents_of


def session_requests(
    session: LoadedSession,
    *,
    prices: PriceTable,
    defaults: Mapping[str, Any],
    max_context_messages: int | None = None,
    strategy: str | None = None,
    cache: str | None = None,
    check: bool = False,
) -> tuple[RequestLog, list[AgentLog]]:
    """(the main conversation's log, its sub-agents' logs). The sub-agents are read only when
    the main session is simulated as it was sent: a simulation under a max and a strategy
    replays the main conversation alone. ``check``: ``simulate``'s protocol check of every
    request (``Request.rejected``). Raises ``ValueError`` for bad settings."""
    log = simulate(
        session,
        max_context_messages=max_context_messages,
        strategy=strategy,
        defaults=defaults,
        prices=prices,
        cache=cache,
        check=check,
    )
    if not log.as_sent:
        return log, []
    logs = agent_logs(subagents_of(session), prices=prices, defaults=defaults, check=check)
    return link_compactions(log, logs)


def compare_max(
    session: LoadedSession, defaults: Mapping[str, Any], max_context_messages: int | None = None
) -> int:
    """The max context messages ``compare`` replays every strategy under: the flag, else the
    session's own, else the config's, else 20."""
    found = max_context_messages or session.max_context_messages
    return int(found or defaults.get("max_context_messages", 20))
