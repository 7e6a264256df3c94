"""Every request, priced: a session as the sequence of API requests it sent.

The API (small on purpose; the proxy and the TUI build on it)::

    from ctxview.core.requests import simulate, compare
    log = simulate(session)                      # as sent (Claude Code) or under its settings
    log = simulate(session, max_context_messages=20, strategy="low-water")
    for r in log.requests: r.input_tokens, r.cache_read, r.cache_write, r.cache_break, r.cost_usd
    log.totals()                                 # the `requests --json` totals
    rows = compare(session, ["seed", "pair-safe"], max_context_messages=20)

``session`` is anything with the attributes of ``ctxview.sessions.model.LoadedSession``
(``format``, ``messages``, ``metas``, ``system``, ``tools``, ``model``) — the core does not
import the readers. Per request, the meta of its response may carry ``model``, ``usage``,
``timestamp``, and ``system`` / ``tools`` where they differ from the session's (a proxy
recording has them for every request): a change breaks the cache (reasons ``model``,
``system``, ``tools``).

What a request is:

* Claude Code transcripts and ctxview sessions: one per API response (each assistant message
  of the rebuilt sequence; Claude Code's ``<synthetic>`` error replies are not API responses),
  holding the conversation up to it. Its recorded usage and timestamp are the response's.
* a bare message list: one per user (or tool_result) message added, holding it;
* a request body: one, the body.

A compaction (a Claude Code ``compact_boundary`` / compact summary, or a ``compaction`` block)
starts the conversation again: the next request holds only the summary and what followed.

A rewind: the session's ``off_branch`` list (Claude Code: the responses on branches the user
left, see ``ctxview.sessions.claude_code.off_branch_responses``) adds their requests, in the order
they were sent: each holds the first ``fork`` messages of the current branch's window and then
the abandoned branch's own (``Request.off_branch``). The first request that does not extend the
previous abandoned one breaks with ``rewind`` at the first message that differs.

An edit (a ctxview session: the meta of an edited message holds ``original`` and
``edited_at_step``, of a dropped one ``removed``): the requests before it send the message as
recorded; it is applied before the first request whose response was added after that step
(``saved_added_steps``), which breaks with ``edited`` when the edit is inside the cached prefix.

The predicted prompt cache (the model, in order of the prompt: tools → system → messages):

* the first request reads nothing, unless its recorded usage shows a read (a prefix cached
  before the file starts: Claude Code's tools and system prompt, a resumed history): then it
  reads that much, and it is no ``first`` break;
* each request writes its whole prompt to the cache (a cache breakpoint on its last message, as
  Claude Code sends it and a ctxview session is assumed to; a request body or bare message list
  only as its ``cache_control`` asks: :func:`ctxview.core.cache_rules.cache_mode`), and reads the
  longest prefix it shares with a still live earlier request; the rest is written. Nothing is
  read or written when the prompt is below the model's minimum cacheable length
  (:func:`ctxview.core.cache_rules.minimum`);
* an entry lives 5 minutes (1 hour where the request's usage shows 1h writes) from its last use,
  plus a grace for client-side timestamps (:data:`~ctxview.core.cache_rules.TTL_GRACE_SECONDS`),
  by the recorded timestamps; without timestamps requests are taken as back-to-back;
* a request that cannot read all of the previous request's prompt has a :class:`CacheBreak`:
  ``first``, ``model``, ``tools``, ``system``, ``compaction``, ``evicted`` (the strategy removed a
  message inside the cached prefix), ``edited``, ``rewind``, ``ttl``, ``thinking`` (the API
  stripped the thinking blocks of the previous turn: :func:`~.points.thinking_strips`) or the
  Claude Code client's own (``notification``, ``resume``, ``microcompaction``), with ``position``: the
  index in this request's messages of the first message that differs (0 for the whole-prompt
  reasons). The break the recorded usage shows is named beside it
  (:func:`~ctxview.core.requests.diagnose.recorded_breaks`: ``unexplained`` where ctxview predicted
  none; the API's cache diagnostics where the file recorded them).
"""

from ctxview.core.requests.points import (
    parse_timestamp,
    request_points,
    segment_starts,
)
from ctxview.core.requests.replay import compare, iter_compare, simulate, window_of, window_source
from ctxview.core.requests.types import (
    BREAK_REASONS,
    CALIBRATED_FORMATS,
    RECORDED_FORMATS,
    CacheBreak,
    Redundancy,
    Request,
    RequestLog,
    Totals,
)

__all__ = [
    "BREAK_REASONS",
    "CALIBRATED_FORMATS",
    "RECORDED_FORMATS",
    "CacheBreak",
    "Redundancy",
    "Request",
    "RequestLog",
    "Totals",
    "compare",
    "iter_compare",
    "parse_timestamp",
    "request_points",
    "segment_starts",
    "simulate",
    "window_of",
    "window_source",
]
