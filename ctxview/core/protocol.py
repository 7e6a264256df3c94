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

Each rule is written once: the rules of one message alone in :func:`_scan`, the tool_use /
tool_result pairing in :func:`_result_problems` and :func:`_unanswered`, the rules spanning a
merged turn in ``_check_*_turn``. The full check reports their problems with positions; the
replays' counts add up the same functions' findings.

:func:`check_protocol` checks one request; :class:`ProtocolChecker` one window after another
(memoised per turn); :class:`WindowErrors` and :class:`Rejections` count the errors of the
windows of a request replay (see the section at the end).
"""

from __future__ import annotations

import operator
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import accumulate, islice
from typing import Any, Literal, Protocol, overload

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


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule of this module as a provider's API words it: ``text`` is the API's error text
    for it, a template with ``{index}`` (the message), ``{block}`` and ``{ids}`` (the tool call
    ids, comma-separated); None keeps the checker's own wording (Anthropic's). ``evidence``:
    where the text was read (``docs/protocol.md`` lists it)."""

    code: str
    text: str | None = None
    evidence: str = ""

    def word(self, problem: Problem) -> Problem:
        if self.text is None:
            return problem
        text = self.text.format(
            index=problem.index,
            block=problem.block if problem.block is not None else 0,
            ids=", ".join(problem.ids),
        )
        return Problem(
            problem.index, problem.code, problem.severity, text, problem.block, problem.ids
        )


class WindowIndex(Protocol):
    """Whether the window ``[messages[first]] + messages[lo:hi]`` of one conversation breaks a
    rule (``first < lo``), each answer the full check's."""

    def rejected(self, first: int, lo: int, hi: int) -> bool: ...


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules of this module that apply to one provider's requests, each in its API's words.
    ``rules`` None: every rule, in the checker's own (Anthropic's) wording. A code not in
    ``rules`` is not checked for that provider (its API has no such rule): its problems are
    dropped, never shown as false errors."""

    provider: str
    rules: Mapping[str, Rule] | None = None
    #: the provider's own rules, where its API checks what no rule of this module does (each a
    #: function of the window's messages giving its problems in the API's words)
    checks: tuple[Callable[[Sequence[Any]], list[Problem]], ...] = ()
    #: for a rule set of ``checks`` alone (``rules`` empty): a function of a conversation's
    #: messages giving its :class:`WindowIndex`, which tells whether a window of it breaks any
    #: of them without checking the window whole (a request replay asks for every request)
    windows: Callable[[Sequence[Any]], WindowIndex] | None = None
    #: where the results of an assistant message's tool calls must come: True, in the messages
    #: right after it, before any other (Chat Completions: its ``tool`` messages follow the
    #: message with ``tool_calls`` at once); False, in the next user turn (the Messages API's
    #: merged turns; the Responses API pairs by call id, anywhere after the call)
    results_follow_call: bool = False
    #: whether calls are unanswered (``unanswered_tool_use``) when the next user message answers
    #: none of them: False where the API takes such a message as a new user turn (Gemini
    #: counts the function response parts of a response turn only)
    unanswered_without_results: bool = True

    def applies(self, code: str) -> bool:
        return self.rules is None or code in self.rules

    def apply(self, problems: Sequence[Problem]) -> list[Problem]:
        """``problems`` as this provider's API reports them: the rules it has, in its words."""
        rules = self.rules
        if rules is None:
            return list(problems)
        return [rules[p.code].word(p) for p in problems if p.code in rules]

    def check(self, problems: Sequence[Problem], messages: Sequence[Any]) -> list[Problem]:
        """:meth:`apply`, then the provider's own :attr:`checks` over ``messages``."""
        out = self.apply(problems)
        if not self.unanswered_without_results:
            out = [p for p in out if not _answers_none(p, messages)]
        for check in self.checks:
            out.extend(check(messages))
        return out


def _answers_none(problem: Problem, messages: Sequence[Any]) -> bool:
    """An ``unanswered_tool_use`` problem whose calls the next user message does not answer at
    all: it holds no ``tool_result`` block (or there is none)."""
    if problem.code != "unanswered_tool_use" or problem.index < 0:
        return False
    for m in messages[problem.index + 1 :]:
        if _role(m) != "user":
            continue
        content = m.get("content") if isinstance(m, Mapping) else None
        return not (
            isinstance(content, list)
            and any(isinstance(b, Mapping) and b.get("type") == "tool_result" for b in content)
        )
    return True


#: the Messages API: every rule, in the checker's own wording
ANTHROPIC_RULES = RuleSet("anthropic")


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


# -- merged turns --------------------------------------------------------------------------------

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


# -- one message ---------------------------------------------------------------------------------

#: A problem of one message alone: ``(code, severity, parts, block, ids)``; the ``int`` parts of
#: its text are message indices relative to that message (0: the message itself).
_Local = tuple[str, Severity, tuple[str | int, ...], int | None, tuple[str, ...]]


def _local(
    code: str, parts: tuple[str | int, ...], block: int | None = None, severity: Severity = "error"
) -> _Local:
    return code, severity, parts, block, ()


