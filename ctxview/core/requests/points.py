"""Where a session's requests are and what each message brings to them: request points,
compaction starts, timestamps, calibration and message features, redundancy keys, cache-key
fingerprints, requests off the current branch and edits placed in time."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import accumulate
from operator import ne
from typing import Any, NamedTuple

from ctxview.core.body import REQUEST_BODY_FORMATS
from ctxview.core.cache_rules import strips_thinking
from ctxview.core.calibrate import (
    DEFAULT_RATES,
    Delta,
    Features,
    Rates,
    fit_rates,
    message_features,
    segment_statics,
    tokenizer_scale,
    unlogged_drop,
)
from ctxview.core.compaction import (
    COMPACTION_HIDDEN,
    RESULTS_UNBILLED,
    claude_code_compaction,
    has_compaction,
)
from ctxview.core.compaction_restore import restored_after
from ctxview.core.content import content_texts
from ctxview.core.microcompact import cleared_versions, note_result_holders
from ctxview.core.protocol import RuleSet
from ctxview.core.providers.base import CacheModel, Provider, TokenModel
from ctxview.core.providers.openai_tokens import billed_searches, message_search_results
from ctxview.core.requests.restart import assumed_head, cached_head, restarts
from ctxview.core.requests.types import (
    CALIBRATED_FORMATS,
    REDUNDANT_MIN_CHARS,
    TTL_1H,
    TTL_5M,
    SessionLike,
    TurnCarry,
    _quantile,
    recorded_carry,
)
from ctxview.core.tokens import _json_len
from ctxview.core.usage import _recorded


def session_rules(session: SessionLike) -> RuleSet:
    """The protocol rules a session's requests are checked by: its provider's, for its format
    (``ctxview.core.providers``)."""
    fmt = getattr(session, "wire_format", None) or session.format
    params = getattr(session, "request_params", None) or {}
    return _provider(session).rules_for(fmt, params, getattr(session, "model", None))


def session_cache(session: SessionLike) -> CacheModel:
    """The prompt cache a session's requests go through: its provider's."""
    return _provider(session).cache


def provider_tokens(session: SessionLike, rates: Rates) -> TokenModel | None:
    """The token model a session's requests are counted with in place of ``rates``: its
    provider's for its model and format (Gemini's by model family), the one ``inspect`` counts
    the request body with; None for an Anthropic session (the rates are its estimate) and under
    rates calibrated from recorded usage (fitted on the messages' characters, as
    ``Session.message_estimate`` counts them)."""
    found = _provider(session)
    if found.name == "anthropic" or rates.calibrated:
        return None
    return found.tokens.for_session(session)


def _provider(session: SessionLike) -> Provider:
    """A session's provider: the one it names (``LoadedSession.provider``), else its format's."""
    from ctxview.core.providers.registry import provider, provider_of_format

    name = getattr(session, "provider", None)
    return provider(name) if isinstance(name, str) else provider_of_format(session.format)


# -- where the requests are ------------------------------------------------------------------
class _Point(NamedTuple):  # a tuple: 50,000 of them are built per replay
    n: int  # the request holds messages [segment start, n)
    response: int | None
    #: a request off the current branch: its index in the session's ``off_branch`` list
    off: int | None = None


def request_points(session: SessionLike, roles: Sequence[Any] | None = None) -> list[_Point]:
    """Where a session sent its requests (see the module docstring). ``roles``: each message's
    role, where the caller has them already."""
    msgs, metas = session.messages, session.metas
    if session.format in REQUEST_BODY_FORMATS:
        return [_Point(len(msgs), None)] if msgs else []
    if session.format == "messages":
        pts = []
        for i, m in enumerate(msgs):
            if m.get("role") == "user":
                nxt = (
                    i + 1 if i + 1 < len(msgs) and msgs[i + 1].get("role") == "assistant" else None
                )
                pts.append(_Point(i + 1, nxt))
        return pts
    new = tuple.__new__  # _Point(i, i) without the named tuple's Python __new__ (50,000 times)
    if roles is None or len(roles) != len(msgs):
        roles = [m.get("role") for m in msgs]
    return [
        new(_Point, (i, i, None))
        for i, r in enumerate(roles)
        if r == "assistant"
        and i > 0
        and (meta := metas[i]).get("model") != "<synthetic>"
        # one response read as several messages (a Codex session: one per output item), or a
        # compaction's replacement history: no request of its own
        and not meta.get("same_response")
        and not meta.get("compacted_history")
        # a forked thread's copy of its parent's history: the parent sent those requests
        and not meta.get("forked_history")
    ]


def segment_starts(session: SessionLike, blocks_in: Iterable[int] | None = None) -> set[int]:
    """Indices of messages a compaction starts the conversation again at (never the first): a
    Claude Code compaction (:func:`~ctxview.core.compaction.claude_code_compaction`, where the
    TUI's simulation starts again too) or an assistant message holding a ``compaction`` block
    (the API reads nothing before it: the tokens and the cached prefix start there).
    ``blocks_in``: the only messages that may hold a ``compaction`` block, where the caller
    knows them (the others are not walked)."""
    msgs, metas = session.messages, session.metas
    n = min(len(msgs), len(metas))
    found = {i for i in range(1, n) if (meta := metas[i]) and claude_code_compaction(meta)}
    found.update(
        i
        for i in (range(n) if blocks_in is None else blocks_in)
        if 0 < i < n
        and msgs[i].get("role") == "assistant"
        # (a Codex compaction's item, which closes its replacement history, cuts nothing: the
        # next request sends every item of it, the API bills them, and the history starts the
        # segment already: ``compaction.KEEPS_HISTORY``)
        and has_compaction(msgs[i])
    )
    return found


#: how a Claude Code background-task notification opens when it is delivered as a prompt of its
#: own (a background command or agent ended while no turn was running)
TASK_NOTIFICATION = "<task-notification>"
#: how the summary of a background *command*'s notification opens (an agent's reads
#: ``<summary>Agent "..."``): only those were seen to break the cache (:func:`history_resends`)
COMMAND_SUMMARY = '<summary>Background command "'
#: how far into a notification its summary is looked for (after the task id, the tool-use id
#: and the output file's path)
SUMMARY_REACH = 2_000


#: the meta key the Claude Code reader sets on a user message before whose request an MCP server
#: was disconnected (its ``mcp_instructions_delta`` attachment's removed names)
MCP_REMOVED = "mcp_removed"
#: the meta key the Claude Code reader sets beside :data:`MCP_REMOVED`: per removal, the deferred
#: tools the ``deferred_tools_delta`` line Claude Code wrote with it removed (None: no such line)
MCP_TOOLS_REMOVED = "mcp_tools_removed"
#: the meta key the Claude Code reader sets on a prompt typed after a turn that ended without its
#: Stop hooks' summary line or its ``turn_duration`` line, in a session that writes one after every turn: the Claude Code
#: process that answered the turn did not finish it, and a new one sent the prompt
RESTARTED = "restarted"

#: the meta key the Claude Code reader sets on the first user message after Remote Control was
#: turned on (a ``/remote-control`` local command line or a ``bridge_status`` system line): the
#: request that sends it is the first with Remote Control's tools (:func:`history_resends`)
REMOTE_CONTROL = "remote_control"
#: the first Claude Code version whose Remote Control, turned on mid-session, was seen to change
#: the tools (:func:`history_resends`)
REMOTE_CONTROL_CHANGES_TOOLS = (2, 1, 178)

#: the meta key the Claude Code reader sets on a message after which Claude Code wrote an
#: ``away_summary`` line: the times of those lines (:func:`cache_refreshes`)
AWAY_SUMMARY = "away_summary"
#: the meta key the Claude Code reader sets on a user message: the version of the Claude Code that
#: wrote its line (the line's ``version``)
CLIENT_VERSION = "client_version"
#: the first Claude Code version whose background command's notification was seen not to break
#: the cache (:func:`history_resends`)
NOTIFICATION_KEEPS_CACHE = (2, 1, 49)
#: the first Claude Code version whose first tool search was seen not to change the tools
#: (:func:`history_resends`)
TOOL_SEARCH_KEEPS_TOOLS = (2, 1, 209)
#: the earlier Claude Code versions whose first tool search was seen not to change the tools
#: either (:func:`history_resends`): from, and up to (not included). On unseen4 the first
#: search of all five sessions at 2.1.101-2.1.110 (2.1.101 twice, 2.1.104, 2.1.108, 2.1.110)
#: read the whole previous prompt, while the 2.1.91 one before and the 2.1.112 and 2.1.119-2.1.199
#: ones after read only the head (or nothing) and wrote the rest
TOOL_SEARCH_KEPT_TOOLS = ((2, 1, 101), (2, 1, 111))

#: what Claude Code writes as the answer to a turn that was only a local command, when a session
#: exited after one (``/exit``) is resumed: a ``<synthetic>`` assistant message of this text
NO_RESPONSE = "No response requested."


def history_resends(session: SessionLike) -> dict[int, str]:
    """Messages at which a Claude Code transcript's client sent its message history again from
    the start (the tools and system still read from the cache), with the reason: a user
    message delivering a background command's notification (``notification``), or the first message
    after a session was resumed (``resume``: it follows Claude Code's ``<synthetic>`` "No
    response requested." after the ``/exit``). On the fresh held-out transcripts of
    benchmarks/truth.py, the first request after each of the four resumes read only the tools
    and system (two, 6 and 26 minutes after the ``/exit``, 1-hour cache entries: 16,606 of
    ~77k and ~138k tokens) or nothing (two past their 5-minute TTL).

    The evidence is the recorded usage, not a request body (a transcript holds none), and it
    holds for a background **command**'s notification only: on the tune set of
    ``benchmarks/truth.py`` three of the four requests such a message started read only the
    tools and system and wrote the whole history again, seconds after a request that read all of
    it (no TTL, model or compaction in between; Claude Code users report the same after
    background completions, anthropics/claude-code issue 64901), while in the fresh diagnosis
    transcripts (Claude Code 2.1.38-2.1.215) the two such requests read the whole previous
    prompt, and all eight that a background **agent**'s notification started (2.1.38 and
    2.1.215, three files) did too: an agent's notification is no break. What Claude Code changes
    in the history then is not in the transcript, so the whole history is taken as changed.

    A request before which Claude Code 2.1.2xx disconnected an MCP server (an
    ``mcp_instructions_delta`` attachment naming it removed: the reader's ``mcp_removed``)
    changed its system prompt (``system``, read from the cached head): the API's own cache
    diagnostics on such a request said ``system_changed`` (179,210 tokens missed; it read the
    40,895-token head), and every removal in the fresh diagnosis transcripts broke the cache (the
    other one 8.6 hours after the previous request), while the 11 requests after a server was
    added (its instructions sent as a message delta) read the whole previous prompt. A removal
    whose ``deferred_tools_delta`` line removed no tool changes nothing (:func:`_tools_stayed`).

    Remote Control turned on mid-session (a ``/remote-control`` local command or a
    ``bridge_status`` line: the reader's :data:`REMOTE_CONTROL` on the next user message)
    changes the tools from Claude Code 2.1.178 (:data:`REMOTE_CONTROL_CHANGES_TOOLS`,
    ``tools``): in ``tests/acceptance/unseen4/claude_code`` the three such requests (2.1.178,
    2.1.199, 2.1.217) read the head or nothing and the API diagnosed ``tools_changed``, while at
    2.1.101 the request after it read the whole previous prompt.

    Only a Claude Code before 2.1.49 (:data:`NOTIFICATION_KEEPS_CACHE`, the line's version) resends
    on a background command's notification: of the tune set's five (2.1.39) four broke, of the
    five of ``tests/acceptance/unseen3/claude_code`` at 2.1.49 one did, and none of the 14 of
    2.1.119-2.1.217 (unseen3 and the diag4 diagnosis set: 2.1.119, 2.1.209, 2.1.210, 2.1.217,
    four files) did: each read the whole previous prompt, 64 to 233 s after it. A notification
    line without a version is taken as the old client's.

    A Claude Code before 2.1.209 (:data:`TOOL_SEARCH_KEEPS_TOOLS`) changes its tools when the
    session's first tool search loads deferred tools (a ``ToolSearch`` result of
    ``tool_reference`` blocks): the next request read only the head and wrote the rest, and
    the API's own diagnostics said ``tools_changed`` (``tools``, read from the head). In the
    diag4 diagnosis set and unseen3, all five sessions' first such result at 2.1.119-2.1.205
    broke (four diagnosed ``tools_changed``), while the two later loads in those sessions and
    the six first loads at 2.1.209-2.1.219 read the whole previous prompt. So did the five
    first loads of unseen4 at 2.1.101-2.1.110 (:data:`TOOL_SEARCH_KEPT_TOOLS`), between the
    2.1.91 and 2.1.112 ones that broke.

    A prompt the Claude Code reader marked ``restarted`` (:data:`RESTARTED`: typed after a turn
    whose final answer no Stop hooks' summary line nor ``turn_duration`` line followed, in a
    session that writes one after each turn) was sent by a new Claude Code process, whose rebuilt system prompt breaks the
    cache (``restart``, read from the static part of the head): on the 2.1.205-2.1.219 files of
    ``tests/acceptance/unseen3/claude_code`` 26 of the 28 such requests broke (the API said
    ``system_changed`` on 16, ``unavailable`` on 2; 8 were past their TTL or after an MCP
    disconnection), the other 2 are one event in two copies of a session; no file of the other
    sets has one.

    Elsewhere (a session whose client does not ask the API to keep thinking blocks), a prompt
    after a turn whose thinking was sent with its tool results breaks the cache where the API
    strips that thinking (``thinking``: :func:`thinking_strips`)."""
    if session.format not in CALIBRATED_FORMATS or drops_reasoning(session):
        return dict.fromkeys(thinking_strips(session), "thinking")
    out: dict[int, str] = {}
    metas = session.metas
    search = _first_tool_search(session)
    for i, m in enumerate(session.messages):
        if not i or m.get("role") != "user":
            continue
        meta = metas[i] if i < len(metas) else {}
        if meta.get(MCP_REMOVED) and not _tools_stayed(meta):
            out[i] = "system"
        elif meta.get(RESTARTED):
            out[i] = "restart"
        elif meta.get(REMOTE_CONTROL) and _at_least(meta, REMOTE_CONTROL_CHANGES_TOOLS):
            # Remote Control turned on mid-session changes the tools from Claude Code 2.1.178:
            # in tests/acceptance/unseen4/claude_code the next request at 2.1.178, 2.1.199 and
            # 2.1.217 read the head or nothing and wrote the rest (the API's diagnostics said
            # tools_changed on all three), while at 2.1.101 it read the whole previous prompt
            out[i] = "tools"
        elif _opens_with_command_notification(m.get("content")) and not _at_least(
            meta, NOTIFICATION_KEEPS_CACHE
        ):
            out[i] = "notification"
        elif _resumed(session, i - 1):
            out[i] = "resume"
        elif i == search:
            out[i] = "tools"
    for i in microcompactions(session):
        out.setdefault(i, "microcompaction")
    return out


def resent_from(session: SessionLike) -> dict[int, int]:
    """Per message of :func:`history_resends` that changes the history from a message other
    than the first, that message's transcript id: a microcompaction's first cleared result, or
    the first thinking block the API stripped."""
    if session.format in CALIBRATED_FORMATS and not drops_reasoning(session):
        return microcompactions(session)
    return thinking_strips(session)


_THINKING = ("thinking", "redacted_thinking")
_RESULTS_ONLY = ("tool_result",)


def thinking_strips(session: SessionLike) -> dict[int, int]:
    """Messages at which the API strips the thinking blocks of the previous turn, each with the
    transcript id of the first message that held one: a user message that is not only tool
    results, after a turn whose thinking went out again with its tool results (the requests of
    that turn cached it), on a model that strips it
    (:func:`~ctxview.core.cache_rules.strips_thinking`, Anthropic's rule with its source). The
    next request differs from the cached prompt at that message; the thinking of earlier turns
    was stripped by the prompts before.

    Claude Code asks the API to keep every thinking block (``context_management``
    ``clear_thinking_20251015`` with ``keep: "all"`` on each request, as captured from Claude
    Code 2.1.220; in its transcripts a Sonnet 4.5 prompt reads the whole previous prompt), so
    its transcripts have none. OpenAI drops every earlier turn's reasoning items whatever the
    model (:func:`drops_reasoning`): a Codex rollout's first request of a turn read up to the
    previous turn's first reasoning item (on the Codex diagnosis set, the predicted cached tokens' p90 went
    from 10.8% to 8.5% of the prompt with it)."""
    drops = drops_reasoning(session)
    if session.format in CALIBRATED_FORMATS and not drops:
        return {}
    msgs = session.messages
    out: dict[int, int] = {}
    first_thinking: int | None = None  # of the turn since the last prompt
    sent_again = False  # a user message followed it: a request of the turn sent it
    for i, m in enumerate(msgs):
        role = m.get("role")
        content = m.get("content")
        if role == "assistant":
            if (
                first_thinking is None
                and type(content) is list
                and any(isinstance(b, dict) and b.get("type") in _THINKING for b in content)
            ):
                first_thinking = i
            continue
        if role != "user":
            continue
        if _only_results(content):
            if first_thinking is not None:
                sent_again = True
            continue
        # a prompt: the turn before it ends here
        if (
            first_thinking is not None
            and sent_again
            and (drops or strips_thinking(_request_model(session, i)))
        ):
            out[i] = first_thinking
        first_thinking, sent_again = None, False
    return out


def drops_reasoning(session: SessionLike) -> bool:
    """The session's API drops every earlier turn's reasoning items (OpenAI: a Codex rollout's
    requests too), as :func:`thinking_strips` reads it whatever the model."""
    return _provider(session).name == "openai"


def _only_results(content: Any) -> bool:
    return (
        type(content) is list
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") in _RESULTS_ONLY for b in content)
    )


def _request_model(session: SessionLike, i: int) -> str | None:
    """The model of the request a user message ``i`` starts: its response's, else the
    session's."""
    metas = session.metas
    nxt = i + 1
    if nxt < len(metas) and isinstance(metas[nxt].get("model"), str):
        return str(metas[nxt]["model"])
    return session.model


def microcompactions(session: SessionLike) -> dict[int, int]:
    """Messages at which a Claude Code transcript's client cleared earlier tool results in place
    (a ``microcompact_boundary``: the reader marks the message the next request sent first,
    ``meta["microcompact"]``), each with the transcript id of the first message holding a
    cleared result: the request breaks the cache there (``microcompaction``), its prefix before
    that message read. Ids not found in the messages before it are left out; when none of them
    is (a transcript that starts mid-session, as a checkpoint's slice does: the results it
    cleared are in the history before the file, which the calibrated static carries), the
    break is at the file's first message (0): the request reads the tools and system alone, as
    the recorded usage shows (a Claude Code 2.1.14 slice cleared 14 results none of its lines
    holds, and the next request read 19,330 of 108,220 tokens)."""
    metas = session.metas
    marked = [i for i, m in enumerate(metas) if m and "microcompact" in m]
    if not marked:
        return {}
    where: dict[str, int] = {}
    msgs = session.messages
    out: dict[int, int] = {}
    done = 0
    for i in marked:
        note_result_holders(msgs, done, i + 1, where)
        done = i + 1
        info = metas[i]["microcompact"]
        ids = info.get("cleared") if isinstance(info, Mapping) else None
        named = [t for t in ids or () if isinstance(t, str)]
        found = [where[t] for t in named if t in where]
        if found:
            out[i] = min(found)
        elif named:
            out[i] = 0
    return out


def static_drops(session: SessionLike) -> dict[int, int]:
    """Microcompactions that cleared only tool results the file does not hold (a transcript
    that starts mid-session: the results are in the history before it, which the calibrated
    static carries), each with the tokens Claude Code says it saved (``tokens_saved``): the
    static drops there, and the requests after it are calibrated apart. A Claude Code 2.1.x
    file of unseen2 (``entire_839b35f7``) cleared 14 results none of its lines holds, saving
    21,279 tokens by Claude Code's count; its recorded prompt fell 27.8k there."""
    out: dict[int, int] = {}
    for i, where in microcompactions(session).items():
        info = session.metas[i].get("microcompact")
        saved = info.get("tokens_saved") if isinstance(info, Mapping) else None
        if where == 0 and isinstance(saved, int) and not isinstance(saved, bool) and i > 0:
            out[i] = saved
    return out


def cleared_tokens(
    session: SessionLike,
    rates: Rates,
    measure: Callable[[Any], int] | None = None,
    search_tokens: Mapping[int, int] | None = None,
) -> dict[int, list[tuple[int, int]]]:
    """Per message from which the requests send earlier messages at another size, (transcript
    id, its tokens as sent from then on) of each: :func:`cleared_versions` under ``rates``;
    each hosted web search message of ``search_tokens`` at its results a search there (what
    the file's recorded usage measured: :func:`search_result_tokens`), from the search on;
    and the searches whose
    results a Codex interrupt left unbilled (:data:`RESULTS_UNBILLED`: each its item alone).
    ``measure``: the session's own token model (its estimates count each search's results at
    :func:`message_search_results`)."""
    out = {
        i: [(k, rates.tokens(message_features(m))) for k, m in changed]
        for i, changed in cleared_versions(session).items()
    }
    msgs = session.messages

    def size(m: Any) -> int:
        return measure(m) if measure is not None else rates.tokens(message_features(m))

    for k, each in (search_tokens or {}).items():
        if 0 <= k < len(msgs):
            m = msgs[k]
            out.setdefault(k, []).append(
                (k, max(0, size(m) - message_search_results(m)) + billed_searches(m) * each)
            )
    for i, meta in enumerate(session.metas):
        ids = meta.get(RESULTS_UNBILLED) if meta else None
        if not isinstance(ids, list) or not i:
            continue
        sent = [
            (k, max(0, size(msgs[k]) - message_search_results(msgs[k])))
            for k in ids
            if type(k) is int and 0 <= k < i
        ]
        if sent:
            out.setdefault(i, []).extend(sent)
    return out


def search_result_tokens(
    session: SessionLike,
    recs: Sequence[tuple[_Point, int]],
    sent: Callable[[int, int], int],
    seg_of: Sequence[int],
    unbilled: Sequence[int],
) -> dict[int, int] | None:
    """What each hosted web search's results were billed (per search message, tokens a
    search), by the file's recorded usage (None where it shows none). A response that ran
    searches: the growth of the recorded prompt from the request before the one that ran them
    to the first request holding them, less what the messages between count without their
    results, a search; a search whose growth no usage shows (no recorded request on either
    side, another search between): the median of those measured. The results vary with the
    search: 178 to 7,207 tokens a search on fresh3_more (median 4,346:
    :data:`WEB_SEARCH_RESULT_TOKENS`); on unseen3's agentv_019eecb9 two searches took ~4,300
    each, six later ones ~7,800, one ~5,900, four more ~7,200. ``recs``: the recorded
    requests, (point, prompt); ``sent(a, b)``: what messages ``[a, b)`` of one segment count,
    results included; ``unbilled``: :func:`results_unbilled_at` (ascending)."""
    msgs, metas = session.messages, session.metas
    marks = [i for i, m in enumerate(msgs) if billed_searches(m)]
    if not marks or len(recs) < 3:
        return None
    found: list[float] = []
    measured: dict[int, int] = {}
    runs = [_runs_searches(msgs, p.response) for p, _ in recs]
    for q in range(1, len(recs)):
        # a run of requests whose responses ran searches (each billed its own), from the
        # request before it to the first request after it that ran none
        if not runs[q] or runs[q - 1]:
            continue
        e = q
        while e < len(recs) and runs[e]:
            e += 1
        if e == len(recs):
            continue
        (pa, ta), (pq, _), (pn, tn) = recs[q - 1], recs[q], recs[e]
        lo, hi = bisect_left(marks, pq.n), bisect_left(marks, pn.n)
        if hi == lo or bisect_left(marks, pa.n) != lo or pa.n == 0 or pa.n >= pn.n:
            continue  # (a search between a and q: a response whose request is not recorded)
        if seg_of[pa.n - 1] != seg_of[pn.n - 1]:
            continue
        u = bisect_left(unbilled, pa.n)  # (an interrupt's unbilling in [pa.n, pn.n))
        if u < len(unbilled) and unbilled[u] < pn.n:
            continue
        if _model_of(metas, pa, session.model) != _model_of(metas, pn, session.model):
            continue
        n = sum(billed_searches(msgs[k]) for k in marks[lo:hi])
        counted = sum(message_search_results(msgs[k]) for k in marks[lo:hi])
        grown = (tn - ta) - (sent(pa.n, pn.n) - counted)
        found.append(grown / n)
        measured.update(dict.fromkeys(marks[lo:hi], max(0, round(grown / n))))
    if not found:
        return None
    typical = max(0, round(_quantile(sorted(found), 0.5)))
    return {k: measured.get(k, typical) for k in marks}


def _runs_searches(msgs: Sequence[Mapping[str, Any]], first: int | None) -> bool:
    """The response whose first message is ``first`` ran a billed web search."""
    k = first
    while k is not None and k < len(msgs) and msgs[k].get("role") == "assistant":
        if billed_searches(msgs[k]):
            return True
        k += 1
    return False


def own_results(
    session: SessionLike, search_tokens: Mapping[int, int] | None = None
) -> dict[int, int]:
    """Per response (its first message) that ran hosted web searches whose results are
    billed, those results: its own request is billed them beyond its window, as the requests
    after it are (each search at ``search_tokens``, what the file's usage measured, else
    :data:`WEB_SEARCH_RESULT_TOKENS`). On every Codex set the request of such a response was
    under by about that: -4,299 (1 search), -4,414 (1), -4,500 (1), -9,305 (2), -22,380 (6)."""
    msgs, metas = session.messages, session.metas
    out: dict[int, int] = {}
    first: int | None = None
    for i, m in enumerate(msgs):
        if m.get("role") != "assistant":
            first = None
            continue
        if first is None or not (metas[i] or {}).get("same_response"):
            first = i
        n = billed_searches(m)
        if n:
            each = (search_tokens or {}).get(i)
            out[first] = out.get(first, 0) + n * (
                each if each is not None else message_search_results(m) // n
            )
    return out


def results_unbilled_at(session: SessionLike) -> list[int]:
    """The messages from which a Codex interrupt left earlier hosted searches' results
    unbilled (:data:`RESULTS_UNBILLED`)."""
    return [
        i
        for i, m in enumerate(session.metas)
        if i and m and isinstance(m.get(RESULTS_UNBILLED), list) and m[RESULTS_UNBILLED]
    ]


def _resumed(session: SessionLike, k: int) -> bool:
    """Message ``k`` is the ``<synthetic>`` answer Claude Code writes when it resumes a session
    that ended on a local command (:data:`NO_RESPONSE`)."""
    if k >= len(session.metas) or session.metas[k].get("model") != "<synthetic>":
        return False
    content = session.messages[k].get("content")
    texts = content_texts(content)
    return any(isinstance(t, str) and t.strip() == NO_RESPONSE for t in texts)


#: the Claude Code versions whose first request was seen to cache its tools and system only
#: (:func:`first_messages_uncached`): from, and up to (not included)
FIRST_UNCACHED_FROM = (2, 1, 159)
FIRST_UNCACHED_UNTIL = (2, 1, 209)


def first_messages_uncached(session: SessionLike) -> bool:
    """The session's first request cached its tools and system prompt but not its messages:
    a Claude Code transcript whose first message a Claude Code of 2.1.159 to 2.1.205 wrote.

    Its recorded usage billed the messages as uncached input (``input_tokens`` 5,342 to
    26,131; the write only the system prompt past the head shared across sessions), and the
    next request wrote them: on the diag4 diagnosis set every session of 2.1.159-2.1.199 (six:
    authgo, gitsync) and on ``tests/acceptance/unseen3/claude_code`` both of 2.1.205, while every
    first request of 2.1.150 and before and of 2.1.209 on (40 sessions) billed 2 to 10 uncached
    tokens."""
    if session.format not in CALIBRATED_FORMATS or not session.metas:
        return False
    found = client_version(session.metas[0])
    return found is not None and FIRST_UNCACHED_FROM <= found < FIRST_UNCACHED_UNTIL


#: the first Claude Code version whose requests were seen to read the prefix the session's first
#: request read warm after their own 5-minute entries expired (:func:`head_kept_warm`)
HEAD_KEPT_WARM_FROM = (2, 1, 101)


def head_kept_warm(session: SessionLike) -> bool:
    """The prefix the session's first request read from a cache other sessions left (the tools
    and system prompt Claude Code shares across sessions) stays warm after the session's own
    5-minute entries expired: a Claude Code transcript whose first message a Claude Code of
    2.1.101 on (:data:`HEAD_KEPT_WARM_FROM`) wrote. A 1-hour session's requests read it then
    already (:meth:`~ctxview.core.requests.cache.PromptCache.settle`).

    On unseen4 every request on 5-minute entries that had expired read that prefix again:
    ``gitsync_5ed1d306`` #6 and #7 (2.1.199, 1,296 and 2,291 s after the previous request:
    18,905 tokens, the first request read 18,812) and ``eskills_35ea950f`` #47 and #64
    (2.1.112: 18,598, the first request 18,505), as the 1-hour ``gitsync_ff472454`` (2.1.101)
    read its first request's 12,190 2,496 s after its previous request; the 5-minute sessions
    of 2.0.76, 2.1.7 and 2.1.39 on the other sets (``entire_847ff7d2``, ``entire_43b2bd6e``,
    ``spotter_4d5611e5``: ten requests) read nothing there. No 5-minute session between 2.1.39
    and 2.1.112 was seen: the bound is the first version whose sessions showed the head warm."""
    if session.format not in CALIBRATED_FORMATS or not session.metas:
        return False
    found = client_version(session.metas[0])
    return found is not None and found >= HEAD_KEPT_WARM_FROM


def cache_refreshes(session: SessionLike) -> list[float]:
    """When, in seconds since the epoch, requests the transcript holds no response of read the
    conversation's cached prompt, in order: Claude Code's recap of the conversation while the
    user was away (an ``away_summary`` system line, about three minutes after the last
    response). Each read refreshes the cached prompt's TTL.

    On the diag4 diagnosis set a request 450 s after the previous one, on 5-minute entries,
    read all of its prompt (eskills_95047199 #140, Claude Code 2.1.119): the recap 184 s after
    that response had refreshed it; the other 30 recaps there came before requests that read
    their prompt or after 1-hour entries that lived on or expired either way."""
    out: list[float] = []
    if session.format not in CALIBRATED_FORMATS:
        return out
    for meta in session.metas:
        for ts in meta.get(AWAY_SUMMARY, ()):
            t = parse_timestamp(ts)
            if t is not None:
                out.append(t)
    return sorted(out)


def client_version(meta: Mapping[str, Any]) -> tuple[int, ...] | None:
    """The Claude Code version a message's meta names (:data:`CLIENT_VERSION`) as numbers, None
    when it names none or none that reads as one (``2.1.49`` is ``(2, 1, 49)``)."""
    raw = meta.get(CLIENT_VERSION)
    if not isinstance(raw, str):
        return None
    parts = raw.split("-", 1)[0].split(".")
    if not parts or not all(p.isdigit() for p in parts):
        return None
    return tuple(int(p) for p in parts)


def _at_least(meta: Mapping[str, Any], version: tuple[int, ...]) -> bool:
    found = client_version(meta)
    return found is not None and found >= version


def _first_tool_search(session: SessionLike) -> int | None:
    """The user message holding the session's first tool search result (a ``tool_result`` of
    ``tool_reference`` blocks), where a Claude Code that changes its tools then sent it
    (:data:`TOOL_SEARCH_KEEPS_TOOLS`, :data:`TOOL_SEARCH_KEPT_TOOLS`); None otherwise."""
    metas = session.metas
    for i, m in enumerate(session.messages):
        content = m.get("content")
        if m.get("role") != "user" or not isinstance(content, list):
            continue
        if any(_loads_tools(b) for b in content):
            if i >= len(metas):
                return None
            found = client_version(metas[i])
            if found is None or found >= TOOL_SEARCH_KEEPS_TOOLS:
                return None
            kept_from, kept_until = TOOL_SEARCH_KEPT_TOOLS
            return None if kept_from <= found < kept_until else i
    return None


def _tools_stayed(meta: Mapping[str, Any]) -> bool:
    """Every MCP server removal before a message came with a ``deferred_tools_delta`` line that
    removed no tool (:data:`MCP_TOOLS_REMOVED`): a server Claude Code reconnects, whose
    removal changed nothing the request sends. Unseen4's ``gitsync_b2f87a4e`` #14 (Claude Code
    2.1.172: the delta line named the server as pending, 99,072 tokens read 14 s after the
    previous request) and the prompt after it read the whole previous prompt; the seven
    removals of unseen3 and unseen4 whose delta line removed tools (2.1.109-2.1.219) broke."""
    found = meta.get(MCP_TOOLS_REMOVED)
    return isinstance(found, list) and bool(found) and all(t == [] for t in found)


def _loads_tools(block: Any) -> bool:
    if not isinstance(block, dict) or block.get("type") != "tool_result":
        return False
    inner = block.get("content")
    return isinstance(inner, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_reference" for b in inner
    )


def _opens_with_command_notification(content: Any) -> bool:
    if type(content) is str:
        return _opens(content)
    if not isinstance(content, list):
        return False
    return any(
        isinstance(b, dict)
        and b.get("type") == "text"
        and isinstance(b.get("text"), str)
        and _opens(b["text"])
        for b in content
    )


def _opens(text: str) -> bool:
    # only the head is stripped: a tool result's text may be megabytes
    return (
        text[:64].lstrip().startswith(TASK_NOTIFICATION) and COMMAND_SUMMARY in text[:SUMMARY_REACH]
    )


_TS_CACHE: dict[str, float | None] = {}


def parse_timestamp(ts: Any) -> float | None:
    """Seconds since the epoch of an ISO 8601 timestamp, or None."""
    if not isinstance(ts, str):
        return None
    found = _TS_CACHE.get(ts, -1.0)
    if found != -1.0:
        return found
    try:
        dt = datetime.fromisoformat(ts.replace("Z", "+00:00"))
        val: float | None = dt.timestamp()
    except ValueError:
        val = None
    if len(_TS_CACHE) < 100_000:
        _TS_CACHE[ts] = val
    return val


def request_time(meta: Mapping[str, Any]) -> float | None:
    """When a response's request was sent, by the file's clock: the time of the user or
    tool-result line written last before it (``request_sent``, from a Claude Code transcript),
    else the response's own timestamp. The API times a cache entry from when it processed the
    request; a response's first line is logged after it streamed, up to minutes later (a
    5-minute entry was read 345.9 s after the previous response was logged, 213.5 s after its
    request was sent)."""
    t = parse_timestamp(meta.get("timestamp"))
    sent = parse_timestamp(meta.get("request_sent"))
    if sent is not None and (t is None or sent <= t):
        return sent
    return t


# -- calibration -----------------------------------------------------------------------------
class _Savings:
    """Tokens saved per message (a Fenwick tree): :meth:`set` one message's, :meth:`from_` the
    sum over the messages from one on, each in O(log n)."""

    __slots__ = ("by", "n", "total", "tree")

    def __init__(self, n: int) -> None:
        self.n = n
        self.by: dict[int, int] = {}
        self.tree = [0] * (n + 1)
        self.total = 0

    def set(self, k: int, saved: int) -> None:
        """Message ``k`` saves ``saved`` (what it saved before is replaced)."""
        if not 0 <= k < self.n:
            return  # (no request's window holds it)
        change = saved - self.by.get(k, 0)
        self.by[k] = saved
        self.total += change
        y, tree = k + 1, self.tree
        while y <= self.n:
            tree[y] += change
            y += y & -y

    def from_(self, k: int) -> int:
        """What messages ``k`` on save."""
        below, x, tree = 0, k, self.tree
        while x > 0:
            below += tree[x]
            x &= x - 1
        return self.total - below


class Calibration(NamedTuple):
    """What a transcript's recorded usage calibrates: the rates, the tools + system (the
    median over the file: ``static``; per conversation segment and model: ``statics``, keyed
    by (the segment's first message, model)), and how many requests had usage."""

    rates: Rates
    static: int | None
    requests: int
    statics: dict[tuple[int, str | None], int] | None = None
    #: per model whose tokenizer is not the one the rates were fitted in: its tokens for the
    #: same text, relative (:func:`~ctxview.core.calibrate.tokenizer_scale`); None: all alike
    scales: dict[str | None, float] | None = None
    #: of the tools + system, what a request sharing no message with a cached prompt reads
    #: (:func:`~ctxview.core.requests.restart.cached_head`, else
    #: :func:`~ctxview.core.requests.restart.assumed_head`); None: all of them
    head: int | None = None
    #: the recorded reads show ``head`` (else it is assumed)
    head_seen: bool = False
    #: per hosted web search message, what its results were billed a search, by the file's
    #: usage (:func:`search_result_tokens`); None: the provider's constant
    search_tokens: dict[int, int] | None = None


def calibrate(session: SessionLike, features: Sequence[Features] | None = None) -> Calibration:
    """The rates and the tools + system of a Claude Code transcript from its recorded usage
    (other formats: the default rates).

    The deltas between consecutive recorded requests of one conversation segment fit the rates
    (:func:`ctxview.core.calibrate.fit_rates`); the static part (tools + system, which a Claude
    Code transcript does not contain) is then the median of recorded total minus the estimated
    messages: over the file (``static``), and per segment and model (``statics``: what Claude
    Code sends besides the messages changes at a compaction, and with the model).
    """
    if session.format not in CALIBRATED_FORMATS:
        # only a transcript's usage belongs to windows that grew by appending (a ctxview chat
        # sent truncated windows): the deltas would not measure the added messages
        return Calibration(DEFAULT_RATES, None, 0)
    feats = (
        list(features) if features is not None else [message_features(m) for m in session.messages]
    )
    points = request_points(session)
    starts = segment_starts(session)
    seg_of = _segment_index(len(session.messages), starts)
    deltas: list[Delta] = []
    recs: list[tuple[_Point, int]] = []
    first_reads: list[int] = []  # the first segment's recorded cache reads
    partial: list[tuple[_Point, int]] = []  # (request, read) of the breaks that read a prefix
    prev: tuple[_Point, int] | None = None
    metas = session.metas
    # where the recorded prompt fell with nothing in the transcript to say why
    # (:func:`~ctxview.core.calibrate.unlogged_drop`): the static is keyed apart from there
    fallen: dict[int, int] = {}
    # a microcompaction clears earlier tool results: the growth across one is not what the
    # messages added billed (it is left out of the fit), and the requests after it are
    # measured with those results cleared (below)
    # (a Codex interrupt, likewise, leaves the earlier hosted searches' results unbilled)
    unbilled = results_unbilled_at(session)
    micro = sorted({i for i, m in enumerate(metas) if m and "microcompact" in m} | set(unbilled))
    # a Gemini CLI record after turns its file does not keep: the growth up to its request is
    # more than the messages between (left out of the fit)
    unkept = [i for i, m in enumerate(metas) if m and "unkept_turns" in m]
    # the rates are fitted in the tokens of the file's most used model: a request of a model on
    # another tokenizer bills the same text at another scale (``tokenizer_scale``)
    models = [_model_of(metas, p, session.model) for p in points if p.response is not None]
    base = tokenizer_scale(max(set(models), key=models.count)) if models else 1.0
    scales = {m: tokenizer_scale(m) / base for m in set(models)}
    # the responses that ran hosted web searches, whose own requests were billed the results
    searching = set(own_results(session))
    for p in points:
        rec = (
            _recorded(metas[p.response])[0]
            if p.response is not None and session.format not in ("messages",)
            else None
        )
        if rec is None:
            prev = None
            continue
        total = (
            rec["input_tokens"]
            + rec["cache_read_input_tokens"]
            + rec["cache_creation_input_tokens"]
        )
        if total <= 0:
            prev = None
            continue
        read = rec["cache_read_input_tokens"]
        if read < (recs[-1][1] - max(1_024, recs[-1][1] // 20) if recs else total):
            # a break that kept a prefix of the previous prompt, or a first request that read
            # what other sessions cached
            partial.append((p, read))
        recs.append((p, total))
        if seg_of[p.n - 1] == 0:
            first_reads.append(rec["cache_read_input_tokens"])
        if (
            prev is not None
            and seg_of[prev[0].n - 1] == seg_of[p.n - 1]
            and p.n > prev[0].n
            and not (micro and bisect_left(micro, prev[0].n) < bisect_left(micro, p.n))
            and not (unkept and bisect_right(unkept, prev[0].n) < bisect_right(unkept, p.n))
        ):
            growth = total - prev[1]
            sc = scales.get(_model_of(metas, p, session.model), 1.0)
            if sc != 1.0:
                growth = round(growth / sc)
            d = Delta(messages=p.n - prev[0].n, recorded=growth)
            for i in range(prev[0].n, p.n):
                f = feats[i]
                for k in range(6):
                    d.features[k] += f[k]
            if d.recorded > 0:
                deltas.append(d)
            elif (
                unlogged_drop(prev[1], total)
                and _model_of(metas, prev[0], session.model) == _model_of(metas, p, session.model)
                and not _sent_before_segment(session, prev[0], starts)
                # (a request that ran hosted searches was billed their results beyond its
                # window: what follows it holds less, and nothing fell)
                and prev[0].response not in searching
            ):
                fallen[prev[0].n] = prev[1] - total
        prev = (p, total)
    if not recs:
        return Calibration(DEFAULT_RATES, None, 0)
    rates = fit_rates(deltas)
    own = _provider(session).tokens
    if own.for_session(session).counts_own:
        rates = DEFAULT_RATES  # the provider's estimate counts the messages, not fitted rates
    # the messages as the requests count them: the system prompt + tools are what the recorded
    # prompts hold beyond them
    counted = provider_tokens(session, rates)
    # prefix sums: each request's messages cost O(1), not O(window) (a 100,000-message
    # transcript has 50,000 requests)
    pre = list(
        accumulate(
            map(counted.estimate, session.messages)
            if counted is not None
            else rates.tokens_many(feats),
            initial=0,
        )
    )
    seg_start = _segment_start_of(len(session.messages), starts)
    # what the windows carry beyond their messages (the current turn's hidden reasoning) is
    # counted by the requests too: it is not the tools + system
    carry = (
        TurnCarry(session.messages, counted.carry, recorded_carry(metas))
        if counted is not None and counted.carry is not None
        else None
    )
    # what a hosted search's results were billed, by the file's usage: the messages count each
    # search at that from there on (:func:`cleared_tokens`)
    search_size = (
        search_result_tokens(
            session,
            recs,
            lambda a, b: (
                pre[b]
                - pre[a]
                + (
                    carry.window(-1, seg_start[b - 1], b) - carry.window(-1, seg_start[b - 1], a)
                    if carry
                    else 0
                )
            ),
            seg_of,
            unbilled,
        )
        if counted is not None
        else None
    )
    own_billed = own_results(session, search_size) if searching else {}
    # the tools + system are keyed by segment, and apart after a microcompaction that cleared
    # results the file does not hold (:func:`static_drops`)
    drops = static_drops(session)
    drops.update(fallen)
    key_start = (
        _segment_start_of(len(session.messages), starts | set(drops)) if drops else seg_start
    )
    by: dict[tuple[int, str | None], list[int]] = {}
    clearing = (
        sorted(
            cleared_tokens(
                session, rates, counted.estimate if counted is not None else None, search_size
            ).items()
        )
        if micro or search_size is not None
        else []
    )
    # message -> the tokens it saves as sent cleared, summed from any message on in O(log n):
    # a request's sum over every message cleared so far made this quadratic where each hosted
    # search of a Codex session is one
    now_cleared = _Savings(len(pre) - 1)
    ci = 0
    # a request after turns its file does not keep (in its segment) billed them too: its
    # residual is not the tools + system (unless no request is free of them)
    kept_whole = [
        (p, total)
        for p, total in recs
        if p.n > 0 and bisect_right(unkept, p.n) == bisect_left(unkept, seg_start[p.n - 1])
    ]
    for p, total in kept_whole if unkept and kept_whole else recs:
        if p.n > 0:
            s0 = seg_start[p.n - 1]
            m = _model_of(metas, p, session.model)
            while ci < len(clearing) and clearing[ci][0] < p.n:
                for k, t in clearing[ci][1]:
                    now_cleared.set(k, pre[k + 1] - pre[k] - t)
                ci += 1
            sent = pre[p.n] - pre[s0] + (carry.window(-1, s0, p.n) if carry else 0)
            if now_cleared.by:
                sent -= now_cleared.from_(s0)
            by.setdefault((key_start[p.n - 1], m), []).append(
                total
                - (own_billed.get(p.response, 0) if p.response is not None else 0)
                - round(sent * scales.get(m, 1.0))
            )
    residuals = sorted(r for v in by.values() for r in v)
    static = max(0, int(_quantile(residuals, 0.5)))
    keys = {(key_start[p.n - 1], _model_of(metas, p, session.model)) for p in points if p.n > 0}
    first = sorted(r for (s0, _), v in by.items() if s0 == 0 for r in v)
    later = sorted(x for x in starts if x > 0)
    statics = segment_statics(
        by,
        keys,
        static,
        restarts(
            session.messages,
            later,
            later[0],
            first_reads,
            int(_quantile(first, 0.5)),
            rates,
        )
        if later and first
        else None,
        restored_after(session.messages, later, rates) if later else None,
        drops,
        {s: h for s in later if type(h := metas[s].get(COMPACTION_HIDDEN)) is int} or None,
    )
    head = cached_head(
        [
            (read, statics.get((key_start[p.n - 1], _model_of(metas, p, session.model)), 0))
            for p, read in partial
            if p.n > 0
        ]
    )
    head_seen = head is not None
    if head is None and first and session.format in ("claude-code", "claude-code-web"):
        # of the first segment's smallest static: where it fell inside the segment (a
        # microcompaction of results outside the file, an unlogged drop), the larger one carried
        # history, not tools and system
        end = later[0] if later else len(session.messages) + 1
        within = [v for (s0, _), v in statics.items() if s0 < end]
        head = assumed_head(min([int(_quantile(first, 0.5)), *within]))
    return Calibration(
        rates,
        static,
        len(recs),
        statics,
        {m: v for m, v in scales.items() if v != 1.0} or None,
        head,
        head_seen,
        search_size,
    )


def _sent_before_segment(session: SessionLike, p: _Point, starts: set[int]) -> bool:
    """Whether request ``p``'s response was logged before the compaction that starts its
    segment (a compaction that kept its last messages: the kept response's request was sent with
    the history before it), by the timestamps."""
    begun = max((s for s in starts if s < p.n), default=None)
    if begun is None or p.response is None:
        return False
    sent = parse_timestamp(session.metas[p.response].get("timestamp"))
    start = parse_timestamp(session.metas[begun].get("timestamp"))
    return sent is not None and start is not None and sent < start


def _model_of(metas: Sequence[Mapping[str, Any]], p: _Point, default: str | None) -> str | None:
    m = metas[p.response].get("model") if p.response is not None else None
    return m if isinstance(m, str) else default


def session_features(session: SessionLike, rates: Rates | None = None) -> list[Features]:
    """``message_features`` of every message, for :func:`calibrate` and the replay under
    ``rates`` (None: the calibrated or default rates). Only a Claude Code transcript is
    calibrated; elsewhere the default rates price every kind alike, so code is not told from
    prose (the tokens are the same, the classification is a third of the time)."""
    classify = session.format in CALIBRATED_FORMATS or (rates is not None and not rates.uniform)
    if not classify and not DEFAULT_RATES.uniform:
        classify = True
    return [message_features(m, classify) for m in session.messages]


def _segment_index(n: int, starts: set[int]) -> list[int]:
    seg, out = 0, []
    for i in range(n):
        if i in starts:
            seg += 1
        out.append(seg)
    return out


def _segment_start_of(n: int, starts: set[int]) -> list[int]:
    cur, out = 0, []
    for i in range(n):
        if i in starts:
            cur = i
        out.append(cur)
    return out


_NO_KEYS: tuple[tuple[Any, int], ...] = ()


def _text_key(text: Any) -> Any:
    """A text, or a hashable stand-in for a ``text`` that is not a string (a damaged session's
    object or array: it cannot be a dict key as it is)."""
    if type(text) is str:
        return text
    try:
        key = ("json", _json_key(text))
        hash(key)
        return key
    except (TypeError, RecursionError):
        return ("repr", repr(text))


def _content_keys(message: Mapping[str, Any], rates: Rates) -> Sequence[tuple[Any, int]]:
    """(key, tokens) of each sizeable tool result or text in a message (for redundancy); the
    shared empty tuple when there is none (most messages: nothing is allocated for them)."""
    content = message.get("content")
    if type(content) is not list and not isinstance(content, list):
        return _NO_KEYS
    out: list[tuple[Any, int]] | None = None
    least = REDUNDANT_MIN_CHARS
    for b in content:
        if type(b) is not dict and not isinstance(b, dict):
            continue
        t = b.get("type")
        if t == "tool_result":
            c = b.get("content", "")
            key: tuple[str, Any]
            if type(c) is str or isinstance(c, str):
                n, key = len(c), ("r", c)
            elif isinstance(c, list):
                texts = tuple(
                    _text_key(x.get("text", ""))
                    for x in c
                    if isinstance(x, dict) and x.get("type") == "text"
                )
                n = sum(len(x) for x in texts if isinstance(x, str))
                key = ("r", texts)
            else:
                continue
            if n >= least:
                if out is None:
                    out = []
                out.append((key, math.ceil(n * rates.per_char[3])))
        elif t == "text":
            text = b.get("text")
            if isinstance(text, str) and len(text) >= least:
                if out is None:
                    out = []
                out.append((("t", text), math.ceil(len(text) * rates.per_char[0])))
    return _NO_KEYS if out is None else out


def static_of(
    session: SessionLike,
    rates: Rates,
    calibrated: int | None,
    counted: TokenModel | None = None,
) -> int:
    """The one rule for a request's system prompt + tool definitions in tokens: for a Claude
    Code transcript (which holds neither), ``calibrated`` from its recorded usage
    (:func:`calibrate`) when there is enough; else estimated from the session's own, by the
    provider's token model where it counts them (``counted``: :func:`provider_tokens`)."""
    if calibrated is not None and session.format in CALIBRATED_FORMATS:
        return calibrated
    if counted is not None:
        params = getattr(session, "request_params", None)
        return counted.static_tokens(session.system, session.tools or [], params)
    return _static_tokens(session, rates)


def _static_tokens(session: SessionLike, rates: Rates) -> int:
    system = session.system
    chars_sys = 0
    if isinstance(system, str):
        chars_sys = len(system)
    elif isinstance(system, list):
        chars_sys = sum(
            len(b.get("text", "")) for b in system if isinstance(b, dict) and "text" in b
        )
    tools = session.tools or []
    chars_tools = _json_len(tools) if tools else 0
    return math.ceil(chars_sys * rates.per_char[0] + chars_tools * rates.per_char[2])


def _fingerprint(value: Any) -> int:
    if not value:
        return 0
    try:
        return hash(_json_key(value))
    except TypeError:
        return hash(repr(value))


def _json_key(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _json_key(v)) for k, v in value.items()))
    if isinstance(value, list):
        return tuple(_json_key(v) for v in value)
    return value


def _layout(
    session: SessionLike,
    roles: Sequence[Any] | None = None,
    blocks_in: Iterable[int] | None = None,
) -> tuple[list[_Point], set[int], float]:
    """(request points, compaction starts, default TTL) of a session (``roles``, ``blocks_in``:
    see :func:`request_points`, :func:`segment_starts`)."""
    hints = [h for m in session.metas if "usage" in m and (h := _recorded(m)[2]) is not None]
    if not hints:  # the usage shows none: the provider's default lifetime (its first)
        hints = [next(iter(session_cache(session).ttls), "5m")]
    default_ttl = TTL_1H if hints.count("1h") * 2 >= len(hints) else TTL_5M
    return request_points(session, roles), segment_starts(session, blocks_in), default_ttl


@dataclass(slots=True)
class _OffBranch:
    """A request off the current branch (``LoadedSession.off_branch``), ready to simulate."""

    fork: int
    meta: dict[str, Any]
    #: the lines of the abandoned branch after the fork (the unit its cache prefix is measured in)
    path: tuple[Any, ...]
    path_tokens: list[int]
    tokens: int
    #: the messages those lines make (consecutive lines of one role are one message)
    messages: int


def _off_branch_points(session: SessionLike, rates: Rates) -> list[_OffBranch]:
    """The session's requests off the current branch (Claude Code transcripts only)."""
    if session.format not in ("claude-code", "claude-code-web"):
        return []
    raw = getattr(session, "off_branch", None)
    if not isinstance(raw, list):
        return []
    out = []
    n = len(session.messages)
    # (tokens, role) by message object (None: an item that is no message): a line's message is
    # shared by every request whose path holds it (a long abandoned branch is on the path of
    # each of its responses), so each is counted once and each path is read in a few C loops
    seen: dict[int, tuple[int, Any] | None] = {}
    for k, ob in enumerate(raw):
        if not isinstance(ob, Mapping):
            continue
        fork = ob.get("fork")
        if not isinstance(fork, int) or isinstance(fork, bool) or not 0 <= fork <= n:
            continue
        items = ob.get("messages") or []
        for m in items:
            if id(m) not in seen:
                seen[id(m)] = (
                    (rates.tokens(message_features(m)), m.get("role"))
                    if isinstance(m, Mapping)
                    else None
                )
        infos = [x for x in map(seen.__getitem__, map(id, items)) if x is not None]
        path = tuple(ob.get("path") or ())
        if len(path) != len(infos):
            path = tuple((k, j) for j in range(len(infos)))
        ptok = [t for t, _ in infos]
        roles = [r for _, r in infos]
        runs = sum(map(ne, roles[1:], roles[:-1])) + 1 if roles else 0
        meta = {key: ob[key] for key in ("usage", "timestamp", "model") if ob.get(key) is not None}
        out.append(_OffBranch(fork, meta, path, ptok, sum(ptok), runs))
    return out


def _merge_points(
    points: list[_Point], off: list[_OffBranch], metas: Sequence[Mapping[str, Any]]
) -> list[_Point]:
    """The current branch's requests and those off it, in the order they were sent: by the
    messages they share with the branch, then by time."""

    def when(p: _Point) -> float:
        meta = (
            off[p.off].meta
            if p.off is not None
            else metas[p.response]
            if p.response is not None
            else {}
        )
        t = parse_timestamp(meta.get("timestamp"))
        return t if t is not None else -1.0

    merged = [*points, *(_Point(ob.fork, None, k) for k, ob in enumerate(off))]
    merged.sort(key=lambda p: (p.n, when(p)))
    return merged


@dataclass(frozen=True, slots=True)
class _Edit:
    step: int
    tid: int
    remove: bool
    tokens: int


def _timed_edits(
    session: SessionLike, rates: Rates
) -> tuple[list[_Edit], dict[int, dict[str, Any]]]:
    """(edits with the step they were made at, in order; the recorded version of each message an
    edit replaced) of a ctxview session: messages whose meta holds ``edited_at_step`` and
    ``original`` (replaced) or ``removed``. Each response's step is ``saved_added_steps``."""
    added = getattr(session, "saved_added_steps", None)
    if not isinstance(added, Mapping) or not added:
        return [], {}
    edits: list[_Edit] = []
    originals: dict[int, dict[str, Any]] = {}
    metas = session.metas
    # the few edited messages found first (a session of 100,000 messages has a handful)
    for tid in [t for t, m in enumerate(metas) if "edited_at_step" in m]:
        meta = metas[tid]
        step = meta.get("edited_at_step")
        if not isinstance(step, int) or isinstance(step, bool):
            continue
        original = meta.get("original")
        removed = bool(meta.get("removed"))
        if not removed and not isinstance(original, Mapping):
            continue
        if isinstance(original, Mapping):
            originals[tid] = dict(original)
        edits.append(
            _Edit(step, tid, removed, rates.tokens(message_features(session.messages[tid])))
        )
    edits.sort(key=lambda e: e.step)
    return edits, originals


def _prefix(values: Sequence[int]) -> list[int]:
    return list(accumulate(values, initial=0))
