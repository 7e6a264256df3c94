"""Shape checks of messages with JSON paths in the errors (``messages[3].content[1]: ...``)."""

from __future__ import annotations

from typing import Any


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def block_problem(block: Any) -> str | None:
    """Why a content block is malformed, or None."""
    if not isinstance(block, dict):
        return f"expected a content block object, got {_kind(block)}"
    btype = block.get("type")
    if not isinstance(btype, str):
        return "content block without a type"
    if btype == "text" and not isinstance(block.get("text"), str):
        return "text block without a text string"
    if btype == "tool_result":
        tid = block.get("tool_use_id")
        if not isinstance(tid, str) or not tid:
            return "tool_result without tool_use_id"
    if btype == "tool_use":
        if not isinstance(block.get("id"), str):
            return "tool_use without id"
        if not isinstance(block.get("name"), str):
            return "tool_use without name"
    if btype == "image" and not isinstance(block.get("source"), dict):
        return "image without source"
    return None


def _plain_block(block: Any) -> bool:
    """The usual well-formed blocks, told apart without building a reason (a fast yes; any
    other block goes through :func:`block_problem`)."""
    if type(block) is not dict:
        return False
    btype = block.get("type")
    if btype == "text":
        return type(block.get("text")) is str
    if btype == "tool_result":
        tid = block.get("tool_use_id")
        return type(tid) is str and tid != ""
    if btype == "tool_use":
        return type(block.get("id")) is str and type(block.get("name")) is str
    return btype in ("thinking", "redacted_thinking")


def message_problem(message: Any) -> tuple[str, str] | None:
    """(sub-path, reason) of the first problem in a message, or None."""
    if type(message) is dict:  # the usual message, checked without a call per block
        role = message.get("role")
        content = message.get("content")
        if (role == "user" or role == "assistant") and (
            type(content) is str
            or (type(content) is list and all([_plain_block(b) for b in content]))
        ):
            return None
    if not isinstance(message, dict):
        return "", f"expected a message object, got {_kind(message)}"
    role = message.get("role")
    if role not in ("user", "assistant", "system"):
        return (
            ".role",
            f'expected "user", "assistant" or "system", got {_kind(role)} {role!r}'[:120],
        )
    if "content" not in message:
        return "", "message without content"
    content = message["content"]
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return ".content", f"expected a string or an array of blocks, got {_kind(content)}"
    for j, block in enumerate(content):
        problem = block_problem(block)
        if problem is not None:
            return f".content[{j}]", problem
    return None


def validate_messages(messages: Any, path: str) -> list[dict[str, Any]]:
    """The messages if well formed; ValueError('<path>[i]...: reason') otherwise."""
    if not isinstance(messages, list):
        where = f"{path}: " if path else "the top level: "  # no empty JSON path (": :")
        raise ValueError(f"{where}expected an array of messages, got {_kind(messages)}")
    for i, message in enumerate(messages):
        found = message_problem(message)
        if found is not None:
            sub, reason = found
            raise ValueError(f"{path}[{i}]{sub}: {reason}")
    return messages


def validate_system(system: Any, path: str) -> None:
    if system is None or isinstance(system, str):
        return
    if not isinstance(system, list):
        raise ValueError(
            f"{path}: expected a string or an array of text blocks, got {_kind(system)}"
        )
    for j, block in enumerate(system):
        if not isinstance(block, dict) or not isinstance(block.get("text"), str):
            raise ValueError(f"{path}[{j}]: expected a text block")
