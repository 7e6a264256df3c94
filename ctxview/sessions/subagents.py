"""A Claude Code session's sub-agents, each linked to the tool call that started it.

Where Claude Code writes a sub-agent:

* 2.1.x: its own transcript ``<session>/subagents/agent-<id>.jsonl`` (every line
  ``isSidechain``), with a sidecar ``agent-<id>.meta.json`` in newer versions (``toolUseId``: the
  parent's ``Task``/``Agent`` tool_use id; ``agentType``, ``description``, ``parentAgentId`` for
  an agent started by another agent). ``agent-acompact-*.jsonl`` is a compaction's own
  summarising request (``kind == "compaction"``);
* 2.0: ``agent-<id>.jsonl`` beside the session's file, its lines naming the session
  (``sessionId``);
* 1.0 and 2.0: ``isSidechain`` lines inside the main transcript
  (:func:`~ctxview.sessions.claude_code.sidechain_groups`).

Where Codex writes one: a rollout of its own (``rollout-*.jsonl``, in the sessions tree beside
the parent's), its ``session_meta`` naming the parent thread
(:func:`~ctxview.sessions.codex.spawned_by`); the parent's ``spawn_agent`` call is answered with
the new thread's id (``{"agent_id": …}``).

The link to the tool call, in order of trust: the sidecar's ``toolUseId``; the agent id the
parent's tool_result line records (``toolUseResult.agentId``, or the line's ``agentId`` in 2.0);
the sub-agent's first prompt equal to the tool call's ``input.prompt``.

A sub-agent's messages are read when first asked for (:meth:`SubAgent.load`): listing a session's
sub-agents reads their sidecars and, at most, each file's first line.

Headless: imports neither Textual nor the anthropic SDK.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from ctxview.core.providers.openai import CODEX
from ctxview.sessions.codex import SPAWN_TOOL, spawned_by
from ctxview.sessions.model import LoadedSession

#: the tool names that start a sub-agent (Claude Code: ``Task``, ``Agent`` in newer versions;
#: Codex: ``spawn_agent``)
AGENT_TOOLS = ("Task", "Agent", SPAWN_TOOL)
#: a sidecar or a first line longer than this is not read for a link
_READ_LIMIT = 4 * 1024 * 1024


@dataclass
class AgentCall:
    """A ``Task``/``Agent`` tool call of the parent: where it is and what it asked."""

    tool_use_id: str
    #: transcript id (message index) of the assistant message holding the call
    message_id: int
    prompt: str | None
    description: str | None
    agent_type: str | None


@dataclass
class SubAgent:
    """One sub-agent of a session: its id, where its lines are, the call that started it."""

    agent_id: str
    #: its own transcript; None for ``isSidechain`` lines inside the parent's file
    path: str | None
    #: "task" (started by a tool call) or "compaction" (a compaction's summarising request)
    kind: str = "task"
    #: the parent's ``Task``/``Agent`` call that started it (None: no link found)
    call: AgentCall | None = None
    description: str | None = None
    agent_type: str | None = None
    #: the agent that started this one (None: the main session)
    parent_agent: str | None = None
    #: agents this one started (``parentAgentId``)
    subagents: list[SubAgent] = field(default_factory=list)
    #: the file of the parent (what an inline sub-agent's lines are read from)
    parent_path: str = ""
    _lines: list[Any] | None = field(default=None, repr=False)
    _loaded: LoadedSession | None = field(default=None, repr=False)

    @property
    def tool_use_id(self) -> str | None:
        return self.call.tool_use_id if self.call is not None else None

    @property
    def label(self) -> str:
        """What a view calls it: the call's description, else its type, else its id."""
        return self.description or self.agent_type or self.agent_id

    def load(self) -> LoadedSession:
        """Its messages, read on first use (``SessionError`` when they cannot be)."""
        if self._loaded is None:
            if self.path is not None:
                from ctxview.sessions.readers import load_session

                self._loaded = load_session(self.path)
            else:
                from ctxview.sessions.readers import from_lines

                self._loaded = from_lines(
                    f"{self.parent_path}#{self.agent_id}", "claude-code", self._lines or [], {}
                )
        return self._loaded

    def walk(self) -> list[SubAgent]:
        """This agent and every agent under it, depth first."""
        out = [self]
        for a in self.subagents:
            out.extend(a.walk())
        return out


