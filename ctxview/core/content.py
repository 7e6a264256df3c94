"""What a caller hands a context, as the JSON a request sends: SDK objects dumped, mappings copied,
every key kept, anything that is not JSON refused at once with the path of the bad value.

A value the API cannot take (an ``object()``, a set, ``bytes``, ``NaN``) would otherwise sit in
the window until the next request failed to serialise, far from the code that added it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any


class ContentError(ValueError):
    """A value that is not JSON, or a message of the wrong shape; ``path`` says where
    (``content[1].input.when``)."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        self.path = path
        self.problem = problem


def json_value(value: Any, path: str) -> Any:
    """A deep copy of JSON-shaped ``value`` (mappings become dicts, tuples lists); ContentError
    naming the path of the first value that is not JSON (a key that is not a string, an object,
    bytes, a set, a non-finite float). An SDK object inside (pydantic's ``model_dump``) is
    dumped as the request would send it."""
    try:
        return _copy(value)
    except _NotJson as exc:
        where = path + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in exc.parts)
        raise ContentError(where, exc.problem) from None


class _NotJson(Exception):
    """Raised deep in :func:`_copy`; each level on the way out adds its key (the path is built
    only when something is wrong)."""

    def __init__(self, problem: str) -> None:
        self.problem = problem
        self.parts: list[str | int] = []


def _copy(value: Any) -> Any:
    t = type(value)
    if t is str or t is int or t is bool or value is None:
        return value
    if t is dict or isinstance(value, Mapping):
        out: dict[str, Any] = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise _NotJson(f"key {k!r} is not a string")
            try:
                out[k] = _copy(v)
            except _NotJson as exc:
                exc.parts.insert(0, k)
                raise
        return out
    if t is list or t is tuple:
        items = []
        for n, v in enumerate(value):
            try:
                items.append(_copy(v))
            except _NotJson as exc:
                exc.parts.insert(0, n)
                raise
        return items
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        raise _NotJson(f"{value!r} (JSON has no NaN or infinity)")
    if callable(getattr(value, "model_dump", None)):
        # an SDK object: the JSON the SDK would send, with no ``None``-valued keys (the
        # response models spell absent fields so; the params leave them out)
        data = value.model_dump(mode="json", exclude_none=True)
        if not isinstance(data, dict):
            raise _NotJson(f"model_dump() of {type(value).__name__} did not return a dict")
        return data
    if isinstance(value, (str, int)):
        return value  # a str or int subclass (an enum member): JSON as it is
    kind = f"{t.__module__}.{t.__qualname__}".removeprefix("builtins.")
    raise _NotJson(f"a {kind}, not JSON")


def sdk_dump(value: Any, path: str) -> dict[str, Any]:
    """An SDK object (a content block, a pydantic model) as the JSON the SDK would send, with no
    ``None``-valued keys (the response models spell absent fields so; the params leave them out)."""
    data: dict[str, Any] = json_value(value, path)  # (``_copy`` dumps it)
    return data


def block(value: Any, path: str) -> dict[str, Any]:
    """One content block: an SDK block or a mapping (``None``-valued keys dropped, as the SDK
    drops them), copied with every other key it carries."""
    if callable(getattr(value, "model_dump", None)):
        return sdk_dump(value, path)
    if isinstance(value, Mapping):
        copied: dict[str, Any] = json_value({k: v for k, v in value.items() if v is not None}, path)
        return copied
    raise ContentError(
        path, f"a content block must be an SDK block or a mapping, got {type(value).__name__}"
    )


def message_content(content: Any, path: str = "content") -> str | list[dict[str, Any]]:
    """A message's ``content``: a string as it is, or a list of blocks (SDK objects or mappings,
    any iterable but a string, bytes or a mapping); ContentError otherwise."""
    if isinstance(content, str):
        return content
    if _is_response(content):
        raise ContentError(
            path,
            f"this is a whole {type(content).__name__} (a response): use add_response(message), "
            "which keeps its usage, id and stop reason too (or pass message.content)",
        )
    if (
        content is None
        or isinstance(content, (bytes, bytearray, Mapping))
        or not isinstance(content, Iterable)
    ):
        raise ContentError(
            path,
            f"content must be a string or a list of content blocks, got {type(content).__name__}",
        )
    return [block(b, f"{path}[{n}]") for n, b in enumerate(content)]


