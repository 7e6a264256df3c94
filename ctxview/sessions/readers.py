"""Open a file: detect its format by content (or take ``--format``) and yield a LoadedSession.

Every failure is a :class:`SessionError` with one clear sentence naming the file and, where it
applies, the line and column or the JSON path. No traceback ever reaches the user.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxview.core.fileio import fmt_bytes
from ctxview.core.jsonfile import (
    FIRST_LINE,
    MAX_BYTES,
    MAX_DEPTH,
    BadJSONValue,
    SessionError,
    TextFile,
    json_error,
    loads_checked,
    open_text,
    parse_json,
    too_deep,
)
from ctxview.core.session_file import AS_SENT_FORMATS as AS_SENT_FORMATS
from ctxview.core.session_file import PROXY_TITLE as PROXY_TITLE
from ctxview.core.session_file import SESSION_FORMAT, read_document
from ctxview.core.session_file import SESSION_VERSION as SESSION_VERSION
from ctxview.sessions.model import REQUEST_OWN_FIELDS, LoadedSession, gc_paused
from ctxview.sessions.validate import (
    _kind,
    validate_messages,
    validate_system,
)
from ctxview.textfmt import one_line

if TYPE_CHECKING:
    from ctxview.core.providers.base import Route

    # the Claude Code reader is imported when a file is detected as a transcript
    from ctxview.sessions.claude_code import Line

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

#: a JSONL line longer than this is skipped, here and by ``ctxview.live.follow`` (which must not
#: hold a line without an end in memory); a request the API takes is far smaller (32 MB)
MAX_LINE_BYTES = 64 * 1024**2


_BLANK_STR = re.compile(r"\s*\Z")
#: the first line holding something (``text.lstrip().split("\n", 1)[0]`` without a copy)
_FIRST_LINE = FIRST_LINE


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
    """:func:`loads_checked` of one JSONL line, the usual line without its per-call set-up:
    parsed by a shared decoder under the interpreter's own recursion limit, and walked for its
    depth only when it has more than MAX_DEPTH opening brackets (fewer cannot nest deeper).
    Anything unusual (NaN, a huge integer, deep nesting, bad JSON) is parsed again by
    :func:`loads_checked`, which names the problem. A line over MAX_LINE_BYTES is a ValueError
    before any parse."""
    if len(raw) > MAX_LINE_BYTES // 4 and len(raw.encode("utf-8", "surrogatepass")) > (
        MAX_LINE_BYTES
    ):
        raise ValueError(f"a line longer than {fmt_bytes(MAX_LINE_BYTES)}")
    try:
        data = _LINE_DECODER.decode(raw)
    except (_Constant, ValueError, RecursionError):
        return loads_checked(raw)
    if raw.count("{") + raw.count("[") > MAX_DEPTH and too_deep(data):
        return loads_checked(raw)
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
    if raw.startswith("\x00"):
        nuls = len(raw) - len(raw.lstrip("\x00"))
        where = "" if nuls == len(raw) else ", then text"
        return None, skip_reason(
            f"a run of {nuls:,} NUL bytes{where} (a write that never landed: a crash?)"
        )
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


def jsonl_objects(
    text: str | TextFile, skipped: dict[int, str]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each object line of a JSONL text (or of a file, read a line at a time) with its 1-based
    number; a line that is not one goes into ``skipped`` with why (:func:`jsonl_record`); blank
    lines are neither."""
    lines = enumerate(text.split("\n"), start=1) if isinstance(text, str) else text.lines()
    for number, raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        record, reason = jsonl_record(raw)
        if record is None:
            skipped[number] = reason
        else:
            yield number, record


def _jsonl_records(path: str, text: str | TextFile) -> tuple[list[Line], dict[int, str]]:
    from ctxview.sessions.claude_code import Line

    skipped: dict[int, str] = {}
    lines = [Line(number, record) for number, record in jsonl_objects(text, skipped)]
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
    with open_text(spath, MAX_BYTES) as source:
        return _load_source(spath, format, conversation, source)


def _load_source(
    spath: str, format: str | None, conversation: int | None, source: TextFile
) -> LoadedSession:
    head = source.head
    # a recording's header is its short first line: only the file's start is looked at (a
    # 100 MB one-line JSON file is not copied to find that it is not one)
    first = _FIRST_LINE.match(head[:4096])
    if format is None and first is not None:
        from ctxview.sessions import proxylog

        if proxylog.is_proxy_log(first.group(1)):
            records, bad, upstreams = proxylog.parse_log(spath, source.text())
            return proxylog.open_recording(spath, records, bad, upstreams, conversation)
        from ctxview.sessions import cassette

        if cassette.is_cassette(first.group(1)):
            return cassette.read_cassette(spath, source.text(), conversation)
    if conversation is not None:
        raise SessionError(
            f"{spath}#{conversation}: #N picks a conversation of a proxy recording or a VCR "
            f"cassette; {spath} is not one"
        )
    if format in STREAMED_FORMATS and _looks_jsonl(head):
        # its first line is an object and more follows: no one JSON document, so JSONL, read a
        # line at a time (the file's start tells which format)
        fmt = format or detect(spath, head, None)
        return _run(JSONL_READERS[fmt], spath, source, None)
    text = source.text()
    data: Any | None
    if format in ("claude-code", "codex") or (format is None and _looks_jsonl(text)):
        data = None
        try:
            whole = parse_json(spath, text)
        except BadJSONValue:
            raise
        except SessionError:
            whole = None
        if isinstance(whole, (dict, list)):
            data = whole
    else:
        data = parse_json(spath, text)
    if data is not None:
        text = ""  # parsed: let the text go before the reader builds on the data (peak memory)
    fmt = format or detect(spath, text, data)
    return _run(READERS[fmt], spath, text, data)