def agent_calls(session: LoadedSession) -> dict[str, AgentCall]:
    """tool_use id -> the ``Task``/``Agent`` calls of a session's messages."""
    calls: dict[str, AgentCall] = {}
    for i, m in enumerate(session.messages):
        if m.get("role") != "assistant" or not isinstance(m.get("content"), list):
            continue
        for b in m["content"]:
            if not (isinstance(b, dict) and b.get("type") == "tool_use"):
                continue
            if b.get("name") not in AGENT_TOOLS or not isinstance(b.get("id"), str):
                continue
            raw = b.get("input")
            inp: dict[str, Any] = raw if isinstance(raw, dict) else {}
            calls[b["id"]] = AgentCall(
                b["id"],
                i,
                _str(inp.get("prompt")) or _str(inp.get("message")),
                _str(inp.get("description")),
                _str(inp.get("subagent_type")) or _str(inp.get("agent_type")),
            )
    return calls


def subagents_of(session: LoadedSession) -> list[SubAgent]:
    """The sub-agents the main session started (each with the agents it started under it), in
    the order of their calls; sub-agents no call was found for come last, in file order."""
    if session.format not in ("claude-code", "claude-code-web", CODEX):
        return []
    calls = agent_calls(session)
    by_prompt: dict[str, AgentCall] = {}
    for c in calls.values():
        if c.prompt:
            by_prompt.setdefault(c.prompt.strip(), c)
    links = session.subagent_links
    agents: list[SubAgent] = []
    threads: dict[str, str] = {}
    files = (
        _spawned_rollouts(session.path, threads)
        if session.format == CODEX
        else subagent_files(session)
    )
    for p in files:
        path = Path(p)
        agent_id = threads.get(p) or (
            path.stem[len("agent-") :] if path.stem.startswith("agent-") else path.stem
        )
        meta = _sidecar(path) if session.format != CODEX else {}
        a = SubAgent(
            agent_id,
            p,
            kind="compaction" if agent_id.startswith("acompact") else "task",
            description=_str(meta.get("description")),
            agent_type=_str(meta.get("agentType")),
            parent_agent=_str(meta.get("parentAgentId")),
            parent_path=session.path,
        )
        tid = _str(meta.get("toolUseId")) or links.get(agent_id)
        a.call = calls.get(tid) if tid else None
        if a.call is None and tid is None and a.kind == "task":
            a.call = by_prompt.get((_first_prompt(path) or "").strip())
        agents.append(a)
    for key, lines in session.sidechains.items():
        a = SubAgent(key, None, parent_path=session.path, _lines=lines)
        tid = links.get(key)
        a.call = calls.get(tid) if tid else None
        if a.call is None:
            a.call = by_prompt.get((_prompt_of_lines(lines) or "").strip())
        agents.append(a)
    for a in agents:
        if a.call is not None:
            a.description = a.description or a.call.description
            a.agent_type = a.agent_type or a.call.agent_type
    # agents started by other agents go under them
    by_id = {a.agent_id: a for a in agents}
    top: list[SubAgent] = []
    for a in agents:
        parent = by_id.get(a.parent_agent) if a.parent_agent else None
        if parent is not None and parent is not a:
            parent.subagents.append(a)
        else:
            top.append(a)
    order = {id(a): k for k, a in enumerate(top)}
    top.sort(key=lambda a: (a.call is None, a.call.message_id if a.call else 0, order[id(a)]))
    return top


def call_ids(message: Any) -> list[str]:
    """The tool_use ids a message names: of its ``Task``/``Agent`` calls (an assistant
    message) or of the calls its tool_results answer (a user message), in block order."""
    content = message.get("content") if isinstance(message, dict) else None
    out: list[str] = []
    for b in content if isinstance(content, list) else []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "tool_use" and b.get("name") in AGENT_TOOLS:
            tid = b.get("id")
        elif b.get("type") == "tool_result":
            tid = b.get("tool_use_id")
        else:
            continue
        if isinstance(tid, str):
            out.append(tid)
    return out


#: at most this many ``agent-*.jsonl`` files beside a session are looked at for its sub-agents
_LOOSE_LIMIT = 2000


