"""How closely the request model matches what the API recorded, over a folder of real Claude Code
transcripts: the measurement behind the request model's accuracy goals.

    python -m benchmarks.truth --set tune          # the repository's transcripts, tune set
    python -m benchmarks.truth --set held-out      # ... held-out set (report both)
    python -m benchmarks.truth tests/acceptance/claude_code tests/fixtures/claude_code
    python -m benchmarks.truth DIR --json          # the same figures as JSON
    python -m benchmarks.truth DIR --files         # a row per file as well
    python -m benchmarks.truth DIR --all-disagreements   # every disagreement, named
    python -m benchmarks.truth DIR --worst 20      # the 20 largest first-half-fit misses

Every ``*.jsonl`` under the folders (recursively; a sub-agent's ``agent-*.jsonl`` is a
conversation of its own) is opened with ``load_session`` and replayed as sent with the library's
own request model (``simulate``: calibrated from the file's recorded usage). Printed:

* **input tokens, calibrated**: median and p90 of ``|estimate - recorded| / recorded`` over
  every request with recorded usage, pooled over the files (the billed input is
  ``input_tokens + cache_read + cache_creation``);
* **fitted on the first half**: the rates and the static part (system + tools) fitted from the
  recorded usage of the first half of each file's requests only (the later ones' usage hidden
  from the fit), the error measured on the second half: what the model predicts for requests it
  has not seen; and apart, the second-half requests of a conversation segment no first-half
  request recorded (after a compaction the fit never saw);
* **cache break agreement**: a request *breaks* when it writes more than half of its input to the
  cache (:attr:`Request.recorded_break` / :attr:`Request.predicted_break`); every disagreement is
  listed with its file, request, the predicted reason, the recorded read/write and the seconds
  since the previous request, and what the API's own cache diagnostics said of it where the
  file recorded them (Claude Code 2.1.1xx on asks for them); the disagreements the API put on
  the client (``messages_changed``: an earlier message changed, which the transcript records
  unchanged) are counted apart, with the agreement over the other requests;
* **compaction requests**: how many the request model adds (the request that wrote each
  compaction's summary) and, for each an ``agent-acompact`` file beside the transcript recorded,
  the error of its estimated prompt against the recorded one;
* **blocks lost in the rebuild**: ``tool_use`` / ``tool_result`` / ``text`` / ``thinking`` blocks
  of the file's conversation lines (main thread; a sub-agent file's own lines) that are not in the
  rebuilt session's messages. A block is matched by its tool id, or by its text. Blocks Claude
  Code does not send (whitespace-only assistant text) are not counted, nor a local command's
  lines that no later response descends from (never sent: a ``/exit``'s command and output lines,
  skipped by the session resumed after them), nor a prompt taken back before its reply (Esc:
  the prompt sent again hangs off the same parent; a slash command's skill text with it), nor a
  response of thinking alone (Claude Code leaves it out of later requests). Lines of a branch left (a rewind, a session resumed
  from the line before an unanswered call, a second process) are kept when an off-branch
  request of the rebuild sent them, and the last response of such a branch, which no request
  sent, is not counted; the rest are lost, and the file's off-branch requests are shown beside
  them (a real rewind explains them, a broken parent chain does not).

With no folder, the repository's own (:data:`FOLDERS`). ``--set`` keeps the files of one side of
the **tune / held-out split** (:data:`TUNE`, :data:`HELD_OUT`, matched on the file name): the
files the cache and calibration rules may be tuned on, and the files never looked at while
tuning, whose figures are the ones to believe. The split is the one fixed first, before any
tuning: three spotter sessions with their sub-agent files and the spotter fixtures to tune on;
two other spotter sessions with theirs, spotter's two short 2.1.38 sessions and the three
claude-code-viewer transcripts (another project, Claude Code 1.0.x, Sonnet 4) held out. A split
drawn after some tuning had been seen could not claim its held-out files were never looked at,
so only this one is kept. ``cclog_edge_cases`` and ``simonw_sample_session`` (synthetic: their
usage is not what an API billed) are in neither set.

The figures are what a user of ``ctxview requests --json`` sees; nothing here models a request.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import re
import sys
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ctxview.core.content import content_texts
from ctxview.core.requests import Request, RequestLog, parse_timestamp, simulate
from ctxview.core.requests.points import calibrate, segment_starts, session_features
from ctxview.sessions import LoadedSession, SessionError, load_session
from ctxview.sessions.claude_code import api_error_reply
from ctxview.sessions.subagents import AgentLog, SubAgent, link_compactions

BLOCK_TYPES = ("tool_use", "tool_result", "text", "thinking")

ROOT = Path(__file__).resolve().parent.parent
#: the repository's real Claude Code transcripts (tests/acceptance/MANIFEST.md) and fixtures
FOLDERS = (
    ROOT / "tests" / "acceptance" / "claude_code",
    ROOT / "tests" / "fixtures" / "claude_code",
)
#: the files the cache and calibration rules may be tuned on (file-name patterns)
TUNE = (
    "spotter_258c7280-ae70-4798-800f-63464d01a85d*.jsonl",
    "spotter_4d5611e5-241a-462a-8d15-5122611a9569*.jsonl",
    "spotter_8463c716-a2ea-4c14-9efa-87158ebd9f20*.jsonl",
    "spotter_short.jsonl",
    "spotter_6c2214d7_subagent_agent-afc096d.jsonl",
    "spotter_tool_heavy_L26-36_parallel_tools_out_of_order.jsonl",
)
#: held out: never looked at while tuning (file-name patterns)
HELD_OUT = (
    "spotter_ae4a77f8-aedd-4bc1-888f-c94edc91af04*.jsonl",
    "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46*.jsonl",
    "spotter_subagent.jsonl",
    "spotter_tool_heavy.jsonl",
    "ccviewer_*.jsonl",
)
SETS = {"tune": TUNE, "held-out": HELD_OUT}


def in_set(path: Path, which: str) -> bool:
    """Whether the transcript at ``path`` belongs to the split's ``which`` set."""
    return any(fnmatch.fnmatchcase(path.name, pat) for pat in SETS[which])


