"""Open a file: detect its format by content (or take ``--format``) and yield a LoadedSession.

Every failure is a :class:`SessionError` with one clear sentence naming the file and, where it
applies, the line and column or the JSON path. No traceback ever reaches the user.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview.core.strategies import STRATEGIES
from ctxview.sessions.fileio import FileRefused, fmt_bytes, read_regular
from ctxview.sessions.model import REQUEST_OWN_FIELDS, LoadedSession, SessionError, gc_paused
from ctxview.sessions.validate import (
    _kind,
    message_problem,
    plain_message,
    validate_messages,
    validate_system,
)
from ctxview.textfmt import one_line

if TYPE_CHECKING:
    # the Claude Code reader is imported when a file is detected as a transcript
    from ctxview.sessions.claude_code import Line

SESSION_FORMAT = "ctxview.session"
SESSION_VERSION = 1
#: recorded formats a session can be shown "as sent" in (``settings.as_sent`` of a saved one):
#: ``ctxview.core.requests.RECORDED_FORMATS`` and ctxview's proxy recordings
AS_SENT_FORMATS = (
    "claude-code",
    "claude-code-web",
    "request",
    "proxy",
    "openai-chat",
    "openai-responses",
    "codex",
    "gemini",
    "gemini-cli",
    "otel",
)
#: how ctxview's proxy titles its recordings (older ones have no ``settings.as_sent``)
PROXY_TITLE = "ctxview proxy recording:"

#: --format names
FORMATS = (
    "ctxview",
    "request",
    "messages",
    "claude-code",
    "claude-code-web",
    "openai-chat",
    "openai-responses",
    "codex",
    "gemini",
    "gemini-cli",
    "otel",
)

MAX_BYTES = 2 * 1024**3
#: a JSONL line longer than this is skipped, here and by ``ctxview.live.follow`` (which must not
#: hold a line without an end in memory); a request the API takes is far smaller (32 MB)
MAX_LINE_BYTES = 64 * 1024**2


_BLANK_BYTES = re.compile(rb"\s*\Z")
_BLANK_STR = re.compile(r"\s*\Z")
#: the first line holding something (``text.lstrip().split("\n", 1)[0]`` without a copy)
_FIRST_LINE = re.compile(r"\s*([^\n]*)")


def _read_text(path: str) -> str:
    try:
        data = read_regular(path, MAX_BYTES, what="session file")
    except FileRefused as exc:
        raise SessionError(str(exc)) from None
    if _BLANK_BYTES.match(data):  # (data.strip() would copy a 100 MB file to find one byte)
        raise SessionError(f"{path}: file is empty")
    if b"\x00" in data[:8192]:
        raise SessionError(f"{path}: is a binary file, not a JSON or JSONL session")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise SessionError(
            f"{path}: is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} at line {line}, "
            f"byte offset {exc.start})"
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


def _too_deep(data: Any) -> bool:
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
            # nesting up to MAX_DEPTH + 1 levels parses (what _too_deep accepts); deeper fails
            sys.setrecursionlimit(_frames() + MAX_DEPTH + 1 + offset)
        except RecursionError:
            return None
        try:
            return (json.loads(text, parse_constant=constant),)
        except RecursionError:
            return None
        finally:
            sys.setrecursionlimit(old)


def _loads_checked(text: str) -> Any:
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
    if flagged or (bounded is None and _too_deep(data)):
        found = _bad_value(data)
        if found is not None:
            raise ValueError(f"{_path_str(found[0])}: {found[1]}")
    return data


def json_error(exc: json.JSONDecodeError, place: str, unit: str) -> str:
    """``invalid JSON at line 3, column 5: Expecting value``, said whole: the json module's
    messages that end in "at" expect their place after them (``Unterminated string starting
    at``), and an unterminated string means the ``unit`` (file, line) ends inside it."""
    if not exc.msg.endswith(" at"):
        return f"invalid JSON at {place}: {exc.msg}"
    what = exc.msg[:1].lower() + exc.msg[1:]
    why = f" (the {unit} ends inside it: truncated?)" if what.startswith("unterminated") else ""
    return f"invalid JSON: {what} {place}{why}"


def _parse_json(path: str, text: str) -> Any:
    try:
        return _loads_checked(text)
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


def _looks_jsonl(text: str) -> bool:
    # JSONL: the first line holding something is an object, and something follows it
    m = _FIRST_LINE.match(text)
    if m is None or _BLANK_STR.match(text, m.end()):
        return False
    first = m.group(1).strip()
    if not first.startswith("{"):
        return False
    try:
        return isinstance(json.loads(first), dict)
    except (ValueError, RecursionError):
        return False


class _Constant(Exception):
    """NaN / Infinity met by :data:`_LINE_DECODER` (the line is parsed again, the careful way)."""


def _refuse_constant(literal: str) -> float:
    raise _Constant(literal)


#: one decoder for every line (``json.loads(raw, parse_constant=...)`` builds one per call)
_LINE_DECODER = json.JSONDecoder(parse_constant=_refuse_constant)


def _loads_line(raw: str) -> Any:
    """:func:`_loads_checked` of one JSONL line, the usual line without its per-call set-up:
    parsed by a shared decoder under the interpreter's own recursion limit, and walked for its
    depth only when it has more than MAX_DEPTH opening brackets (fewer cannot nest deeper).
    Anything unusual (NaN, a huge integer, deep nesting, bad JSON) is parsed again by
    :func:`_loads_checked`, which names the problem. A line over MAX_LINE_BYTES is a ValueError
    before any parse."""
    if len(raw) > MAX_LINE_BYTES // 4 and len(raw.encode("utf-8", "surrogatepass")) > (
        MAX_LINE_BYTES
    ):
        raise ValueError(f"a line longer than {fmt_bytes(MAX_LINE_BYTES)}")
    try:
        data = _LINE_DECODER.decode(raw)
    except (_Constant, ValueError, RecursionError):
        return _loads_checked(raw)
    if raw.count("{") + raw.count("[") > MAX_DEPTH and _too_deep(data):
        return _loads_checked(raw)
    return data


#: a skipped line's reason is cut to this many characters (a JSON path can be long)
SKIP_REASON_CHARS = 160


def skip_reason(text: str) -> str:
    """Why a line was skipped, as every view shows it: one line, control characters made
    visible (a JSON path quotes the file's own keys), at most SKIP_REASON_CHARS."""
    return one_line(text, SKIP_REASON_CHARS)


def jsonl_record(raw: str) -> tuple[dict[str, Any] | None, str]:
    """One JSONL line (stripped, not blank): (its object, "") or (None, why it cannot be used).
    The one rule for a line of a transcript, opened or followed."""
    try:
        record = _loads_line(raw)
    except json.JSONDecodeError as exc:
        return None, skip_reason(json_error(exc, f"column {exc.colno}", "line"))
    except RecursionError:
        return None, skip_reason(f"JSON nested too deeply (the limit is {MAX_DEPTH} levels)")
    except ValueError as exc:  # NaN, a huge integer, too deep: the JSON path and the value
        return None, skip_reason(str(exc))
    if not isinstance(record, dict):
        return None, skip_reason(f"{_kind(record)}, not a JSON object")
    return record, ""


def _jsonl_records(path: str, text: str) -> tuple[list[Line], dict[int, str]]:
    from ctxview.sessions.claude_code import Line

    lines: list[Line] = []
    skipped: dict[int, str] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.strip()
        if not raw:
            continue
        record, reason = jsonl_record(raw)
        if record is None:
            skipped[number] = reason
            continue
        lines.append(Line(number, record))
    if not lines:
        raise SessionError(f"{path}: no line of this JSONL file is a JSON object")
    return lines, skipped


def _first_record(text: str) -> dict[str, Any] | None:
    """The first line of a JSONL text as an object, or None."""
    m = _FIRST_LINE.match(text[:1_000_000])
    if m is None:
        return None
    record, _ = jsonl_record(m.group(1).strip())
    return record


def detect(path: str, text: str, data: Any | None) -> str:
    """The format name for a file's content (data = parsed JSON, or None if it is not JSON)."""
    from ctxview.sessions import gemini, gemini_cli, otel
    from ctxview.sessions.codex import is_codex_record
    from ctxview.sessions.openai_bodies import is_chat_body, is_responses_body

    if data is None:
        if otel.looks_like_trace_log(text):
            return "otel"
        if gemini_cli.looks_like_log(text):
            return "gemini-cli"
        first = _first_record(text)
        if first is not None and is_codex_record(first):
            return "codex"
        return "claude-code"
    if otel.is_trace(data):
        return "otel"
    if gemini.is_request(data) or gemini.is_response(data):
        return "gemini"
    if gemini_cli.is_session(data) or (isinstance(data, dict) and gemini_cli.is_log_head(data)):
        return "gemini-cli"
    if isinstance(data, dict):
        if data.get("format") == SESSION_FORMAT:
            return "ctxview"
        if "loglines" in data:
            return "claude-code-web"
        if "messages" in data:
            return "openai-chat" if is_chat_body(data) else "request"
        if is_responses_body(data):
            return "openai-responses"
        if is_codex_record(data):
            return "codex"
        if data.get("type") in ("user", "assistant", "summary") or "parentUuid" in data:
            return "claude-code"
        keys = ", ".join(list(data)[:6]) or "none"
        raise SessionError(
            f'{path}: not a recognised session: a JSON object without "messages", "loglines" '
            f'or "format": "ctxview.session" (keys: {keys})'
        )
    if isinstance(data, list):
        if not data:
            raise SessionError(f"{path}: an empty JSON array (no messages to open)")
        head = data[0]
        if isinstance(head, dict) and "role" in head:
            return "messages"
        if isinstance(head, dict) and ("uuid" in head or head.get("type") in ("user", "assistant")):
            return "claude-code"
        raise SessionError(
            f"{path}: not a recognised session: a JSON array whose first item is {_kind(head)}, "
            "not a message with a role"
        )
    raise SessionError(f"{path}: not a recognised session: the JSON is {_kind(data)}")


#: ``FILE#N``: conversation N of a proxy recording
_CONVERSATION = re.compile(r"(.+)#([0-9]{1,9})")


def split_conversation(path: str) -> tuple[str, int | None]:
    """(file, conversation number) of ``FILE#N`` when no file of that whole name exists and
    ``FILE`` does; else (path, None)."""
    m = _CONVERSATION.fullmatch(path)
    if m is None or os.path.lexists(path) or not os.path.lexists(m.group(1)):
        return path, None
    return m.group(1), int(m.group(2))


def load_session(path: str | os.PathLike[str], format: str | None = None) -> LoadedSession:
    """Read and parse a session file of any supported format (``FILE#N``: conversation N of a
    proxy recording, see :func:`split_conversation`)."""
    with gc_paused():
        return _load_session(os.fspath(path), format)


def _load_session(spath: str, format: str | None) -> LoadedSession:
    if format is not None and format not in FORMATS:
        raise SessionError(f"unknown format {format!r} (known: {', '.join(FORMATS)})")
    spath, conversation = split_conversation(spath)
    text = _read_text(spath)
    # a recording's header is its short first line: only the file's start is looked at (a
    # 100 MB one-line JSON file is not copied to find that it is not one)
    first = _FIRST_LINE.match(text[:4096])
    if format is None and first is not None:
        from ctxview.sessions import proxylog

        if proxylog.is_proxy_log(first.group(1)):
            records, bad, upstreams = proxylog.parse_log(spath, text)
            return proxylog.open_recording(spath, records, bad, upstreams, conversation)
    if conversation is not None:
        raise SessionError(
            f"{spath}#{conversation}: #N picks a conversation of a proxy recording; "
            f"{spath} is not one"
        )
    data: Any | None
    if format in ("claude-code", "codex") or (format is None and _looks_jsonl(text)):
        data = None
        try:
            whole = _parse_json(spath, text)
        except BadJSONValue:
            raise
        except SessionError:
            whole = None
        if isinstance(whole, (dict, list)):
            data = whole
    else:
        data = _parse_json(spath, text)
    if data is not None:
        text = ""  # parsed: let the text go before the reader builds on the data (peak memory)
    fmt = format or detect(spath, text, data)
    reader = READERS[fmt]
    try:
        return reader(spath, text, data)
    except SessionError:
        raise
    except ValueError as exc:
        raise SessionError(f"{spath}: {exc}") from None
    except RecursionError:
        raise SessionError(f"{spath}: JSON is nested too deeply to read") from None


# -- readers -------------------------------------------------------------------------------------
def _read_request(path: str, text: str, data: Any) -> LoadedSession:
    if not isinstance(data, dict):
        raise ValueError(f"expected a request object, got {_kind(data)}")
    messages = validate_messages(data.get("messages"), "messages")
    system = data.get("system")
    validate_system(system, "system")
    tools = data.get("tools") or []
    if not isinstance(tools, list):
        raise ValueError(f"tools: expected an array, got {_kind(tools)}")
    model = data.get("model")
    max_tokens = data.get("max_tokens")
    invalid = {}
    if "max_tokens" in data and not _positive_int(max_tokens):
        invalid["max_tokens"] = _max_tokens_problem(max_tokens)
    return LoadedSession(
        path,
        "request",
        messages,
        [{} for _ in messages],
        system=system,
        tools=tools,
        model=model if isinstance(model, str) else None,
        max_tokens=max_tokens
        if isinstance(max_tokens, int) and not isinstance(max_tokens, bool)
        else None,
        request_params={k: v for k, v in data.items() if k not in REQUEST_OWN_FIELDS},
        invalid_fields=invalid,
    )


def _positive_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


def _max_tokens_problem(v: Any) -> str:
    """The API's 400 for a request's ``max_tokens`` (tests/acceptance/error_texts.md), with the
    file's value."""
    shown = one_line(json.dumps(v) if not isinstance(v, float) else repr(v), 40)
    if isinstance(v, int) and not isinstance(v, bool):
        return f"max_tokens: expected a positive integer, got {shown}"
    return f"max_tokens: Input should be a valid integer (the file has {shown})"


def _read_messages(path: str, text: str, data: Any) -> LoadedSession:
    messages = validate_messages(data, "")
    return LoadedSession(path, "messages", messages, [{} for _ in messages])


def _read_claude_code(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions.claude_code import Line

    if isinstance(data, list):
        lines = [Line(i + 1, r) for i, r in enumerate(data) if isinstance(r, dict)]
        bad = _not_objects(data)
    elif isinstance(data, dict) and "loglines" not in data:
        lines, bad = [Line(1, data)], {}
    else:
        lines, bad = _jsonl_records(path, text)
    return from_lines(path, "claude-code", lines, bad)


def _read_web(path: str, text: str, data: Any) -> LoadedSession:
    if not isinstance(data, dict) or not isinstance(data.get("loglines"), list):
        raise ValueError("loglines: expected an array of transcript records")
    from ctxview.sessions.claude_code import Line

    raw = data["loglines"]
    lines = [Line(i + 1, r) for i, r in enumerate(raw) if isinstance(r, dict)]
    bad = _not_objects(raw)
    session = from_lines(path, "claude-code-web", lines, bad)
    if bad:
        session.warnings.insert(0, "skipped_lines are 1-based positions in loglines")
    return session


def subagent_paths(path: str) -> list[str]:
    """The sub-agent transcripts of a Claude Code session file, sorted (none for other files)."""
    base = Path(path)
    if base.suffix != ".jsonl":
        return []
    folder = base.with_suffix("") / "subagents"
    try:
        return sorted(str(p) for p in folder.glob("agent-*.jsonl") if p.is_file())
    except OSError:
        return []


def _not_objects(records: list[Any]) -> dict[int, str]:
    """{1-based position: reason} of the records of an array that are not objects."""
    return {
        i + 1: skip_reason(f"{_kind(r)}, not a JSON object")
        for i, r in enumerate(records)
        if not isinstance(r, dict)
    }


def from_lines(path: str, fmt: str, lines: list[Line], bad: dict[int, str]) -> LoadedSession:
    """The session of a Claude Code transcript's records (``bad``: line numbers that were
    not records, with why); ``path`` names it in messages."""
    from ctxview.sessions.claude_code import (
        Placement,
        placement_notes,
        rebuild,
        sidechain_groups,
        subagent_links,
        title_of,
    )

    off_branch: list[dict[str, Any]] = []
    placement = Placement()
    reasons = dict(bad)
    messages, metas, unusable, warnings = rebuild(lines, off_branch, placement, reasons)
    warnings.extend(placement_notes(placement))
    if not messages:
        raise SessionError(f"{path}: no user or assistant messages found in this transcript")
    model = next((m.get("model") for m in reversed(metas) if isinstance(m.get("model"), str)), None)
    return LoadedSession(
        path,
        fmt,
        messages,
        metas,
        model=model,
        title=title_of(lines),
        skipped_lines=sorted(set(bad) | set(unusable)),
        skipped_reasons=reasons,
        warnings=warnings,
        subagents=subagent_paths(path),
        off_branch=off_branch,
        dangling_parents=[{"line": n, "parent": p} for n, p in placement.dangling_parents],
        unplaced_lines=placement.unplaced_lines,
        subagent_links=subagent_links(lines),
        sidechains=sidechain_groups(lines),
    )


#: the keys of a transcript record as ctxview writes it (``store.session_document``)
_USUAL_RECORD = itemgetter(
    "id", "message", "timestamp", "usage", "added_at_step", "evicted_at_step"
)


def _read_ctxview(path: str, text: str, data: Any) -> LoadedSession:
    if not isinstance(data, dict) or data.get("format") != SESSION_FORMAT:
        raise ValueError(f'format: expected "{SESSION_FORMAT}"')
    version = data.get("version")
    if version != SESSION_VERSION:
        if isinstance(version, int) and version > SESSION_VERSION:
            raise ValueError(
                f"version: written by a newer ctxview (version {version}); this one reads "
                f"version {SESSION_VERSION}"
            )
        raise ValueError(f"version: expected {SESSION_VERSION}, got {version!r}")
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise ValueError(f"settings: expected an object, got {_kind(settings)}")
    transcript = data.get("transcript")
    if not isinstance(transcript, list):
        raise ValueError(f"transcript: expected an array, got {_kind(transcript)}")
    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    evicted: dict[int, int] = {}
    added: dict[int, int] = {}
    add_message, add_meta = messages.append, metas.append
    plain = plain_message
    usual = _USUAL_RECORD
    for i, rec in enumerate(transcript):
        raw_meta: Any = None
        try:
            # the record ctxview writes: these six keys and no other (one look-up, not six)
            if len(rec) != 6 or type(rec) is not dict:
                raise KeyError
            rid, msg, ts, usage, added_step, evicted_step = usual(rec)
        except (KeyError, TypeError):
            if type(rec) is not dict and not isinstance(rec, dict):
                raise ValueError(f"transcript[{i}]: expected an object, got {_kind(rec)}") from None
            get = rec.get
            rid, msg, ts, usage = get("id"), get("message"), get("timestamp"), get("usage")
            added_step, evicted_step = get("added_at_step"), get("evicted_at_step")
            raw_meta = get("meta")
        if rid != i:
            raise ValueError(f"transcript[{i}].id: expected {i}, got {rid!r}")
        # message_problem's fast yes first (100,000 calls); anything else is asked properly
        if not plain(msg):
            found = message_problem(msg)
            if found is not None:
                raise ValueError(f"transcript[{i}].message{found[0]}: {found[1]}")
        add_message(msg)
        meta: dict[str, Any] = (
            {}
            if raw_meta is None
            else raw_meta.copy()
            if type(raw_meta) is dict
            else dict(raw_meta)
            if isinstance(raw_meta, dict)
            else {}
        )
        if isinstance(ts, str):
            meta["timestamp"] = ts
        if isinstance(usage, dict):
            meta["usage"] = usage
        add_meta(meta)
        if isinstance(evicted_step, int):
            evicted[i] = evicted_step
        if isinstance(added_step, int):
            added[i] = added_step
    window = data.get("window")
    saved_window: list[int] | None = None
    saved_pinned: list[int] = []
    cut = False
    if window is not None:
        if not isinstance(window, dict) or not isinstance(window.get("ids"), list):
            raise ValueError("window: expected an object with an array of ids")
        ids = window["ids"]
        for k, mid in enumerate(ids):
            if not isinstance(mid, int) or isinstance(mid, bool) or not 0 <= mid < len(messages):
                raise ValueError(f"window.ids[{k}]: {mid!r} is not the id of a transcript message")
        if ids != sorted(set(ids)):
            raise ValueError("window.ids: ids must be increasing and unique")
        saved_window = ids
        cut = bool(window.get("cut", False))
        pinned = window.get("pinned", [])
        if not isinstance(pinned, list):
            raise ValueError(f"window.pinned: expected an array of ids, got {_kind(pinned)}")
        in_window = set(ids)
        for k, mid in enumerate(pinned):
            if not isinstance(mid, int) or isinstance(mid, bool) or mid not in in_window:
                raise ValueError(
                    f"window.pinned[{k}]: {mid!r} is not the id of a window message"[:160]
                )
        saved_pinned = sorted(set(pinned))

    def opt_int(key: str) -> int | None:
        v = settings.get(key)
        if v is None:
            return None
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ValueError(f"settings.{key}: expected an integer >= 1, got {v!r}"[:160])
        return v

    system = settings.get("system_prompt", "")
    validate_system(system, "settings.system_prompt")
    tools = settings.get("tools") or []
    if not isinstance(tools, list):
        raise ValueError(f"settings.tools: expected an array, got {_kind(tools)}")
    frac = settings.get("low_water_fraction")
    if frac is not None and (
        isinstance(frac, bool) or not isinstance(frac, (int, float)) or not 0 < frac <= 1
    ):
        raise ValueError(f"settings.low_water_fraction: expected a number in (0, 1], got {frac!r}")
    strategy = settings.get("strategy")
    if strategy is not None and (not isinstance(strategy, str) or strategy not in STRATEGIES):
        raise ValueError(
            f"settings.strategy: unknown strategy {strategy!r:.80} (a strategy of your own is "
            "known once registered: ctxview.register_strategy(name, function) before opening; "
            f"known: {', '.join(STRATEGIES)})"[:300]
        )
    editing = settings.get("context_editing")
    if editing is not None:
        from ctxview.core.clearing import parse_context_editing

        parse_context_editing(editing, "settings.context_editing")  # ValueError naming the path
    model = settings.get("model")
    step = data.get("step")
    params = settings.get("request_params") or {}
    if not isinstance(params, dict):
        raise ValueError(f"settings.request_params: expected an object, got {_kind(params)}")
    as_sent = settings.get("as_sent")
    if as_sent is not None and as_sent not in AS_SENT_FORMATS:
        raise ValueError(
            f"settings.as_sent: expected null or one of {', '.join(AS_SENT_FORMATS)}, "
            f"got {as_sent!r}"[:200]
        )
    title = data.get("title") if isinstance(data.get("title"), str) else None
    if as_sent is None and title is not None and title.startswith(PROXY_TITLE):
        as_sent = "proxy"
    if as_sent == "proxy" and isinstance(data.get("requests"), list):
        return _read_old_recording(path, data["requests"])
    provider, wire_format, system_wire = _provider_settings(settings)
    return LoadedSession(
        path,
        "ctxview",
        messages,
        metas,
        system=system,
        tools=tools,
        model=model if isinstance(model, str) else None,
        max_tokens=opt_int("max_tokens"),
        max_context_messages=opt_int("max_context_messages"),
        strategy=strategy if isinstance(strategy, str) else None,
        max_context_tokens=opt_int("max_context_tokens"),
        low_water_fraction=float(frac)
        if isinstance(frac, (int, float)) and not isinstance(frac, bool)
        else None,
        context_editing=editing,
        title=title,
        request_params=params,
        saved_window=saved_window,
        saved_cut=cut,
        saved_evicted_steps=evicted,
        saved_added_steps=added,
        saved_step=step if isinstance(step, int) else None,
        as_sent_format=as_sent,
        saved_pinned=saved_pinned,
        provider=provider,
        wire_format=wire_format,
        system_wire=system_wire,
    )


def _provider_settings(settings: dict[str, Any]) -> tuple[str, str | None, list[Any]]:
    """(provider, wire format, system wire messages) of a saved session's settings."""
    from ctxview.core.providers.registry import names

    provider = settings.get("provider", "anthropic")
    if provider not in names():
        raise ValueError(
            f"settings.provider: unknown provider {provider!r:.60} (known: {', '.join(names())})"
        )
    wire_format = settings.get("wire_format")
    if wire_format is not None and wire_format not in FORMATS:
        raise ValueError(f"settings.wire_format: unknown format {wire_format!r:.60}")
    system_wire = settings.get("system_wire") or []
    if not isinstance(system_wire, list):
        raise ValueError(f"settings.system_wire: expected an array, got {_kind(system_wire)}")
    return provider, wire_format, system_wire


def _read_old_recording(path: str, requests: list[Any]) -> LoadedSession:
    """A proxy recording of the single-document form (a ctxview session with a ``requests``
    list): its requests opened as a log, as a recording of today's form is."""
    from ctxview.sessions import proxylog

    records, bad = [], []
    for i, item in enumerate(requests):
        try:
            if not isinstance(item, dict):
                raise ValueError
            records.append(proxylog.RequestRecord.from_dict(item, f"requests[{i}]"))
        except ValueError:
            bad.append(i + 1)
    records.sort(key=lambda r: r.id)
    return proxylog.open_recording(path, records, bad, {}, None)


def _read_openai_chat(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions.openai_bodies import read_chat

    return read_chat(path, data)


def _read_openai_responses(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions.openai_bodies import read_responses

    return read_responses(path, data)


def _read_codex(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions.codex import read_codex

    if isinstance(data, dict):
        return read_codex(path, [(1, data)], {})
    if isinstance(data, list):
        recs = [(i + 1, r) for i, r in enumerate(data) if isinstance(r, dict)]
        return read_codex(path, recs, _not_objects(data))
    records: list[tuple[int, dict[str, Any]]] = []
    skipped: dict[int, str] = {}
    for number, raw in enumerate(text.split("\n"), start=1):
        raw = raw.strip()
        if not raw:
            continue
        record, reason = jsonl_record(raw)
        if record is None:
            skipped[number] = reason
        else:
            records.append((number, record))
    if not records:
        raise SessionError(f"{path}: no line of this JSONL file is a JSON object")
    return read_codex(path, records, skipped)


def _read_gemini(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions import gemini

    return gemini.read(path, text, data)


def _read_gemini_cli(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions import gemini_cli

    return gemini_cli.read(path, text, data, jsonl_record)


def _read_otel(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions import otel

    return otel.read(path, text, data, jsonl_record)


READERS: dict[str, Callable[[str, str, Any], LoadedSession]] = {
    "ctxview": _read_ctxview,
    "request": _read_request,
    "messages": _read_messages,
    "claude-code": _read_claude_code,
    "claude-code-web": _read_web,
    "openai-chat": _read_openai_chat,
    "openai-responses": _read_openai_responses,
    "codex": _read_codex,
    "gemini": _read_gemini,
    "gemini-cli": _read_gemini_cli,
    "otel": _read_otel,
}
