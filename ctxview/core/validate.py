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


def plain_message(message: Any) -> bool:
    """A usual well-formed message (a role the API takes; string content, or a list of the
    usual well-formed blocks: text with its text, tool_result with its tool_use_id, tool_use
    with id and name, thinking), told apart in one loop without a call per block (a reader asks
    it 100,000 times): a fast yes; anything else goes through :func:`message_problem`."""
    if type(message) is not dict:
        return False
    role = message.get("role")
    if role != "user" and role != "assistant":
        return False
    content = message.get("content")
    if type(content) is str:
        return True
    if type(content) is not list:
        return False
    for b in content:
        if type(b) is not dict:
            return False
        btype = b.get("type")
        if btype == "text":
            if type(b.get("text")) is not str:
                return False
        elif btype == "tool_result":
            tid = b.get("tool_use_id")
            if type(tid) is not str or tid == "":
                return False
        elif btype == "tool_use":
            if type(b.get("id")) is not str or type(b.get("name")) is not str:
                return False
        elif btype != "thinking" and btype != "redacted_thinking":
            return False
    return True


def message_problem(message: Any) -> tuple[str, str] | None:
    """(sub-path, reason) of the first problem in a message, or None."""
    if plain_message(message):  # the usual message, checked without a call per block
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