def subagent_files(session: LoadedSession) -> list[str]:
    """The sub-agent transcripts of a session. Claude Code: those in its ``subagents`` folder,
    then the ``agent-*.jsonl`` files beside it that name it (the two layouts Claude Code wrote);
    Codex: the rollouts its thread spawned."""
    if session.format == CODEX:
        return _spawned_rollouts(session.path, {})
    return [*session.subagents, *_loose_agent_files(session.path)]


def _spawned_rollouts(path: str, threads: dict[str, str]) -> list[str]:
    """The rollouts a Codex rollout's thread spawned (``threads``: filled with each one's thread
    id). Codex files a rollout under the day it started (``YYYY/MM/DD``): a sub-agent starts
    during its parent, so its rollout is in the parent's folder or, past midnight, the next
    day's; only rollouts named after the parent (the name starts with the start time) are read."""
    base = Path(path)
    rec = _first_record(base)
    payload = rec.get("payload") if rec is not None else None
    parent = payload.get("id") if isinstance(payload, dict) else None
    if not isinstance(parent, str) or not parent:
        return []
    folders = [base.parent, *_next_day(base.parent)]
    out: list[str] = []
    for folder in folders:
        try:
            candidates = sorted(folder.glob("rollout-*.jsonl"))[:_LOOSE_LIMIT]
        except OSError:
            continue
        for p in candidates:
            if p == base or (folder == base.parent and p.name < base.name):
                continue
            rec = _first_record(p)
            meta = rec.get("payload") if rec is not None else None
            if isinstance(meta, dict) and spawned_by(meta) == parent:
                out.append(str(p))
                threads[str(p)] = _str(meta.get("id")) or p.stem
    return out


def _next_day(folder: Path) -> list[Path]:
    """The ``YYYY/MM/DD`` folder after ``folder`` (none when it is not named so)."""
    try:
        day = date(int(folder.parent.parent.name), int(folder.parent.name), int(folder.name))
    except ValueError:
        return []
    after = day + timedelta(days=1)
    return [folder.parents[2] / f"{after:%Y}" / f"{after:%m}" / f"{after:%d}"]


def _loose_agent_files(path: str) -> list[str]:
    """``agent-*.jsonl`` files beside a session's file (Claude Code 2.0 wrote sub-agents there)
    whose first line names the session (``sessionId``)."""
    base = Path(path)
    if base.suffix != ".jsonl" or base.stem.startswith("agent-"):
        return []
    out: list[str] = []
    try:
        candidates = sorted(base.parent.glob("agent-*.jsonl"))[:_LOOSE_LIMIT]
    except OSError:
        return []
    for p in candidates:
        rec = _first_record(p)
        if rec is not None and rec.get("sessionId") == base.stem:
            out.append(str(p))
    return out


