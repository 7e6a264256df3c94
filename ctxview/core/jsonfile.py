"""Reading a JSON file the user named: its text checked (a regular file, not empty, not binary,
UTF-8), then parsed with bounds (no NaN or Infinity, no integer past Python's digit limit, no
nesting past :data:`MAX_DEPTH`). Every failure is a :class:`SessionError`: one sentence naming
the file and, where it applies, the line and column or the JSON path.
"""

from __future__ import annotations

import codecs
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ctxview.core.fileio import FileRefused, read_regular

#: the largest session file read (a request the API takes is far smaller: 32 MB)
MAX_BYTES = 2 * 1024**3


class SessionError(Exception):
    """A file that cannot be opened; the message is one clear sentence naming the file."""


_BLANK_BYTES = re.compile(rb"\s*\Z")
#: a file whose first line starts with JSON (after a byte order mark and white space)
_JSON_START = re.compile(rb"(?:\xef\xbb\xbf)?[ \t\r\n]*[{\[]")


def read_text(path: str, max_bytes: int) -> str:
    """The text of the session file at ``path`` (at most ``max_bytes``): SessionError naming
    the file when it cannot be read, is empty, binary or not UTF-8."""
    try:
        data = read_regular(path, max_bytes, what="session file")
    except FileRefused as exc:
        raise SessionError(str(exc)) from None
    if _BLANK_BYTES.match(data):  # (data.strip() would copy a 100 MB file to find one byte)
        raise SessionError(f"{path}: file is empty")
    if b"\x00" in data[:8192] and not _JSON_START.match(data):
        # a file that starts with JSON is text with a run of NUL bytes in it (a crash leaves
        # one where a write never landed): a JSONL reader skips that line, a JSON parse names it
        raise SessionError(f"{path}: is a binary file, not a JSON or JSONL session")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        start = exc.start + skip  # (the codec counts from after the byte order mark)
        if exc.reason == "unexpected end of data" and exc.end + skip == len(data):
            # the file ends inside a character: its last line was cut while being written (a
            # live agent's transcript, a crash): read it as the cut line it is
            return data[:start].decode("utf-8-sig")
        line = data.count(b"\n", 0, start) + 1
        raise SessionError(
            f"{path}: is not UTF-8 text (invalid byte 0x{data[start]:02x} at line {line}, "
            f"byte offset {start})"
        ) from None


#: deeper JSON is refused on read: re-serialising it (previews, exports, token estimates) would
#: hit Python's recursion limit later, far from the file
MAX_DEPTH = 200
#: Python's limit for int <-> str conversion: longer integers cannot be read or written back
MAX_INT_DIGITS = 4300


class BadJSONValue(SessionError):
    """Valid JSON the API (or ctxview) cannot take: NaN/Infinity, huge integers, deep nesting."""


class _NonFinite(float):
    """What NaN / Infinity / -Infinity parse to, so the JSON path can be found after parsing."""

    literal = ""

    def __new__(cls, literal: str) -> _NonFinite:
        obj = super().__new__(cls, "nan")
        obj.literal = literal
        return obj


class _BigInt(int):
    """Stands for an integer too long to convert (its digit count is kept)."""

    digits = 0


def _big_int(s: str) -> int:
    if len(s.lstrip("-")) > MAX_INT_DIGITS:
        v = _BigInt(0)
        v.digits = len(s.lstrip("-"))
        return v
    return int(s)


def _path_str(parts: list[Any]) -> str:
    out = ""
    for p in parts:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    if len(out) > 120:
        out = out[:50] + "…" + out[-60:]
    return out or "(top level)"


def too_deep(data: Any) -> bool:
    """Is any container nested deeper than MAX_DEPTH? One breadth-first pass, level by level
    (list comprehensions, no paths kept): about a third of json.loads' own time."""
    level = [data] if type(data) in (dict, list) else []
    depth = 0
    while level:
        if depth > MAX_DEPTH:
            return True
        nxt: list[Any] = []
        extend = nxt.extend
        for v in level:
            extend(
                [
                    x
                    for x in (v.values() if type(v) is dict else v)
                    if type(x) is dict or type(x) is list
                ]
            )
        level = nxt
        depth += 1
    return False


def _bad_value(data: Any) -> tuple[list[Any], str] | None:
    """(JSON path, reason) of the first value ctxview refuses (the slow walk, on error only)."""
    stack: list[tuple[Any, list[Any]]] = [(data, [])]
    while stack:
        v, path = stack.pop()
        if len(path) > MAX_DEPTH:
            return path[:MAX_DEPTH], f"nested more than {MAX_DEPTH} levels deep"
        if isinstance(v, _NonFinite):
            return path, f"{v.literal} is not valid JSON for the API (only finite numbers are)"
        if isinstance(v, _BigInt):
            return path, (
                f"an integer with {v.digits:,} digits (the limit is {MAX_INT_DIGITS:,} digits)"
            )
        if isinstance(v, dict):
            stack.extend((x, [*path, k]) for k, x in reversed(list(v.items())))
        elif isinstance(v, list):
            stack.extend((x, [*path, i]) for i, x in reversed(list(enumerate(v))))
    return None


#: JSON up to this deep is parsed (then refused past MAX_DEPTH with its JSON path); deeper
#: JSON fails in the parser itself ("nested too deeply to read")
PARSE_DEPTH = 4000
_depth_lock = threading.Lock()


