"""Claude Code transcripts (``~/.claude/projects/<project>/<session>.jsonl``) and web sessions.

Rebuilds the message sequence that was actually sent to the API:

* assistant lines sharing ``message.id`` are one response: merged, blocks in order, usage from
  the last line — even when tool_result lines were written between two of its blocks;
* the user lines of a turn are merged into one user message, tool_results first;
* the conversation is a tree (rewinds): the chain is followed back from the last main-thread line
  through ``parentUuid`` (``logicalParentUuid`` across a compaction); tool_result lines hanging off
  the chain (siblings, not on it) are gathered into their turn;
* a parent that is not in the file does not end the chain: it goes on from the message line
  written before (:class:`Placement` lists such lines, and message lines on no branch);
* every compaction shape: a ``compact_boundary`` marks the next message (the summary); lines
  written after it that hang off the pre-compaction line (a 2.1.2xx ``/compact``'s command lines)
  are read after the summary, and messages the compaction kept (``preservedSegment``, written
  before it) are moved after the summary; a ``microcompact_boundary`` is named in a warning;
* sidechain (sub-agent), progress, snapshot, queue, summary and system records are not messages
  (:func:`sidechain_groups` and :func:`subagent_links` read the sub-agents apart);
* ``isMeta`` text is kept and marked; whitespace-only assistant text blocks are dropped, as Claude
  Code does before sending.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any

from ctxview.core.content import content_texts
from ctxview.core.requests.points import (
    AWAY_SUMMARY,
    CLIENT_VERSION,
    MCP_REMOVED,
    MCP_TOOLS_REMOVED,
    REMOTE_CONTROL,
    RESTARTED,
)
from ctxview.sessions.claude_code_attachments import attachment_text
from ctxview.sessions.claude_code_compaction import (
    Placement,
    compaction_splices,
    kept_after_summaries,
    microcompact_info,
    microcompact_note,
    placement_notes,
)
from ctxview.sessions.claude_code_lines import MESSAGE_TYPES, Line, message_id
from ctxview.sessions.validate import block_problem

__all__ = [
    "MESSAGE_TYPES",
    "Line",
    "Placement",
    "head_of",
    "off_branch_responses",
    "placement_notes",
    "prompt_text",
    "rebuild",
    "sidechain_groups",
    "subagent_links",
    "title_of",
]


@dataclass
class _Builder:
    role: str
    blocks: list[Any] = field(default_factory=list)
    results: list[Any] = field(default_factory=list)
    string: str | None = None  # a lone user line with string content
    message_id: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    lines: list[int] = field(default_factory=list)

    def content(self) -> Any:
        if self.role == "user":
            if self.string is not None and not self.results and not self.blocks:
                return self.string
            return self.results + self.blocks
        return self.blocks


def _answers_while_streaming(out: list[_Builder], asst: _Builder | None) -> bool:
    """The last message is the user message of results answering ``asst``'s calls alone, right
    after it: Claude Code runs a response's calls as they stream, so their results can be
    written before the response's later blocks (one message id); the request that follows sends
    the response whole, then every result (fl_77-78b19c8aaf of unseen5: a fourth call written
    after two results of the first three, answered with the third in the next user line)."""
    if asst is None or len(out) < 2 or out[-2] is not asst:
        return False
    tail = out[-1]
    if tail.role != "user" or tail.string is not None or not tail.results:
        return False
    calls = {
        b.get("id") for b in asst.blocks if isinstance(b, dict) and b.get("type") == "tool_use"
    }
    return all(isinstance(r, dict) and r.get("tool_use_id") in calls for r in tail.results)


def _usable(line: Line) -> str | None:
    """None if the line carries an API message, else why it cannot be used."""
    msg = line.record.get("message")
    if not isinstance(msg, dict):
        return "no message object"
    if msg.get("role") not in MESSAGE_TYPES:
        return "message without a user/assistant role"
    content = msg.get("content")
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return "message without content"
    for i, block in enumerate(content):
        why = block_problem(block)
        if why is not None:
            return f"malformed content block message.content[{i}]: {why}{_type_shown(block)}"
    return None


def _type_shown(block: Any) -> str:
    """What a block's ``type`` is when it is there but no string (the reason names it)."""
    if not isinstance(block, dict) or "type" not in block or isinstance(block["type"], str):
        return ""
    kind = {dict: "an object", list: "an array", type(None): "null"}.get(
        type(block["type"]), type(block["type"]).__name__
    )
    return f" (type is {kind}, not a string)"


def _branch_end(main: list[Line], known: dict[str, Line]) -> Line | None:
    """The last line of the current branch: the last main-thread assistant line, or a later line
    that descends from it (a question typed after the last response). A line whose parent is not
    in the file (not in ``known``) descends from the message line written before it, as
    :func:`_select` follows it.

    Lines written after the last response that do not descend from it (a bash-mode ``!`` command
    or a local command hanging off an early line) do not choose the branch: choosing by the last
    line alone would drop every response.
    """
    kinds = (*MESSAGE_TYPES, "system")
    last_asst = next(
        (i for i in range(len(main) - 1, -1, -1) if main[i].type == "assistant" and main[i].uuid),
        None,
    )
    if last_asst is None:
        return next((ln for ln in reversed(main) if ln.uuid and ln.type in kinds), None)
    end = main[last_asst]
    descendants = {end.uuid}
    before = end  # the last message line so far
    for ln in main[last_asst + 1 :]:
        parent = ln.parent
        if parent is not None and parent not in known:
            parent = before.uuid
        if ln.uuid and parent in descendants:
            descendants.add(ln.uuid)
            if ln.type in kinds:
                end = ln
        if ln.uuid and ln.type in MESSAGE_TYPES:
            before = ln
    return end