_NONE: tuple[_Local, ...] = ()
_INVALID_ROLE = _local(
    "invalid_role", ("messages.", 0, ".role: Input should be 'user' or 'assistant'")
)
_EMPTY_CONTENT = _local(
    "empty_content",
    (
        "messages.",
        0,
        ": all messages must have non-empty content except for the optional final assistant "
        "message",
    ),
)


def _empty_text(j: int) -> _Local:
    return _local("empty_text_block", ("messages: text content blocks must be non-empty",), j)


def _blank_text(j: int) -> _Local:
    return _local(
        "whitespace_text_block",
        ("messages: text content blocks must contain non-whitespace text",),
        j,
    )


def _unknown_type(j: int, btype: Any) -> _Local:
    shown = btype if isinstance(btype, str) else repr(btype)
    return _local(
        "unknown_block_type",
        ("messages.", 0, f".content.{j}: unknown content block type {shown!r}"),
        j,
        "warning",
    )


#: What the rules need of one message, read in one walk of its blocks (:func:`_scan`):
#: ``(local, kind, uses, results, other)``. ``local`` holds the problems that depend on nothing but
#: the message (its role included): an invalid role, empty content except an assistant's, empty
#: text blocks, blank text blocks except an assistant's, a tool_result outside a user message, a
#: tool_use outside an assistant message, a block of an unknown type. ``kind`` is 0 when no other
#: rule applies to the message, 1 when it holds tool_uses (an assistant's) or tool_results (a
#: user's), 2 when a rule spans its merged turn or the window's end (an assistant's thinking,
#: server tool blocks, blank text, a final text block ending in whitespace, empty content).
#: ``uses`` are an assistant message's tool_use ids; ``results`` a user message's tool_results as
#: ``(tool_use_id, no other block before it, block index)``; ``other``: a user message holds a
#: block that is not a tool_result.
_Summary = tuple[
    tuple[_Local, ...], int, list[str] | None, list[tuple[str, bool, int]] | None, bool
]


def _field(j: int, path: str, why: str) -> _Local:
    return _local("invalid_block_field", ("messages.", 0, f".content.{j}.{path}: {why}"), j)


#: The fields a block kind requires (the API's reference), with the kind of value each takes.
_REQUIRED: dict[str, tuple[tuple[str, type], ...]] = {
    "text": (("text", str),),
    "tool_use": (("id", str), ("name", str), ("input", Mapping)),
    "tool_result": (("tool_use_id", str),),
    "image": (("source", Mapping),),
    "document": (("source", Mapping),),
}
_SHOULD_BE: dict[type, str] = {
    str: "Input should be a valid string",
    Mapping: "Input should be a valid dictionary",
}
#: the ids a tool_use may have: a space, a dot, a colon or an escape character in one (an id
#: made by another provider or an MCP server) is answered 400 with this text
#: (tests/acceptance/error_texts.md)
_TOOL_USE_ID = re.compile(r"[a-zA-Z0-9_-]+")
_TOOL_USE_ID_WHY = "String should match pattern '^[a-zA-Z0-9_-]+$'"
#: what a tool_result's content list may hold
_RESULT_ITEMS = frozenset(("text", "image", "document", "search_result", "tool_reference"))


def _missing_fields(j: int, t: str, b: Mapping[str, Any], at: str = "") -> list[_Local]:
    """The required fields of the block ``b`` of kind ``t`` that are missing or of the wrong
    kind (and a tool_result's content: a string or a list of content blocks)."""
    out: list[_Local] = []
    for name, kind in _REQUIRED.get(t, ()):
        if name not in b:
            out.append(_field(j, f"{at}{t}.{name}", "Field required"))
        elif not isinstance(b[name], kind):
            out.append(_field(j, f"{at}{t}.{name}", _SHOULD_BE[kind]))
    if t == "tool_result" and not at:
        content = b.get("content")
        if isinstance(content, list):
            for k, item in enumerate(content):
                it = item.get("type") if isinstance(item, Mapping) else None
                if not isinstance(it, str) or it not in _RESULT_ITEMS:
                    where = f"tool_result.content.{k}"
                    out.append(_field(j, where, "Input does not match the expected shape."))
                elif it in _REQUIRED:
                    out.extend(_missing_fields(j, it, item, f"tool_result.content.{k}."))
        elif content is not None and not isinstance(content, str):
            out.append(_field(j, "tool_result.content", "Input should be a valid list"))
    return out


_MESSAGE_KEYS = frozenset(("role", "content"))
_INVALID_MESSAGE = _local(
    "invalid_message", ("messages.", 0, ": Input does not match the expected shape.")
)


def _message_shape(m: Mapping[Any, Any]) -> list[_Local]:
    """A message's keys: ``role`` and ``content``, both required, nothing else."""
    out = [
        _local(
            "invalid_message_key",
            (
                "messages.",
                0,
                f".{k if isinstance(k, str) else repr(k)}: Extra inputs are not permitted",
            ),
        )
        for k in m
        if k not in _MESSAGE_KEYS
    ]
    if "content" not in m:
        out.append(_local("invalid_content", ("messages.", 0, ".content: Field required")))
    return out