@contextmanager
def _parse_depth() -> Iterator[None]:
    """Room for the C JSON parser to go PARSE_DEPTH levels deep wherever it is called from (the
    interpreter's recursion limit is raised, never lowered, for the parse; other threads only
    gain headroom meanwhile)."""
    with _depth_lock:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, old + PARSE_DEPTH))
        try:
            yield
        finally:
            sys.setrecursionlimit(old)


#: texts this long are parsed under a recursion limit first (see :func:`_loads_bounded`)
BOUNDED_MIN_CHARS = 1_000_000
_bound_offset: list[int | None] = []


def _frames() -> int:
    f: Any = sys._getframe(1)
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


def _parser_offset() -> int | None:
    """How many recursion levels ``json.loads`` uses besides one per nesting level, when the C
    parser counts its nesting against the interpreter's recursion limit (CPython 3.11); None
    when it does not (3.12+ count C recursion apart) or the count is not what is expected."""
    if _bound_offset:
        return _bound_offset[0]
    found: int | None = None
    if sys.version_info < (3, 12):
        old = sys.getrecursionlimit()
        base = _frames()
        try:
            sys.setrecursionlimit(base + 60)
            deepest = 0
            for depth in range(1, 70):
                try:
                    json.loads("[" * depth + "]" * depth, parse_constant=float)
                except RecursionError:
                    break
                deepest = depth
            offset = 60 - deepest
            found = offset if 0 < offset < 30 and deepest < 69 else None
        except RecursionError:
            found = None
        finally:
            sys.setrecursionlimit(old)
    _bound_offset.append(found)
    return found


def _loads_bounded(text: str, constant: Callable[[str], float]) -> tuple[Any] | None:
    """``(json.loads(text),)`` parsed under a recursion limit that stops the C parser past
    MAX_DEPTH levels of nesting, so a successful parse needs no separate depth walk (a third of
    the parse's time on a 100 MB session); None when that cannot be done (another thread runs:
    the limit is the interpreter's; a parser not bound by it) or the parse hit the limit (the
    caller then parses the exact way, which names the JSON path)."""
    if threading.active_count() != 1:
        return None
    offset = _parser_offset()
    if offset is None:
        return None
    with _depth_lock:
        old = sys.getrecursionlimit()
        try:
            # nesting up to MAX_DEPTH + 1 levels parses (what too_deep accepts); deeper fails
            sys.setrecursionlimit(_frames() + MAX_DEPTH + 1 + offset)
        except RecursionError:
            return None
        try:
            return (json.loads(text, parse_constant=constant),)
        except RecursionError:
            return None
        finally:
            sys.setrecursionlimit(old)


def loads_checked(text: str) -> Any:
    """json.loads that refuses NaN/Infinity, integers past Python's digit limit and nesting past
    MAX_DEPTH: ValueError("<json path>: reason"). JSONDecodeError and RecursionError pass."""
    flagged = False

    def constant(literal: str) -> float:
        nonlocal flagged
        flagged = True
        return _NonFinite(literal)

    bounded: tuple[Any] | None = None
    try:
        if len(text) >= BOUNDED_MIN_CHARS:
            bounded = _loads_bounded(text, constant)
        if bounded is not None:
            data = bounded[0]
        else:
            with _parse_depth():
                data = json.loads(text, parse_constant=constant)
    except json.JSONDecodeError:
        raise
    except ValueError:  # an integer past the int <-> str limit: parse again to find where
        bounded = None
        with _parse_depth():
            data = json.loads(text, parse_constant=constant, parse_int=_big_int)
        flagged = True
    if flagged or (bounded is None and too_deep(data)):
        found = _bad_value(data)
        if found is not None:
            raise ValueError(f"{_path_str(found[0])}: {found[1]}")
    return data


def json_error(exc: json.JSONDecodeError, place: str, unit: str) -> str:
    """``invalid JSON at line 3, column 5: Expecting value``, said whole: the json module's
    messages that end in "at" expect their place after them (``Unterminated string starting
    at``), and an unterminated string means the ``unit`` (file, line) ends inside it; an error
    where nothing but white space follows means the ``unit`` ends there (a value cut off
    between two tokens)."""
    if not exc.msg.endswith(" at"):
        ends = exc.doc.strip() and exc.pos >= len(exc.doc.rstrip())
        why = f" (the {unit} ends there: truncated?)" if ends else ""
        return f"invalid JSON at {place}: {exc.msg}{why}"
    what = exc.msg[:1].lower() + exc.msg[1:]
    why = f" (the {unit} ends inside it: truncated?)" if what.startswith("unterminated") else ""
    return f"invalid JSON: {what} {place}{why}"


def parse_json(path: str, text: str) -> Any:
    """``text`` (of the file at ``path``) parsed by :func:`loads_checked`: every failure a
    :class:`SessionError` naming the file and the place (line and column, or the JSON path)."""
    try:
        return loads_checked(text)
    except json.JSONDecodeError as exc:
        raise SessionError(
            f"{path}: {json_error(exc, f'line {exc.lineno}, column {exc.colno}', 'file')}"
        ) from None
    except RecursionError:
        raise BadJSONValue(
            f"{path}: JSON is nested too deeply to read (over {PARSE_DEPTH:,} levels; the limit "
            f"is {MAX_DEPTH})"
        ) from None
    except ValueError as exc:
        raise BadJSONValue(f"{path}: {exc}") from None