@dataclass
class Disagreement:
    file: str
    request: int
    predicted: str  #: "break (<reason>)" or "hit"
    recorded: str  #: "break" or "hit", with the recorded read / write
    gap_s: float | None  #: seconds since the previous request (None: no timestamps)
    #: why the recorded usage broke, as the request model names it (``unexplained``: a break it
    #: did not predict; ``growth``: the read held, the new messages billed above half the
    #: input); None on a recorded hit
    recorded_reason: str | None = None
    #: what the API's own cache diagnostics said of this request (``cache_miss_reason.type``),
    #: where the file recorded them; None where it recorded none
    api_reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "request": self.request,
            "predicted": self.predicted,
            "recorded": self.recorded,
            "recorded_reason": self.recorded_reason,
            "api_reason": self.api_reason,
            "gap_s": self.gap_s,
        }


@dataclass
class Miss:
    """One request's estimate under the first-half fit against its recorded prompt."""

    file: str
    request: int
    estimate: int
    recorded: int
    #: in a conversation segment no first-half request recorded (after a compaction)
    unseen_segment: bool

    @property
    def error(self) -> float:
        return (self.estimate - self.recorded) / self.recorded

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "request": self.request,
            "estimate": self.estimate,
            "recorded": self.recorded,
            "error": round(self.error, 4),
            "unseen_segment": self.unseen_segment,
        }


@dataclass
class FileFigures:
    name: str
    requests: int
    recorded: int
    errors: list[float] = field(default_factory=list)
    #: errors of the second half's requests, the model fitted on the first half only
    half_errors: list[float] = field(default_factory=list)
    #: of those, the requests of a conversation segment no first-half request recorded (after
    #: a compaction the fit never saw: its tools + system are a guess)
    half_errors_unseen: list[float] = field(default_factory=list)
    #: every second-half request's miss under the first-half fit (for ``--worst``)
    half_misses: list[Miss] = field(default_factory=list)
    agree: int = 0
    disagreements: list[Disagreement] = field(default_factory=list)
    raw_blocks: Counter[str] = field(default_factory=Counter)
    lost_blocks: Counter[str] = field(default_factory=Counter)
    off_branch_requests: int = 0
    compactions: int = 0
    #: the modelled compaction requests, and the signed error of each one an ``agent-acompact``
    #: file beside the transcript recorded ((estimate - recorded) / recorded prompt)
    compaction_requests: int = 0
    compaction_errors: list[float] = field(default_factory=list)
    #: recorded requests an earlier file of the set holds too (a resumed session's new file
    #: copies the old one's lines, response ids and all): counted there, not again here
    repeated: int = 0
    error: str | None = None