def _repeated_uses(blocks: Sequence[Any]) -> list[_Local]:
    """An assistant message's tool_use ids must be unique: each tool_use whose id an earlier
    one of the message holds (one error each)."""
    seen: set[str] = set()
    out: list[_Local] = []
    for j, b in enumerate(blocks):
        if _btype(b) == "tool_use":
            tid = str(b.get("id"))
            if tid in seen:
                code, severity, parts, _, _ = _local(
                    "duplicate_tool_use_id",
                    ("messages.", 0, f".content.{j}: `tool_use` ids must be unique"),
                    j,
                )
                out.append((code, severity, parts, j, (tid,)))
            seen.add(tid)
    return out


def _scan(m: Any) -> _Summary:
    """The :data:`_Summary` of one message: the one place its local rules are written (the full
    check reports its problems, the replays' counts add up its errors)."""
    if type(m) is dict or isinstance(m, Mapping):
        role = m.get("role")
        content = m.get("content")
    else:
        return (_INVALID_MESSAGE,), 0, None, None, False
    found: list[_Local] | None = None
    if len(m) != 2 or "content" not in m or "role" not in m:
        found = _message_shape(m) or None
    if role != "user" and role != "assistant" and role != "system":
        return (_INVALID_ROLE, *(found or ())), 0, None, None, False
    asst = role == "assistant"
    if type(content) is str or isinstance(content, str):
        if content:
            # trailing whitespace: an error when it ends the window (a prefill)
            kind = 2 if asst and content[-1].isspace() else 0
            return (tuple(found) if found else _NONE), kind, None, None, False
        content = None
    elif not isinstance(content, list) and content is not None:
        bad = _local("invalid_content", ("messages.", 0, ".content: Input should be a valid list"))
        return (*(found or ()), bad), 0, None, None, False
    if not content:
        if found and "content" not in m:  # no content at all: its own error
            return tuple(found), 0, None, None, False
        if asst:  # an error unless it is the window's last message
            return (tuple(found) if found else _NONE), 2, None, None, False
        return (*(found or ()), _EMPTY_CONTENT), 0, None, None, False
    user = role == "user"
    kind = 0
    uses: list[str] | None = None
    results: list[tuple[str, bool, int]] | None = None
    other = False
    for j, b in enumerate(content):
        if type(b) is dict or isinstance(b, Mapping):
            t = b.get("type")
        else:
            other = True
            bad = _local(
                "invalid_block",
                ("messages.", 0, f".content.{j}: Input does not match the expected shape."),
                j,
            )
            if found is None:
                found = []
            found.append(bad)
            continue
        fields: list[_Local] | None = None
        p: _Local | None
        if t == "tool_result":
            if type(b.get("tool_use_id")) is not str or (
                "content" in b and type(b["content"]) is not str
            ):
                fields = _missing_fields(j, t, b)
            if user:
                if results is None:
                    results = []
                results.append((str(b.get("tool_use_id")), not other, j))
                p = None
            else:
                p = _local(
                    "tool_result_in_assistant",
                    (
                        "messages.",
                        0,
                        f".content.{j}: `tool_result` blocks can only be in `user` messages",
                    ),
                    j,
                )
        elif t == "text":
            other = True
            tx = b.get("text")
            p = None
            if type(tx) is str or isinstance(tx, str):
                if not tx:
                    p = _empty_text(j)
                elif tx.isspace():
                    if asst:  # an error unless the merged turn holds a tool_use
                        kind = 2
                    else:
                        p = _blank_text(j)
            else:
                fields = _missing_fields(j, t, b)
        elif t == "tool_use":
            other = True
            tid = b.get("id")
            if (
                type(tid) is not str
                or type(b.get("name")) is not str
                or type(b.get("input")) is not dict
            ):
                fields = _missing_fields(j, t, b)
            elif _TOOL_USE_ID.fullmatch(tid) is None:
                fields = [_field(j, "tool_use.id", _TOOL_USE_ID_WHY)]
            if asst:
                if uses is None:
                    uses = []
                uses.append(str(b.get("id")))
                p = None
            else:
                p = _local(
                    "tool_use_in_user",
                    (
                        "messages.",
                        0,
                        f".content.{j}: `tool_use` blocks can only be in `assistant` messages",
                    ),
                    j,
                )
        else:
            other = True
            p = None
            if type(t) is not str and not isinstance(t, str):
                why = "Field required" if "type" not in b else "Input should be a valid string"
                p = _local("invalid_block_type", ("messages.", 0, f".content.{j}.type: {why}"), j)
            elif t not in KNOWN_BLOCK_TYPES:
                p = _unknown_type(j, t)
            else:
                if (t == "image" or t == "document") and type(b.get("source")) is not dict:
                    fields = _missing_fields(j, t, b)
                if asst and t in _TURN_TYPES:
                    kind = 2
        if p is not None or fields:
            if found is None:
                found = []
            if p is not None:
                found.append(p)
            if fields:
                found.extend(fields)
    if asst:
        if uses is not None and len(uses) > 1 and len(set(uses)) < len(uses):
            if found is None:
                found = []
            found.extend(_repeated_uses(content))
        tail = content[-1]
        if (type(tail) is dict or isinstance(tail, Mapping)) and tail.get("type") == "text":
            tx = tail.get("text")
            if isinstance(tx, str) and tx[-1:].isspace():
                kind = 2  # trailing whitespace: an error in the window's final block
        if uses is not None and kind == 0:
            kind = 1
    elif results is not None and kind == 0:
        kind = 1
    return (tuple(found) if found else _NONE), kind, uses, results, other and user


