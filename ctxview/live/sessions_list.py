"""``ctxview sessions``: the Claude Code sessions on this machine, newest first (with Codex's and
Gemini CLI's: :mod:`ctxview.live.sessions_all`).

Headless. Each transcript (``<projects>/<project>/<session>.jsonl``) is summarised from its first
and last HEAD_BYTES only, never read whole: the project (the ``cwd`` of its first lines, else the
folder name), the first prompt, the last activity (the newest ``timestamp`` of the tail, else the
file's mtime), the size, the sub-agents (``<session>/subagents/agent-*.jsonl``, and older
``agent-*.jsonl`` files beside it whose ``sessionId`` names the session) and the number of
messages (user and assistant lines): exact when head and tail cover the whole file, otherwise
estimated from the line density of the two samples (shown with ``~``). Only regular files are
read (``ctxview.sessions.fileio.open_regular``: a FIFO or a symlink to a device is skipped, never
waited on or read to its end). Summaries are cached by path, size and mtime in
``<state dir>/sessions-list.json``; an entry is used only when every field has the type
summarise_file writes, and its text passes ``one_line`` where a :class:`SessionInfo` is made, as
fresh text does.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxview.sessions.claude_code import prompt_text
from ctxview.sessions.fileio import FileRefused, open_regular, read_regular, read_span
from ctxview.textfmt import fmt_tokens, one_line

HEAD_BYTES = 32 * 1024
TAIL_BYTES = 16 * 1024
#: 3: a Codex rollout's messages are counted over the whole file (the summaries of version 2
#: estimated them from the head and tail)
CACHE_VERSION = 3
#: a bigger cache file is not read (a summary is about 500 bytes: 100,000 sessions fit)
MAX_CACHE_BYTES = 256 * 1024**2


def projects_roots() -> list[Path]:
    """``~/.claude/projects`` and ``$CLAUDE_CONFIG_DIR/projects`` (when set), those that exist."""
    roots = [Path.home() / ".claude" / "projects"]
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    if env:
        roots.insert(0, Path(env).expanduser() / "projects")
    seen: set[Path] = set()
    out = []
    for r in roots:
        try:
            real = r.resolve()
        except OSError:
            continue
        if real not in seen and r.is_dir():
            seen.add(real)
            out.append(r)
    return out


@dataclass
class SubAgent:
    path: str
    size: int
    messages: int
    messages_exact: bool
    first_prompt: str
    last_activity: str


@dataclass
class SessionInfo:
    path: str
    session_id: str
    project: str
    first_prompt: str
    title: str | None
    messages: int
    messages_exact: bool
    size: int
    last_activity: str
    subagents: list[SubAgent] = field(default_factory=list)
    #: whose agent wrote it: ``anthropic`` (Claude Code), ``openai`` (Codex CLI), ``gemini``
    provider: str = "anthropic"
    #: the file's format (``claude-code``, ``codex``, ``gemini-cli``)
    format: str = "claude-code"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["subagent_count"] = len(self.subagents)
        return d


@dataclass
class _FileSummary:
    """What head and tail tell about one JSONL file (cached)."""

    size: int
    mtime_ns: int
    cwd: str | None
    session_id: str | None
    first_prompt: str
    title: str | None
    messages: int
    exact: bool
    last_ts: str | None
    #: the session that started this one, when it is a sub-agent's (a Codex rollout names it)
    parent_id: str | None = None
    #: why the file holds no session (``empty file``, ``binary data, not JSON``): not listed
    unreadable: str | None = None


def _lines(chunk: bytes, drop_first: bool, drop_last: bool) -> list[bytes]:
    """The whole, non-blank lines of a chunk (a cut first or last line dropped)."""
    lines = chunk.split(b"\n")
    if drop_first:
        lines = lines[1:]
    if drop_last:
        lines = lines[:-1]
    return [ln for ln in lines if ln.strip()]


def last_timestamp(lines: list[bytes]) -> str | None:
    """The ``timestamp`` of the last line holding one (a JSONL session's last activity)."""
    for raw in reversed(lines):
        rec = _parse(raw)
        ts = rec.get("timestamp") if rec is not None else None
        if isinstance(ts, str) and ts:
            return ts
    return None


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        rec = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return rec if isinstance(rec, dict) else None


def _is_message(rec: dict[str, Any]) -> bool:
    return rec.get("type") in ("user", "assistant") and isinstance(rec.get("message"), dict)


def _first_type_is_message(raw: bytes) -> bool:
    i = raw.find(b'"type":')
    if i < 0:
        return False
    rest = raw[i + 7 : i + 20].lstrip()
    return rest.startswith((b'"user"', b'"assistant"'))


def summarise_file(path: Path) -> _FileSummary:
    """Head and tail of a regular file (opened through :func:`open_regular`: a FIFO or device
    is refused with :class:`FileRefused`, never waited on or read), at most HEAD_BYTES +
    TAIL_BYTES of it."""
    with open_regular(path, what="transcript") as (fd, st):
        size = st.st_size
        whole = size <= HEAD_BYTES + TAIL_BYTES
        if whole:  # (a file growing meanwhile: still no more than the two samples' bytes)
            head = read_span(fd, 0, HEAD_BYTES + TAIL_BYTES)
            tail = b""
        else:
            head = read_span(fd, 0, HEAD_BYTES)
            tail = read_span(fd, size - TAIL_BYTES, TAIL_BYTES)
    head_lines = _lines(head, False, not whole or not head.endswith(b"\n"))
    tail_lines = _lines(tail, True, not tail.endswith(b"\n")) if tail else []
    cwd = session_id = title = None
    prompt = ""
    parsed: list[dict[str, Any]] = []
    for raw in head_lines:
        rec = _parse(raw)
        if rec is None:
            continue
        if whole:
            parsed.append(rec)
        if cwd is None and isinstance(rec.get("cwd"), str):
            cwd = rec["cwd"]
        if session_id is None and isinstance(rec.get("sessionId"), str):
            session_id = rec["sessionId"]
        if title is None and rec.get("type") == "summary" and isinstance(rec.get("summary"), str):
            title = rec["summary"]
        if title is None and rec.get("type") == "ai-title" and isinstance(rec.get("title"), str):
            title = rec["title"]
        if not prompt and rec.get("type") == "user" and not rec.get("isMeta"):
            found = prompt_text(rec.get("message"))
            if found:
                prompt = found
        if not whole and prompt and cwd is not None and session_id is not None:
            break  # everything the head is read for
    last_ts = last_timestamp(tail_lines or head_lines)
    if whole:
        messages = sum(1 for r in parsed if _is_message(r))
        exact = True
    else:
        # message lines per byte in both samples (classified by their first "type" key, which
        # Claude Code writes before any nested one), times the file's size
        sampled = [*head_lines, *tail_lines]
        hits = sum(1 for ln in sampled if _first_type_is_message(ln))
        nbytes = sum(len(ln) + 1 for ln in sampled)
        messages = round(size * hits / max(1, nbytes))
        exact = False
    return _FileSummary(
        size=size,
        mtime_ns=st.st_mtime_ns,
        cwd=cwd,
        session_id=session_id,
        first_prompt=one_line(prompt, 200),
        title=one_line(title, 200) if title else None,
        messages=messages,
        exact=exact,
        last_ts=last_ts,
    )


#: the bytes of a file without messages that are looked at to say why
_SNIFF_BYTES = 4096


def _unreadable(path: Path, s: _FileSummary) -> str | None:
    """Why a file no message was found in is no session, or None when it may be one (a
    transcript of only a summary line). Every session format ctxview lists (Claude Code and
    Codex JSONL, Gemini CLI's JSON and JSONL) starts with a JSON object: a file that does not
    is empty, binary or another kind of file."""
    if s.messages:
        return None
    if s.size == 0:
        return "empty file"
    with open_regular(path, what="session") as (fd, _):
        head = read_span(fd, 0, _SNIFF_BYTES)
    start = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not start:
        return "empty file" if len(head) >= s.size else None
    if start.startswith(b"{"):
        return None
    # (a character cut at the end of the sample is no sign of binary data)
    whole = head if len(head) >= s.size else head[:-3]
    binary = "\ufffd" in whole.decode("utf-8", "replace") or any(
        c < 32 and c not in b"\t\n\r\f" for c in head
    )
    return "binary data, not JSON" if binary else "text that is not JSON"


def _iso(ts: str | None, mtime_ns: int) -> str:
    """The last activity in UTC: the transcript's timestamp, else the file's mtime, else ""
    (a date past year 9999 either way: ``9999-12-31T23:59:59-23:59`` is one in UTC)."""
    if ts:
        try:
            return (
                datetime.fromisoformat(ts.replace("Z", "+00:00"))
                .astimezone(UTC)
                .isoformat(timespec="seconds")
            )
        except (ValueError, OverflowError):
            pass
    try:
        return datetime.fromtimestamp(mtime_ns / 1e9, UTC).isoformat(timespec="seconds")
    except (ValueError, OverflowError, OSError):
        return ""


_NONE = type(None)
#: each cached field and the types summarise_file writes for it (exact types: a bool is no count)
_CACHED_FIELDS: dict[str, tuple[type, ...]] = {
    "size": (int,),
    "mtime_ns": (int,),
    "cwd": (str, _NONE),
    "session_id": (str, _NONE),
    "first_prompt": (str,),
    "title": (str, _NONE),
    "messages": (int,),
    "exact": (bool,),
    "last_ts": (str, _NONE),
    "parent_id": (str, _NONE),
    "unreadable": (str, _NONE),
}


def _from_cache(entry: Any) -> _FileSummary | None:
    """A cache entry as a summary, or None when it is not one summarise_file could have written
    (the cache is a file anyone can edit: a wrong type or a negative count means the transcript
    is read again). Its text is made safe where the summary is shown (:func:`_info`)."""
    if not isinstance(entry, dict) or entry.keys() != _CACHED_FIELDS.keys():
        return None
    for name, types in _CACHED_FIELDS.items():
        if type(entry[name]) not in types:
            return None
    if entry["size"] < 0 or not 0 <= entry["messages"] <= max(entry["size"], 0):
        return None
    return _FileSummary(**entry)


class SummaryCache:
    """File summaries by path, valid while size and mtime are unchanged. The paths asked for
    are the ones a save keeps (a file gone since is dropped)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.entries: dict[str, dict[str, Any]] = {}
        self.dirty = False
        #: every path asked for since the cache was opened
        self.seen: set[str] = set()
        #: the files asked for that hold no session, each with why (they are not listed)
        self.unreadable: dict[str, str] = {}
        if path is not None:
            try:  # a regular file of a bounded size: the cache is a path anyone may replace
                data = json.loads(read_regular(path, MAX_CACHE_BYTES, what="cache file"))
                if isinstance(data, dict) and data.get("version") == CACHE_VERSION:
                    entries = data.get("entries")
                    if isinstance(entries, dict):
                        self.entries = entries
            except (FileRefused, ValueError, RecursionError):
                pass  # the transcripts are read again (and the cache written anew)

    def get(
        self, path: Path, summarise: Callable[[Path], _FileSummary] | None = None
    ) -> _FileSummary | None:
        """The summary of a file (``summarise``: its format's summariser, default Claude
        Code's), from the cache while the file is unchanged; None when it is no session (and
        then in :attr:`unreadable` when it is a file that holds none)."""
        self.seen.add(str(path))
        try:
            st = path.stat()
        except OSError:
            return None
        hit = _from_cache(self.entries.get(str(path)))
        if hit is None or hit.size != st.st_size or hit.mtime_ns != st.st_mtime_ns:
            try:
                hit = (summarise or summarise_file)(path)
                hit.unreadable = _unreadable(path, hit)
            except (OSError, FileRefused):  # gone, unreadable, or no regular file (a FIFO)
                self.entries.pop(str(path), None)
                return None
            self.entries[str(path)] = asdict(hit)
            self.dirty = True
        if hit.unreadable is not None:
            self.unreadable[str(path)] = hit.unreadable
            return None
        return hit

    def save(self, keep: set[str] | None = None) -> None:
        """Write the entries of ``keep`` (default: the paths asked for), when any changed."""
        if keep is None:
            keep = self.seen
        if self.path is None or not self.dirty:
            return
        from ctxview.sessions.store import atomic_write

        entries = {k: v for k, v in self.entries.items() if k in keep}
        # ASCII: a file name's undecodable byte (a lone surrogate) is written as its \u escape,
        # which reads back as the same path; UTF-8 could not encode it
        data = json.dumps({"version": CACHE_VERSION, "entries": entries})
        with contextlib.suppress(OSError):  # a cache: the next run just reads the files again
            atomic_write(self.path, data.encode("ascii"))


def default_cache_path() -> Path:
    from ctxview.config import state_dir

    return state_dir() / "sessions-list.json"


def _subagent(path: Path, s: _FileSummary) -> SubAgent:
    return SubAgent(
        path=str(path),
        size=s.size,
        messages=s.messages,
        messages_exact=s.exact,
        first_prompt=one_line(s.first_prompt, 200),
        last_activity=_iso(s.last_ts, s.mtime_ns),
    )


def open_cache(cache_path: Path | bool | None = True) -> SummaryCache:
    """The summary cache (``True``: the default file; None or False: in memory only)."""
    return SummaryCache(default_cache_path() if cache_path is True else cache_path or None)


def list_sessions(
    roots: list[Path], cache_path: Path | bool | None = True, *, cache: SummaryCache | None = None
) -> list[SessionInfo]:
    """Every session transcript under the roots, newest activity first. With ``cache`` (shared
    with other sources' listings) the caller saves it."""
    own = cache is None
    if cache is None:
        cache = open_cache(cache_path)
    sessions: list[SessionInfo] = []
    by_id: dict[str, SessionInfo] = {}
    loose_agents: list[tuple[Path, _FileSummary]] = []
    for root in roots:
        try:
            projects = sorted(p for p in root.iterdir() if p.is_dir())
        except OSError:
            continue
        for project_dir in projects:
            try:
                files = sorted(project_dir.glob("*.jsonl"))
            except OSError:
                continue
            for f in files:
                s = cache.get(f)
                if s is None:
                    continue
                if f.name.startswith("agent-"):
                    loose_agents.append((f, s))
                    continue
                info = SessionInfo(
                    path=str(f),
                    session_id=f.stem,
                    project=one_line(s.cwd or project_dir.name, 200),
                    first_prompt=one_line(s.first_prompt, 200),
                    title=one_line(s.title, 200) if s.title else None,
                    messages=s.messages,
                    messages_exact=s.exact,
                    size=s.size,
                    last_activity=_iso(s.last_ts, s.mtime_ns),
                )
                sub_dir = project_dir / f.stem / "subagents"
                if sub_dir.is_dir():
                    for a in sorted(sub_dir.glob("agent-*.jsonl")):
                        sa = cache.get(a)
                        if sa is not None:
                            info.subagents.append(_subagent(a, sa))
                sessions.append(info)
                by_id[f.stem] = info
    for f, s in loose_agents:
        parent = by_id.get(s.session_id or "")
        if parent is not None:
            parent.subagents.append(_subagent(f, s))
    if own:
        cache.save()
    sessions.sort(key=lambda i: i.last_activity, reverse=True)
    return sessions


def size_text(n: int) -> str:
    """A session file's size as the sessions list shows it (the CLI's table and the app's tab)."""
    if n >= 1024**2:
        return f"{n / 1024**2:.1f} MB"
    if n >= 1024:
        return f"{n / 1024:.0f} kB"
    return f"{n} B"


def messages_label(n: int, exact: bool) -> str:
    return f"{n:,}" if exact else f"~{fmt_tokens(n)}"


def format_table(infos: list[SessionInfo], width: int = 160) -> str:
    """A plain-text table, each session followed by its path and its sub-agents (every text
    field went through one_line when the SessionInfo was made). Each path is written whole as
    one shell word (:func:`~ctxview.textfmt.shell_word`): pasted after ``ctxview`` it opens the
    file, whatever its name holds (spaces, quotes, escape sequences, bytes that are not UTF-8),
    and it never drives the terminal."""
    from ctxview.textfmt import counted, shell_word, tail_text

    head = ("last activity", "provider", "project", "msgs", "size", "agents", "first prompt")
    rows = [
        (
            i.last_activity.replace("T", " ")[:16],
            i.provider,
            tail_text(i.project, 28),
            messages_label(i.messages, i.messages_exact),
            size_text(i.size),
            str(len(i.subagents)) if i.subagents else "",
            i.first_prompt or (i.title or ""),
        )
        for i in infos
    ]
    widths = [max(len(r[k]) for r in [head, *rows]) for k in range(6)]

    def fmt(r: tuple[str, ...]) -> str:
        cells = [r[k].rjust(widths[k]) if k == 3 else r[k].ljust(widths[k]) for k in range(6)]
        return ("  ".join(cells) + "  " + r[6])[:width].rstrip()

    out = [fmt(head)]
    for info, r in zip(infos, rows, strict=True):
        out.append(fmt(r))
        out.append("    " + shell_word(info.path))
        for a in info.subagents:
            name = one_line(Path(a.path).name, 60)
            label = messages_label(a.messages, a.messages_exact)
            out.append(
                f"    └ {name} · {label} msgs · {size_text(a.size)} · {a.first_prompt}"[:width]
            )
    out.append(
        f"{counted(len(infos), 'session')}, newest first · open one: ctxview PATH · "
        "follow it: ctxview PATH --follow"
    )
    return "\n".join(out) + "\n"