def quantile(values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile of ``values`` by linear interpolation (as ``RequestLog.token_error``)."""
    s = sorted(values)
    if not s:
        return None
    pos = q * (len(s) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def _errors(requests: Iterable[Request]) -> list[float]:
    return [abs(r.input_tokens - t) / t for r in requests if (t := r.recorded_total)]


# -- blocks ------------------------------------------------------------------------------------
def _block_key(block: Any) -> tuple[str, Any] | None:
    """(type, identity) of a content block counted by the rebuild check, or None."""
    if isinstance(block, str):
        return ("text", block) if block.strip() else None
    if not isinstance(block, dict):
        return None
    kind = block.get("type")
    if kind == "tool_use":
        return ("tool_use", block.get("id"))
    if kind == "tool_result":
        return ("tool_result", block.get("tool_use_id"))
    if kind == "text":
        text = block.get("text")
        return ("text", text) if isinstance(text, str) and text.strip() else None
    if kind == "thinking":
        return ("thinking", block.get("thinking"))
    return None


def _content_keys(content: Any) -> list[tuple[str, Any]]:
    blocks = [content] if isinstance(content, str) else content if isinstance(content, list) else []
    return [k for b in blocks if (k := _block_key(b)) is not None]


def raw_block_keys(path: Path) -> Counter[tuple[str, Any]]:
    """The blocks of a transcript's conversation lines, read straight from the file: the main
    thread's user and assistant lines (every line of a sub-agent file, whose lines are all
    ``isSidechain``), one per uuid (a repeated uuid: the later line), less the prompt lines no
    request sent (:func:`_unsent_leaves`)."""
    records: dict[str, dict[str, Any]] = {}
    anonymous: list[dict[str, Any]] = []
    parents: dict[str, str] = {}  # every line's parent, whatever its type
    links: dict[str, str] = {}  # the same, a compaction boundary's logical parent too
    position: dict[str, int] = {}  # every line's place in the file, whatever its type
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        raw = raw.strip()
        if not raw:
            continue
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        u = rec.get("uuid")
        if isinstance(u, str):
            position[u] = len(position)
        if isinstance(u, str) and isinstance(rec.get("parentUuid"), str):
            parents[u] = links[u] = rec["parentUuid"]
        elif isinstance(u, str) and isinstance(rec.get("logicalParentUuid"), str):
            links[u] = rec["logicalParentUuid"]
        if rec.get("type") not in ("user", "assistant"):
            continue
        if isinstance(u, str):
            records[u] = rec
        else:
            anonymous.append(rec)
    unsent = (
        _unsent_leaves(records, parents)
        | _answered_errors(records, parents)
        | _withdrawn_prompts(records, parents, position)
        | _left_responses(records, links)
    )
    recs = [r for u, r in records.items() if u not in unsent] + anonymous
    recs = _without_thinking_only(recs)
    main = [r for r in recs if not r.get("isSidechain")]
    if not main:
        main = recs  # a sub-agent transcript
    out: Counter[tuple[str, Any]] = Counter()
    for rec in main:
        msg = rec.get("message")
        if isinstance(msg, dict):
            out.update(_content_keys(msg.get("content")))
    return out


def _unsent_leaves(records: dict[str, dict[str, Any]], parents: dict[str, str]) -> set[str]:
    """The uuids of user lines Claude Code never sent: a local command's lines (or the command as
    typed), written before the file's last response, that no response descends from (an
    ``/exit`` whose command and output lines the session resumed after it skipped: its next
    message hangs off the line before them; a typed ``/compact`` left behind the compaction's
    boundary)."""
    sent: set[str] = set()
    last_response = -1
    order = {u: k for k, u in enumerate(records)}
    for u, rec in records.items():
        if rec.get("type") != "assistant":
            continue
        last_response = order[u]
        seen: set[str] = set()
        cur: str | None = u
        while cur is not None and cur not in sent and cur not in seen:
            seen.add(cur)
            sent.add(cur)
            cur = parents.get(cur)
    return {
        u
        for u, rec in records.items()
        if rec.get("type") == "user"
        and u not in sent
        and order[u] < last_response
        and _local_command_or_typed((rec.get("message") or {}).get("content"))
    }


def _sent(records: dict[str, dict[str, Any]], parents: dict[str, str]) -> set[str]:
    """The uuids some response descends from (each response's own included)."""
    sent: set[str] = set()
    for u, rec in records.items():
        if rec.get("type") != "assistant":
            continue
        cur: str | None = u
        while cur is not None and cur not in sent:
            sent.add(cur)
            cur = parents.get(cur)
    return sent


def _withdrawn_prompts(
    records: dict[str, dict[str, Any]],
    parents: dict[str, str],
    position: dict[str, int] | None = None,
) -> set[str]:
    """The uuids of prompts taken back before any reply: a typed prompt (no tool result) that no
    user or assistant line follows but its own isMeta lines (a slash command's skill text), and
    a later line beside it (the same parent, of any type: a ``/goal`` typed instead hangs off
    its attachment line) that a response descends from; with those isMeta lines. Claude Code
    writes a prompt when it is submitted; pressed Esc before the reply streams, it hands the
    prompt back for editing and hangs the one sent again (edited or not) off the same parent, so
    the first is on no branch a later request carries."""
    sent = _sent(records, parents)
    order = position if position is not None else {u: k for k, u in enumerate(records)}
    children: dict[str, list[str]] = {}
    for u, parent in parents.items():
        children.setdefault(parent, []).append(u)
    later_sent: dict[str, int] = {}  # parent -> the last position of a child a response follows
    for u in sent:
        p = parents.get(u)
        if p is not None and u in order:
            later_sent[p] = max(later_sent.get(p, -1), order[u])

    def own_meta(u: str) -> list[str] | None:
        """The records under ``u``, when all are unsent isMeta user lines; else None."""
        out: list[str] = []
        todo, seen = list(children.get(u, ())), {u}
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            if c in sent:
                return None
            rec = records.get(c)
            if rec is not None:
                if rec.get("type") != "user" or not rec.get("isMeta"):
                    return None
                out.append(c)
            todo.extend(children.get(c, ()))
        return out

    withdrawn: set[str] = set()
    for u, rec in records.items():
        if (
            rec.get("type") == "user"
            and u not in sent
            and not _has_tool_result((rec.get("message") or {}).get("content"))
            and (p := parents.get(u)) is not None
            and later_sent.get(p, -1) > order.get(u, -1)
            and (meta := own_meta(u)) is not None
        ):
            withdrawn.add(u)
            withdrawn.update(meta)
    return withdrawn


def _left_responses(records: dict[str, dict[str, Any]], links: dict[str, str]) -> set[str]:
    """The uuids of the lines of responses no request sent back: a response no later response
    descends from, off the current branch (the last response's ancestors) and forking from it.
    Its request was sent (an off-branch request), its reply never was: the conversation went on
    from a line before it (a session resumed from the parent of a tool call it never answered,
    "Continue from where you left off."; a rewind; a second process writing the same file)."""
    conv = {u: r for u, r in records.items() if not r.get("isSidechain")} or records
    groups: dict[Any, list[str]] = {}
    for u, rec in conv.items():
        if rec.get("type") == "assistant":
            msg = rec.get("message")
            mid = msg.get("id") if isinstance(msg, dict) else None
            groups.setdefault(mid if isinstance(mid, str) else u, []).append(u)
    if not groups:
        return set()
    last = next(u for u in reversed(conv) if conv[u].get("type") == "assistant")
    branch: set[str] = set()
    cur: str | None = last
    while cur is not None and cur not in branch:
        branch.add(cur)
        cur = links.get(cur)
    carried: set[str] = set()  # the lines some request held: a response's first line's ancestors
    for lines in groups.values():
        cur = links.get(lines[0])
        while cur is not None and cur not in carried:
            carried.add(cur)
            cur = links.get(cur)
    out: set[str] = set()
    for lines in groups.values():
        if any(u in branch or u in carried for u in lines):
            continue
        seen: set[str] = set()
        cur = links.get(lines[0])
        while cur is not None and cur not in branch and cur not in seen:
            seen.add(cur)
            cur = links.get(cur)
        if cur is not None and cur in branch:
            out.update(lines)
    return out


def _without_thinking_only(recs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``recs`` less the lines of responses of thinking alone (every line of the ``message.id``
    a thinking block: interrupted before any text or tool call), which Claude Code never sends
    again."""
    other: dict[Any, bool] = {}
    for rec in recs:
        msg = rec.get("message")
        if rec.get("type") != "assistant" or not isinstance(msg, dict):
            continue
        content = msg.get("content")
        blocks = content if isinstance(content, list) else [content]
        mid = msg.get("id")
        other[mid] = other.get(mid, False) or not all(
            isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
            for b in blocks
        )
    return [
        r
        for r in recs
        if r.get("type") != "assistant"
        or not isinstance(msg := r.get("message"), dict)
        or msg.get("id") is None
        or other.get(msg.get("id"), True)
    ]


def _has_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _answered_errors(records: dict[str, dict[str, Any]], parents: dict[str, str]) -> set[str]:
    """The uuids of Claude Code's error replies (:func:`api_error_reply`) that an API response
    follows with no user line between (only system lines: a ``/login``'s): never sent."""
    out: set[str] = set()
    for u, rec in records.items():
        if rec.get("type") != "assistant" or api_error_reply(rec):
            continue
        cur = parents.get(u)
        seen: set[str] = set()
        while cur is not None and cur not in records and cur not in seen:
            seen.add(cur)
            cur = parents.get(cur)
        if cur is not None and cur in records and api_error_reply(records[cur]):
            out.add(cur)
    return out


#: how the lines of a local command (``/exit``, ``/model``: run by Claude Code, not the model)
#: open
LOCAL_COMMAND = ("<command-name>", "<local-command-stdout>", "<local-command-caveat>")


#: a slash command as typed (``/compact``, ``/model opus``): Claude Code 2.1.2xx writes the typed
#: line too, before the command's own ``<command-name>`` lines, and a local command's typed line is
#: sent by no request (no response descends from it)
TYPED_COMMAND = re.compile(r"/[A-Za-z][\w:.-]*(\s|$)")


def _local_command_or_typed(content: Any) -> bool:
    """A local command's line, or a slash command as the user typed it."""
    if _local_command(content):
        return True
    texts = content_texts(content)
    return len(texts) == 1 and isinstance(texts[0], str) and bool(TYPED_COMMAND.match(texts[0]))


def _local_command(content: Any) -> bool:
    """Every text of ``content`` is a local command's line (and there is one)."""
    texts = content_texts(content)
    return bool(texts) and all(
        isinstance(t, str) and t.lstrip().startswith(LOCAL_COMMAND) for t in texts
    )


def rebuilt_block_keys(session: LoadedSession) -> Counter[tuple[str, Any]]:
    """The blocks of the rebuilt messages, and of the messages an off-branch request sent (the
    lines of a branch left after its last request), each as many times as the most of them
    one request held."""
    out: Counter[tuple[str, Any]] = Counter()
    for m in session.messages:
        out.update(_content_keys(m.get("content")))
    for off in session.off_branch:
        sent: Counter[tuple[str, Any]] = Counter()
        for m in off.get("messages") or ():
            if isinstance(m, dict):
                sent.update(_content_keys(m.get("content")))
        out |= sent
    return out


def _recorded_reason(r: Request) -> str | None:
    """Why the recorded usage broke: the request model's name for it, or ``growth`` when the
    read held and the new messages alone billed above half the input; None on a recorded hit."""
    if r.recorded_miss is not None and r.recorded_miss.is_break:
        return r.recorded_miss.reason
    return "growth" if r.recorded_break else None


def _api_reason(r: Request) -> str | None:
    """The API's own diagnosis of the request's cache (``cache_miss_reason.type``), where the
    file recorded one; None where it recorded none (ctxview's mapping of its own reason into
    the API's words is not the API's word)."""
    miss = r.recorded_miss
    return miss.api_reason if miss is not None and miss.reported else None


#: the API's diagnoses that say the client sent something else than the previous request, in
#: the part named (the request the transcript records had not changed there)
CLIENT_CHANGED = ("messages_changed", "system_changed", "tools_changed", "model_changed")


def diagnosed_by_api(dis: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Of the break disagreements, how many a recorded break the API itself diagnosed, by its
    ``cache_miss_reason.type``: an ``unexplained`` break with ``messages_changed`` is the API
    saying the client changed an earlier message that the transcript does not show changed."""
    out: Counter[str] = Counter()
    for d in dis:
        if d.get("api_reason") and d.get("recorded", "").startswith("break"):
            out[d["api_reason"]] += 1
    return dict(sorted(out.items()))


# -- one file ----------------------------------------------------------------------------------
def _first_half_only(session: LoadedSession, log: RequestLog) -> tuple[LoadedSession, int]:
    """A copy of ``session`` whose responses after the first half of its recorded requests
    carry no usage (what the calibration may read), and the index of the first hidden request."""
    recorded = [r for r in log.requests if r.recorded is not None and r.response_id is not None]
    half = len(recorded) // 2
    hidden = {r.response_id for r in recorded[half:]}
    metas = [
        {k: v for k, v in meta.items() if k != "usage"} if i in hidden else meta
        for i, meta in enumerate(session.metas)
    ]
    first_hidden = recorded[half].index if half < len(recorded) else len(log.requests)
    return replace(session, metas=metas), first_hidden


def _response_ids(session: LoadedSession, reqs: Iterable[Request]) -> dict[int, str]:
    """The API response id (``msg_...``) of each request that has one, by request index."""
    out = {}
    for r in reqs:
        if r.response_id is not None and r.response_id < len(session.metas):
            mid = session.metas[r.response_id].get("message_id")
            if isinstance(mid, str):
                out[r.index] = mid
    return out


def measure_file(
    path: Path, name: str | None = None, counted: set[str] | None = None
) -> FileFigures:
    """The figures of one transcript. ``counted``: the response ids of the requests earlier
    files of the set counted; a request among them is left out here (the same request billed
    once must weigh once), and this file's are added."""
    name = name or path.name
    try:
        session = load_session(path)
    except SessionError as exc:
        return FileFigures(name, 0, 0, error=str(exc))
    log = simulate(session)
    ids = _response_ids(session, log.requests)
    earlier = counted if counted is not None else set()
    repeated = {i for i, mid in ids.items() if mid in earlier}
    if counted is not None:
        counted.update(ids.values())

    def own(rs: Iterable[Request]) -> list[Request]:
        return [r for r in rs if r.index not in repeated]

    reqs = own(log.requests)
    fig = FileFigures(name, len(log.requests), sum(1 for r in reqs if r.recorded is not None))
    fig.repeated = sum(1 for r in log.requests if r.index in repeated and r.recorded is not None)
    fig.errors = _errors(reqs)
    fig.off_branch_requests = len(session.off_branch)
    fig.compactions = sum(
        1
        for m in session.metas
        if m.get("compact_boundary") is not None or m.get("compact_summary")
    )
    fig.compaction_requests = len(log.compactions)
    fig.compaction_errors = _compaction_errors(path, log)
    # fitted on the first half, measured on the second
    if fig.recorded >= 4:
        partial, first_hidden = _first_half_only(session, log)
        cal = calibrate(partial, session_features(session))
        half_log = simulate(session, _calibration=cal)
        fig.half_errors = _errors(own(half_log.requests[first_hidden:]))
        starts = sorted(segment_starts(session))
        seen = {
            bisect_right(starts, r.response_id - 1)
            for r in half_log.requests[:first_hidden]
            if r.recorded is not None and r.response_id is not None and r.kind == "turn"
        }
        unseen = [
            r
            for r in own(half_log.requests[first_hidden:])
            if r.response_id is not None and bisect_right(starts, r.response_id - 1) not in seen
        ]
        fig.half_errors_unseen = _errors(unseen)
        unseen_ids = {id(r) for r in unseen}
        fig.half_misses = [
            Miss(name, r.index, r.input_tokens, t, id(r) in unseen_ids)
            for r in own(half_log.requests[first_hidden:])
            if (t := r.recorded_total)
        ]
    prev_ts: float | None = None
    for r in log.requests:
        ts = parse_timestamp(r.timestamp)
        gap = round(ts - prev_ts, 1) if ts is not None and prev_ts is not None else None
        if ts is not None:
            prev_ts = ts
        if r.recorded is None or r.index in repeated:
            continue
        if r.predicted_break == r.recorded_break:
            fig.agree += 1
            continue
        rec = r.recorded
        fig.disagreements.append(
            Disagreement(
                name,
                r.index,
                f"break ({r.cache_break.reason})"
                if r.predicted_break and r.cache_break is not None
                # the read held; the new messages were estimated above half the input
                else "break (growth)"
                if r.predicted_break
                else "hit",
                ("break" if r.recorded_break else "hit")
                + f" (read {rec['cache_read_input_tokens']:,}, "
                f"write {rec['cache_creation_input_tokens']:,})",
                gap,
                _recorded_reason(r),
                _api_reason(r),
            )
        )
    raw = raw_block_keys(path)
    kept = rebuilt_block_keys(session)
    for key, n in raw.items():
        fig.raw_blocks[key[0]] += n
        missing = n - kept.get(key, 0)
        if missing > 0:
            fig.lost_blocks[key[0]] += missing
    return fig


def acompact_files(path: Path) -> list[Path]:
    """The ``agent-acompact`` files of a transcript: in its ``<session>/subagents/`` folder, or
    beside it as ``<session>__subagent_agent-acompact-*.jsonl`` (this repository's layout)."""
    found = sorted((path.parent / path.stem / "subagents").glob("agent-acompact-*.jsonl"))
    return found + sorted(path.parent.glob(f"{path.stem}__subagent_agent-acompact-*.jsonl"))


def _compaction_errors(path: Path, log: RequestLog) -> list[float]:
    """Each modelled compaction request that an ``agent-acompact`` file recorded, linked as
    ``ctxview requests`` links them: (estimate - recorded) / recorded, of the whole prompt."""
    if not log.compactions:
        return []
    agents = []
    for p in acompact_files(path):
        try:
            agents.append(
                AgentLog(SubAgent(p.stem, str(p), kind="compaction"), simulate(load_session(p)))
            )
        except SessionError:
            continue
    _, linked = link_compactions(log, agents)
    out = []
    for al in linked:
        for r in al.log.requests if al.log is not None else []:
            if r.kind == "compaction" and (t := r.recorded_total):
                out.append((r.input_tokens - t) / t)
    return out


# -- a folder ----------------------------------------------------------------------------------
def transcripts(folders: Iterable[Path]) -> list[tuple[Path, str]]:
    out: list[tuple[Path, str]] = []
    for folder in folders:
        if folder.is_file():
            out.append((folder, folder.name))
            continue
        for p in sorted(folder.rglob("*.jsonl")):
            out.append((p, str(p.relative_to(folder))))
    return out


def worst_misses(figs: Sequence[FileFigures], n: int) -> list[Miss]:
    """The ``n`` second-half requests the first-half fit misses most, over all files."""
    misses = [m for f in figs for m in f.half_misses]
    return sorted(misses, key=lambda m: -abs(m.error))[:n]


def summary(figs: Sequence[FileFigures]) -> dict[str, Any]:
    errs = [e for f in figs for e in f.errors]
    half = [e for f in figs for e in f.half_errors]
    unseen = [e for f in figs for e in f.half_errors_unseen]
    recorded = sum(f.recorded for f in figs)
    agree = sum(f.agree for f in figs)
    raw: Counter[str] = Counter()
    lost: Counter[str] = Counter()
    for f in figs:
        raw.update(f.raw_blocks)
        lost.update(f.lost_blocks)

    def r4(v: float | None) -> float | None:
        return None if v is None else round(v, 4)

    return {
        "files": len(figs),
        "unreadable": [f.name for f in figs if f.error],
        "requests": sum(f.requests for f in figs),
        "recorded_requests": recorded,
        # recorded requests another file of the set holds too, counted once (in the first)
        "repeated_requests": sum(f.repeated for f in figs),
        "token_error": {"median": r4(quantile(errs, 0.5)), "p90": r4(quantile(errs, 0.9))},
        "token_error_first_half_fit": {
            "median": r4(quantile(half, 0.5)),
            "p90": r4(quantile(half, 0.9)),
            "requests": len(half),
            # the second-half requests of a segment the first half recorded nothing of
            "unseen_segments": {
                "median": r4(quantile(unseen, 0.5)),
                "p90": r4(quantile(unseen, 0.9)),
                "requests": len(unseen),
            },
        },
        "break_agreement": r4(agree / recorded) if recorded else None,
        "break_disagreements": [d.to_dict() for f in figs for d in f.disagreements],
        # of those, the recorded breaks the API's own diagnostics explained, by its reason
        "break_disagreements_diagnosed_by_api": diagnosed_by_api(
            [d.to_dict() for f in figs for d in f.disagreements]
        ),
        "blocks": {t: raw[t] for t in BLOCK_TYPES},
        "blocks_lost": {t: lost[t] for t in BLOCK_TYPES},
        "files_losing_blocks": [
            {
                "file": f.name,
                "lost": {t: f.lost_blocks[t] for t in BLOCK_TYPES},
                "off_branch_requests": f.off_branch_requests,
            }
            for f in figs
            if sum(f.lost_blocks.values())
        ],
        "compactions": sum(f.compactions for f in figs),
        "compaction_requests": {
            "modelled": sum(f.compaction_requests for f in figs),
            "prompt_errors_vs_acompact": [r4(e) for f in figs for e in f.compaction_errors],
        },
    }


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def _diagnosed_row(s: dict[str, Any]) -> list[str]:
    """The table row naming the disagreements the API's own diagnostics explained (none when
    the files recorded no diagnosis on any of them)."""
    by = s.get("break_disagreements_diagnosed_by_api") or {}
    if not by:
        return []
    client = sum(n for k, n in by.items() if k in CLIENT_CHANGED)
    named = ", ".join(f"{k} {n}" for k, n in by.items())
    recorded = s["recorded_requests"]
    rest = len(s["break_disagreements"]) - client
    # the agreement over the requests left once the API's word is taken for those: what a
    # transcript can show at best, the client's unrecorded changes being out of its reach
    without = _pct(1 - rest / (recorded - client)) if recorded > client else "-"
    return [
        f"| of which recorded breaks the API's diagnostics named ({named}); those saying the "
        f"client changed what the transcript records unchanged | {client} of "
        f"{len(s['break_disagreements'])} (agreement on the other requests: {without}) |"
    ]


def render(
    figs: Sequence[FileFigures],
    s: dict[str, Any],
    per_file: bool,
    max_dis: int | None,
    worst: int = 0,
) -> str:
    te, th = s["token_error"], s["token_error_first_half_fit"]
    lost, raw = s["blocks_lost"], s["blocks"]
    lines = [
        f"{s['files']} files, {s['requests']:,} requests, {s['recorded_requests']:,} with "
        f"recorded usage, {s['compactions']} compactions"
        + (
            f" ({s['repeated_requests']:,} more that an earlier file holds too, counted there)"
            if s["repeated_requests"]
            else ""
        ),
        "",
        "| measure | value |",
        "|---|---|",
        f"| per-request input tokens, calibrated: median / p90 error | "
        f"{_pct(te['median'])} / {_pct(te['p90'])} |",
        f"| the same, fitted on the first half of each file only (error on the second half, "
        f"{th['requests']:,} requests) | {_pct(th['median'])} / {_pct(th['p90'])} |",
        f"| of which after a compaction the first half did not see ("
        f"{th['unseen_segments']['requests']:,} requests) | "
        f"{_pct(th['unseen_segments']['median'])} / {_pct(th['unseen_segments']['p90'])} |",
        f"| predicted vs recorded cache break agrees | {_pct(s['break_agreement'])} "
        f"({len(s['break_disagreements'])} disagreements) |",
        *_diagnosed_row(s),
        "| tool_use / tool_result / text / thinking blocks lost in the rebuild | "
        + " + ".join(str(lost[t]) for t in BLOCK_TYPES)
        + " (of "
        + " + ".join(f"{raw[t]:,}" for t in BLOCK_TYPES)
        + f"), in {len(s['files_losing_blocks'])} files |",
    ]
    cr = s["compaction_requests"]
    if cr["modelled"]:
        errs = ", ".join(f"{100 * e:+.1f}%" for e in cr["prompt_errors_vs_acompact"]) or "-"
        lines.append(
            f"| compaction requests modelled: {cr['modelled']}; the prompt against the "
            f"agent-acompact file that recorded it | {errs} |"
        )
    if s["unreadable"]:
        lines += ["", "unreadable: " + ", ".join(s["unreadable"])]
    if s["files_losing_blocks"]:
        lines += ["", "files losing blocks (tool_use/tool_result/text/thinking):"]
        for row in s["files_losing_blocks"]:
            lost_f = "/".join(str(row["lost"][t]) for t in BLOCK_TYPES)
            lines.append(
                f"  {row['file']}: {lost_f}, off-branch requests {row['off_branch_requests']}"
            )
    dis = s["break_disagreements"]
    if dis:
        lines += ["", "cache break disagreements (file, request: predicted / recorded, gap):"]
        for d in dis if max_dis is None else dis[:max_dis]:
            gap = "-" if d["gap_s"] is None else f"{d['gap_s']:g} s"
            why = f" [{d['recorded_reason']}]" if d["recorded_reason"] else ""
            if d.get("api_reason"):
                why += f" (API: {d['api_reason']})"
            lines.append(
                f"  {d['file']} #{d['request']}: predicted {d['predicted']} / recorded "
                f"{d['recorded']}{why}, gap {gap}"
            )
        if max_dis is not None and len(dis) > max_dis:
            lines.append(f"  ... {len(dis) - max_dis} more (--all-disagreements)")
    if worst:
        lines += [
            "",
            f"largest misses fitted on the first half ({worst}; file, request: estimate / "
            "recorded, error):",
        ]
        for m in worst_misses(figs, worst):
            where = ", after a compaction the first half did not see" if m.unseen_segment else ""
            lines.append(
                f"  {m.file} #{m.request}: {m.estimate:,} / {m.recorded:,}, "
                f"{100 * m.error:+.1f}%{where}"
            )
    if per_file:
        lines += [
            "",
            "| file | requests | recorded | median / p90 | half-fit median / p90 | breaks agree |"
            " lost blocks |",
            "|---|---|---|---|---|---|---|",
        ]
        for f in figs:
            if f.error:
                lines.append(f"| {f.name} | unreadable: {f.error} |")
                continue
            lines.append(
                f"| {f.name} | {f.requests} | {f.recorded} | "
                f"{_pct(quantile(f.errors, 0.5))} / {_pct(quantile(f.errors, 0.9))} | "
                f"{_pct(quantile(f.half_errors, 0.5))} / {_pct(quantile(f.half_errors, 0.9))} | "
                f"{f.agree}/{f.recorded} | {sum(f.lost_blocks.values())} |"
            )
    return "\n".join(lines)


def measure(
    folders: Iterable[Path], which: str | None = None
) -> tuple[list[FileFigures], dict[str, Any]]:
    """The figures of every transcript under ``folders`` (of the split's ``which`` set only,
    when given)."""
    files = transcripts(folders)
    if which is not None:
        files = [(p, name) for p, name in files if in_set(p, which)]
    counted: set[str] = set()
    figs = [measure_file(p, name, counted) for p, name in files]
    return figs, summary(figs)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="python -m benchmarks.truth",
        description="the request model against the usage recorded in real Claude Code transcripts",
    )
    ap.add_argument(
        "folders",
        nargs="*",
        type=Path,
        help="folders of *.jsonl transcripts (default: the repository's own)",
    )
    ap.add_argument(
        "--set", dest="which", choices=sorted(SETS), help="only the tune or the held-out files"
    )
    ap.add_argument("--json", action="store_true", help="the figures as JSON")
    ap.add_argument("--files", action="store_true", help="a row per file")
    ap.add_argument(
        "--all-disagreements", action="store_true", help="every disagreement (default: 40)"
    )
    ap.add_argument(
        "--worst",
        type=int,
        default=0,
        metavar="N",
        help="the N requests the first-half fit misses most (file, request, estimate, recorded)",
    )
    args = ap.parse_args(argv)
    folders = args.folders or list(FOLDERS)
    missing = [str(p) for p in folders if not p.exists()]
    if missing:
        print(f"no such folder: {', '.join(missing)}", file=sys.stderr)
        return 2
    figs, s = measure(folders, args.which)
    if args.json:
        if args.files:
            s["per_file"] = [
                {
                    "file": f.name,
                    "requests": f.requests,
                    "recorded": f.recorded,
                    "median": quantile(f.errors, 0.5),
                    "p90": quantile(f.errors, 0.9),
                    "half_median": quantile(f.half_errors, 0.5),
                    "half_p90": quantile(f.half_errors, 0.9),
                    "agree": f.agree,
                    "lost": dict(f.lost_blocks),
                    "error": f.error,
                }
                for f in figs
            ]
        if args.worst:
            s["worst_first_half_misses"] = [m.to_dict() for m in worst_misses(figs, args.worst)]
        print(json.dumps(s, indent=2))
    else:
        print(render(figs, s, args.files, None if args.all_disagreements else 40, args.worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
