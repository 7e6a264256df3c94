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
from contextlib import ExitStack, contextmanager
from typing import Any

from ctxview.core.fileio import (
    FileRefused,
    grew_too_large,
    open_error,
    open_regular,
    read_regular,
    read_span,
    too_large,
)

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
    _check_start(path, data, whole=True)
    return _decoded(path, data)


def _check_start(path: str, data: bytes, whole: bool) -> bool:
    """Refuse a file that is empty (nothing but whitespace) or binary (a NUL in its first 8 KiB)
    from its first bytes, ``data`` (``whole``: the whole file). False when ``data`` is blank and
    there is more to read, which decides."""
    if _BLANK_BYTES.match(data):  # (data.strip() would copy a 100 MB file to find one byte)
        if not whole:
            return False
        raise SessionError(f"{path}: file is empty")
    if b"\x00" in data[:8192] and not _JSON_START.match(data):
        # a file that starts with JSON is text with a run of NUL bytes in it (a crash leaves
        # one where a write never landed): a JSONL reader skips that line, a JSON parse names it
        raise SessionError(f"{path}: is a binary file, not a JSON or JSONL session")
    return True


def _not_utf8(path: str, byte: int, line: int, offset: int) -> SessionError:
    return SessionError(
        f"{path}: is not UTF-8 text (invalid byte 0x{byte:02x} at line {line}, "
        f"byte offset {offset})"
    )


def _decoded(
    path: str,
    data: bytes,
    line: int = 1,
    offset: int = 0,
    first: bool = True,
    cut: bool = True,
) -> str:
    """``data`` as text: the bytes of a file from byte ``offset``, line ``line`` (``first``: its
    start, where a byte order mark is dropped). With ``cut``, an incomplete character at the end
    of ``data`` is dropped: the end of a file whose last line was cut while being written (a
    live agent's transcript, a crash), or of the part of one read so far. Any other invalid
    UTF-8 is a SessionError naming its line and byte offset."""
    try:
        return data.decode("utf-8-sig" if first else "utf-8")
    except UnicodeDecodeError as exc:
        skip = len(codecs.BOM_UTF8) if first and data.startswith(codecs.BOM_UTF8) else 0
        start = exc.start + skip  # (the codec counts from after the byte order mark)
        if cut and exc.reason == "unexpected end of data" and exc.end + skip == len(data):
            return data[:start].decode("utf-8-sig" if first else "utf-8")
        line += data.count(b"\n", 0, start)
        raise _not_utf8(path, data[start], line, offset + start) from None


#: the first bytes of a file read to tell its format (:attr:`TextFile.head`), more when its first
#: line needs them; at least 4 x 4096 (a proxy recording's header is looked for in 4096 characters)
HEAD_BYTES = 64 * 1024
#: bytes read at a time when a file is read line by line (:meth:`TextFile.lines`)
CHUNK_BYTES = 1024 * 1024
#: the first line holding something (``text.lstrip().split("\n", 1)[0]`` without a copy)
FIRST_LINE = re.compile(r"\s*([^\n]*)")
_BLANK_STR = re.compile(r"\s*\Z")
_ASCII_BLANK = b" \t\n\r\x0b\x0c"
#: by first byte: an ASCII character that is not "{" nor a Unicode space (``\s`` takes
#: \x1c-\x1f as well): a first line starting with it is no JSONL line
_NOT_JSONL_START = [b < 0x80 and not chr(b).isspace() and b != ord("{") for b in range(256)]