def _error_count(local: tuple[_Local, ...]) -> int:
    return sum(1 for p in local if p[1] == "error") if local else 0


_Scan = Callable[[Any], _Summary]


def _scanner() -> _Scan:
    """:func:`_scan`, memoised for the messages of one check (a message is read as a turn and
    again as its neighbours' neighbour)."""
    seen: dict[int, tuple[Any, _Summary]] = {}

    def scan(m: Any) -> _Summary:
        hit = seen.get(id(m))
        if hit is not None and hit[0] is m:
            return hit[1]
        s = _scan(m)
        seen[id(m)] = (m, s)
        return s

    return scan


# -- tool_use / tool_result pairing ----------------------------------------------------------------


def _result_problems(
    results: Sequence[tuple[Any, ...]], expected: Container[str]
) -> tuple[list[tuple[int, str]], list[int]]:
    """The rules of a user turn's tool_results (each ``(tool_use_id, no other block before it,
    ...)``) after an assistant turn with the tool_use ids ``expected``: the position and code of
    each orphan or duplicate result, and the positions of the matched results that do not lead
    the turn (one error for all of them)."""
    if not expected:  # (the usual case of a window's front: read once per message)
        return [(k, "orphan_tool_result") for k in range(len(results))], []
    seen: set[str] = set()
    bad: list[tuple[int, str]] | None = None
    misplaced: list[int] | None = None
    for k, r in enumerate(results):
        tid = r[0]
        if tid not in expected:
            code = "orphan_tool_result"
        elif tid in seen:
            code = "duplicate_tool_result"
        else:
            seen.add(tid)
            if not r[1]:
                if misplaced is None:
                    misplaced = []
                misplaced.append(k)
            continue
        if bad is None:
            bad = []
        bad.append((k, code))
    return bad or [], misplaced or []


def _result_errors(results: Sequence[tuple[Any, ...]], expected: Container[str]) -> int:
    """How many errors :func:`_result_problems` reports."""
    if not expected:  # every result an orphan (counted for every message of a conversation)
        return len(results)
    bad, misplaced = _result_problems(results, expected)
    return len(bad) + (1 if misplaced else 0)


def _unanswered(uses: Sequence[str], answered: Container[str]) -> list[str]:
    """The tool_use ids of an assistant turn that the next turn's tool_results leave unanswered
    (one error for all of them)."""
    return [u for u in uses if u not in answered]


def _answered(nxt: Sequence[Any] | None, scan: _Scan) -> set[str]:
    """The tool_use ids the turn ``nxt`` answers: its tool_results' when it is a user turn."""
    if nxt is None or _role(nxt[0]) != "user":
        return set()
    return {r[0] for m in nxt for r in scan(m)[3] or ()}


# -- turns ---------------------------------------------------------------------------------------


def _plain_turn(
    prev: Sequence[Any] | None,
    turn: Sequence[Any],
    nxt: Sequence[Any] | None,
    is_first: bool,
    is_last: bool,
    scan: _Scan = _scan,
) -> bool:
    """A one-message turn that :func:`_check_turn_full` finds nothing in, told from the
    :func:`_scan` of it and its neighbours without building problems (the last window of every
    ``requests`` and each check of the app walk thousands of them): a user or assistant message
    with no problem of its own and no rule spanning its turn, whose tool_results answer each of
    the previous assistant turn's tool_uses once, leading the message, and whose tool_uses the
    next turn answers. ``tests/unit/core/test_protocol.py`` holds it to the full check."""
    if len(turn) != 1:
        return False
    m = turn[0]
    role = _role(m)
    if role != "user" and (role != "assistant" or is_first):
        return False
    local, kind, uses, res, _ = scan(m)
    if local or kind == 2:
        return False
    if role == "user":
        if res is None:
            return True
        if prev is None or _role(prev[0]) != "assistant":
            return False
        expected = {u for pm in prev for u in scan(pm)[2] or ()}
        bad, misplaced = _result_problems(res, expected)
        return not bad and not misplaced
    if uses and nxt is not None:
        return not _unanswered(uses, _answered(nxt, scan))
    return True


def _check_turn(
    prev: Sequence[Any] | None,
    turn: Sequence[Any],
    nxt: Sequence[Any] | None,
    is_first: bool,
    is_last: bool,
    compacted: bool,
    scan: _Scan | None = None,
) -> list[_Rel]:
    """The problems of one merged turn, with message indices relative to its first message."""
    if scan is None:
        scan = _scanner()
    if _plain_turn(prev, turn, nxt, is_first, is_last, scan):
        return []
    return _check_turn_full(prev, turn, nxt, is_first, is_last, compacted, scan)


def _shift(parts: tuple[str | int, ...], r: int) -> tuple[str | int, ...]:
    return parts if r == 0 else tuple(p + r if type(p) is int else p for p in parts)


def _block_order(p: _Local) -> int:
    return -1 if p[3] is None else p[3]


