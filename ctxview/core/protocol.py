"""Protocol checks: would the Anthropic Messages API accept this ``messages`` array?

Each :class:`Problem` carries the text the API returns in its 400 ``invalid_request_error`` for
that request, in the API's wording, so the inspector can show exactly what a send would fail with.
``docs/protocol.md`` lists every rule with its evidence; a rule without evidence of a rejection
is a warning, never an error.

The checks follow what the API does before it validates:

* everything before the last ``compaction`` block is ignored (the compaction replaces it);
* consecutive messages of the same role are merged into one turn, so tool_use/tool_result pairs,
  thinking order and server-tool results are checked per merged turn (two assistant messages whose
  tool_uses are answered together by the next user message are valid);
* ``role: "system"`` messages are turns of their own (current models accept them mid-conversation,
  after a user turn).

Indices in problems are positions in the ``messages`` array as given (not in merged turns).

:func:`check_protocol` checks one request; :class:`ProtocolChecker` one window after another
(memoised per turn); :class:`WindowErrors` and :class:`Rejections` count the errors of the
windows of a request replay (see the section at the end).
"""

from __future__ import annotations

import operator
from collections.abc import Container, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import accumulate, islice
from typing import Any, Literal

from ctxview.core.compaction import effective_messages, has_compaction

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One protocol problem of a request's ``messages``.

    ``index`` is the message (``-1`` for the request as a whole), ``block`` the content block
    within it when the problem is about one block, ``ids`` the tool_use ids involved.
    """

    index: int
    code: str
    severity: Severity
    message: str
    block: int | None = None
    ids: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Content block types the API documents (anything else is reported as a warning).
KNOWN_BLOCK_TYPES = frozenset(
    {
        "text",
        "image",
        "document",
        "search_result",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "server_tool_use",
        "web_search_tool_result",
        "web_fetch_tool_result",
        "code_execution_tool_result",
        "bash_code_execution_tool_result",
        "text_editor_code_execution_tool_result",
        "tool_search_tool_result",
        "advisor_tool_result",
        "mcp_tool_use",
        "mcp_tool_result",
        "container_upload",
        "compaction",
        "tool_reference",
        "tool_addition",
    }
)

#: Result blocks that pair with a use block earlier in the same assistant turn.
SERVER_RESULT_PARTNER = {
    "web_search_tool_result": "server_tool_use",
    "web_fetch_tool_result": "server_tool_use",
    "code_execution_tool_result": "server_tool_use",
    "bash_code_execution_tool_result": "server_tool_use",
    "text_editor_code_execution_tool_result": "server_tool_use",
    "tool_search_tool_result": "server_tool_use",
    "advisor_tool_result": "server_tool_use",
    "mcp_tool_result": "mcp_tool_use",
}

_ROLES = ("user", "assistant", "system")
_THINKING = ("thinking", "redacted_thinking")
#: assistant block types whose rules span the merged turn (thinking order, the final block,
#: server tools pairing inside the turn): a message holding one is checked by ``_check_turn``
_TURN_TYPES = frozenset((*_THINKING, *SERVER_RESULT_PARTNER.values(), *SERVER_RESULT_PARTNER))


def _blocks(message: Any) -> list[Any]:
    content = (
        message.get("content") if (type(message) is dict or isinstance(message, Mapping)) else None
    )
    if isinstance(content, list):
        return content
    return []


def _btype(block: Any) -> Any:
    return block.get("type") if (type(block) is dict or isinstance(block, Mapping)) else None


def _is_empty(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return content == ""
    if isinstance(content, list):
        return len(content) == 0
    return False


def _role(message: Any) -> Any:
    return message.get("role") if (type(message) is dict or isinstance(message, Mapping)) else None


# -- turns ---------------------------------------------------------------------------------------

#: A problem with message indices relative to the start of its turn; resolved by ``_resolve``.
#: ``parts`` is the message text: ``str`` pieces verbatim, ``int`` pieces are relative indices.
_Rel = tuple[int, str, Severity, tuple[str | int, ...], int | None, tuple[str, ...]]


def _turns(roles: Sequence[Any]) -> list[tuple[int, int]]:
    """``(start, end)`` of each run of consecutive messages of one role (the API's merged turns:
    a run of system messages is one system turn); a message with another role is a turn of its
    own."""
    turns: list[tuple[int, int]] = []
    append = turns.append
    n = len(roles)
    start = 0
    for i in range(1, n):
        role = roles[i]
        if role != roles[i - 1] or role not in _ROLES:
            append((start, i))
            start = i
    if n:
        append((start, n))
    return turns


#: What the rules need of one message, read once (:func:`_summary`): ``(errors, kind, uses,
#: results, other, slow, warned)``. ``errors`` counts the errors that depend on nothing but the
#: message and its role (empty content except an assistant's, empty or blank text blocks except
#: an assistant's, a tool_result outside a user message, a tool_use outside an assistant message,
#: an invalid role); ``kind`` is 0 when nothing else applies, 1 when it holds tool_uses (an
#: assistant's) or tool_results (a user's), 2 when a rule spans the merged turn or the window's
#: end (thinking, server tool blocks, blank text, a final text block ending in whitespace, empty
#: assistant content) or a block has a shape not modelled here; ``uses`` the tool_use ids of an
#: assistant message; ``results`` a user message's ``(tool_use_id, no other block before it)``;
#: ``other`` a user message holds a block that is not a tool_result; ``slow`` a Mapping that is
#: not a dict (or a str/list subclass) that only the full check reads; ``warned`` a block of an
#: unknown type (a warning).
_Summary = tuple[int, int, list[str] | None, list[tuple[str, bool]] | None, bool, bool, bool]


def _summary(m: Any, role: Any) -> _Summary:
    if type(m) is not dict:
        return 0, 0, None, None, False, True, False
    if role not in _ROLES:
        return 1, 0, None, None, False, False, False  # invalid_role (a turn of its own)
    content = m.get("content")
    if type(content) is str:
        if not content:
            if role == "assistant":
                return 0, 2, None, None, False, False, False  # empty unless the window's last
            return 1, 0, None, None, False, False, False
        return 0, 0, None, None, False, False, False
    if type(content) is not list:
        if content is None:
            if role == "assistant":
                return 0, 2, None, None, False, False, False
            return 1, 0, None, None, False, False, False
        # a subclass: leave it all to the full check
        return 0, 0, None, None, False, isinstance(content, (str, list)), False
    if not content:
        if role == "assistant":
            return 0, 2, None, None, False, False, False
        return 1, 0, None, None, False, False, False
    c = 0
    k = 0
    slow = False
    warned = False
    if role == "assistant":
        u: list[str] | None = None
        for b in content:
            if type(b) is not dict:
                if isinstance(b, Mapping):
                    slow = True
                k = 2
                continue
            t = b.get("type")
            if t == "text":
                tx = b.get("text")
                if tx == "" or tx is None:
                    c += 1
                elif type(tx) is not str or not tx.strip():
                    k = 2  # blank: an error unless the merged turn has a tool_use
            elif t == "tool_use":
                if u is None:
                    u = []
                u.append(str(b.get("id")))
            elif t == "tool_result":
                c += 1
            elif type(t) is not str or t in _TURN_TYPES:
                k = 2
            elif t not in KNOWN_BLOCK_TYPES:
                warned = True
        tail = content[-1]
        if type(tail) is dict and tail.get("type") == "text":
            tx = tail.get("text")
            if type(tx) is not str or tx != tx.rstrip():
                k = 2  # trailing whitespace: an error in the window's final block
        if u is not None and k == 0:
            k = 1
        return c, k, u, None, False, slow, warned
    if role == "user":
        r: list[tuple[str, bool]] | None = None
        seen_other = False
        for b in content:
            if type(b) is not dict:
                if isinstance(b, Mapping):
                    slow = True
                seen_other = True
                warned = True
                continue
            t = b.get("type")
            if t == "tool_result":
                if r is None:
                    r = []
                r.append((str(b.get("tool_use_id")), not seen_other))
                continue
            seen_other = True
            if t == "text":
                tx = b.get("text")
                if tx == "" or tx is None or (isinstance(tx, str) and not tx.strip()):
                    c += 1
            elif t == "tool_use":
                c += 1
            elif t is not None and type(t) is not str:
                k = 2
            elif t not in KNOWN_BLOCK_TYPES:
                warned = True
        if r is not None and k == 0:
            k = 1
        return c, k, None, r, seen_other, slow, warned
    # system: its placement rules are warnings
    for b in content:
        if type(b) is not dict:
            if isinstance(b, Mapping):
                slow = True
            warned = True
            continue
        t = b.get("type")
        if t == "text":
            tx = b.get("text")
            if tx == "" or tx is None or (isinstance(tx, str) and not tx.strip()):
                c += 1
        elif t == "tool_result" or t == "tool_use":
            c += 1
        elif t is not None and type(t) is not str:
            k = 2
        elif t not in KNOWN_BLOCK_TYPES:
            warned = True
    return c, k, None, None, False, slow, warned


def _result_errors(results: Sequence[tuple[str, bool]], expected: Container[str]) -> int:
    """The errors of a user turn's tool_results (``(tool_use_id, no other block before it)``, as
    :func:`_summary` reads them) after an assistant turn with the tool_use ids ``expected``, as
    :func:`_check_user_turn` tells them: one per orphan or duplicate result, and one when a
    matched result does not lead."""
    seen: set[str] = set()
    errors = 0
    misplaced = False
    for tid, leads in results:
        if tid not in expected or tid in seen:
            errors += 1  # orphan_tool_result, duplicate_tool_result
        else:
            seen.add(tid)
            if not leads:
                misplaced = True
    return errors + misplaced  # tool_result_not_first


def _plain_turn(
    prev: Sequence[Any] | None,
    turn: Sequence[Any],
    nxt: Sequence[Any] | None,
    is_first: bool,
    is_last: bool,
) -> bool:
    """A one-message turn that :func:`_check_turn_full` finds nothing in, told from the
    message's :func:`_summary` without building its problems (the last window of every
    ``requests`` and each check of the app walk thousands of them): a user or assistant message
    whose summary holds no error, no warning and nothing left to the full check, whose
    tool_results answer each of the previous assistant turn's tool_uses once, leading the
    message, and whose tool_uses the next turn answers. Any doubt is checked in full;
    ``tests/unit/core/test_protocol.py`` holds the two equal."""
    if len(turn) != 1:
        return False
    m = turn[0]
    if type(m) is not dict:
        return False
    role = m.get("role")
    if role != "user" and (role != "assistant" or is_first):
        return False
    c, k, uses, res, _, slow, warn = _summary(m, role)
    if c or k == 2 or slow or warn:
        return False
    if role == "user":
        if res is None:
            return True
        if prev is None or _role(prev[0]) != "assistant":
            return False
        expected: set[str] = set()
        for pm in prev:
            pu, slow = _summary(pm, "assistant")[2::3]
            if slow:
                return False
            if pu is not None:
                expected.update(pu)
        return _result_errors(res, expected) == 0
    if uses and nxt is not None:
        if len(nxt) != 1 or type(nxt[0]) is not dict or nxt[0].get("role") != "user":
            return False
        answers = nxt[0].get("content")
        if type(answers) is not list:
            return False
        answered = {
            str(b.get("tool_use_id"))
            for b in answers
            if type(b) is dict and b.get("type") == "tool_result"
        }
        return all(u in answered for u in uses)
    return True


def _check_turn(
    prev: Sequence[Any] | None,
    turn: Sequence[Any],
    nxt: Sequence[Any] | None,
    is_first: bool,
    is_last: bool,
    compacted: bool,
) -> list[_Rel]:
    """The problems of one merged turn, with message indices relative to its first message."""
    if _plain_turn(prev, turn, nxt, is_first, is_last):
        return []
    return _check_turn_full(prev, turn, nxt, is_first, is_last, compacted)


def _check_turn_full(
    prev: Sequence[Any] | None,
    turn: Sequence[Any],
    nxt: Sequence[Any] | None,
    is_first: bool,
    is_last: bool,
    compacted: bool,
) -> list[_Rel]:
    """:func:`_check_turn` for any turn: every rule, block by block."""
    out: list[_Rel] = []

    def add(
        r: int,
        code: str,
        parts: tuple[str | int, ...],
        severity: Severity = "error",
        block: int | None = None,
        ids: tuple[str, ...] = (),
    ) -> None:
        out.append((r, code, severity, parts, block, ids))

    role = _role(turn[0])
    if role not in _ROLES:
        for r in range(len(turn)):
            add(
                r,
                "invalid_role",
                ("messages.", r, ".role: Input should be 'user' or 'assistant'"),
            )
        return out
    if is_first and role == "assistant" and not compacted:
        add(
            0,
            "first_not_user",
            ('messages: first message must use the "user" role',),
            "warning",
        )
    for r in range(1, len(turn)):
        add(
            r,
            "consecutive_same_role",
            (
                "messages.",
                r,
                f": consecutive {role} messages are merged by the API into one turn (messages.",
                r - 1,
                " and messages.",
                r,
                ")",
            ),
            "warning",
        )

    # every message of the turn, block by block
    last_r = len(turn) - 1
    turn_has_tool_use = role == "assistant" and any(
        _btype(b) == "tool_use" for m in turn for b in _blocks(m)
    )
    for r, message in enumerate(turn):
        content = message.get("content")
        if _is_empty(content) and not (is_last and r == last_r and role == "assistant"):
            add(
                r,
                "empty_content",
                (
                    "messages.",
                    r,
                    ": all messages must have non-empty content except for the optional final "
                    "assistant message",
                ),
            )
        for j, block in enumerate(_blocks(message)):
            btype = _btype(block)
            if btype == "text":
                text = block.get("text")
                if text == "" or text is None:
                    add(
                        r,
                        "empty_text_block",
                        ("messages: text content blocks must be non-empty",),
                        block=j,
                    )
                elif isinstance(text, str) and not text.strip() and not turn_has_tool_use:
                    add(
                        r,
                        "whitespace_text_block",
                        ("messages: text content blocks must contain non-whitespace text",),
                        block=j,
                    )
            elif btype == "tool_result" and role != "user":
                add(
                    r,
                    "tool_result_in_assistant",
                    (
                        "messages.",
                        r,
                        f".content.{j}: `tool_result` blocks can only be in `user` messages",
                    ),
                    block=j,
                )
            elif btype == "tool_use" and role != "assistant":
                add(
                    r,
                    "tool_use_in_user",
                    (
                        "messages.",
                        r,
                        f".content.{j}: `tool_use` blocks can only be in `assistant` messages",
                    ),
                    block=j,
                )
            elif btype not in KNOWN_BLOCK_TYPES:
                shown = btype if isinstance(btype, str) else repr(btype)
                add(
                    r,
                    "unknown_block_type",
                    ("messages.", r, f".content.{j}: unknown content block type {shown!r}"),
                    "warning",
                    block=j,
                )

    if role == "assistant":
        _check_assistant_turn(turn, nxt, is_last, add)
    elif role == "user":
        _check_user_turn(prev, turn, add)
    else:
        _check_system_turn(prev, nxt, is_first, add)
    return out


def _check_assistant_turn(
    turn: Sequence[Any], nxt: Sequence[Any] | None, is_last: bool, add: Any
) -> None:
    merged = [(r, j, b) for r, m in enumerate(turn) for j, b in enumerate(_blocks(m))]
    types = [_btype(b) for _, _, b in merged]
    # thinking order, per merged turn
    if any(t in _THINKING for t in types):
        # server-tool blocks may come before the thinking (a recorded 200:
        # pai_code_exec_files_thinking_cache_req3.json); the first other block must be thinking
        k = 0
        while k < len(types) and (
            types[k] == "server_tool_use" or types[k] in SERVER_RESULT_PARTNER
        ):
            k += 1
        r0, _, _ = merged[0]
        if k < len(types) and types[k] not in _THINKING:
            add(
                r0,
                "thinking_not_first",
                (
                    "messages.",
                    r0,
                    ".content.0: If an assistant message contains any thinking blocks, the first "
                    f"block must be thinking or redacted_thinking. Found {types[k]}.",
                ),
                block=0,
            )
    if merged and types[-1] == "thinking":
        r_last, j_last, _ = merged[-1]
        add(
            r_last,
            "final_thinking",
            (
                "messages.",
                r_last,
                ": The final block in an assistant message cannot be `thinking`.",
            ),
            block=j_last,
        )
    if is_last and merged and types[-1] == "text":
        r_last, _, tail = merged[-1]
        text = tail.get("text")
        if isinstance(text, str) and text.strip() and text != text.rstrip():
            add(
                r_last,
                "final_assistant_trailing_whitespace",
                ("messages: final assistant content cannot end with trailing whitespace",),
            )
    # server and MCP tools pair inside the assistant turn: a result after its use block
    seen: dict[str, set[str]] = {"server_tool_use": set(), "mcp_tool_use": set()}
    for (r, j, b), t in zip(merged, types, strict=True):
        if t in seen:
            seen[t].add(str(b.get("id")))
            continue
        partner = SERVER_RESULT_PARTNER.get(t) if isinstance(t, str) else None
        if partner is None:
            continue
        tid = b.get("tool_use_id")
        if str(tid) not in seen[partner]:
            add(
                r,
                "orphan_server_tool_result",
                (
                    "messages.",
                    r,
                    f".content.{j}: unexpected `tool_use_id` found in `{t}` blocks: {tid}. "
                    f"Each `{t}` block must have a corresponding `{partner}` block before it.",
                ),
                block=j,
                ids=(str(tid),),
            )
    # tool_use ids must be answered at the start of the next (user) turn
    uses = [
        (r, str(b.get("id"))) for (r, _, b), t in zip(merged, types, strict=True) if t == "tool_use"
    ]
    if not uses or nxt is None:
        return
    answered: set[str] = set()
    if _role(nxt[0]) == "user":
        answered = {
            str(b.get("tool_use_id")) for m in nxt for b in _blocks(m) if _btype(b) == "tool_result"
        }
    missing = [tid for _, tid in uses if tid not in answered]
    if missing:
        r_at = next(r for r, tid in uses if tid == missing[0])
        add(
            r_at,
            "unanswered_tool_use",
            (
                "messages.",
                r_at,
                ": `tool_use` ids were found without `tool_result` blocks immediately after: "
                f"{', '.join(missing)}. Each `tool_use` block must have a corresponding "
                "`tool_result` block in the next message.",
            ),
            ids=tuple(missing),
        )


def _check_user_turn(prev: Sequence[Any] | None, turn: Sequence[Any], add: Any) -> None:
    expected: list[str] = []
    if prev is not None and _role(prev[0]) == "assistant":
        expected = [str(b.get("id")) for m in prev for b in _blocks(m) if _btype(b) == "tool_use"]
    expected_set = set(expected)
    seen: set[str] = set()
    leading = True
    misplaced: list[str] = []
    for r, message in enumerate(turn):
        for j, block in enumerate(_blocks(message)):
            if _btype(block) != "tool_result":
                leading = False
                continue
            tid = block.get("tool_use_id")
            key = str(tid)
            if key not in expected_set:
                add(
                    r,
                    "orphan_tool_result",
                    (
                        "messages.",
                        r,
                        f".content.{j}: unexpected `tool_use_id` found in `tool_result` blocks: "
                        f"{tid}. Each `tool_result` block must have a corresponding `tool_use` "
                        "block in the previous message.",
                    ),
                    block=j,
                    ids=(key,),
                )
            elif key in seen:
                add(
                    r,
                    "duplicate_tool_result",
                    (
                        "messages.",
                        r,
                        f".content.{j}: each tool_use must have a single result. Found multiple "
                        f"`tool_result` blocks with id: {tid}",
                    ),
                    block=j,
                    ids=(key,),
                )
            else:
                seen.add(key)
                if not leading:
                    misplaced.append(key)
    if misplaced:
        add(
            0,
            "tool_result_not_first",
            (
                "messages.",
                0,
                f": Did not find {len(expected)} `tool_result` block(s) at the beginning of this "
                "message. Messages following `tool_use` blocks must begin with a matching number "
                "of `tool_result` blocks.",
            ),
            ids=tuple(misplaced),
        )


def _check_system_turn(
    prev: Sequence[Any] | None, nxt: Sequence[Any] | None, is_first: bool, add: Any
) -> None:
    if is_first:
        add(
            0,
            "system_message_first",
            (
                "messages.",
                0,
                ': a `role: "system"` message cannot open the conversation; put it in the '
                "top-level `system` parameter",
            ),
            "warning",
        )
    elif prev is not None and _role(prev[0]) != "user":
        add(
            0,
            "system_message_placement",
            ("messages.", 0, ': a `role: "system"` message must come right after a user turn'),
            "warning",
        )
    if nxt is not None and _role(nxt[0]) != "assistant":
        add(
            0,
            "system_message_placement",
            (
                "messages.",
                0,
                ': a `role: "system"` message must be the last message or be followed by an '
                "assistant turn",
            ),
            "warning",
        )


def _resolve(rel: _Rel, base: int) -> Problem:
    r, code, severity, parts, block, ids = rel
    text = "".join(p if isinstance(p, str) else str(base + p) for p in parts)
    return Problem(base + r, code, severity, text, block, ids)


# -- the request ---------------------------------------------------------------------------------


def _check_request(system: Any, n_messages: int) -> list[Problem]:
    """The problems of the request as a whole: the system blocks, and no messages at all."""
    problems: list[Problem] = []
    if isinstance(system, list):
        for block in system:
            if _btype(block) == "text" and block.get("text", "") == "":
                problems.append(
                    Problem(
                        -1,
                        "empty_system_text_block",
                        "error",
                        "system: text content blocks must be non-empty",
                    )
                )
    if n_messages == 0:
        problems.append(
            Problem(0, "no_messages", "error", "messages: at least one message is required")
        )
    return problems


def check_protocol(messages: Sequence[Mapping[str, Any]], system: Any = None) -> list[Problem]:
    """Check a request's messages against the API's structural rules.

    Returns ``[]`` for a valid request (warnings aside). ``system`` is checked for empty text
    blocks.
    """
    return ProtocolChecker(memo=False).check(list(enumerate(messages)), system)


class ProtocolChecker:
    """``check_protocol`` over a window of ``(id, message)`` entries, memoised per turn.

    A turn's problems depend only on its messages, its neighbouring turns and whether it is first
    or last, so they are cached under the ids of (previous turn, turn, next turn, first, last) and
    re-indexed on reuse. A window that changed at its ends (the usual eviction or append) is
    rechecked in O(n) dict look-ups instead of O(n) block scans.
    """

    def __init__(self, memo: bool = True) -> None:
        self._memo = memo
        self._cache: dict[tuple[Any, ...], list[_Rel]] = {}
        self._has_compaction: dict[int, bool] = {}

    def _compaction_start(self, entries: Sequence[tuple[int, Mapping[str, Any]]]) -> int | None:
        """Index of the last message holding a compaction block (memoised per id), or None."""
        seen = self._has_compaction
        for k in range(len(entries) - 1, -1, -1):
            eid, message = entries[k]
            found = seen.get(eid) if self._memo else None
            if found is None:
                found = has_compaction(message)
                if self._memo:
                    seen[eid] = found
            if found:
                return k
        return None

    def check(
        self, entries: Sequence[tuple[int, Mapping[str, Any]]], system: Any = None
    ) -> list[Problem]:
        problems = _check_request(system, len(entries))
        if not entries:
            return problems
        start = self._compaction_start(entries)
        compacted = start is not None
        if start is None:
            start = 0
            eff = [e[1] for e in entries]
        else:
            eff = effective_messages([e[1] for e in entries[start:]])[1]
        ids: list[Any] = [e[0] for e in entries[start:]]
        if compacted:
            ids[0] = ("compaction", ids[0])  # its content was cut at the compaction block
        turns = _turns([m.get("role") if type(m) is dict else _role(m) for m in eff])
        nt = len(turns)
        memo = self._memo
        cache = self._cache
        if memo and len(cache) > 4 * nt + 1024:
            cache.clear()
            if len(self._has_compaction) > 4 * len(entries) + 1024:
                self._has_compaction.clear()
        # one key per turn (an id for the usual one-message turn), with sentinels at both ends
        tkeys: list[Any] = [None]
        if memo:
            tkeys.extend(ids[a] if b - a == 1 else tuple(ids[a:b]) for a, b in turns)
            tkeys.append(None)
        last = nt - 1
        key: tuple[Any, ...] = ()
        for t in range(nt):
            found = None
            if memo:
                key = (tkeys[t], tkeys[t + 1], tkeys[t + 2], t == 0, t == last)
                found = cache.get(key)
            if found is None:
                a, b = turns[t]
                pa, pb = turns[t - 1] if t > 0 else (0, 0)
                na, nb = turns[t + 1] if t < last else (0, 0)
                found = _check_turn(
                    eff[pa:pb] if t > 0 else None,
                    eff[a:b],
                    eff[na:nb] if t < last else None,
                    t == 0,
                    t == last,
                    compacted,
                )
                if memo:
                    cache[key] = found
            if found:
                base = start + turns[t][0]
                problems.extend(_resolve(rel, base) for rel in found)
        return problems


# -- the windows of one conversation, checked as a replay goes ------------------------------------

# The request replays ask whether the API would reject each of tens of thousands of windows of one
# conversation: :class:`WindowErrors` for the range form (``[first] + messages[lo:hi]``, the
# built-in strategies), :class:`Rejections` for windows of any shape, fed their changes.
# A turn's problems depend only on it, its neighbouring turns and whether it is last. So in the
# range form the turns strictly inside a window are turns of the whole conversation with the same
# neighbours: their errors are a prefix-sum look-up over one count of the whole conversation, and
# only the few turns at the window's two ends are counted again (and memoised: the same ends
# recur across requests and across strategies).


def _prefix(values: Sequence[int]) -> list[int]:
    return list(accumulate(values, initial=0))


_ROLE_SET = frozenset(_ROLES)

Piece = tuple[
    int, int, int
]  #: ``(head, a, b)``: ``[messages[head]] + messages[a:b]``, head -1: none


class WindowErrors:
    """Whether the API would reject ``[first] + messages[lo:hi]`` (no ``compaction`` block in the
    conversation: the caller checks), counted per merged turn (see the comment above).

    A window turn is a *piece*: ``(head, a, b)``, the messages ``[messages[head]] +
    messages[a:b]`` of one role (``head`` is the window's first message when the API merges it
    into the turn after it, else -1). Its errors are counted from the :func:`_summary` of each
    message, made once (``_summarise``) and shared with :func:`_plain_turn`, exactly as
    ``_check_turn`` counts them:

    * the errors that depend on nothing but the message and its role (empty content except an
      assistant's, empty or blank text blocks except an assistant's, a tool_result outside a user
      message, a tool_use outside an assistant message, an invalid role) add up (``cf``);
    * a user turn after an assistant turn: its tool_results against the tool_use ids of that
      turn (orphans, duplicates, and one error when a result does not lead); after anything
      else, every tool_result is an orphan (one error each, so they add up too);
    * an assistant turn with tool_uses: one error when the next turn (a user turn's results;
      anything else answers none) leaves one unanswered, none when it is the window's last;
    * an assistant message whose rules span its merged turn (thinking, server tool blocks,
      blank text, a final text block ending in whitespace, empty content) or any block of a
      shape the summary does not model: its piece is checked by ``_check_turn`` itself.

    So an error rule added to ``_check_turn_full`` is counted here too, or its messages are sent
    to ``_check_turn``: ``tests/unit/core/test_request_window_sources.py`` reads every error code of this module and
    holds, for a conversation breaking each, every window's count to the full check's.
    """

    def __init__(self, msgs: Sequence[Mapping[str, Any]], roles: list[Any], system: Any) -> None:
        self.msgs = msgs
        self.roles = roles
        self.system = system
        probe = check_protocol([{"role": "user", "content": "x"}], system)
        self.sys_errors = sum(1 for p in probe if p.severity == "error")
        self._summarise()
        n = len(roles)
        try:  # the usual conversation: valid roles, alternating: each message is a turn
            single = _ROLE_SET.issuperset(roles) and not any(
                map(operator.eq, roles, islice(roles, 1, None))
            )
        except TypeError:  # an unhashable role
            single = False
        if single:  # (what _turns gives then, without a loop in Python)
            turns = list(zip(range(n), range(1, n + 1), strict=True))
            self.turn_of = list(range(n))
        else:
            turns = _turns(roles)
            self.turn_of = [t for t, (a, b) in enumerate(turns) for _ in range(b - a)]
        self.turns = turns
        last = len(turns) - 1
        # errors of each turn of the whole conversation, with its own neighbours (the usual
        # one-message turns inline, as _eval counts them)
        errs: list[int] = []
        append = errs.append
        cf, kind, uses, res = self._cf, self._kind, self._uses, self._res
        for t, (a, b) in enumerate(turns):
            if b - a == 1:
                k = kind[a]
                if k == 0:
                    append(cf[a])  # nothing in it depends on a neighbour
                    continue
                if k == 1:
                    role = roles[a]
                    if role == "assistant":
                        if t == last:
                            append(cf[a])
                            continue
                        na, nb = turns[t + 1]
                        if nb - na == 1:
                            found = res.get(na) if roles[na] == "user" else None
                            if found is None:
                                append(cf[a] + 1)  # none answered
                                continue
                            ua = uses[a]
                            if len(ua) == 1 and len(found) == 1:  # one use, one result
                                append(cf[a] + (ua[0] != found[0][0]))
                                continue
                            answered = {tid for tid, _ in found}
                            append(cf[a] + any(u not in answered for u in ua))
                            continue
                    elif role == "user" and t > 0:
                        pa, pb = turns[t - 1]
                        if pb - pa == 1 and roles[pa] == "assistant":
                            expected = uses.get(pa)
                            e = cf[a]
                            if expected is None:
                                append(e + len(res[a]))  # all orphans
                                continue
                            append(e + _result_errors(res[a], expected))
                            continue
            append(
                self._eval(
                    -1,
                    a,
                    b,
                    (-1, *turns[t - 1]) if t > 0 else None,
                    (-1, *turns[t + 1]) if t < last else None,
                    t == last,
                )
            )
        self.prefix = _prefix(errs)
        self.errs = errs
        self._front: dict[int, int] = {}
        self._back: dict[int, int] = {}

    # -- the summary of each message -----------------------------------------------------------
    def _summarise(self) -> None:
        msgs, roles = self.msgs, self.roles
        n = len(msgs)
        cf = [0] * n
        kind = [0] * n
        nres = [0] * n  #: tool_result blocks of a user message
        uses: dict[int, list[str]] = {}
        res: dict[int, list[tuple[str, bool]]] = {}
        other = [False] * n
        slow = False
        for i in range(n):
            c, k, u, r, o, s, _ = _summary(msgs[i], roles[i])
            cf[i] = c
            kind[i] = k
            other[i] = o
            if s:
                slow = True
            if u is not None:
                uses[i] = u
            if r is not None:
                res[i] = r
                nres[i] = len(r)
        self._cf, self._kind, self._nres = cf, kind, nres
        self._uses, self._res, self._other = uses, res, other
        self._cfp = _prefix(cf)
        self._nresp = _prefix(nres)
        self._kp = _prefix([1 if k else 0 for k in kind])
        self._xp = _prefix([1 if k == 2 else 0 for k in kind])
        self._slow = slow

    # -- one window turn -----------------------------------------------------------------------
    def _list(self, p: Piece) -> list[Any]:
        head, a, b = p
        part = list(self.msgs[a:b])
        return [self.msgs[head], *part] if head >= 0 else part

    def _role(self, p: Piece) -> Any:
        return self.roles[p[0] if p[0] >= 0 else p[1]]

    def _ids_of_uses(self, p: Piece) -> list[str]:
        head, a, b = p
        uses = self._uses
        out: list[str] = list(uses.get(head, ())) if head >= 0 else []
        if self._kp[b] > self._kp[a]:
            for x in range(a, b):
                u = uses.get(x)
                if u is not None:
                    out.extend(u)
        return out

    def _ids_of_results(self, p: Piece) -> set[str]:
        head, a, b = p
        res = self._res
        out: set[str] = set()
        if head >= 0 and head in res:
            out.update(tid for tid, _ in res[head])
        if self._kp[b] > self._kp[a]:
            for x in range(a, b):
                r = res.get(x)
                if r is not None:
                    out.update(tid for tid, _ in r)
        return out

    def _eval(
        self, head: int, a: int, b: int, prev: Piece | None, nxt: Piece | None, is_last: bool
    ) -> int:
        """Errors of the window turn ``(head, a, b)`` between ``prev`` and ``nxt`` (pieces, or
        None at the window's ends)."""
        kind, KP = self._kind, self._kp
        if head >= 0:
            np_ = (kind[head] != 0) + KP[b] - KP[a]
            cfs = self._cf[head] + self._cfp[b] - self._cfp[a]
        else:
            np_ = KP[b] - KP[a]
            cfs = self._cfp[b] - self._cfp[a]
        if not np_:
            return cfs
        if self._slow or (head >= 0 and kind[head] == 2) or self._xp[b] > self._xp[a]:
            rels = _check_turn(
                self._list(prev) if prev is not None else None,
                self._list((head, a, b)),
                self._list(nxt) if nxt is not None else None,
                prev is None,
                is_last,
                False,
            )
            return sum(1 for r in rels if r[2] == "error")
        role = self.roles[head if head >= 0 else a]
        if role == "user":
            expected = (
                self._ids_of_uses(prev)
                if prev is not None and self._role(prev) == "assistant"
                else None
            )
            if not expected:  # every tool_result is an orphan
                nr = self._nres
                return cfs + (nr[head] if head >= 0 else 0) + self._nresp[b] - self._nresp[a]
            # the results of the turn's messages, each leading only if no message before
            # it in the turn held another block
            results: list[tuple[str, bool]] = []
            leading = True
            res, other = self._res, self._other
            for x in ([head] if head >= 0 else []) + list(range(a, b)):
                r = res.get(x)
                if r is not None:
                    results.extend((tid, leading and leads) for tid, leads in r)
                if other[x]:
                    leading = False
            return cfs + _result_errors(results, set(expected))
        if role == "assistant":
            if nxt is None:
                return cfs
            used = self._ids_of_uses((head, a, b))
            answered = self._ids_of_results(nxt) if self._role(nxt) == "user" else set()
            return cfs + any(tid not in answered for tid in used)  # unanswered_tool_use
        return cfs

    def _sum(self, seq: list[Piece]) -> int:
        total = 0
        last = len(seq) - 1
        ev = self._eval
        for j, p in enumerate(seq):
            total += ev(*p, seq[j - 1] if j else None, seq[j + 1] if j < last else None, j == last)
        return total

    def errors(self, first: int, lo: int, hi: int) -> int:
        """Error count of the window ``[first] + messages[lo:hi]`` (``first < lo``)."""
        if hi <= lo:
            return self._eval(first, 0, 0, None, None, True)
        roles, turns, turn_of = self.roles, self.turns, self.turn_of
        ta, tb = turn_of[lo], turn_of[hi - 1]
        if tb - ta > 4:
            # the front turns (they depend on first and lo only), the turns inside (their own
            # errors), the two last turns (they depend on hi only)
            ga, gb = turns[ta]
            errs = self.errs
            front = -1
            if not self._slow and self._kind[first] != 2 and self._xp[gb] == self._xp[lo]:
                # the usual fronts, counted without a memo
                rl = roles[lo]
                cfp, nrp = self._cfp, self._nresp
                if roles[first] == rl and rl in _ROLES:
                    if rl != "assistant":  # merged into one turn, after none: orphans all
                        front = (
                            self._cf[first]
                            + self._nres[first]
                            + cfp[gb]
                            - cfp[lo]
                            + nrp[gb]
                            - nrp[lo]
                            + errs[ta + 1]
                        )
                elif lo == ga and self._kind[first] == 0:
                    # a first message no neighbour changes, then lo's whole turn after it
                    if rl == "user":  # after no tool_use: orphans all
                        front = cfp[gb] - cfp[ga] + nrp[gb] - nrp[ga]
                    else:
                        front = errs[ta]
                    front += self._cf[first] + errs[ta + 1]
            key = first * (len(roles) + 1) + lo
            if front < 0:
                front = self._front.get(key, -1)
            if front < 0:
                if roles[first] == roles[lo] and roles[lo] in _ROLES:
                    seq: list[Piece] = [(first, lo, gb)]  # the API merges them into one turn
                else:
                    seq = [(first, 0, 0), (-1, lo, gb)]
                seq.append((-1, *turns[ta + 1]))
                seq.append((-1, *turns[ta + 2]))
                front = 0
                ev = self._eval
                for j in range(len(seq) - 1):
                    front += ev(*seq[j], seq[j - 1] if j else None, seq[j + 1], False)
                if len(self._front) > 1_000_000:
                    self._front.clear()
                self._front[key] = front
            a_end, b_end = turns[tb]
            if hi == b_end and (roles[a_end] != "assistant" or self._kp[b_end] == self._kp[a_end]):
                # the last turn whole, its errors not depending on being last
                return front + self.prefix[tb + 1] - self.prefix[ta + 2]
            back = self._back.get(hi)
            if back is None:
                end = (-1, a_end, hi)
                before = (-1, *turns[tb - 1])
                back = self._eval(*before, (-1, *turns[tb - 2]), end, False)
                back += self._eval(*end, before, None, True)
                if len(self._back) > 1_000_000:
                    self._back.clear()
                self._back[hi] = back
            return front + self.prefix[tb - 1] - self.prefix[ta + 2] + back
        gb = turns[ta][1]
        b1 = gb if gb < hi else hi
        if roles[first] == roles[lo] and roles[lo] in _ROLES:
            seq = [(first, lo, b1)]
        else:
            seq = [(first, 0, 0), (-1, lo, b1)]
        seq.extend((-1, *turns[t]) for t in range(ta + 1, tb))
        if tb > ta:
            seq.append((-1, turns[tb][0], hi))
        return self._sum(seq)

    def rejected(self, first: int, lo: int, hi: int) -> bool:
        if first < 0:
            return True  # no messages
        return self.sys_errors > 0 or self.errors(first, lo, hi) > 0


class Rejections:
    """Whether each request's window would be rejected, kept up to date incrementally, for
    windows of any shape (pins, edits, rewinds: the context form of the replay).

    The API merges consecutive same-role messages into turns before it checks them, and a turn's
    problems depend on it and its neighbouring turns. So after a change only the turns around it
    are counted again: the changed positions are widened to the turn before and the turn after,
    and checked (``check_protocol``) on a slice with one more turn of context on each side; the
    error count of the other messages is carried over. A window holding a ``compaction`` block is
    checked whole (the API ignores everything before the last one).
    ``test_incremental_rejections_match_a_full_check`` holds it against a full check.
    """

    def __init__(self, msgs: Sequence[Mapping[str, Any]], system: Any) -> None:
        self.msgs = msgs
        self.roles = [m.get("role") for m in msgs]
        self.compaction = {i for i, m in enumerate(msgs) if has_compaction(m)}
        self.err: dict[int, int] = {}
        self.total = 0
        probe = check_protocol([{"role": "user", "content": "x"}], system)
        self.sys_errors = sum(1 for p in probe if p.severity == "error")

    def clear(self) -> None:
        self.err.clear()
        self.total = 0

    def drop(self, tid: int) -> None:
        self.total -= self.err.pop(tid, 0)

    def _turn_start(self, win: list[int], x: int) -> int:
        roles = self.roles
        role = roles[win[x]]
        if role not in _ROLES:
            return x
        while x > 0 and roles[win[x - 1]] == role:
            x -= 1
        return x

    def _turn_end(self, win: list[int], x: int) -> int:
        roles = self.roles
        role = roles[win[x]]
        if role not in _ROLES:
            return x
        last = len(win) - 1
        while x < last and roles[win[x + 1]] == role:
            x += 1
        return x

    def update(self, win: list[int], ranges: list[tuple[int, int]]) -> None:
        n = len(win)
        if self.compaction and any(t in self.compaction for t in win):
            ranges = [(0, n - 1)]
        spans = sorted((max(0, a), min(n - 1, b)) for a, b in ranges if b >= 0 and a < n)
        widened: list[tuple[int, int]] = []
        for a, b in spans:
            if a > b:
                continue
            # the turns holding a..b, and the turn before and after them
            lo = self._turn_start(win, a)
            if lo > 0:
                lo = self._turn_start(win, lo - 1)
            hi = self._turn_end(win, b)
            if hi < n - 1:
                hi = self._turn_end(win, hi + 1)
            widened.append((lo, hi))
        merged: list[list[int]] = []
        for a, b in sorted(widened):
            if merged and a <= merged[-1][1] + 1:
                merged[-1][1] = max(merged[-1][1], b)
            else:
                merged.append([a, b])
        msgs = self.msgs
        for a, b in merged:
            # one more turn of context each side, so the counted turns see their neighbours
            lo = self._turn_start(win, a - 1) if a > 0 else 0
            hi = self._turn_end(win, b + 1) + 1 if b < n - 1 else n
            counts: dict[int, int] = {}
            for p in check_protocol([msgs[t] for t in win[lo:hi]]):
                x = lo + p.index
                if p.severity == "error" and p.index >= 0 and a <= x <= b:
                    counts[x] = counts.get(x, 0) + 1
            for x in range(a, b + 1):
                tid = win[x]
                new, old = counts.get(x, 0), self.err.get(tid, 0)
                if new != old:
                    self.total += new - old
                    if new:
                        self.err[tid] = new
                    else:
                        del self.err[tid]

    def rejected(self, n: int) -> bool:
        return n == 0 or self.total > 0 or self.sys_errors > 0


def errors(problems: Sequence[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]
