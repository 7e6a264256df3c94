"""Writing a proxy recording: a log of requests, one JSON line appended as each exchange ends.

The format and the record are :mod:`ctxview.sessions.proxylog` (docs/proxy-recording.md). Here:
where a recording may go (:func:`check_record_path`, asked before the proxy starts), and the
:class:`RecordLog` thread that takes each finished record off the event loop, parses its body,
gives it its conversation, removes every credential value from it, appends it and hands it on.

Headless (no Textual, no aiohttp).
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import re
import threading
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any

from ctxview.core.atomic import WriteRefused, check_output
from ctxview.core.redact import Redactions, RedactMemo, redact_value
from ctxview.sessions.proxylog import (
    LOG_FORMAT,
    LOG_VERSION,
    Conversations,
    RequestRecord,
    RequestSummary,
    is_proxy_log,
    summarise,
    summary_line,
)
from ctxview.textfmt import json_text

__all__ = [
    "RECORDED_REQUEST_HEADERS",
    "RECORDED_RESPONSE_HEADERS",
    "REDACTED",
    "RecordLog",
    "RequestRecord",
    "RequestSummary",
    "Secrets",
    "check_record_path",
    "now_iso",
    "redact",
    "summarise",
    "summary_line",
]

#: request headers a record keeps (an allow-list: anything else, credentials above all, is dropped)
RECORDED_REQUEST_HEADERS = ("anthropic-version", "anthropic-beta", "content-type")
#: response headers a record keeps
RECORDED_RESPONSE_HEADERS = (
    "content-type",
    "request-id",
    "x-request-id",
    "retry-after",
    "x-should-retry",
)

REDACTED = "[credential removed by ctxview]"
#: shorter values are not taken for credentials (they would blank ordinary words)
MIN_SECRET = 8


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def check_record_path(path: str) -> str | None:
    """Why ``--record PATH`` cannot be used (one sentence naming it), or None. A recording is
    appended to: a new file, or an existing ctxview proxy recording. Where it may go at all is
    every typed output's rule (:func:`ctxview.core.atomic.check_output`: no directory, FIFO,
    device or socket, no folder created); nothing but a recording is replaced."""
    try:
        check_output(path)
    except WriteRefused as exc:
        return f"--record {path}: {exc}"
    if not os.path.exists(path):
        parent = os.path.dirname(os.path.abspath(path))
        return None if os.access(parent, os.W_OK) else f"--record {path}: cannot write in {parent}"
    try:
        with open(path, "rb") as f:
            first = f.readline(64 * 1024).decode("utf-8", "replace")
    except OSError as exc:
        return f"--record {path}: {exc.strerror or exc}"
    if first and not is_proxy_log(first.strip()):
        return (
            f"--record {path}: exists and is not a ctxview proxy recording (not replaced; "
            "give a new file name, or an earlier recording to append to)"
        )
    return None


# -- credentials -----------------------------------------------------------------------------
def _json_form(secret: str) -> str:
    """How a value appears inside a JSON string of the recording (quotes and backslashes
    escaped)."""
    return json_text(secret)[1:-1]


def _redact_value(value: Any, secrets: list[str]) -> Any:
    if isinstance(value, str):
        for s in secrets:
            if s in value:
                value = value.replace(s, REDACTED)
        return value
    if isinstance(value, dict):
        return {_redact_value(k, secrets): _redact_value(v, secrets) for k, v in value.items()}
    if isinstance(value, list):
        return [_redact_value(v, secrets) for v in value]
    return value


class Secrets:
    """Every credential value seen, found in a text by the first few characters they share: a
    rotating key (``sk-ant-…`` on every request) adds to one group, so a record is searched once
    for that head rather than once per key ever seen."""

    HEAD = 4

    def __init__(self) -> None:
        #: head -> (form to look for, the secret it stands for): the value and its JSON form
        self._by_head: dict[str, list[tuple[str, str]]] = {}
        self._known: set[str] = set()

    def __len__(self) -> int:
        return len(self._known)

    def add(self, secret: str) -> None:
        if len(secret) < MIN_SECRET or secret in self._known:
            return
        self._known.add(secret)
        for form in {secret, _json_form(secret)}:
            self._by_head.setdefault(form[: self.HEAD], []).append((form, secret))

    def found_in(self, text: str) -> list[str]:
        """The secrets that occur in ``text`` (as themselves or in their JSON form)."""
        hits: set[str] = set()
        for head, forms in self._by_head.items():
            at = text.find(head)
            while at != -1:
                for form, secret in forms:
                    if text.startswith(form, at):
                        hits.add(secret)
                at = text.find(head, at + 1)
        return list(hits)


def redact(data: Any, secrets: Secrets | Iterable[str]) -> tuple[str, Any]:
    """(one line of JSON, the data it encodes) with every occurrence of every secret replaced,
    in values and keys, by value on the decoded data (a secret holding ``"`` or ``\\`` is found
    too). The common case costs one encoding and one search per group of secrets; only a record
    that holds a secret is walked."""
    if not isinstance(secrets, Secrets):
        found = Secrets()
        for s in secrets:
            found.add(s)
        secrets = found
    text = json_text(data)
    hits = secrets.found_in(text)
    if not hits:
        return text, data
    hits.sort(key=len, reverse=True)  # a longer secret holding a shorter one goes first
    clean = _redact_value(data, hits)
    return json_text(clean), clean


# -- the log ---------------------------------------------------------------------------------
_STOP = object()


class RecordLog:
    """Finished records in, in order, on a thread of their own: each is parsed, given its
    conversation, redacted once (against every credential seen so far), appended as one line
    (flushed, so a crash of the proxy loses only requests still in flight; fsync at close) and
    handed to ``on_record``. ``path`` None: no file, the rest as well."""

    #: replace secrets in what is recorded (``proxy --record``; ``--no-redact`` turns it off)
    redact_secrets = True

    def __init__(
        self,
        path: str | None,
        upstream: str,
        on_record: Callable[[RequestRecord], None] | None = None,
        upstreams: dict[str, str] | None = None,
    ) -> None:
        self.path = path
        #: Anthropic's upstream (the header's ``upstream``), and every provider's
        self.upstream = upstream
        self.upstreams = dict(upstreams or {"anthropic": upstream})
        self.on_record = on_record
        self.error: str | None = None
        self.written = 0
        self._secrets = Secrets()
        #: what the recording's redaction replaced so far (this run)
        self.redactions = Redactions()
        self._memo = RedactMemo()
        self._conversations = Conversations()
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._file: Any = None
        self._idle = threading.Event()
        self._idle.set()
        self._pending = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="ctxview-recording", daemon=True)

    def open(self) -> int:
        """Open the file for appending (a header line first) and start the thread; the id the
        next request gets (one past the recording's last: ids stay unique in a file appended to
        by several runs). Raises OSError."""
        first_id = 0
        if self.path is not None:
            first_id = self._read_existing()
            self._file = open(self.path, "ab")  # noqa: SIM115 (closed by close())
            header = {
                "format": LOG_FORMAT,
                "version": LOG_VERSION,
                "upstream": self.upstream,
                "upstreams": self.upstreams,
                "started_at": now_iso(),
                # this run's records had their secrets replaced by [REDACTED:kind]
                "redact": self.redact_secrets,
            }
            self._file.write((json_text(header) + "\n").encode("utf-8"))
            self._file.flush()
        self._thread.start()
        return first_id

    def _read_existing(self) -> int:
        """One pass over an existing recording (a line at a time): the id the next request gets
        (one past the largest: ids stay unique in a file appended to by several runs), and this
        run's conversations numbered on from the file's (a reader numbers every conversation of
        the file in file order by the one rule, so the requests already there pass through it
        first). 0 for a new file."""
        assert self.path is not None
        best = -1
        try:
            f = open(self.path, "rb")  # noqa: SIM115 (closed below)
        except FileNotFoundError:
            return 0
        with f:
            for raw in f:
                try:
                    d = json.loads(raw)
                except ValueError:
                    # a line cut by a kill: its id, when written, is still taken
                    if m := _LINE_ID.match(raw):
                        best = max(best, int(m.group(1)))
                    continue
                if not isinstance(d, dict) or d.get("type") != "exchange":
                    continue
                rid = d.get("id")
                if type(rid) is int:
                    best = max(best, rid)
                try:
                    rec = RequestRecord.from_dict(d, "")
                except ValueError:
                    continue
                self._conversations.assign(rec)
        return best + 1

    def submit(self, rec: RequestRecord, secrets: Iterable[str] = ()) -> None:
        """Queue a finished record with the credential values its request carried."""
        with self._lock:
            self._pending += 1
            self._idle.clear()
        self._queue.put((rec, tuple(secrets)))

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Wait until every submitted record is written (tests, shutdown)."""
        return self._idle.wait(timeout)

    def close(self, timeout: float = 10.0) -> None:
        """Write what is queued, fsync and close."""
        if self._thread.is_alive():
            self._queue.put(_STOP)
            self._thread.join(timeout)
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._file.flush()
                os.fsync(self._file.fileno())
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    # -- the thread -------------------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            rec, secrets = item
            try:
                self._one(rec, secrets)
            finally:
                with self._lock:
                    self._pending -= 1
                    if self._pending == 0:
                        self._idle.set()

    def _redact_secrets(self, line: str, clean: Any) -> tuple[str, Any]:
        """The record with the secrets its bodies hold (a key pasted in a prompt, a token in a
        tool result) replaced by ``[REDACTED:kind]`` and their count in its ``redacted`` field,
        when recording with ``redact_secrets``."""
        if self.path is None or not self.redact_secrets or not isinstance(clean, dict):
            return line, clean
        redacted, found = redact_value(clean, self._memo)
        if not found.total:
            return line, clean
        self.redactions.merge(found)
        redacted["redacted"] = dict(sorted(found.counts.items()))
        return json_text(redacted), redacted

    def _one(self, rec: RequestRecord, secrets: tuple[str, ...]) -> None:
        for s in secrets:
            self._secrets.add(s)
        _parse_body(rec)
        rec.conversation = self._conversations.assign(rec)
        try:
            line, clean = redact(rec.to_dict(), self._secrets)
        except ValueError:  # NaN or Infinity in a body: not JSON a reader takes
            rec.request, rec.request_note = None, "not strict JSON (NaN or Infinity): not kept"
            rec.response = None if not isinstance(rec.response, dict) else rec.response
            line, clean = redact(rec.to_dict(), self._secrets)
        line, clean = self._redact_secrets(line, clean)
        if clean is not None and line is not None:
            # what is shown is what is saved: the redacted values
            rec.request = clean["request"]
            rec.response = clean["response"]
            rec.path = clean["path"]
            rec.error = clean["error"]
        if self._file is not None:
            try:
                self._file.write(line.encode("utf-8"))  # (no second copy of a big line)
                self._file.write(b"\n")
                self._file.flush()
                self.written += 1
            except OSError as exc:
                self.error = f"{self.path}: cannot write the recording ({exc.strerror or exc})"
        if self.on_record is not None:
            self.on_record(rec)


#: how each exchange line starts (``RequestRecord.to_dict``'s first keys, as json_text writes them)
_LINE_ID = re.compile(rb'\{"type": "exchange", "id": ([0-9]{1,12})')


def _parse_body(rec: RequestRecord) -> None:
    """The record's raw body as JSON (``request``), or a note saying why it is not kept."""
    raw, rec.body = rec.body, None
    if raw is None or rec.request_note is not None:
        return
    if not raw:
        rec.request = None
        return
    size = len(raw)
    try:
        rec.request = json.loads(raw)
    except (ValueError, RecursionError):
        rec.request = None
        rec.request_note = f"not JSON ({size} bytes): not kept"
    del raw  # the bytes go before the record is encoded (a body may be 32 MB)