def _first_record(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            first = f.readline(_READ_LIMIT)
        rec = json.loads(first)
    except (OSError, ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


def _str(v: Any) -> str | None:
    return v if isinstance(v, str) and v else None


def _sidecar(path: Path) -> dict[str, Any]:
    """``agent-<id>.meta.json`` beside a sub-agent transcript, or {}."""
    meta = path.with_suffix(".meta.json")
    try:
        if not meta.is_file() or meta.stat().st_size > _READ_LIMIT:
            return {}
        data = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def _prompt_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b.get("text") for b in content if isinstance(b, dict) and b.get("type") == "text"]
        return "\n".join(t for t in texts if isinstance(t, str)) or None
    return None


def _first_prompt(path: Path) -> str | None:
    """The first user message's text of a sub-agent transcript (its first line only)."""
    rec = _first_record(path)
    msg = rec.get("message") if rec is not None else None
    if not isinstance(msg, dict) or msg.get("role") != "user":
        return None
    return _prompt_text(msg.get("content"))


def _prompt_of_lines(lines: list[Any]) -> str | None:
    for ln in lines:
        if ln.type == "user":
            msg = ln.record.get("message")
            return _prompt_text(msg.get("content")) if isinstance(msg, dict) else None
    return None


@dataclass
class AgentLog:
    """A sub-agent's requests as it sent them (``log`` None: its file could not be read,
    ``error`` says why)."""

    agent: SubAgent
    log: Any = None  # core.requests.RequestLog
    error: str | None = None

    def describe(self) -> dict[str, Any]:
        """What ``requests --json`` says of the agent (beside its totals)."""
        a = self.agent
        return {
            "agent": a.agent_id,
            "kind": a.kind,
            "file": a.path,
            "description": a.description,
            "agent_type": a.agent_type,
            "tool_use_id": a.tool_use_id,
            "message_id": a.call.message_id if a.call else None,
            "parent_agent": a.parent_agent,
            "requests": len(self.log.requests) if self.log is not None else 0,
            "totals": self.log.totals() if self.log is not None else None,
            "error": self.error,
        }


def agent_logs(agents: list[SubAgent], **simulate_args: Any) -> list[AgentLog]:
    """Every sub-agent's requests (depth first), each simulated as it was sent with the
    library's request model; ``simulate_args``: ``prices``, ``defaults``."""
    from ctxview.core.requests import simulate
    from ctxview.sessions.model import SessionError

    out: list[AgentLog] = []
    for top in agents:
        for a in top.walk():
            try:
                out.append(AgentLog(a, simulate(a.load(), **simulate_args)))
            except (SessionError, ValueError) as exc:
                out.append(AgentLog(a, None, str(exc)))
    return out


#: a compaction request and the ``agent-acompact`` file that recorded it are the same request
#: when their responses were logged this close (seconds; under a second in the real files)
_SAME_RESPONSE_SECONDS = 60.0


def link_compactions(log: Any, logs: list[AgentLog]) -> tuple[Any, list[AgentLog]]:
    """(main log, sub-agent logs) with each compaction request the main log modelled
    (``RequestLog.compactions``) that an ``agent-acompact`` file recorded counted once: as that
    agent's one request, the model's estimate beside the usage the file recorded. The others
    stay in the main log. Unchanged when nothing links (so linking twice changes nothing)."""
    from dataclasses import replace

    from ctxview.core.providers.registry import price_table
    from ctxview.core.requests.compaction_request import with_reminders
    from ctxview.core.requests.points import parse_timestamp

    comps = list(getattr(log, "compactions", None) or ())
    if not comps:
        return log, logs
    prices = (getattr(log, "settings", None) or {}).get("prices") or price_table()
    times = [parse_timestamp(c.timestamp) for c in comps]
    used: set[int] = set()
    out: list[AgentLog] = []
    for al in logs:
        own = al.log.requests if al.agent.kind == "compaction" and al.log is not None else []
        rec = next((r for r in reversed(own) if r.recorded is not None), None)
        t = parse_timestamp(rec.timestamp) if rec is not None else None
        near = [
            (abs(ct - t), i)
            for i, ct in enumerate(times)
            if i not in used and ct is not None and t is not None
        ]
        best = min(near, default=None)
        if rec is None or best is None or best[0] > _SAME_RESPONSE_SECONDS:
            out.append(al)
            continue
        used.add(best[1])
        req = replace(comps[best[1]], recorded=rec.recorded)
        req = with_reminders(req, _reminders(al.agent, log.rates), prices)
        out.append(AgentLog(al.agent, replace(al.log, requests=[req], compactions=[]), al.error))
    if not used:
        return log, logs
    kept = [c for i, c in enumerate(comps) if i not in used]
    return replace(log, compactions=kept), out


def _reminders(agent: SubAgent, rates: Any) -> int:
    """Tokens of the hook reminders a compaction's ``agent-acompact`` file recorded it sent
    (:func:`~ctxview.core.requests.compaction_request.reminder_tokens`; 0 when unreadable)."""
    from ctxview.core.requests.compaction_request import reminder_tokens
    from ctxview.sessions.model import SessionError

    try:
        msgs = agent.load().messages
    except (SessionError, ValueError, OSError):
        return 0
    return reminder_tokens(msgs[0], rates) if msgs else 0


def totals_with_agents(log: Any, logs: list[AgentLog]) -> dict[str, Any]:
    """``log.totals()`` over the main session's requests and every sub-agent's together."""
    from dataclasses import replace

    log, logs = link_compactions(log, logs)
    extra = [r for al in logs if al.log is not None for r in al.log.requests]
    if not extra:
        return dict(log.totals())
    both = replace(log, requests=[*log.requests, *extra], as_sent=log.as_sent)
    return dict(both.totals())