def _select(lines: list[Line], placement: Placement | None = None) -> list[Line]:
    """Main-thread message lines of the current branch, in file order."""
    main = [ln for ln in lines if not ln.record.get("isSidechain")]
    if not any(ln.type in MESSAGE_TYPES for ln in main):
        # a sub-agent transcript (``<session>/subagents/agent-*.jsonl``): every line is
        # ``isSidechain``; opened on its own it is a conversation of its own
        main = list(lines)
    by_uuid: dict[str, Line] = {}
    for ln in main:
        if ln.uuid:
            by_uuid[ln.uuid] = ln  # a repeated uuid: the later line wins
    # A real transcript links (almost) every line to its parent; hand-made or damaged files often
    # do not, and are read in file order.
    message_lines = [ln for ln in main if ln.type in MESSAGE_TYPES]
    resolving = sum(1 for ln in message_lines if ln.parent and ln.parent in by_uuid)
    if resolving < max(1, len(message_lines) // 2):
        return message_lines
    last = _branch_end(main, by_uuid)
    if last is None:
        return message_lines
    position = {id(ln): k for k, ln in enumerate(main)}
    splices, spliced = compaction_splices(main, position, by_uuid)
    if placement is not None:
        placement.spliced_compactions = spliced
    chain: set[str] = set()
    #: per compaction boundary on the chain, the chain lines written before it that hang (through
    #: its summary) after it: messages a compaction kept verbatim (``preservedSegment``)
    kept_after: dict[int, list[Line]] = {}
    walked: list[Line] = []
    lowest = len(main)  # the lowest position of a chain line so far
    cursor: Line | None = last
    while cursor is not None and cursor.uuid and cursor.uuid not in chain:
        chain.add(cursor.uuid)
        at = position[id(cursor)]
        boundary = cursor.type == "system" and cursor.record.get("subtype") == "compact_boundary"
        if boundary:
            kept = [ln for ln in walked if position[id(ln)] < at]
            if kept:
                kept_after[id(cursor)] = kept
        walked.append(cursor)
        lowest = min(lowest, at)
        nxt = splices.get(id(cursor))
        if nxt is None and cursor.parent:
            nxt = by_uuid.get(cursor.parent)
            if boundary and (nxt is None or nxt.uuid in chain or position[id(nxt)] > lowest):
                # the boundary's logical parent is not in the file, or is one of the messages
                # the compaction kept (already on the chain): the history before the compaction
                # goes on from the message line written before the first chain line
                k = lowest - 1
                while k >= 0 and not (
                    main[k].uuid and main[k].type in MESSAGE_TYPES and main[k].uuid not in chain
                ):
                    k -= 1
                nxt = main[k] if k >= 0 else None
            elif nxt is None:
                # a parent that is not in the file (a progress line Claude Code did not write,
                # a file cut at the start): the conversation went on from the last main-thread
                # message line written before this one (Claude Code writes a turn's lines in
                # the order it sends them); said in the placement
                k = at - 1
                while k >= 0 and not (main[k].uuid and main[k].type in MESSAGE_TYPES):
                    k -= 1
                nxt = main[k] if k >= 0 else None
                if nxt is not None and placement is not None:
                    placement.dangling_parents.append((cursor.number, cursor.parent))
        cursor = nxt
    if placement is not None:
        placement.dangling_parents.sort()
    # One API response is written as several lines sharing message.id, and parallel tool calls can
    # hang their results off different lines of it: every main-thread line of a response that has
    # a line on the chain belongs to it, in file order.
    responses = {
        mid for ln in main if ln.uuid in chain and ln.type == "assistant" if (mid := message_id(ln))
    }
    response_uuids: set[str] = set(chain)
    chain_tool_ids: set[str] = set()
    for ln in main:
        if ln.type != "assistant" or not (ln.uuid in chain or message_id(ln) in responses):
            continue
        if ln.uuid:
            response_uuids.add(ln.uuid)
        msg = ln.record.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_use":
                chain_tool_ids.add(str(b.get("id")))
    selected: list[Line] = []
    # a line written twice (its uuid again: Claude Code copies lines into a resumed session)
    # is one record, sent once
    taken: set[str] = set()
    #: the tool-result lines gathered beside the chain, and the attachment lines under them
    beside: set[str] = set()
    for ln in main:
        if ln.uuid:
            if ln.uuid in taken:
                continue
            taken.add(ln.uuid)
        if ln.type not in MESSAGE_TYPES:
            if ln.type == "attachment" and ln.uuid and ln.parent in beside:
                beside.add(ln.uuid)
            if ln.uuid in chain and ln.type in ("system", "attachment"):
                # system lines on the chain: compaction boundaries; attachments: what Claude
                # Code sent besides the messages (an MCP server's instructions removed)
                selected.append(ln)
            elif ln.parent in response_uuids and remote_control_on(ln.record):
                # Remote Control turned on, on a line of its own beside the chain (unseen4
                # entgraph_b999d973 line 67: the tool result hangs off the call, not off it):
                # it still changed the tools of the next request
                selected.append(ln)
            continue
        if ln.uuid in chain:
            selected.append(ln)
        elif ln.type == "assistant" and message_id(ln) in responses:
            selected.append(ln)  # another block of a response on the chain
        elif (
            ln.type == "user"
            and ln.parent in response_uuids
            and _only_results_for(ln, chain_tool_ids)
        ):
            selected.append(ln)  # tool results hanging off a block of a response on the chain
            if ln.uuid:
                beside.add(ln.uuid)
        elif ln.type == "user" and ln.parent in beside and _tool_meta_for(ln, chain_tool_ids):
            # what a tool call added after its result (a Skill's instructions, isMeta), hanging
            # off a result gathered beside the chain: parallel Skill calls write each skill's
            # text under its own result, and the next response hangs off the last one alone
            selected.append(ln)
            if ln.uuid:
                beside.add(ln.uuid)
    selected = _results_after_their_call(selected)
    return kept_after_summaries(selected, kept_after, position) if kept_after else selected


def _thinking_only(content: Any) -> bool:
    """An assistant message's blocks are all thinking (and there is one)."""
    return (
        isinstance(content, list)
        and bool(content)
        and all(
            isinstance(b, dict) and b.get("type") in ("thinking", "redacted_thinking")
            for b in content
        )
    )


def _results_after_their_call(selected: list[Line]) -> list[Line]:
    """``selected`` with each tool-result line that was written before the response line it
    answers (its ``parentUuid``) moved right after that line: the result is sent after its call
    whatever order the two lines reached the file in (unseen4 gitsync_c6533991 line 681 and
    imessagemail_b3a407be line 84: an Edit's error result written a few ms before its
    ``tool_use`` line, the next response hanging off the result)."""
    at = {ln.uuid: k for k, ln in enumerate(selected) if ln.uuid}
    if not any(
        ln.type == "user"
        and ln.parent in at
        and at[ln.parent] > k
        and selected[at[ln.parent]].type == "assistant"
        and _only_results(ln)
        for k, ln in enumerate(selected)
    ):
        return selected
    out: list[Line] = []
    waiting: dict[str, list[Line]] = {}

    def emit(ln: Line) -> None:
        out.append(ln)
        for w in waiting.pop(ln.uuid or "", ()):
            emit(w)

    for k, ln in enumerate(selected):
        parent = ln.parent
        if (
            ln.type == "user"
            and parent in at
            and at[parent] > k
            and selected[at[parent]].type == "assistant"
            and _only_results(ln)
        ):
            waiting.setdefault(parent, []).append(ln)
            continue
        emit(ln)
    return out


def _blank(value: Any) -> bool:
    """``not str(value).strip()`` without copying a long text to strip it."""
    text = value if type(value) is str else str(value)
    return not text or text.isspace()


def _type_of(line: Line | None) -> Any:
    return line.type if line is not None else None


def _only_results(line: Line) -> bool:
    msg = line.record.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    return (
        isinstance(content, list)
        and bool(content)
        and all(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    )


def _tool_meta_for(line: Line, tool_ids: set[str]) -> bool:
    """``line`` is the isMeta text a tool call of ``tool_ids`` added (``sourceToolUseID``)."""
    return bool(line.record.get("isMeta")) and line.record.get("sourceToolUseID") in tool_ids


def _only_results_for(line: Line, tool_ids: set[str]) -> bool:
    msg = line.record.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if not isinstance(content, list) or not content:
        return False
    return all(
        isinstance(b, dict) and b.get("type") == "tool_result" and b.get("tool_use_id") in tool_ids
        for b in content
    )


def _append_text(b: _Builder, text: str) -> None:
    """A text block after what user message ``b`` holds (its lone string made a block)."""
    if b.string is not None:
        b.blocks.append({"type": "text", "text": b.string})
        b.string = None
    b.blocks.append({"type": "text", "text": text})


def mcp_removed(record: dict[str, Any]) -> list[str]:
    """The MCP servers an ``mcp_instructions_delta`` attachment line says were removed (a
    server disconnected: Claude Code 2.1.2xx drops its instructions from the system prompt);
    [] for any other line."""
    att = record.get("attachment")
    if not isinstance(att, dict) or att.get("type") != "mcp_instructions_delta":
        return []
    names = att.get("removedNames")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def tools_removed(record: dict[str, Any]) -> list[str] | None:
    """The deferred tools a ``deferred_tools_delta`` attachment line says were removed ([]
    when it removed none); None for any other line."""
    att = record.get("attachment")
    if not isinstance(att, dict) or att.get("type") != "deferred_tools_delta":
        return None
    names = att.get("removedNames")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


#: the meta key of an assistant message that is Claude Code's own error reply
#: (:func:`api_error_reply`)
API_ERROR = "api_error"


#: how the line of a ``/remote-control`` local command opens its content
REMOTE_CONTROL_COMMAND = "<command-name>/remote-control</command-name>"


def remote_control_on(record: dict[str, Any]) -> bool:
    """A system line saying Remote Control was turned on: the ``/remote-control`` local command
    or the ``bridge_status`` line Claude Code writes once it is connected."""
    if record.get("type") != "system":
        return False
    if record.get("subtype") == "bridge_status":
        return True
    content = record.get("content")
    return (
        record.get("subtype") == "local_command"
        and isinstance(content, str)
        and content.lstrip().startswith(REMOTE_CONTROL_COMMAND)
    )


def api_error_reply(record: dict[str, Any]) -> bool:
    """An assistant line that is Claude Code's reply to a failed request (``isApiErrorMessage``,
    model ``<synthetic>``: "Login expired", a usage limit), not an API response. Where the API
    answered right after one (the user logged in again and the prompt was retried), the
    request held no such reply: its response began with thinking, which the API rejects after
    an assistant text (diag set entgraph_fffff083, Claude Code 2.1.210)."""
    msg = record.get("message")
    return (
        bool(record.get("isApiErrorMessage"))
        and isinstance(msg, dict)
        and msg.get("model") == "<synthetic>"
    )


#: the system lines Claude Code writes once a turn ended in the process that answered it: its
#: Stop hooks' summary, and the turn's duration (``turn_duration``). A session whose Stop hooks
#: went away part-way still writes the duration after each turn: in unseen4's
#: ``gitsync_5b613073`` (Claude Code 2.1.121) the 14 turns after the last summary line each end
#: with a ``turn_duration`` line, and the 12 prompts after them within the TTL read the whole
#: previous prompt (no new process: no ``restart``)
TURN_CLOSED = ("stop_hook_summary", "turn_duration")


def _ends_turn(message: dict[str, Any]) -> bool:
    """An assistant line that can end its turn: its last block is text (a final answer), from
    the API (not Claude Code's ``<synthetic>`` error or limit text, after which no Stop hook
    runs)."""
    content = message.get("content")
    return (
        message.get("model") != "<synthetic>"
        and isinstance(content, list)
        and bool(content)
        and isinstance(content[-1], dict)
        and content[-1].get("type") == "text"
    )


#: how the user line Claude Code writes when the user interrupted a response begins
INTERRUPTED = "[Request interrupted"


def _typed_prompt(record: dict[str, Any]) -> bool:
    """A user line the user typed: not injected (``isMeta``), not a compaction's summary, not
    tool results only, not the note of an interruption (no Stop hook runs after one)."""
    if record.get("isMeta") or record.get("isCompactSummary"):
        return False
    content = record["message"]["content"]
    texts = content_texts(content)
    if any(isinstance(t, str) and t.lstrip().startswith(INTERRUPTED) for t in texts):
        return False
    return isinstance(content, str) or any(
        isinstance(b, dict) and b.get("type") in ("text", "image") for b in content
    )


def rebuild(
    lines: list[Line],
    off_branch: list[dict[str, Any]] | None = None,
    placement: Placement | None = None,
    reasons: dict[int, str] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[int], list[str]]:
    """(messages, metas, unusable line numbers, warnings) from the records of a transcript.

    ``off_branch``: a list to fill with the API responses written on abandoned branches (a
    rewind, an edited prompt): see :func:`off_branch_responses`. ``placement``: filled with
    the lines whose parent is not in the file, the compactions re-hung and the message lines
    on no branch (:class:`Placement`). ``reasons``: a dict to fill with why each unusable line
    cannot be used.
    """
    skipped: list[int] = []
    usable: list[Line] = []
    for ln in lines:
        # a sub-agent's line too (isSidechain): a sub-agent's own file holds only those
        if ln.type in MESSAGE_TYPES and (why := _usable(ln)) is not None:
            skipped.append(ln.number)
            if reasons is not None:
                reasons[ln.number] = why
            continue
        usable.append(ln)
    selected = _select(usable, placement)

    out: list[_Builder] = []
    last_asst: _Builder | None = None
    pending_boundary: dict[str, Any] | None = None
    pending_micro: dict[str, Any] | None = None
    cleared: list[str] = []
    # the last user line's time: when the next response's request was sent (the API times its
    # cache entry from then; the response's own lines are logged once it streamed)
    sent_at: str | None = None
    pending_removed: list[str] = []
    #: Remote Control was turned on since the last user message began
    pending_remote = False
    pending_tools: list[list[str] | None] = []
    #: the tools the ``deferred_tools_delta`` line just before removed (None: the line before
    #: was none): Claude Code writes one right before each ``mcp_instructions_delta``
    tools_delta: list[str] | None = None
    #: a Stop hook's summary line was seen (the session runs Stop hooks), and the last response
    #: ended its turn with text that no summary line has followed yet
    stop_hooks = False
    unhooked_end = False
    #: what attachment lines written before the next user line add to it: (line, text)
    pending_reminders: list[tuple[int, str]] = []
    #: the first lines of error replies left out (a response followed them)
    unsent_errors: list[int] = []
    for ln in selected:
        rec = ln.record
        if ln.type == "attachment":
            removed = mcp_removed(rec)
            reminder = attachment_text(rec)
            with_tools, tools_delta = tools_delta, tools_removed(rec)
            if (
                out
                and out[-1].role == "user"
                and (out[-1].string is not None or out[-1].results or out[-1].blocks)
            ):
                if removed:
                    out[-1].meta.setdefault(MCP_REMOVED, []).extend(removed)
                    out[-1].meta.setdefault(MCP_TOOLS_REMOVED, []).append(with_tools)
                if reminder is not None:
                    _append_text(out[-1], reminder)
                    out[-1].lines.append(ln.number)
            else:
                pending_removed.extend(removed)
                if removed:
                    pending_tools.append(with_tools)
                if reminder is not None:
                    pending_reminders.append((ln.number, reminder))
            continue
        tools_delta = None
        if ln.type == "system":
            if remote_control_on(rec):
                # the next request is the first sent with Remote Control's tools: marked on the
                # user message it sends first
                pending_remote = True
            if rec.get("subtype") in TURN_CLOSED:
                stop_hooks, unhooked_end = True, False
            if (
                rec.get("subtype") == "away_summary"
                and out
                and isinstance(rec.get("timestamp"), str)
            ):
                # Claude Code asked the API for a recap of the conversation while the user was
                # away: that request read the cached prompt
                out[-1].meta.setdefault(AWAY_SUMMARY, []).append(rec["timestamp"])
            if rec.get("subtype") == "compact_boundary":
                cm = rec.get("compactMetadata")
                pending_boundary = dict(cm) if isinstance(cm, dict) else {}
            elif rec.get("subtype") == "microcompact_boundary":
                cleared.append(microcompact_note(ln))
                # the next request sends the tool results cleared: marked on the message that
                # request sends first (the results just added, or the next prompt)
                info = microcompact_info(ln)
                if out and out[-1].role == "user":
                    out[-1].meta["microcompact"] = info
                else:
                    pending_micro = info
            continue
        msg = rec["message"]
        content = msg["content"]
        ts = rec.get("timestamp") if isinstance(rec.get("timestamp"), str) else None
        if ln.type == "assistant":
            unhooked_end = _ends_turn(msg)
            mid = msg.get("id") if isinstance(msg.get("id"), str) else None
            blocks = (
                [
                    b
                    for b in content
                    if not (
                        isinstance(b, dict)
                        and b.get("type") == "text"
                        and _blank(b.get("text", ""))
                    )
                ]
                if isinstance(content, list)
                else [{"type": "text", "text": content}]
            )
            tail = out[-1] if out else None
            same_response = (
                last_asst is not None
                and mid is not None
                and last_asst.message_id == mid
                and (
                    tail is last_asst
                    or (
                        tail is not None
                        and tail.role == "user"
                        and not tail.blocks
                        and tail.string is None
                    )
                    or _answers_while_streaming(out, last_asst)
                )
            )
            if same_response and last_asst is not None:
                # (a later block of a response whose first calls were answered meanwhile joins
                # the response: the results stay in the user message after it)
                last_asst.blocks.extend(blocks)
                last_asst.lines.append(ln.number)
                if isinstance(msg.get("usage"), dict):
                    last_asst.meta["usage"] = msg["usage"]
                if isinstance(msg.get("diagnostics"), dict):  # the API's cache diagnostics
                    last_asst.meta["diagnostics"] = msg["diagnostics"]
                continue
            if tail is not None and tail.meta.get(API_ERROR) and tail is last_asst:
                # the API answered after Claude Code's error reply (a retry once the user ran
                # /login): the reply was never sent, and the request that got this response
                # ended with the prompt before it
                out.pop()
                unsent_errors.append(tail.lines[0])
            b = _Builder("assistant", list(blocks), message_id=mid)
            b.lines.append(ln.number)
            if mid is not None:
                b.meta["message_id"] = mid  # the API response's id (one request per response)
            if ts:
                b.meta["timestamp"] = ts
            if sent_at:
                b.meta["request_sent"] = sent_at
                sent_at = None
            if isinstance(msg.get("usage"), dict):
                b.meta["usage"] = msg["usage"]
            if isinstance(msg.get("diagnostics"), dict):  # the API's cache diagnostics
                b.meta["diagnostics"] = msg["diagnostics"]
            if isinstance(msg.get("model"), str):
                b.meta["model"] = msg["model"]
            if api_error_reply(rec):
                b.meta[API_ERROR] = True
            if pending_boundary is not None:
                b.meta["compact_boundary"] = pending_boundary
                pending_boundary = None
            out.append(b)
            last_asst = b
            continue
        # user line
        if ts:
            sent_at = ts
        compact = bool(rec.get("isCompactSummary"))
        tail = out[-1] if out else None
        if tail is None or tail.role != "user" or compact or pending_boundary is not None:
            tail = _Builder("user")
            if ts:
                tail.meta["timestamp"] = ts
            if compact:
                tail.meta["compact_summary"] = True
            if pending_boundary is not None:
                tail.meta["compact_boundary"] = pending_boundary
                pending_boundary = None
            if pending_micro is not None:
                tail.meta["microcompact"] = pending_micro
                pending_micro = None
            if pending_removed:
                tail.meta[MCP_REMOVED] = pending_removed
                tail.meta[MCP_TOOLS_REMOVED] = pending_tools
                pending_removed, pending_tools = [], []
            if pending_remote:
                tail.meta[REMOTE_CONTROL] = True
                pending_remote = False
            for number, reminder in pending_reminders:
                # written before the line (a SessionStart hook's context): sent before it
                tail.blocks.append({"type": "text", "text": reminder})
                tail.lines.append(number)
            pending_reminders = []
            out.append(tail)
        tail.lines.append(ln.number)
        if unhooked_end and stop_hooks and _typed_prompt(rec):
            tail.meta[RESTARTED] = True
        unhooked_end = False
        if rec.get("isMeta"):
            tail.meta["is_meta"] = True
        if isinstance(rec.get("version"), str):
            # which Claude Code sent it: some of its cache breaks came and went with versions
            tail.meta[CLIENT_VERSION] = rec["version"]
        if isinstance(content, str):
            if tail.string is None and not tail.results and not tail.blocks:
                tail.string = content
            else:
                if tail.string is not None:
                    tail.blocks.append({"type": "text", "text": tail.string})
                    tail.string = None
                tail.blocks.append({"type": "text", "text": content})
            continue
        if tail.string is not None:
            tail.blocks.append({"type": "text", "text": tail.string})
            tail.string = None
        for block in content:
            if block.get("type") == "tool_result":
                tail.results.append(block)
            else:
                tail.blocks.append(block)

    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    warnings: list[str] = list(cleared)
    warnings.extend(
        f"line {n}: Claude Code's error reply was left out (never sent: the API answered the "
        "prompt before it)"
        for n in unsent_errors
    )
    #: responses of thinking alone (interrupted before any text or tool call): their requests,
    #: with the usage recorded, beside the messages later requests send
    unsent_thinking: list[dict[str, Any]] = []
    for i, b in enumerate(out):
        content = b.content()
        if b.role == "assistant" and not content:
            warnings.append(
                f"line {b.lines[0]}: an assistant response with no content was left out"
            )
            continue
        if b.role == "assistant" and _thinking_only(content) and i < len(out) - 1:
            # Claude Code drops such a message from every later request (the last message of
            # the file is kept: a response still being written, its next block to come)
            # (filterOrphanedThinkingOnlyMessages): unseen4 gitsync_5b613073 line 377, the
            # request after it billed 24 tokens more than the one before, its new user text alone
            warnings.append(
                f"line {b.lines[0]}: a response of thinking alone (interrupted) is not sent "
                "again; its request is kept"
            )
            unsent_thinking.append(
                {
                    "message_id": b.message_id,
                    "timestamp": b.meta.get("timestamp"),
                    "model": b.meta.get("model"),
                    "usage": b.meta.get("usage"),
                    "uuid": None,
                    "parent_uuid": None,
                    "fork": len(messages),
                    "path": [],
                    "messages": [],
                }
            )
            continue
        messages.append({"role": b.role, "content": content})
        b.meta["source_lines"] = b.lines
        metas.append(b.meta)
    off = (
        off_branch_responses(usable, selected, metas)
        if off_branch is not None or placement is not None
        else []
    )
    if off_branch is not None:
        off_branch.extend(off)
        off_branch.extend(unsent_thinking)
    if placement is not None:
        placement.unplaced_lines = _unplaced(usable, selected, off)
    return messages, metas, skipped, warnings


def _unplaced(usable: list[Line], selected: list[Line], off: list[dict[str, Any]]) -> list[int]:
    """Numbers of the main-thread message lines neither on the current branch nor sent with a
    request off it."""
    placed = {id(ln) for ln in selected}
    off_uuids = {u for o in off for u in (o["uuid"], *o["path"]) if u}
    off_ids = {o["message_id"] for o in off}
    main = [ln for ln in usable if not ln.record.get("isSidechain")]
    if not any(ln.type in MESSAGE_TYPES for ln in main):
        main = usable
    return [
        ln.number
        for ln in main
        if ln.type in MESSAGE_TYPES
        and id(ln) not in placed
        and ln.uuid not in off_uuids
        and not (ln.type == "assistant" and message_id(ln) in off_ids)
    ]


def off_branch_responses(
    usable: list[Line], selected: list[Line], metas: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The API responses off the current branch: requests sent before the user rewound (or
    edited a prompt), with the usage they recorded.

    Each is ``{"message_id", "timestamp", "model", "usage", "uuid", "parent_uuid", "fork",
    "path", "messages"}``: its request held the first ``fork`` messages of the rebuilt sequence,
    then ``messages`` (one per line of the abandoned branch between the fork and the response,
    their uuids in ``path``). In file order. A line's message is one dict, shared by every
    response whose path holds the line (read it, do not change it).
    """
    chosen = {id(ln) for ln in selected}
    on_branch_ids: set[Any] = set()
    for ln in selected:
        if ln.record.get("type") == "assistant":
            on_branch_ids.add(message_id(ln))  # (an id that is no string: None)
    # one pass over the lines off the branch: their uuids, the responses among them (grouped by
    # message.id, which several lines of one response share), the tool-result lines under each
    off_by_uuid: dict[str, Line] = {}
    responses: dict[str, list[Line]] = {}
    results_of: dict[str, list[Line]] = {}
    for ln in usable:
        if id(ln) in chosen:
            continue
        rec = ln.record
        if rec.get("isSidechain"):
            continue
        u = rec.get("uuid")
        if isinstance(u, str):
            off_by_uuid[u] = ln
        kind = rec.get("type")
        if kind == "assistant":
            msg = rec.get("message")
            mid = msg.get("id") if isinstance(msg, dict) else None
            if isinstance(mid, str) and mid not in on_branch_ids:
                responses.setdefault(mid, []).append(ln)
        elif kind == "user" and ln.parent and _only_results(ln):
            results_of.setdefault(ln.parent, []).append(ln)
    lines_of_response = responses  # (every line of a response off the branch)
    responses = {
        mid: group
        for mid, group in responses.items()
        if group[0].record["message"].get("model") != "<synthetic>"  # no API request
    }
    if not responses:
        return []
    # walk each response's ancestors off the branch up to the line it left the branch at
    walks: list[tuple[str, list[Line], list[Line], str | None]] = []
    # where a walk started -> (its path, where it ended): the walk of a later response on the
    # same branch reaches the start of an earlier one's and takes the rest of that walk whole
    # (a walk with no loop of parents: the rest cannot hold a line of this one's either)
    walked: dict[str, tuple[list[Line], str | None]] = {}
    for mid, group in responses.items():
        first = group[0]
        path: list[Line] = []
        seen: set[str] = set()
        parent = start = first.parent
        while parent is not None and parent in off_by_uuid and parent not in seen:
            done = walked.get(parent)
            if done is not None:
                path += done[0]
                parent = done[1]
                break
            seen.add(parent)
            ln = off_by_uuid[parent]
            if ln.type in MESSAGE_TYPES:
                path.append(ln)
            parent = ln.parent
        if parent is not None and parent in seen:
            continue  # a loop of parents
        if start is not None:
            walked[start] = (path, parent)
        walks.append((mid, group, path, parent))
    # the fork lines (on the branch) those walks ended at, and the messages they are part of
    wanted = {parent for *_, parent in walks if parent is not None}
    fork_line: dict[str, Line] = {}
    for ln in selected:
        u = ln.record.get("uuid")
        if isinstance(u, str) and u in wanted:
            fork_line[u] = ln
    wanted_numbers = {ln.number for ln in fork_line.values()}
    #: line number -> index of the rebuilt message it is part of; and for a line that is part
    #: of none (a compaction boundary), how many messages start before it
    message_of: dict[int, int] = {}
    before: dict[int, int] = dict.fromkeys(wanted_numbers, 0)
    for k, meta in enumerate(metas):
        sl = meta.get("source_lines", ())
        if not sl:
            continue
        for n in sl:
            if n in wanted_numbers:
                message_of[n] = k
        for n in before:
            if sl[0] < n:
                before[n] = k + 1

    def line_at(number: int) -> Line | None:
        j = bisect.bisect_left(selected, number, key=lambda ln: ln.number)
        return selected[j] if j < len(selected) and selected[j].number == number else None

    # each line's message, made once and shared by every request whose path holds the line: a
    # long abandoned branch is on the path of each of its responses (n lines, n² references)
    said: dict[int, dict[str, Any]] = {}

    def message_of_line(ln: Line) -> dict[str, Any]:
        m = said.get(id(ln))
        if m is None:
            m = said[id(ln)] = {"role": ln.type, "content": ln.record["message"]["content"]}
        return m

    # the response id of each assistant line a walk can pass (a path is read in C loops below:
    # a long abandoned branch is on the path of each of its responses)
    mid_of = {id(ln): message_id(ln) for ln in off_by_uuid.values() if ln.type == "assistant"}
    out: list[dict[str, Any]] = []
    for mid, group, path, parent in walks:
        first = group[0]
        cursor = fork_line.get(parent) if parent is not None else None
        if parent is not None and cursor is None:
            continue  # its parent is neither off the branch nor on it: not connected
        # the other lines of the responses on the path, and the tool results hanging off them,
        # written before this response (parallel tool calls branch off one response's lines)
        on_path = set(map(id, path))
        extra: list[Line] = []
        for mid_on in set(filter(None, map(mid_of.get, map(id, path)))):
            extra.extend(lines_of_response.get(mid_on, ()))
        todo = [*filter(None, map(_uuid, path)), *filter(None, map(_uuid, extra))]
        extra.extend(chain.from_iterable(filter(None, map(results_of.get, reversed(todo)))))
        for ln in extra:
            if id(ln) not in on_path and ln.number < first.number:
                path.append(ln)
                on_path.add(id(ln))
        # the fork line: the last line the request shares with the current branch (None: it
        # shares no message, it went back to the start)
        if cursor is None:
            fork = 0
        elif cursor.number in message_of:
            fork = message_of[cursor.number] + 1
        else:
            fork = before.get(cursor.number, 0)
        k = fork - 1
        head = min(path, key=_number) if path else first
        if cursor is not None and k >= 0:
            lines_k = metas[k].get("source_lines", ())
            last_k = max(lines_k, default=cursor.number)
            if last_k > cursor.number or (
                head.type == "user" and _type_of(line_at(last_k)) == "user"
            ):
                # the branch changed the message the fork line is part of: its lines up to
                # the fork line were sent with the branch's
                fork = k
                for n in lines_k:
                    if n <= cursor.number:
                        shared = line_at(n)
                        if shared is not None:
                            path.append(shared)
        path.sort(key=_number)
        usage = next(
            (
                u
                for ln in reversed(group)
                if isinstance(ln.record.get("message"), dict)
                and isinstance(u := ln.record["message"].get("usage"), dict)
            ),
            None,
        )
        msg = first.record["message"]
        out.append(
            {
                "message_id": mid,
                "timestamp": first.record.get("timestamp")
                if isinstance(first.record.get("timestamp"), str)
                else None,
                "model": msg.get("model") if isinstance(msg.get("model"), str) else None,
                "usage": usage,
                "uuid": first.uuid,
                "parent_uuid": first.parent,
                "fork": fork,
                "path": list(map(_uuid, path)),
                "messages": _messages_of(path, said, message_of_line),
            }
        )
    return out


_number = attrgetter("number")
_uuid = attrgetter("uuid")


def _messages_of(
    path: list[Line], said: dict[int, dict[str, Any]], make: Callable[[Line], dict[str, Any]]
) -> list[dict[str, Any]]:
    """The message of each line of ``path``: those made for an earlier path taken from ``said``
    in one C loop, the others made by ``make``."""
    got: list[dict[str, Any] | None] = list(map(said.get, map(id, path)))
    if None not in got:
        return got  # type: ignore[return-value]  # (no None in it)
    return [m if m is not None else make(ln) for m, ln in zip(got, path, strict=True)]


def subagent_links(lines: list[Line]) -> dict[str, str]:
    """agent id -> the tool_use id of the ``Task``/``Agent`` call that started it, from the
    main thread's tool_result lines: ``toolUseResult.agentId`` (2.1.x) or the line's own
    ``agentId`` (2.0.x)."""
    links: dict[str, str] = {}
    for ln in lines:
        rec = ln.record
        if ln.type != "user" or rec.get("isSidechain"):
            continue
        result = rec.get("toolUseResult")
        agent = result.get("agentId") if isinstance(result, dict) else None
        if not isinstance(agent, str):
            agent = rec.get("agentId")
        if not isinstance(agent, str):
            continue
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                tid = b.get("tool_use_id")
                if isinstance(tid, str):
                    links.setdefault(agent, tid)
    return links


def sidechain_groups(lines: list[Line]) -> dict[str, list[Line]]:
    """The sub-agents written into a main transcript as ``isSidechain`` lines (Claude Code 1.0
    and 2.0): agent id (the lines' ``agentId``, else the uuid of the sidechain's first line) ->
    its lines, in file order. Empty for a sub-agent's own file (every line a sidechain)."""
    if not any(ln.type in MESSAGE_TYPES and not ln.record.get("isSidechain") for ln in lines):
        return {}
    groups: dict[str, list[Line]] = {}
    group_of: dict[str, str] = {}  # uuid -> group key
    for ln in lines:
        rec = ln.record
        if not rec.get("isSidechain"):
            continue
        agent = rec.get("agentId")
        if isinstance(agent, str) and agent:
            key = agent
        elif ln.parent is not None and ln.parent in group_of:
            key = group_of[ln.parent]
        else:
            key = ln.uuid or f"line-{ln.number}"
        if ln.uuid:
            group_of[ln.uuid] = key
        groups.setdefault(key, []).append(ln)
    return {k: v for k, v in groups.items() if any(ln.type in MESSAGE_TYPES for ln in v)}


#: user text that is not what the user asked: commands, caveats, reminders, an interruption
_SKIP_PROMPT_PREFIXES = (
    "<command-",
    "<local-command",
    "Caveat:",
    "<system-reminder>",
    INTERRUPTED,
)


def prompt_text(message: Any) -> str | None:
    """The text a user line's ``message`` asks, when it is a prompt (not tool results, not
    Claude Code's own commands and reminders); what a session is listed by."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return None
    content = message.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = [
            str(b.get("text", ""))
            for b in content
            if isinstance(b, dict) and b.get("type") == "text"
        ]
        if not texts or any(
            isinstance(b, dict) and b.get("type") == "tool_result" for b in content
        ):
            return None
        text = "\n".join(texts)
    else:
        return None
    stripped = text.strip()
    if not stripped or stripped.startswith(_SKIP_PROMPT_PREFIXES):
        return None
    return stripped


def head_of(lines: list[Line]) -> tuple[str | None, str | None]:
    """(the working directory, the first prompt) a transcript's lines name: the first of
    each (``ctxview sessions`` finds them in the file's head)."""
    cwd = prompt = None
    for ln in lines:
        rec = ln.record
        if cwd is None:
            found = rec.get("cwd")
            if isinstance(found, str):
                cwd = found
        if prompt is None and ln.type == "user" and not rec.get("isMeta"):
            prompt = prompt_text(rec.get("message"))
        if cwd is not None and prompt is not None:
            break
    return cwd, prompt


def title_of(lines: list[Line]) -> str | None:
    for ln in lines:
        if ln.type == "ai-title" and isinstance(ln.record.get("title"), str):
            return str(ln.record["title"])
    for ln in lines:
        if ln.type == "summary" and isinstance(ln.record.get("summary"), str):
            return str(ln.record["summary"])
    return None
