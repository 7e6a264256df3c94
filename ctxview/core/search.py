"""Finding messages: a query of words and qualifiers, matched against every block's text.

A query is what a user types after ``/`` in the timeline:

* words and ``"quoted phrases"``: each must occur somewhere in the message (its text, thinking,
  tool calls' names and inputs, tool results, compaction summaries). Smart case: a term with no
  capital letter matches any case, a term with one matches exactly;
* ``tool:NAME``: a call of that tool, or the result of one (``tool:Bash``, ``tool:mcp__*``: a
  shell-style pattern, any case);
* ``is:error``: a tool result with ``is_error``, or a message with a protocol error (the caller
  says which, :func:`find`'s ``error_ids``);
* ``role:user`` / ``role:assistant``.

Several qualifiers of one kind are alternatives (``tool:Read tool:Edit``); different kinds and the
words must all hold. :func:`find` walks the messages once, in chunks, so a caller in a worker can
stop between two chunks and show the matches found so far.
"""

from __future__ import annotations

import fnmatch
import json
import re
import shlex
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: qualifiers a query knows (``key:value``); any other ``a:b`` word is searched as text
QUALIFIERS = ("tool", "is", "role")
IS_VALUES = ("error",)
ROLES = ("user", "assistant")


class QueryError(ValueError):
    """A qualifier with a value it does not take (``is:foo``, ``role:system``, ``tool:``)."""


@dataclass(frozen=True)
class Query:
    """A parsed query; ``text`` is what the user typed."""

    text: str
    terms: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    roles: tuple[str, ...] = ()
    errors: bool = False

    @property
    def empty(self) -> bool:
        return not (self.terms or self.tools or self.roles or self.errors)

    def describe(self) -> str:
        """The query as the matcher reads it: ``"a b" · tool:Bash · errors``."""
        parts = [" ".join(repr(t) if " " in t else t for t in self.terms)] if self.terms else []
        if self.tools:
            parts.append(" or ".join(f"tool:{t}" for t in self.tools))
        if self.roles:
            parts.append(" or ".join(self.roles))
        if self.errors:
            parts.append("errors")
        return " · ".join(parts)


def parse_query(text: str) -> Query:
    """The query in ``text`` (QueryError names a qualifier's bad value). An unbalanced quote is
    taken literally: a query being typed is parsed at every key."""
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        words = text.split()
    terms: list[str] = []
    tools: list[str] = []
    roles: list[str] = []
    errors = False
    for word in words:
        key, sep, value = word.partition(":")
        kind = key.lower()
        if not sep or kind not in QUALIFIERS:
            if word:
                terms.append(word)
            continue
        if kind == "tool":
            if not value:
                raise QueryError("tool: needs a tool name (tool:Bash, tool:mcp__*)")
            tools.append(value)
        elif kind == "is":
            if value.lower().rstrip("s") not in IS_VALUES:
                raise QueryError(f"is:{value}: the one value is is:error")
            errors = True
        else:
            if value.lower() not in ROLES:
                raise QueryError(f"role:{value}: role:user or role:assistant")
            roles.append(value.lower())
    return Query(text, tuple(terms), tuple(tools), tuple(roles), errors)


def _strings(value: Any, out: list[str]) -> None:
    """Every string in a tool call's input (keys included), without serialising it."""
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            out.append(str(k))
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    elif value is not None:
        out.append(json.dumps(value) if isinstance(value, bool) else str(value))


def block_text(block: Any) -> str:
    """What a user reads of one content block: its text, thinking, tool call (name and input),
    result, or summary; "" for an image and a block of unknown shape."""
    if not isinstance(block, Mapping):
        return ""
    t = block.get("type")
    if t == "text":
        return str(block.get("text", ""))
    if t == "thinking":
        return str(block.get("thinking", ""))
    if t == "tool_use" or t == "server_tool_use":
        out = [str(block.get("name", ""))]
        _strings(block.get("input"), out)
        return "\n".join(out)
    if t == "tool_result" or str(t).endswith("_tool_result"):
        content = block.get("content")
        if isinstance(content, list):
            return "\n".join(block_text(c) for c in content)
        return "" if content is None else str(content)
    if t == "compaction":
        return str(block.get("content", ""))
    if t == "document":
        source = block.get("source")
        return (
            str(source.get("data", ""))
            if isinstance(source, Mapping) and source.get("type") == "text"
            else ""
        )
    return ""


def searchable_text(message: Mapping[str, Any]) -> str:
    """Every block's text of a message, one block a line (what a search reads, what a copy
    takes)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(s for s in (block_text(b) for b in content) if s)


class Matcher:
    """Matches messages in order against one query: it remembers each tool call's name, so a
    tool result matches ``tool:NAME`` through the call it answers."""

    def __init__(self, query: Query, error_ids: frozenset[int] = frozenset()) -> None:
        self.query = query
        self.error_ids = error_ids
        # smart case: a term with a capital letter is matched as typed, the others in lower case
        # (``str.lower`` and ``in`` run at C speed; an IGNORECASE regex walks every character)
        self._exact = [t for t in query.terms if any(c.isupper() for c in t)]
        self._folded = [t.lower() for t in query.terms if not any(c.isupper() for c in t)]
        self._tools = [re.compile(fnmatch.translate(t), re.IGNORECASE) for t in query.tools]
        self._tool_names: dict[str, str] = {}

    def _tool_match(self, content: Sequence[Any]) -> bool:
        hit = False
        for b in content:
            if not isinstance(b, Mapping):
                continue
            t = b.get("type")
            if t == "tool_use" or t == "server_tool_use":
                name = str(b.get("name", ""))
                if isinstance(b.get("id"), str):
                    self._tool_names[b["id"]] = name
                hit = hit or any(p.match(name) for p in self._tools)
            elif t == "tool_result":
                name = self._tool_names.get(str(b.get("tool_use_id")), "")
                hit = hit or (bool(name) and any(p.match(name) for p in self._tools))
        return hit

    def matches(self, mid: int, message: Mapping[str, Any]) -> bool:
        q = self.query
        content = message.get("content")
        blocks: Sequence[Any] = content if isinstance(content, list) else ()
        if self._tools and not self._tool_match(blocks):
            return False
        if q.roles and message.get("role") not in q.roles:
            return False
        if (
            q.errors
            and mid not in self.error_ids
            and not any(
                isinstance(b, Mapping) and b.get("type") == "tool_result" and b.get("is_error")
                for b in blocks
            )
        ):
            return False
        if self._exact or self._folded:
            text = searchable_text(message)
            if not all(t in text for t in self._exact):
                return False
            if self._folded:
                low = text.lower()
                return all(t in low for t in self._folded)
        return True


#: messages matched between two chances for the caller to stop (and show what it found)
CHUNK = 2000


def find(
    messages: Sequence[Mapping[str, Any]],
    query: Query,
    error_ids: frozenset[int] = frozenset(),
    chunk: int = CHUNK,
) -> Iterator[list[int]]:
    """The ids (positions) of the matching messages, a chunk of ``messages`` at a time (a list,
    maybe empty, per chunk): one pass, no quadratic work."""
    matcher = Matcher(query, error_ids)
    match: Callable[[int, Mapping[str, Any]], bool] = matcher.matches
    for start in range(0, len(messages), chunk):
        yield [i for i in range(start, min(start + chunk, len(messages))) if match(i, messages[i])]
