"""A Claude Code transcript's records as the readers see them: :class:`Line`, and what several
readers ask of one (its response id, the input its response billed)."""

from __future__ import annotations

from typing import Any

MESSAGE_TYPES = ("user", "assistant")


class Line:
    """One record of a transcript, with the fields the branch selection reads again and again
    (uuid, parent, type) read once, when the line is made (a record is not changed after)."""

    __slots__ = ("number", "parent", "record", "type", "uuid")

    def __init__(self, number: int, record: dict[str, Any]) -> None:
        self.number = number  # 1-based line number (or logline index + 1)
        self.record = record
        get = record.get
        u = get("uuid")
        self.uuid: str | None = u if type(u) is str or isinstance(u, str) else None
        p = get("parentUuid")
        if not isinstance(p, str):
            p = get("logicalParentUuid")
        self.parent: str | None = p if isinstance(p, str) else None
        self.type: Any = get("type")

    def __repr__(self) -> str:
        return f"Line(number={self.number!r}, record={self.record!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Line):
            return NotImplemented
        return self.number == other.number and self.record == other.record

    __hash__ = None  # type: ignore[assignment]  # mutable, as the dataclass was


def message_id(line: Line) -> str | None:
    msg = line.record.get("message")
    mid = msg.get("id") if isinstance(msg, dict) else None
    return mid if isinstance(mid, str) else None


def recorded_total(line: Line) -> int | None:
    msg = line.record.get("message")
    u = msg.get("usage") if isinstance(msg, dict) else None
    if not isinstance(u, dict):
        return None
    total = 0
    for key in ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"):
        v = u.get(key, 0)
        if not isinstance(v, int) or isinstance(v, bool):
            return None
        total += v
    return total
