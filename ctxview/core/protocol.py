"""Protocol checks: would the Anthropic Messages API accept this ``messages`` array?

Each :class:`Problem` carries the text the API returns in its 400 ``invalid_request_error`` for
that request, in the API's wording, so the inspector can show exactly what a send would fail with.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

Severity = Literal["error", "warning"]


@dataclass(frozen=True, slots=True)
class Problem:
    """One protocol problem of a request's ``messages``."""

    index: int
    code: str
    severity: Severity
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, list):
        return content
    return []


def _btype(block: Any) -> Any:
    return block.get("type") if isinstance(block, Mapping) else None


def _tool_use_ids(message: Mapping[str, Any]) -> list[str]:
    return [str(b.get("id")) for b in _blocks(message) if _btype(b) == "tool_use"]


def _is_empty(content: Any) -> bool:
    if content is None:
        return True
    if isinstance(content, str):
        return content == ""
    if isinstance(content, list):
        return len(content) == 0
    return False


def _check_at(prev: Any, message: Any, nxt: Any, i: int, is_last: bool) -> list[Problem]:
    """The problems of the message at index ``i``, given its neighbours (None at the ends)."""
    problems: list[Problem] = []

    def add(index: int, code: str, text: str, severity: Severity = "error") -> None:
        problems.append(Problem(index, code, severity, text))

    role = message.get("role") if isinstance(message, Mapping) else None
    if not isinstance(message, Mapping) or role not in ("user", "assistant"):
        add(i, "invalid_role", f"messages.{i}.role: Input should be 'user' or 'assistant'")
        return problems
    content = message.get("content")
    if prev is None and role != "user":
        add(i, "first_not_user", 'messages: first message must use the "user" role')
    if prev is not None and isinstance(prev, Mapping) and prev.get("role") == role:
        add(
            i,
            "consecutive_same_role",
            f"messages.{i}: consecutive {role} messages are merged by the API "
            f"into one turn (messages.{i - 1} and messages.{i})",
            "warning",
        )
    if _is_empty(content) and not (is_last and role == "assistant"):
        add(
            i,
            "empty_content",
            f"messages.{i}: all messages must have non-empty content except for the "
            "optional final assistant message",
        )
    blocks = _blocks(message)
    for j, block in enumerate(blocks):
        btype = _btype(block)
        if btype == "text":
            text = block.get("text")
            if text == "" or text is None:
                add(i, "empty_text_block", "messages: text content blocks must be non-empty")
            elif isinstance(text, str) and not text.strip():
                add(
                    i,
                    "whitespace_text_block",
                    "messages: text content blocks must contain non-whitespace text",
                )
        elif btype == "tool_result" and role == "assistant":
            add(
                i,
                "tool_result_in_assistant",
                f"messages.{i}.content.{j}: `tool_result` blocks can only be in `user` messages",
            )
        elif btype == "tool_use" and role == "user":
            add(
                i,
                "tool_use_in_user",
                f"messages.{i}.content.{j}: `tool_use` blocks can only be in `assistant` messages",
            )
    if is_last and role == "assistant" and blocks:
        tail = blocks[-1]
        if _btype(tail) == "text" and isinstance(tail.get("text"), str):
            text = tail["text"]
            if text.strip() and text != text.rstrip():
                add(
                    i,
                    "final_assistant_trailing_whitespace",
                    "messages: final assistant content cannot end with trailing whitespace",
                )

    if role == "user":
        prev_ids: set[str] = set()
        if isinstance(prev, Mapping) and prev.get("role") == "assistant":
            prev_ids = set(_tool_use_ids(prev))
        for j, block in enumerate(blocks):
            if _btype(block) != "tool_result":
                continue
            tid = block.get("tool_use_id")
            if tid is None or str(tid) not in prev_ids:
                add(
                    i,
                    "orphan_tool_result",
                    f"messages.{i}.content.{j}: unexpected `tool_use_id` found in "
                    f"`tool_result` blocks: {tid}. Each `tool_result` block must have a "
                    "corresponding `tool_use` block in the previous message.",
                )
    elif role == "assistant" and nxt is not None:
        ids = _tool_use_ids(message)
        if not ids:
            return problems
        is_user = isinstance(nxt, Mapping) and nxt.get("role") == "user"
        nxt_blocks = _blocks(nxt) if is_user else []
        leading: list[str] = []
        for b in nxt_blocks:
            if _btype(b) != "tool_result":
                break
            leading.append(str(b.get("tool_use_id")))
        anywhere = {str(b.get("tool_use_id")) for b in nxt_blocks if _btype(b) == "tool_result"}
        missing = [t for t in ids if t not in anywhere]
        misplaced = [t for t in ids if t in anywhere and t not in leading]
        if missing:
            add(
                i,
                "unanswered_tool_use",
                f"messages.{i}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(missing)}. Each `tool_use` block must have a "
                "corresponding `tool_result` block in the next message.",
            )
        if misplaced:
            add(
                i + 1,
                "tool_result_not_first",
                f"messages.{i + 1}: Did not find {len(ids)} `tool_result` block(s) at the "
                "beginning of this message. Messages following `tool_use` blocks must begin "
                "with a matching number of `tool_result` blocks.",
            )
    return problems


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

    Returns ``[]`` for a valid request. ``system`` is accepted for symmetry with the request body;
    it is checked for empty text blocks.
    """
    problems = _check_request(system, len(messages))
    n = len(messages)
    if n == 0:
        return problems
    for i in range(n):
        problems.extend(
            _check_at(
                messages[i - 1] if i > 0 else None,
                messages[i],
                messages[i + 1] if i + 1 < n else None,
                i,
                i == n - 1,
            )
        )
    return problems


_SENTINEL = 987_654_321_987  # an index no window reaches: cached texts are rewritten from it


class ProtocolChecker:
    """``check_protocol`` over a window of ``(id, message)`` entries, memoised per position.

    A message's problems depend only on itself, its neighbours and whether it is first or last,
    so they are cached under (previous id, id, next id, first, last) and re-indexed on reuse. A
    window that changed at its ends (the usual eviction or append) is rechecked in O(n) dict
    look-ups instead of O(n) block scans.
    """

    def __init__(self) -> None:
        self._cache: dict[tuple[int | None, int, int | None, bool, bool], list[Problem]] = {}

    def check(
        self, entries: Sequence[tuple[int, Mapping[str, Any]]], system: Any = None
    ) -> list[Problem]:
        problems = _check_request(system, len(entries))
        n = len(entries)
        if n == 0:
            return problems
        if len(self._cache) > 4 * n + 1024:
            self._cache.clear()
        cache = self._cache
        for i in range(n):
            prev = entries[i - 1] if i > 0 else None
            nxt = entries[i + 1] if i + 1 < n else None
            key = (
                prev[0] if prev else None,
                entries[i][0],
                nxt[0] if nxt else None,
                i == 0,
                i == n - 1,
            )
            found = cache.get(key)
            if found is None:
                found = _check_at(
                    prev[1] if prev else None,
                    entries[i][1],
                    nxt[1] if nxt else None,
                    _SENTINEL,
                    i == n - 1,
                )
                cache[key] = found
            if found:
                problems.extend(_reindex(p, i) for p in found)
        return problems


def _reindex(p: Problem, i: int) -> Problem:
    text = (
        p.message.replace(str(_SENTINEL + 1), str(i + 1))
        .replace(str(_SENTINEL - 1), str(i - 1))
        .replace(str(_SENTINEL), str(i))
    )
    return Problem(p.index - _SENTINEL + i, p.code, p.severity, text)


def errors(problems: Sequence[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]