def content_shape(content: Any, path: str) -> None:
    """ContentError unless ``content`` (JSON already) is a string or a list of block objects."""
    if isinstance(content, str):
        return
    if not isinstance(content, list):
        raise ContentError(
            path,
            f"content must be a string or a list of content blocks, got {type(content).__name__}",
        )
    for n, b in enumerate(content):
        if not isinstance(b, dict):
            raise ContentError(
                f"{path}[{n}]", f"a content block is an object, got {type(b).__name__}"
            )


def _is_response(value: object) -> bool:
    """The SDK's ``Message`` (what ``client.messages.create`` returns), by its shape."""
    return (
        getattr(value, "type", None) == "message"
        and hasattr(value, "content")
        and hasattr(value, "usage")
    )


def response_parts(message: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """An SDK ``Message`` (or its dict form): its content blocks, and what ctxview keeps beside
    them as the message's meta: ``usage`` (as the session format records it), ``id``,
    ``model``, ``stop_reason``, ``stop_sequence`` when set."""
    data = sdk_dump(message, "message") if callable(getattr(message, "model_dump", None)) else None
    if data is None:
        if not isinstance(message, Mapping):
            raise ContentError(
                "message",
                f"add_response takes the SDK's Message (or its dict), got {type(message).__name__}",
            )
        data = json_value(message, "message")
    if data.get("type", "message") != "message" or data.get("role", "assistant") != "assistant":
        raise ContentError(
            "message", "add_response takes an assistant Message (type 'message', role 'assistant')"
        )
    content = data.get("content")
    if not isinstance(content, list):
        raise ContentError("message.content", "a response's content must be a list of blocks")
    blocks = [block(b, f"message.content[{n}]") for n, b in enumerate(content)]
    meta: dict[str, Any] = {}
    for key in ("id", "model", "stop_reason", "stop_sequence", "usage"):
        if data.get(key) is not None:
            meta[key] = data[key]
    return blocks, meta


def system_value(value: Any) -> str | list[dict[str, Any]]:
    """A system prompt: a string as it is, or a list of text blocks (SDK params, objects or
    dicts, every key kept); ContentError otherwise."""
    if isinstance(value, str):
        return value
    blocks = message_content(value, "system_prompt")
    if isinstance(blocks, str):  # (not reached: a string was returned above)
        return blocks
    for n, b in enumerate(blocks):
        if b.get("type") != "text" or not isinstance(b.get("text"), str):
            raise ContentError(
                f"system_prompt[{n}]",
                f"a system prompt block is a text block with a string 'text', got {b!r:.80}",
            )
    return blocks


def system_text(system: Any) -> str:
    """A system prompt as text: the string, or its text blocks joined by a blank line."""
    if isinstance(system, str):
        return system
    if isinstance(system, list):
        parts = [b.get("text", "") for b in system if isinstance(b, dict) and "text" in b]
        return "\n\n".join(str(p) for p in parts)
    return ""


def content_texts(content: Any) -> list[Any]:
    """The texts of a message's content: the string, or each block's ``text`` (None for a
    block without one); none for any other value."""
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b.get("text") for b in content if isinstance(b, dict)]
    return []


def tools_value(tools: Any) -> list[dict[str, Any]]:
    """Tool definitions (SDK params or objects, or dicts; every key kept) as JSON; ContentError
    naming the path of a bad one."""
    if isinstance(tools, (str, bytes, Mapping)) or not isinstance(tools, Iterable):
        raise ContentError(
            "tools", f"tools is a list of tool definitions, got {type(tools).__name__}"
        )
    return [block(t, f"tools[{n}]") for n, t in enumerate(tools)]
