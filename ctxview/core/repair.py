"""Repair a request's ``messages`` so the API accepts it, with the minimal fix per problem.

For every error-severity :class:`~ctxview.core.protocol.Problem`, :func:`fix_for` names the
smallest change that removes it (``docs/protocol.md`` lists the rules):

=============================== ====================================================================
code                            fix (``action``)
=============================== ====================================================================
orphan_tool_result              drop the block, or its whole message when nothing else is left
                                (``drop_block`` / ``drop_message``)
unanswered_tool_use             answer each id with an error tool_result
                                ``[interrupted: no result was recorded]`` at the front of the next
                                user turn, or in a new user message when there is none; where the
                                rule set wants results right after their call (Chat Completions),
                                at the front of the results that follow the call, or in a new
                                message of results right after it (``answer_tool_use``)
tool_result_not_first           move the turn's tool_result blocks to the front of its first
                                message (``move_tool_results``)
duplicate_tool_result           drop the later result (``drop_block`` / ``drop_message``)
orphan_server_tool_result       drop the block (``drop_block`` / ``drop_message``)
thinking_not_first              move the turn's thinking blocks to its front (``restore_thinking_order``)
final_thinking                  drop the trailing thinking block (``drop_block`` / ``drop_message``)
empty_content                   drop the message (``drop_message``)
reasoning_without_following_    drop the stored reasoning item whose following item is gone: it
item                            is only sent back beside that item (``drop_message``)
empty_text_block                drop the block (``drop_block`` / ``drop_message``)
whitespace_text_block           drop the block (``drop_block`` / ``drop_message``)
final_assistant_trailing_       strip the trailing whitespace of the last text block
whitespace                      (``strip_trailing_whitespace``)
empty_system_text_block         drop the empty system text blocks (``drop_system_block``)
=============================== ====================================================================

``tool_result_in_assistant``, ``tool_use_in_user``, ``invalid_role`` and ``no_messages`` have no
safe fix (the message's meaning is unknown): :func:`repair` reports them and leaves them alone.

:func:`repair` applies fixes one at a time, re-checking after each, until the window is valid or
only problems without a safe fix remain. A message no fix involves is returned as the very same
object (so it serialises byte for byte as before); a changed message is a new dict.

The problems are the checker's, under its provider's rule set (``ProtocolChecker.rules``): a
file of another API is repaired by that API's rules, never by the Messages API's, and where the
rule set says results follow their call at once the answers go there. Repairing is idempotent:
a repaired window has no error a fix is known for, so repairing it again changes nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ctxview.core.compaction import last_compaction
from ctxview.core.protocol import SERVER_RESULT_PARTNER, Problem, ProtocolChecker
from ctxview.core.window import json_copy

#: The content of the tool_result that answers an interrupted tool call.
INTERRUPTED = "[interrupted: no result was recorded]"


def inserted_meta() -> dict[str, Any]:
    """The metadata of a message a repair inserted (``ctxview repair``, the TUI's ``r`` and
    ``A``): the timeline marks its row ``added``, and a saved session keeps why it is there."""
    return {"edited": ["inserted by repair"], "inserted_by": "repair"}


#: Codes with no safe fix: repair reports them and changes nothing for them.
NO_SAFE_FIX = {
    "tool_result_in_assistant": "a tool_result inside an assistant message cannot be moved safely",
    "tool_use_in_user": "a tool_use inside a user message cannot be moved safely",
    "invalid_role": "a message with an unknown role cannot be given one safely",
    "no_messages": "a request with no messages has nothing to repair",
    "invalid_message": "a message that is not an object cannot be rebuilt safely",
    "invalid_message_key": "a key the API does not take may matter to whoever wrote it",
    "invalid_content": "content of the wrong kind cannot be rewritten safely",
    "invalid_block": "a content block that is not an object cannot be rebuilt safely",
    "invalid_block_type": "a block without a string type cannot be given one safely",
    "invalid_block_field": "a missing or malformed field of a block cannot be invented safely",
}

_THINKING = ("thinking", "redacted_thinking")

#: Codes fixed by moving blocks within their turn.
_REORDER = frozenset({"thinking_not_first", "tool_result_not_first"})

#: Codes fixed by dropping the problem's block.
_DROP_BLOCK = frozenset(
    {
        "orphan_tool_result",
        "duplicate_tool_result",
        "orphan_server_tool_result",
        "empty_text_block",
        "whitespace_text_block",
        "final_thinking",
        "duplicate_tool_use_id",
    }
)


#: Codes fixed by dropping the problem's message, and why
_DROP_MESSAGE = {
    "empty_content": "empty content",
    "reasoning_without_following_item": "a stored reasoning item without its following item",
}


@dataclass(frozen=True, slots=True)
class Fix:
    """One applied (or planned) fix.

    ``index`` is the problem's message position in the window given to :func:`repair` (``-1``
    for the request's ``system``); ``touched`` the positions of the given messages it changed or
    removed (a message it inserts has none).
    """

    index: int
    code: str
    action: str
    detail: str
    touched: tuple[int, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "code": self.code,
            "action": self.action,
            "detail": self.detail,
        }


@dataclass
class RepairResult:
    #: the repaired messages (an untouched message is the same object as in the input)
    messages: list[dict[str, Any]]
    #: the repaired ``system`` (the same object when untouched)
    system: Any
    fixes: list[Fix]
    #: error problems with no safe fix (indices in the input's positions)
    unfixable: list[Problem] = field(default_factory=list)
    #: per output message: its position in the input, or None for an inserted message
    origin: list[int | None] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.unfixable

    @property
    def touched(self) -> set[int]:
        """Input positions changed or removed by some fix."""
        return {i for f in self.fixes for i in f.touched}

    @property
    def removed(self) -> set[int]:
        kept = {o for o in self.origin if o is not None}
        return self.touched - kept


def _content_list(message: Mapping[str, Any]) -> list[Any]:
    """A message's content as a list of blocks (string content as one text block)."""
    content = message.get("content")
    if isinstance(content, list):
        return list(content)
    if isinstance(content, str) and content:
        return [{"type": "text", "text": content}]
    return []