class TextFile:
    """A session file open for reading (:func:`open_text`), checked as :func:`read_text` checks
    one: :attr:`head`, its start as text, tells its format; then it is read whole
    (:meth:`text`) or a line at a time (:meth:`lines`), which never holds the whole file: a
    JSONL transcript of 100 MB is parsed without its 100 MB of bytes and of text beside it.
    Invalid UTF-8 is refused with the same sentence either way (read line by line, when the
    line that holds it is reached)."""

    def __init__(self, path: str, fd: int, max_bytes: int) -> None:
        self.path = path
        self._fd = fd
        self._max = max_bytes
        self.head, self.whole = self._read_head()

    def _read(self, offset: int, count: int) -> bytes:
        """At most ``count`` bytes from ``offset``; a file that passed the size cap since it was
        opened is refused."""
        count = min(count, self._max + 1 - offset)
        try:
            data = read_span(self._fd, offset, count) if count > 0 else b""
        except OSError as exc:
            raise SessionError(str(open_error(self.path, exc))) from None
        if offset + len(data) > self._max:
            raise SessionError(str(grew_too_large(self.path, self._max)))
        return data

    def _read_head(self) -> tuple[str, bool]:
        """(the file's start as text, whether that is the whole file). The start holds at
        least the first line that holds something and the first thing after it (what tells a
        JSONL file, see :func:`head_is_enough`), unless that line does not start with ``{``."""
        size = HEAD_BYTES
        while True:
            data = self._read(0, size)
            whole = len(data) < size
            if not _check_start(self.path, data, whole):
                size *= 4
                continue
            if whole:
                return _decoded(self.path, data), True
            # no newline after the first byte that is not ASCII whitespace: the first line has
            # not ended (checked on the bytes: a long one-line JSON file is not decoded each time)
            begin = len(data) - len(data.lstrip(_ASCII_BLANK))
            if data.find(b"\n", begin) >= 0:
                text = _decoded(self.path, data)
                if head_is_enough(text):
                    return text, False
            elif begin < len(data) and _NOT_JSONL_START[data[begin]]:
                # the first line begins with an ASCII character that is neither a space nor
                # "{": no JSONL line, whatever follows (a long one-line JSON array)
                return _decoded(self.path, data), False
            size *= 4

    def text(self) -> str:
        """The whole text, as :func:`read_text` gives it."""
        if self.whole:
            return self.head
        return _decoded(self.path, self._read(0, self._max + 1))

    def lines(self) -> Iterator[tuple[int, str]]:
        """Each line with its 1-based number, as ``enumerate(self.text().split("\\n"), 1)``
        gives them (the last is what follows the last newline, maybe ""), read
        :data:`CHUNK_BYTES` at a time."""
        number = 0
        offset = 0  # of the next chunk
        start = 0  # the file offset of the line being read
        parts: list[bytes] = []  # its bytes so far
        while chunk := self._read(offset, CHUNK_BYTES):
            offset += len(chunk)
            pieces = chunk.split(b"\n")
            if len(pieces) == 1:
                parts.append(chunk)
                continue
            if parts:
                parts.append(pieces[0])
                pieces[0] = b"".join(parts)
            parts = [pieces.pop()]
            for raw in pieces:
                number += 1
                yield number, self._line(raw, number, start)
                start += len(raw) + 1
        number += 1
        last = b"".join(parts)
        yield number, self._line(last, number, start, last=True)

    def _line(self, raw: bytes, number: int, start: int, last: bool = False) -> str:
        """A line's text (``start``: its offset in the file): the first drops a byte order
        mark; only the last may end inside a character (see :func:`_decoded`)."""
        if start and not last:
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise _not_utf8(self.path, raw[exc.start], number, start + exc.start) from None
        return _decoded(self.path, raw, number, start, first=start == 0, cut=last)


def head_is_enough(text: str) -> bool:
    """Does the start of a file, ``text``, tell all that its first line tells: the first line
    holding something is whole and something follows it (JSONL), or that line is begun and
    does not start with ``{`` (no JSONL)? For JSONL, at least 200 characters from that line's
    start (what the format tests look at)."""
    m = FIRST_LINE.match(text)
    if m is None:  # pragma: no cover - the pattern matches any text
        return False
    line = m.group(1)
    if line and not line.startswith("{"):
        return True
    if m.end() == len(text):
        return False
    return not _BLANK_STR.match(text, m.end()) and len(text) - m.start(1) >= 200


@contextmanager
def open_text(path: str, max_bytes: int) -> Iterator[TextFile]:
    """The session file at ``path`` open as a :class:`TextFile` (at most ``max_bytes``),
    closed on leaving: SessionError naming the file when it cannot be read, is too large,
    empty, binary, or (when its start is read) not UTF-8."""
    with ExitStack() as stack:
        try:
            fd, st = stack.enter_context(open_regular(path, what="session file"))
        except FileRefused as exc:
            raise SessionError(str(exc)) from None
        if st.st_size > max_bytes:
            raise SessionError(str(too_large(path, st.st_size, max_bytes)))
        yield TextFile(path, fd, max_bytes)


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


def _frames() -> int:
    f: Any = sys._getframe(1)
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


def _parser_offset() -> int | None:
    """How many recursion levels ``json.loads`` called from the caller's frame uses besides one
    per nesting level, when the C parser counts its nesting against the interpreter's
    recursion limit (CPython 3.11); None when it does not (3.12+ count C recursion apart) or
    the count is not what is expected. Measured again on every call, never kept: C calls on
    the stack below the caller (a class's ``__init__`` reached through ``type.__call__``) count
    against the limit unseen by a frame walk, so an offset measured under one stack is a
    level or more too generous under another, and a file nested a level too deep would parse.
    The probe is a few dozen parses of tiny texts; it runs only before a text of a megabyte."""
    if sys.version_info >= (3, 12):
        return None
    old = sys.getrecursionlimit()
    try:
        deepest = _probe_deepest()
    except RecursionError:
        return None
    finally:
        sys.setrecursionlimit(old)
    offset = 60 - deepest
    return offset if 0 < offset < 30 and deepest < 69 else None


def _probe_deepest() -> int:
    """The deepest nesting ``json.loads`` parses 60 recursion levels above this frame."""
    sys.setrecursionlimit(_frames() + 60)
    deepest = 0
    for depth in range(1, 70):
        try:
            json.loads("[" * depth + "]" * depth, parse_constant=float)
        except RecursionError:
            break
        deepest = depth
    return deepest


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