def _check_turn_full(
    prev: Sequence[Any] | None,
    turn: Sequence[Any],
    nxt: Sequence[Any] | None,
    is_first: bool,
    is_last: bool,
    compacted: bool,
    scan: _Scan | None = None,
) -> list[_Rel]:
    """:func:`_check_turn` for any turn: every rule, block by block."""
    if scan is None:
        scan = _scanner()
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

    def add_local(r: int, local: tuple[_Local, ...]) -> None:
        for code, severity, parts, block, ids in local:
            out.append((r, code, severity, _shift(parts, r), block, ids))

    scans = [scan(m) for m in turn]
    role = _role(turn[0])
    if role not in _ROLES:
        for r, s in enumerate(scans):
            add_local(r, s[0])
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

    # every message's own problems, and the assistant's that depend on its turn
    last_r = len(turn) - 1
    turn_has_tool_use = role == "assistant" and any(s[2] for s in scans)
    for r, (message, s) in enumerate(zip(turn, scans, strict=True)):
        local = s[0]
        if s[1] == 2 and role == "assistant":
            extra: list[_Local] = []
            if _is_empty(message.get("content")) and not (is_last and r == last_r):
                extra.append(_EMPTY_CONTENT)
            if not turn_has_tool_use:  # blank text beside a tool_use: accepted
                for j, block in enumerate(_blocks(message)):
                    if _btype(block) == "text":
                        text = block.get("text")
                        if isinstance(text, str) and text.isspace():
                            extra.append(_blank_text(j))
            if extra:
                local = tuple(sorted((*local, *extra), key=_block_order))
        add_local(r, local)

    if role == "assistant":
        _check_assistant_turn(turn, nxt, is_last, add, scans, scan)
    elif role == "user":
        _check_user_turn(prev, turn, add, scans, scan)
    else:
        _check_system_turn(prev, nxt, is_first, add)
    return out


def _check_assistant_turn(
    turn: Sequence[Any],
    nxt: Sequence[Any] | None,
    is_last: bool,
    add: Any,
    scans: Sequence[_Summary],
    scan: _Scan,
) -> None:
    merged = [(r, j, b) for r, m in enumerate(turn) for j, b in enumerate(_blocks(m))]
    types = [_btype(b) for _, _, b in merged]
    # thinking order, per merged turn
    if any(t in _THINKING for t in types):
        # server-tool blocks may come before the thinking (a recorded 200:
        # pai_code_exec_files_thinking_cache_req3.json); the first other block must be thinking
        k = 0
        while k < len(types) and (
            types[k] == "server_tool_use"
            or (isinstance(types[k], str) and types[k] in SERVER_RESULT_PARTNER)
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
    if is_last:
        # the turn's final content: a string content, or the last block when it is a text
        r_last = len(turn) - 1
        text = turn[-1].get("content")
        if not isinstance(text, str):
            text = None
            if merged and types[-1] == "text":
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
        if not isinstance(t, str):
            continue
        if t in seen:
            seen[t].add(str(b.get("id")))
            continue
        partner = SERVER_RESULT_PARTNER.get(t)
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
    uses = [(r, tid) for r, s in enumerate(scans) for tid in s[2] or ()]
    if not uses or nxt is None:
        return
    missing = _unanswered([tid for _, tid in uses], _answered(nxt, scan))
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


def _check_user_turn(
    prev: Sequence[Any] | None,
    turn: Sequence[Any],
    add: Any,
    scans: Sequence[_Summary],
    scan: _Scan,
) -> None:
    expected: list[str] = []
    if prev is not None and _role(prev[0]) == "assistant":
        expected = [u for m in prev for u in scan(m)[2] or ()]
    # the turn's results, each leading only if no block before it in the turn is another kind
    results: list[tuple[str, bool, int, int]] = []
    leading = True
    for r, s in enumerate(scans):
        for tid, leads, j in s[3] or ():
            results.append((tid, leading and leads, r, j))
        if s[4]:
            leading = False
    if not results:
        return
    bad, misplaced = _result_problems(results, set(expected))
    for k, code in bad:
        tid, _, r, j = results[k]
        if code == "orphan_tool_result":
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
                ids=(tid,),
            )
        else:
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
                ids=(tid,),
            )
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
            ids=tuple(results[k][0] for k in misplaced),
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


def _request_problems(system: Any, n_messages: int) -> list[Problem]:
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


def _messages_list(messages: Any) -> list[Any]:
    """The ``messages`` of a request as a list, or a TypeError naming what was expected."""
    if isinstance(messages, Mapping):
        hint = " (the whole request body? pass its 'messages')" if "messages" in messages else ""
        raise TypeError(f"expected a list of messages, got a mapping{hint}")
    got = "None" if messages is None else f"a {type(messages).__name__}"
    if messages is None or isinstance(messages, (str, bytes, bytearray)):
        raise TypeError(f"expected a list of messages, got {got}")
    try:
        return list(messages)
    except TypeError:
        raise TypeError(f"expected a list of messages, got {got}") from None