def _btype(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else None


def _with_content(message: Mapping[str, Any], content: list[Any]) -> dict[str, Any]:
    """A copy of ``message`` with this content (the other keys kept, in their order)."""
    new = {k: json_copy(v) for k, v in message.items()}
    new["content"] = [json_copy(b) for b in content]
    return new


#: Keys of changed message versions: negative and unique for the process, so a checker memoised
#: on a context's ids (>= 0) never confuses two versions, across repairs and previews.
_VERSION_KEYS = itertools.count(-1, -1)


def next_version_key() -> int:
    return next(_VERSION_KEYS)


class _State:
    """The messages being repaired, with each one's input position and a version key for the
    memoised checker (a changed message gets a new key)."""

    def __init__(
        self, messages: Sequence[dict[str, Any]], system: Any, keys: Sequence[int] | None
    ) -> None:
        self.msgs: list[dict[str, Any]] = list(messages)
        self.origin: list[int | None] = list(range(len(messages)))
        # the given messages' keys (a context's ids, >= 0); a changed version gets a new,
        # negative one, so a checker memoised on the ids stays right
        self.keys: list[int] = list(keys) if keys is not None else list(range(len(messages)))
        self.system = system

    def _key(self) -> int:
        return next_version_key()

    def role(self, pos: int) -> Any:
        return self.msgs[pos].get("role") if 0 <= pos < len(self.msgs) else None

    def turn(self, pos: int) -> tuple[int, int]:
        """``(start, end)`` of the merged turn holding ``pos``."""
        role = self.role(pos)
        a = pos
        while a > 0 and self.role(a - 1) == role:
            a -= 1
        b = pos + 1
        while b < len(self.msgs) and self.role(b) == role:
            b += 1
        return a, b

    def set(self, pos: int, message: dict[str, Any], touched: list[int]) -> None:
        self.msgs[pos] = message
        self.keys[pos] = self._key()
        o = self.origin[pos]
        if o is not None:
            touched.append(o)

    def remove(self, pos: int, touched: list[int]) -> None:
        o = self.origin[pos]
        if o is not None:
            touched.append(o)
        del self.msgs[pos], self.origin[pos], self.keys[pos]

    def insert(self, pos: int, message: dict[str, Any]) -> None:
        self.msgs.insert(pos, message)
        self.origin.insert(pos, None)
        self.keys.insert(pos, self._key())

    def set_blocks(self, pos: int, blocks: list[Any], touched: list[int]) -> str:
        """Give ``pos`` these blocks, or remove it when none are left; the action's name."""
        if not blocks:
            self.remove(pos, touched)
            return "drop_message"
        self.set(pos, _with_content(self.msgs[pos], blocks), touched)
        return "drop_block"

    def where(self, pos: int) -> int:
        """The input position of the message at ``pos`` (for an inserted one: the next input
        message's, or -1)."""
        for p in range(pos, len(self.origin)):
            o = self.origin[p]
            if o is not None:
                return o
        return -1


def _results_only(message: Mapping[str, Any]) -> bool:
    """A user message of tool_result blocks alone (Chat Completions' ``tool`` messages)."""
    content = message.get("content")
    return (
        message.get("role") == "user"
        and isinstance(content, list)
        and bool(content)
        and all(_btype(b) == "tool_result" for b in content)
    )


def _apply(
    state: _State,
    p: Problem,
    compaction: tuple[int, int] | None = None,
    follow: bool = False,
) -> Fix | None:
    """Apply the fix of one problem; None when it has no safe fix here. ``compaction`` is the
    last compaction block's ``(message, block)`` (the checker counts that message's blocks from
    it); ``follow``: results must come right after their call (``RuleSet.results_follow_call``).
    """
    code = p.code
    pos = p.index
    at = state.where(pos) if pos >= 0 else -1
    touched: list[int] = []
    if code == "empty_system_text_block":
        system = state.system
        if not isinstance(system, list):
            return None
        kept = [b for b in system if not (_btype(b) == "text" and b.get("text", "") in ("", None))]
        state.system = kept if kept else ""
        return Fix(-1, code, "drop_system_block", "drop the empty system text block(s)")
    if not 0 <= pos < len(state.msgs):
        return None
    message = state.msgs[pos]
    blocks = _content_list(message)
    block = p.block
    if block is not None and compaction is not None and compaction[0] == pos:
        block += compaction[1]  # the checker's block indices start at the compaction block
    if code in _DROP_BLOCK:
        if block is None or not 0 <= block < len(blocks):
            return None
        if len(blocks) == 1 and len(state.msgs) == 1:
            return None  # dropping it would leave no messages at all
        what = {
            "orphan_tool_result": "the orphaned tool_result",
            "duplicate_tool_result": "the duplicate tool_result",
            "orphan_server_tool_result": f"the orphaned {_btype(blocks[block])}",
            "empty_text_block": "the empty text block",
            "whitespace_text_block": "the whitespace-only text block",
            "final_thinking": "the trailing thinking block",
            "duplicate_tool_use_id": "the repeated tool_use",
        }[code]
        ids = f" for {', '.join(p.ids)}" if p.ids else ""
        del blocks[block]
        action = state.set_blocks(pos, blocks, touched)
        detail = f"drop {what}{ids} (messages.{at}.content.{p.block})"
        if action == "drop_message":
            detail += f"; messages.{at} had nothing else and is dropped"
        return Fix(at, code, action, detail, tuple(touched))
    if code in _DROP_MESSAGE:
        if len(state.msgs) == 1:
            return None  # the only message: dropping it leaves nothing to send
        state.remove(pos, touched)
        why = _DROP_MESSAGE[code]
        return Fix(at, code, "drop_message", f"drop messages.{at} ({why})", tuple(touched))
    if code == "unanswered_tool_use":
        if not p.ids:
            return None
        end = pos + 1 if follow else state.turn(pos)[1]
        results = [
            {"type": "tool_result", "tool_use_id": tid, "content": INTERRUPTED, "is_error": True}
            for tid in p.ids
        ]
        names = ", ".join(p.ids)
        joins = end < len(state.msgs) and (
            _results_only(state.msgs[end]) if follow else state.role(end) == "user"
        )
        if joins:
            nxt = state.msgs[end]
            where = state.where(end)
            state.set(end, _with_content(nxt, results + _content_list(nxt)), touched)
            detail = (
                f"answer {names} with an error tool_result ({INTERRUPTED}) at the front of "
                f"messages.{where}"
            )
        else:
            state.insert(end, {"role": "user", "content": results})
            detail = (
                f"answer {names} with an error tool_result ({INTERRUPTED}) in a new user message "
                f"after messages.{at}"
            )
        return Fix(at, code, "answer_tool_use", detail, tuple(touched))
    if code == "tool_result_not_first":
        a, b = state.turn(pos)
        results = [
            blk
            for q in range(a, b)
            for blk in _content_list(state.msgs[q])
            if _btype(blk) == "tool_result"
        ]
        # rebuild from the last message down, so positions stay valid while emptied ones go
        for q in range(b - 1, a - 1, -1):
            own = _content_list(state.msgs[q])
            rest = [blk for blk in own if _btype(blk) != "tool_result"]
            new = results + rest if q == a else rest
            if new == own:
                continue
            if not new:
                state.remove(q, touched)
            else:
                state.set(q, _with_content(state.msgs[q], new), touched)
        ids = ", ".join(p.ids)
        return Fix(
            at,
            code,
            "move_tool_results",
            f"move the tool_result block(s) for {ids} to the front of messages.{at}",
            tuple(touched),
        )
    if code == "thinking_not_first":
        a, b = state.turn(pos)
        thinking = [
            blk
            for q in range(a, b)
            for blk in _content_list(state.msgs[q])
            if _btype(blk) in _THINKING
        ]
        for q in range(b - 1, a - 1, -1):
            own = _content_list(state.msgs[q])
            rest = [blk for blk in own if _btype(blk) not in _THINKING]
            if q == a:
                k = 0  # server-tool blocks may precede the thinking (a recorded 200)
                while k < len(rest) and (
                    _btype(rest[k]) == "server_tool_use" or _btype(rest[k]) in SERVER_RESULT_PARTNER
                ):
                    k += 1
                new = rest[:k] + thinking + rest[k:]
            else:
                new = rest
            if new == own:
                continue
            if not new:
                state.remove(q, touched)
            else:
                state.set(q, _with_content(state.msgs[q], new), touched)
        return Fix(
            at,
            code,
            "restore_thinking_order",
            f"move the thinking block(s) to the front of messages.{at}",
            tuple(touched),
        )
    if code == "final_assistant_trailing_whitespace":
        for j in range(len(blocks) - 1, -1, -1):
            if _btype(blocks[j]) == "text" and isinstance(blocks[j].get("text"), str):
                stripped = blocks[j]["text"].rstrip()
                if not stripped:
                    return None
                blocks[j] = {**blocks[j], "text": stripped}
                state.set(pos, _with_content(message, blocks), touched)
                return Fix(
                    at,
                    code,
                    "strip_trailing_whitespace",
                    f"strip the trailing whitespace of messages.{at}.content.{j}",
                    tuple(touched),
                )
        return None
    return None


def fix_summary(p: Problem, follow: bool = False) -> str:
    """The fix :func:`repair` applies for a problem, named without applying it (O(1): for the
    detail pane); ``""`` for a warning. ``follow``: the rule set wants results right after their
    call (``RuleSet.results_follow_call``)."""
    if p.severity != "error":
        return ""
    where = "right after its message" if follow else "at the front of the next user turn"
    ids = ", ".join(p.ids)
    at = f"messages.{p.index}" + (f".content.{p.block}" if p.block is not None else "")
    return {
        "orphan_tool_result": f"drop the orphaned tool_result for {ids} ({at}), or its whole "
        "message when nothing else is left",
        "duplicate_tool_result": f"drop the duplicate tool_result for {ids} ({at})",
        "orphan_server_tool_result": f"drop the orphaned server-tool result for {ids} ({at})",
        "empty_text_block": f"drop the empty text block ({at})",
        "whitespace_text_block": f"drop the whitespace-only text block ({at})",
        "final_thinking": f"drop the trailing thinking block ({at})",
        "duplicate_tool_use_id": f"drop the repeated tool_use {ids} ({at})",
        "empty_content": f"drop messages.{p.index} (empty content)",
        "reasoning_without_following_item": f"drop messages.{p.index} (a stored reasoning "
        "item without its following item)",
        "unanswered_tool_use": f"answer {ids} with an error tool_result ({INTERRUPTED}) {where}",
        "tool_result_not_first": f"move the tool_result block(s) for {ids} to the front of "
        f"messages.{p.index}",
        "thinking_not_first": f"move the thinking block(s) to the front of messages.{p.index}",
        "final_assistant_trailing_whitespace": "strip the trailing whitespace of the last text "
        f"block of messages.{p.index}",
        "empty_system_text_block": "drop the empty system text block(s)",
    }.get(p.code, f"no safe fix: {describe_unfixable(p)}")


def describe_unfixable(p: Problem) -> str:
    """Why a problem has no safe fix, in one line."""
    if p.code in NO_SAFE_FIX:
        return NO_SAFE_FIX[p.code]
    if p.code in _DROP_BLOCK or p.code in _DROP_MESSAGE:
        return "it is the only message: dropping it would leave the request with no messages"
    return f"{p.code}: no safe fix is known"


def repair(
    messages: Sequence[dict[str, Any]],
    system: Any = None,
    *,
    only: int | None = None,
    max_steps: int | None = None,
    keys: Sequence[int] | None = None,
    checker: ProtocolChecker | None = None,
) -> RepairResult:
    """Apply the minimal fix of every error-severity problem until the window is valid.

    Returns the repaired messages, the fixes (indices in the input's positions, in the order they
    were applied) and the problems that have no safe fix. The input is not modified. With
    ``only``, just the problems of the input message at that position are fixed. ``keys`` (the
    messages' ids, all >= 0) and ``checker`` (a :class:`ProtocolChecker` memoised on those ids,
    such as the one that found the problems) make the re-checks cache look-ups.
    """
    state = _State(messages, system, keys)
    if checker is None:
        checker = ProtocolChecker(memo=True)
    follow = checker.rules.results_follow_call
    fixes: list[Fix] = []
    unfixable: list[Problem] = []
    skipped: set[tuple[Any, ...]] = set()
    limit = max_steps if max_steps is not None else 4 * len(messages) + 64
    steps = 0
    while True:
        entries = list(zip(state.keys, state.msgs, strict=True))
        pending: list[tuple[Problem, tuple[Any, ...]]] = []
        for p in checker.check(entries, state.system):
            if p.severity != "error":
                continue
            if only is not None and not (
                0 <= p.index < len(state.origin) and state.origin[p.index] == only
            ):
                continue
            key_at = state.keys[p.index] if 0 <= p.index < len(state.keys) else None
            sig = (p.code, key_at, p.block, p.ids)
            if sig not in skipped:
                pending.append((p, sig))
        if not pending:
            break
        if steps >= limit:
            for q, _ in pending:
                unfixable.append(replace(q, index=state.where(q.index) if q.index >= 0 else -1))
            break
        steps += 1

        # Block drops do not disturb each other when applied from the last block up: take them
        # all in one pass (so each names its block as the input holds it); else the first fix.
        # One pass applies every fix that cannot disturb another, from the end of the window
        # to its start: a fix may only touch positions below those touched before it in the pass
        # (block drops in one message go together, from its last block up). Within a turn, a
        # reordering comes first: it keeps blocks a drop would lose ([text, thinking] is both
        # thinking_not_first and final_thinking).
        def order(ps: tuple[Problem, tuple[Any, ...]]) -> tuple[int, bool, int, int]:
            p = ps[0]
            start = state.turn(p.index)[0] if 0 <= p.index < len(state.msgs) else -1
            return (start, p.code in _REORDER, p.index, p.block or 0)

        floor = len(state.msgs) + 1
        drop_at: int | None = None
        # problems start at the compaction message, and fixes never remove it: it stays put
        compaction = last_compaction(state.msgs)
        applied: list[tuple[int, int, Fix]] = []
        for p, sig in sorted(pending, key=order, reverse=True):
            if p.code in NO_SAFE_FIX:
                fix = None
            elif p.index < 0:
                fix = _apply(state, p, compaction, follow)
            else:
                start, end = state.turn(p.index)
                if p.code == "unanswered_tool_use":
                    hi = p.index + 1 if follow else end
                elif p.code in _REORDER:
                    hi = end - 1
                else:
                    hi = p.index
                if not (hi < floor or (p.code in _DROP_BLOCK and p.index == drop_at)):
                    continue  # the next pass
                fix = _apply(state, p, compaction, follow)
                if fix is not None:
                    if p.code in _DROP_BLOCK:
                        floor, drop_at = p.index, p.index
                    else:
                        floor, drop_at = start, None
            if fix is None:
                skipped.add(sig)
                u = replace(p, index=state.where(p.index) if p.index >= 0 else -1)
                if not any((v.code, v.index, v.ids) == (u.code, u.index, u.ids) for v in unfixable):
                    unfixable.append(u)
                continue
            applied.append((fix.index, -(p.block or 0), fix))
        # messages in order; within one, in the order applied (the last block first)
        fixes.extend(f for _, _, f in sorted(applied, key=lambda t: (t[0], t[1])))
    return RepairResult(state.msgs, state.system, fixes, unfixable, state.origin)


def plan(messages: Sequence[dict[str, Any]], system: Any = None) -> dict[int, list[Fix]]:
    """The fixes :func:`repair` would apply, grouped by input message position (for showing
    each problem's fix beside it)."""
    out: dict[int, list[Fix]] = {}
    for f in repair(messages, system).fixes:
        out.setdefault(f.index, []).append(f)
    return out
