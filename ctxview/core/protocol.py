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


def check_protocol(messages: Sequence[Mapping[str, Any]], system: Any = None) -> list[Problem]:
    """Check a request's messages against the API's structural rules.

    Returns ``[]`` for a valid request. ``system`` is accepted for symmetry with the request body;
    it is checked for empty text blocks.
    """
    problems: list[Problem] = []

    def add(index: int, code: str, message: str, severity: Severity = "error") -> None:
        problems.append(Problem(index, code, severity, message))

    if isinstance(system, list):
        for block in system:
            if _btype(block) == "text" and block.get("text", "") == "":
                add(-1, "empty_system_text_block", "system: text content blocks must be non-empty")

    if len(messages) == 0:
        add(0, "no_messages", "messages: at least one message is required")
        return problems

    last = len(messages) - 1
    for i, message in enumerate(messages):
        role = message.get("role") if isinstance(message, Mapping) else None
        if not isinstance(message, Mapping) or role not in ("user", "assistant"):
            add(i, "invalid_role", f"messages.{i}.role: Input should be 'user' or 'assistant'")
            continue
        content = message.get("content")
        if i == 0 and role != "user":
            add(0, "first_not_user", 'messages: first message must use the "user" role')
        if i > 0:
            prev = messages[i - 1]
            if isinstance(prev, Mapping) and prev.get("role") == role:
                add(
                    i,
                    "consecutive_same_role",
                    f"messages.{i}: consecutive {role} messages are merged by the API "
                    f"into one turn (messages.{i - 1} and messages.{i})",
                    "warning",
                )
        if _is_empty(content) and not (i == last and role == "assistant"):
            add(
                i,
                "empty_content",
                f"messages.{i}: all messages must have non-empty content except for the "
                "optional final assistant message",
            )
        for j, block in enumerate(_blocks(message)):
            if _btype(block) == "text":
                text = block.get("text")
                if text == "" or text is None:
                    add(i, "empty_text_block", "messages: text content blocks must be non-empty")
                elif isinstance(text, str) and not text.strip():
                    add(
                        i,
                        "whitespace_text_block",
                        "messages: text content blocks must contain non-whitespace text",
                    )
            elif _btype(block) == "tool_result" and role == "assistant":
                add(
                    i,
                    "tool_result_in_assistant",
                    f"messages.{i}.content.{j}: "
                    "`tool_result` blocks can only be in `user` messages",
                )
            elif _btype(block) == "tool_use" and role == "user":
                add(
                    i,
                    "tool_use_in_user",
                    f"messages.{i}.content.{j}: "
                    "`tool_use` blocks can only be in `assistant` messages",
                )
        if i == last and role == "assistant" and isinstance(content, list) and content:
            tail = content[-1]
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
            if (
                i > 0
                and isinstance(messages[i - 1], Mapping)
                and messages[i - 1].get("role") == "assistant"
            ):
                prev_ids = set(_tool_use_ids(messages[i - 1]))
            for j, block in enumerate(_blocks(message)):
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
        elif role == "assistant" and i < last:
            ids = _tool_use_ids(message)
            if not ids:
                continue
            nxt = messages[i + 1]
            nxt_blocks = (
                _blocks(nxt) if isinstance(nxt, Mapping) and nxt.get("role") == "user" else []
            )
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


def errors(problems: Sequence[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]