def check_protocol(
    messages: Sequence[Mapping[str, Any]], system: Any = None, rules: RuleSet = ANTHROPIC_RULES
) -> list[Problem]:
    """Check a request's messages against the API's structural rules.

    Returns ``[]`` for a valid request, warnings included otherwise (:func:`check_request`
    says whether the API would accept it: ``.ok``). ``system`` is checked for empty text
    blocks. Any JSON value is checked without raising; ``messages`` that is not a list of
    messages (None, a string, a mapping) is a TypeError. ``rules``: the provider's rule set
    (its rules, in its API's words; default Anthropic's).
    """
    entries = list(enumerate(_messages_list(messages)))
    return ProtocolChecker(memo=False, rules=rules).check(entries, system)


@dataclass(frozen=True, slots=True)
class ProtocolReport(Sequence[Problem]):
    """The problems of one request, iterable as the list :func:`check_protocol` returns, and
    the verdict: ``ok`` when there is no error (warnings are not rejections)."""

    problems: tuple[Problem, ...]

    @property
    def errors(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "error"]

    @property
    def warnings(self) -> list[Problem]:
        return [p for p in self.problems if p.severity == "warning"]

    @property
    def ok(self) -> bool:
        return all(p.severity != "error" for p in self.problems)

    def __len__(self) -> int:
        return len(self.problems)

    @overload
    def __getitem__(self, i: int) -> Problem: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Problem]: ...
    def __getitem__(self, i: int | slice) -> Problem | Sequence[Problem]:
        return self.problems[i]

    def __iter__(self) -> Iterator[Problem]:
        return iter(self.problems)

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "problems": [p.to_dict() for p in self.problems]}


def check_request(
    messages: Sequence[Mapping[str, Any]], system: Any = None, rules: RuleSet = ANTHROPIC_RULES
) -> ProtocolReport:
    """:func:`check_protocol` as a :class:`ProtocolReport`: ``report.ok`` is the verdict,
    ``report.errors`` what the API would answer with a 400."""
    return ProtocolReport(tuple(check_protocol(messages, system, rules)))


class ProtocolChecker:
    """``check_protocol`` over a window of ``(id, message)`` entries, memoised per turn.

    A turn's problems depend only on its messages, its neighbouring turns and whether it is first
    or last, so they are cached under the ids of (previous turn, turn, next turn, first, last) and
    re-indexed on reuse. A window that changed at its ends (the usual eviction or append) is
    rechecked in O(n) dict look-ups instead of O(n) block scans.
    """

    def __init__(self, memo: bool = True, rules: RuleSet = ANTHROPIC_RULES) -> None:
        self._memo = memo
        #: the provider's rule set the problems are reported under
        self.rules = rules
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
        if self.rules.rules is None and not self.rules.checks:
            return self._check(entries, system)
        return self.rules.check(self._check(entries, system), [e[1] for e in entries])

    def _check(
        self, entries: Sequence[tuple[int, Mapping[str, Any]]], system: Any = None
    ) -> list[Problem]:
        problems = _request_problems(system, len(entries))
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
        scan = _scanner()
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
                    scan,
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