def _run(
    reader: Callable[[str, Any, Any], LoadedSession], spath: str, text: Any, data: Any
) -> LoadedSession:
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


def _read_claude_code(path: str, text: str | TextFile, data: Any) -> LoadedSession:
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
        head_of,
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
    cwd, prompt = head_of(lines)
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
        cwd=cwd,
        first_prompt=prompt,
    )


def _read_ctxview(path: str, text: str, data: Any) -> LoadedSession:
    saved = read_document(data)
    if saved.recorded_requests is not None:
        return _read_old_recording(path, saved.recorded_requests)
    settings = data.get("settings") or {}
    provider, wire_format, system_wire = _provider_settings(settings)
    return LoadedSession(
        path,
        "ctxview",
        saved.messages,
        saved.metas,
        system=saved.system,
        tools=saved.tools,
        model=saved.model,
        max_tokens=saved.max_tokens,
        max_context_messages=saved.max_context_messages,
        strategy=saved.strategy,
        max_context_tokens=saved.max_context_tokens,
        low_water_fraction=saved.low_water_fraction,
        context_editing=saved.context_editing,
        title=saved.title,
        request_params=saved.request_params,
        saved_window=saved.window,
        saved_cut=saved.cut,
        saved_evicted_steps=saved.evicted_steps,
        saved_added_steps=saved.added_steps,
        saved_step=saved.step,
        as_sent_format=saved.as_sent,
        saved_pinned=saved.pinned,
        saved_held=saved.held,
        provider=provider,
        wire_format=wire_format,
        system_wire=system_wire,
        route=_route_setting(settings.get("route")),
    )


def _route_setting(value: Any) -> Route | None:
    """The route ``settings.route`` saves (``{"api", "streamed"}``; absent: not known)."""
    from ctxview.core.providers.base import GEMINI_API, VERTEX_AI, Route

    if value is None:
        return None
    if not isinstance(value, dict):
        raise ValueError(f"settings.route: expected an object, got {_kind(value)}")
    api, streamed = value.get("api"), value.get("streamed")
    if api not in (None, GEMINI_API, VERTEX_AI):
        raise ValueError(
            f"settings.route.api: expected {GEMINI_API!r}, {VERTEX_AI!r} or null, got {api!r:.60}"
        )
    if not isinstance(streamed, bool):
        raise ValueError(f"settings.route.streamed: expected true or false, got {_kind(streamed)}")
    return Route(api, streamed)


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


def _read_codex(path: str, text: str | TextFile, data: Any) -> LoadedSession:
    from ctxview.sessions.codex import read_codex

    if isinstance(data, dict):
        return read_codex(path, [(1, data)], {})
    if isinstance(data, list):
        recs = [(i + 1, r) for i, r in enumerate(data) if isinstance(r, dict)]
        return read_codex(path, recs, _not_objects(data))
    skipped: dict[int, str] = {}
    records = list(jsonl_objects(text, skipped))
    if not records:
        raise SessionError(f"{path}: no line of this JSONL file is a JSON object")
    return read_codex(path, records, skipped)


def _read_gemini(path: str, text: str, data: Any) -> LoadedSession:
    from ctxview.sessions import gemini

    return gemini.read(path, text, data)


def _read_gemini_cli(path: str, text: str | TextFile, data: Any) -> LoadedSession:
    from ctxview.sessions import gemini_cli

    return gemini_cli.read(path, text, data, jsonl_objects)


def _read_otel(path: str, text: str | TextFile, data: Any) -> LoadedSession:
    from ctxview.sessions import otel

    return otel.read(path, text, data, jsonl_objects)


#: the readers of JSONL formats: given a file to read a line at a time (a TextFile) for its
#: text when its start shows JSONL (see :func:`_load_source`), as the other readers are given the
#: whole text
JSONL_READERS: dict[str, Callable[[str, str | TextFile, Any], LoadedSession]] = {
    "claude-code": _read_claude_code,
    "codex": _read_codex,
    "gemini-cli": _read_gemini_cli,
    "otel": _read_otel,
}
#: the formats (None: detected) a file is read as JSONL in when its start shows JSONL; a JSONL
#: file given another format is refused as the JSON it is not, naming its second line
STREAMED_FORMATS = (None, "claude-code", "codex")

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