def _prefix(values: Iterable[int]) -> list[int]:
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
    into the turn after it, else -1). Its errors are counted from the :func:`_scan` of each
    message, made once (``_summarise``), with the rule functions the full check uses:

    * the errors of each message alone (:func:`_scan`'s problems) add up (``cf``);
    * a user turn after an assistant turn: :func:`_result_errors` of its tool_results against
      the tool_use ids of that turn; after anything else, against none (every result an orphan:
      a count per message, so they add up too);
    * an assistant turn with tool_uses: one error when :func:`_unanswered` finds a tool_use the
      next turn leaves unanswered, none when it is the window's last;
    * a piece holding a message whose rules span its merged turn (``kind`` 2): checked by
      ``_check_turn`` itself.

    ``tests/unit/core/test_request_window_sources.py`` reads every error code of this module
    and holds, for a conversation breaking each, every window's count to the full check's.
    """

    def __init__(
        self,
        msgs: Sequence[Mapping[str, Any]],
        roles: list[Any],
        system: Any,
        rules: RuleSet = ANTHROPIC_RULES,
    ) -> None:
        self.msgs = msgs
        self.roles = roles
        self.system = system
        self.rules = rules
        probe = check_protocol([{"role": "user", "content": "x"}], system, rules)
        self.sys_errors = sum(1 for p in probe if p.severity == "error")
        #: the code of the request's own first error (its system blocks), None: no such error
        self.sys_code = first_error_code(probe)
        #: another provider's rule set: each window is checked whole (the counts below are
        #: the Messages API's rules)
        self._whole = rules.rules is not None or bool(rules.checks)
        if self._whole:
            self._checker = ProtocolChecker(memo=True, rules=rules)
            self._index = rules.windows(msgs) if rules.windows and not rules.rules else None
            return
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
                            answered: Container[str] = (
                                ()
                                if not found
                                else [r[0] for r in found]
                                if len(found) <= 8  # a list is quicker to make and to search
                                else {r[0] for r in found}
                            )
                            append(cf[a] + (1 if _unanswered(uses[a], answered) else 0))
                            continue
                    elif role == "user" and t > 0:
                        pa, pb = turns[t - 1]
                        if pb - pa == 1 and roles[pa] == "assistant":
                            append(cf[a] + _result_errors(res[a], uses.get(pa) or ()))
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
        msgs = self.msgs
        n = len(msgs)
        cf = [0] * n
        kind = [0] * n
        orphans = [0] * n  #: errors of a user message's tool_results after no tool_use
        uses: dict[int, list[str]] = {}
        res: dict[int, list[tuple[str, bool, int]]] = {}
        other = [False] * n
        for i, (local, k, u, r, o) in enumerate(map(_scan, msgs)):
            if local:
                cf[i] = _error_count(local)
            kind[i] = k
            other[i] = o
            if u is not None:
                uses[i] = u
            if r is not None:
                res[i] = r
                orphans[i] = _result_errors(r, ())
        self._cf, self._kind, self._orphans = cf, kind, orphans
        self._uses, self._res, self._other = uses, res, other
        self._cfp = _prefix(cf)
        self._orphansp = _prefix(orphans)
        self._kp = _prefix(map(bool, kind))
        self._xp = _prefix(map((2).__eq__, kind))

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
            out.update(r[0] for r in res[head])
        if self._kp[b] > self._kp[a]:
            for x in range(a, b):
                r = res.get(x)
                if r is not None:
                    out.update(x[0] for x in r)
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
        if (head >= 0 and kind[head] == 2) or self._xp[b] > self._xp[a]:
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
                nr = self._orphans
                return cfs + (nr[head] if head >= 0 else 0) + self._orphansp[b] - self._orphansp[a]
            # the results of the turn's messages, each leading only if no message before
            # it in the turn held another block
            results: list[tuple[str, bool]] = []  # (tool_use_id, leads the turn)
            leading = True
            res, other = self._res, self._other
            for x in ([head] if head >= 0 else []) + list(range(a, b)):
                r = res.get(x)
                if r is not None:
                    results.extend((tid, leading and leads) for tid, leads, _ in r)
                if other[x]:
                    leading = False
            return cfs + _result_errors(results, set(expected))
        if role == "assistant":
            if nxt is None:
                return cfs
            used = self._ids_of_uses((head, a, b))
            answered = self._ids_of_results(nxt) if self._role(nxt) == "user" else set()
            return cfs + (1 if _unanswered(used, answered) else 0)
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
            if self._kind[first] != 2 and self._xp[gb] == self._xp[lo]:
                # the usual fronts, counted without a memo
                rl = roles[lo]
                cfp, nrp = self._cfp, self._orphansp
                if roles[first] == rl and rl in _ROLES:
                    if rl != "assistant":  # merged into one turn, after none: orphans all
                        front = (
                            self._cf[first]
                            + self._orphans[first]
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
        if self._whole:
            if self._index is not None:
                return self.sys_errors > 0 or self._index.rejected(first, lo, hi)
            msgs = self.msgs
            entries = [(first, msgs[first])] + [(i, msgs[i]) for i in range(lo, hi)]
            return any(p.severity == "error" for p in self._checker.check(entries, self.system))
        return self.sys_errors > 0 or self.errors(first, lo, hi) > 0

    def error(self, first: int, lo: int, hi: int) -> str | None:
        """The code of the first error :func:`check_protocol` reports for the window
        ``[first] + messages[lo:hi]`` (``first`` -1: no messages), None when the API would
        accept it. An accepted window costs what :meth:`errors` costs; a rejected one, the
        check of the one turn holding its first error."""
        if first < 0:
            return self.sys_code or "no_messages"
        if self._whole:
            msgs = self.msgs
            entries = [(first, msgs[first])] + [(i, msgs[i]) for i in range(lo, hi)]
            return first_error_code(self._checker.check(entries, self.system))
        if self.sys_code is not None:
            return self.sys_code
        if not self.errors(first, lo, hi):
            return None
        found = self._first_code(first, lo, hi)
        if found is None:  # (the counts and the turn check disagree: the check decides)
            window = [self.msgs[first], *self.msgs[lo:hi]]
            found = first_error_code(check_protocol(window, self.system, self.rules))
        return found

    def _turn_code(self, seq: list[Piece], j: int, is_first: bool) -> str | None:
        """The code of the first error of the piece ``seq[j]`` between its neighbours in
        ``seq`` (the window's last piece when it is ``seq``'s last), by the full check of
        that turn."""
        prev = seq[j - 1] if j else None
        nxt = seq[j + 1] if j + 1 < len(seq) else None
        rels = _check_turn(
            self._list(prev) if prev is not None else None,
            self._list(seq[j]),
            self._list(nxt) if nxt is not None else None,
            is_first,
            nxt is None,
            False,
        )
        return next((r[1] for r in rels if r[2] == "error"), None)

    def _first_in(self, seq: list[Piece], lo: int, hi: int, first_at: int) -> str | None:
        """The code of the first error among the pieces ``seq[lo:hi]`` (each counted between
        its neighbours in ``seq``; ``first_at``: the index in ``seq`` of the window's first
        piece, -1 when it is not in ``seq``)."""
        ev = self._eval
        last = len(seq) - 1
        for j in range(lo, hi):
            p = seq[j]
            if ev(*p, seq[j - 1] if j else None, seq[j + 1] if j < last else None, j == last):
                return self._turn_code(seq, j, j == first_at)
        return None

    def _first_code(self, first: int, lo: int, hi: int) -> str | None:
        """:meth:`error`'s code of a window :meth:`errors` counts errors in: its pieces in
        order, as :meth:`errors` splits them, the turns inside found by the prefix sums."""
        if hi <= lo:
            return self._first_in([(first, 0, 0)], 0, 1, 0)
        roles, turns = self.roles, self.turns
        ta, tb = self.turn_of[lo], self.turn_of[hi - 1]
        gb = turns[ta][1]
        b1 = gb if gb < hi else hi
        if roles[first] == roles[lo] and roles[lo] in _ROLES:
            seq: list[Piece] = [(first, lo, b1)]  # the API merges them into one turn
        else:
            seq = [(first, 0, 0), (-1, lo, b1)]
        if tb - ta <= 4:
            seq.extend((-1, *turns[t]) for t in range(ta + 1, tb))
            if tb > ta:
                seq.append((-1, turns[tb][0], hi))
            return self._first_in(seq, 0, len(seq), 0)
        # the front pieces and the turn after them (its neighbours: the front, and a whole turn)
        seq.append((-1, *turns[ta + 1]))
        seq.append((-1, *turns[ta + 2]))
        found = self._first_in(seq, 0, len(seq) - 1, 0)
        if found is not None:
            return found
        # the turns ta+2 .. tb-2 have the neighbours they have in the whole conversation: the
        # first of them with an error is found in the prefix sums of its counts
        prefix = self.prefix
        base = prefix[ta + 2]
        if prefix[tb - 1] > base:
            t = bisect_right(prefix, base, ta + 2, tb) - 1
            mid = [(-1, *turns[t - 1]), (-1, *turns[t]), (-1, *turns[t + 1])]
            return self._turn_code(mid, 1, False)
        a_end = turns[tb][0]
        back = [(-1, *turns[tb - 2]), (-1, *turns[tb - 1]), (-1, a_end, hi)]
        return self._first_in(back, 1, 3, -1)


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

    def __init__(
        self, msgs: Sequence[Mapping[str, Any]], system: Any, rules: RuleSet = ANTHROPIC_RULES
    ) -> None:
        self.msgs = msgs
        self.roles = [m.get("role") for m in msgs]
        self.compaction = {i for i, m in enumerate(msgs) if has_compaction(m)}
        self.err: dict[int, int] = {}
        self.total = 0
        self.rules = rules
        probe = check_protocol([{"role": "user", "content": "x"}], system, rules)
        self.sys_errors = sum(1 for p in probe if p.severity == "error")
        self.sys_code = first_error_code(probe)
        #: the smallest message id counted an error (None: to be found again), where a
        #: rejected window's first error is looked for
        self._least: int | None = None

    def clear(self) -> None:
        self.err.clear()
        self.total = 0
        self._least = None

    def drop(self, tid: int) -> None:
        self.total -= self.err.pop(tid, 0)
        if tid == self._least:
            self._least = None

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
        if (self.compaction and any(t in self.compaction for t in win)) or self.rules.checks:
            # (a provider's own checks may span the window: it is counted whole)
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
            for p in check_protocol([msgs[t] for t in win[lo:hi]], rules=self.rules):
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
                        if self._least is not None and tid < self._least:
                            self._least = tid
                    else:
                        del self.err[tid]
                        if tid == self._least:
                            self._least = None

    def rejected(self, n: int) -> bool:
        return n == 0 or self.total > 0 or self.sys_errors > 0

    def error(self, win: list[int]) -> str | None:
        """The code of the first error :func:`check_protocol` reports for the window ``win``
        (message ids in conversation order, as :meth:`update` was last given), None when
        the API would accept it: the check of the turn holding the first message counted an
        error, with a turn of context each side (the whole window when :meth:`update` checks
        it whole)."""
        n = len(win)
        if n == 0:
            return self.sys_code or "no_messages"
        if self.sys_code is not None:
            return self.sys_code
        if self.total <= 0:
            return None
        if (self.compaction and any(t in self.compaction for t in win)) or self.rules.checks:
            return self._whole_code(win)
        if self._least is None or self._least not in self.err:
            self._least = min(self.err)
        x = bisect_left(win, self._least)
        if x >= n or win[x] != self._least:  # (ids out of order: looked for one by one)
            found = next((k for k, t in enumerate(win) if t in self.err), None)
            if found is None:
                return self._whole_code(win)
            x = found
        a = self._turn_start(win, x)
        b = self._turn_end(win, x)
        lo = self._turn_start(win, a - 1) if a > 0 else 0
        hi = self._turn_end(win, b + 1) + 1 if b < n - 1 else n
        for p in check_protocol([self.msgs[t] for t in win[lo:hi]], rules=self.rules):
            if p.severity == "error" and a <= lo + p.index <= b:
                return p.code
        return self._whole_code(win)

    def _whole_code(self, win: list[int]) -> str | None:
        return first_error_code(check_protocol([self.msgs[t] for t in win], rules=self.rules))


def errors(problems: Sequence[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


def first_error_code(problems: Sequence[Problem]) -> str | None:
    """The code of the first error of a check (the one an API answering with one error
    names), or None when it found none."""
    return next((p.code for p in problems if p.severity == "error"), None)
