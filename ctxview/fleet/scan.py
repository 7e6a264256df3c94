"""``ctxview scan``'s work: the files that are new or changed since the last scan (the
manifest) through the per-file step (:func:`ctxview.fleet.rows.file_rows`) on a process pool,
their rows written to the dataset a batch of whole sessions at a time, the manifest after.

* a file whose size and mtime are as the manifest has them is not read;
* a file that grew (the same first bytes and the same bytes before its old end: a live
  transcript), or was rewritten otherwise, has its rows replaced: the request model
  calibrates its estimates on the whole file, so the requests written before it grew are
  estimated again with the rest (the dataset is what a scan of the files from scratch
  writes, its sessions' totals the sums of their requests' rows);
* a file that cannot be read is listed with its one-line error and tried again only once it
  changes (the rows it had before stay);
* an interrupted scan (ctrl+c, a kill) leaves whole files and the previous manifest: the
  dataset stays readable, and the next scan removes the unnamed files and does their work.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import signal
import threading
import time
import uuid
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ctxview.fleet.dataset import Writer, remove_sessions, remove_unnamed
from ctxview.fleet.files import in_shard, parse_writer
from ctxview.fleet.manifest import Entry, Fingerprint, Manifest, fingerprint, grew, new_entry
from ctxview.fleet.rows import FileRows, ScanOptions, file_rows

#: rows buffered before they are written (whole sessions: a file holds at least one)
FLUSH_ROWS = 200_000


@dataclass
class Progress:
    """Where a scan is, for a progress bar or a line (``total``: files to read)."""

    total: int
    done: int = 0
    requests: int = 0
    failed: int = 0
    started: float = field(default_factory=time.monotonic)
    last: str = ""


@dataclass
class ScanResult:
    files: int = 0
    unchanged: int = 0
    new: int = 0
    grown: int = 0
    changed: int = 0
    #: (file, one-line error) read this time
    failed: list[tuple[str, str]] = field(default_factory=list)
    #: files that failed before and did not change (not read again)
    still_bad: list[tuple[str, str]] = field(default_factory=list)
    requests_written: int = 0
    sessions_written: int = 0
    redactions: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    interrupted: bool = False


@dataclass
class _Task:
    path: str
    kind: str  # new | grown | changed
    #: the file as it was before it was read (what the manifest records: a file that grows
    #: while it is read is found grown by the next scan)
    entry: Entry


def _run_task(task: tuple[_Task, ScanOptions]) -> tuple[_Task, FileRows]:
    t, options = task
    return t, file_rows(t.path, options)


def plan(
    paths: list[str], manifest: Manifest, shard: tuple[int, int], result: ScanResult
) -> list[_Task]:
    """The files to read, and what is done with each (the others counted in ``result``)."""
    tasks = []
    for p in paths:
        if not in_shard(p, shard):
            continue
        result.files += 1
        old = manifest.sessions.get(p)
        try:
            fp = fingerprint(p)
        except OSError:
            fp = None
        if old is not None and fp is not None and old.fingerprint() == fp:
            if old.error is not None:
                result.still_bad.append((p, old.error))
            else:
                result.unchanged += 1
            continue
        entry = _entry(p, fp)
        if old is None or fp is None:
            tasks.append(_Task(p, "new" if old is None else "changed", entry))
        elif grew(p, old, fp):
            tasks.append(_Task(p, "grown", entry))
        else:
            tasks.append(_Task(p, "changed", entry))
    return tasks


def _entry(path: str, fp: Fingerprint | None) -> Entry:
    """A manifest entry for the file as it is (one that cannot be read: matches nothing)."""
    try:
        if fp is not None:
            return new_entry(path, fp)
    except OSError:
        pass
    return Entry(-1, -1, [], "", "")


class _Pool(multiprocessing.pool.Pool):
    """A process pool whose worker handler thread wakes only when a worker exits or the pool
    changes state (its tasks all done, closed, terminated). The standard one also wakes
    whenever its result pipe holds unread bytes: while a worker's rows (megabytes) stream
    through the pipe, that thread spins on it, and cost the writer's process as much CPU as
    writing the rows."""

    def _get_sentinels(self) -> list[Any]:
        return [self._change_notifier._reader]  # type: ignore[attr-defined]


def _ignore_interrupts() -> None:
    """In a worker: ctrl+c reaches the whole process group, and is the main process's to
    handle (it stops the pool and writes what was read); a worker it interrupted would leave
    the pool's queue locked. The worker was born with SIGINT blocked (:func:`_results`): one
    that came meanwhile is dropped now."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def _results(
    tasks: list[_Task], options: ScanOptions, workers: int
) -> Generator[tuple[_Task, FileRows]]:
    """Each task's rows as it finishes: in this process for one worker (or one task), else on
    a pool of ``workers`` processes forked from this one (which holds little yet: the file
    list and the manifest). SIGINT is blocked while they are forked, so none can be
    interrupted before it ignores ctrl+c, and a ctrl+c meanwhile reaches this process once
    they are up (then the pool is stopped)."""
    jobs = [(t, options) for t in tasks]
    if workers <= 1 or len(tasks) <= 1:
        yield from map(_run_task, jobs)
        return
    # what every file needs, imported once here rather than in each worker
    import ctxview.sessions.readers
    import ctxview.sessions.request_model  # noqa: F401

    if options.redact:
        # the secret detectors are built on first use (detect-secrets imported, its plugins
        # compiled: 0.1-0.3 s): built here once, each worker forked with them
        from ctxview.core.secret_scan import find_secrets

        find_secrets("the detectors, built before the fork")

    main = threading.current_thread() is threading.main_thread()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT}) if main else None
    pool = _Pool(
        workers, initializer=_ignore_interrupts, context=multiprocessing.get_context("fork")
    )
    try:
        if blocked is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        yield from pool.imap_unordered(_run_task, jobs, chunksize=1)
        pool.close()
    finally:
        pool.terminate()
        pool.join()


def scan(
    paths: list[str],
    out: str,
    options: ScanOptions | None = None,
    *,
    shard: tuple[int, int] = (1, 1),
    writer: str = "local",
    workers: int | None = None,
    progress: Callable[[Progress], None] | None = None,
    flush_rows: int = FLUSH_ROWS,
) -> ScanResult:
    """Scan ``paths`` (session files) into the dataset ``out`` (made when missing). Raises
    ``ManifestError`` for a manifest it cannot read; ``KeyboardInterrupt`` after writing the
    sessions already read (``ScanResult`` is not returned then)."""
    options = options or ScanOptions()
    parse_writer(writer)  # before anything is written: it names the files
    started = time.monotonic()
    os.makedirs(out, exist_ok=True)
    manifest = Manifest.load(out, writer, shard)
    remove_unnamed(out, manifest.prefix, manifest.files())
    result = ScanResult()
    tasks = plan(paths, manifest, shard, result)
    # unique to this run: two scans in one second (one process) never write the same name
    run = datetime.now(UTC).strftime("%Y%m%dT%H%M%S") + f"-{uuid.uuid4().hex[:8]}"
    w = Writer(out, manifest.prefix, run)
    pending: list[tuple[_Task, FileRows]] = []
    state = Progress(total=len(tasks))

    committing = False

    def commit() -> None:
        nonlocal committing
        committing = True
        _commit(out, manifest, w, pending, result)
        pending.clear()
        committing = False

    results = _results(tasks, options, workers or os.cpu_count() or 1)
    try:
        for task, rows in results:
            state.done += 1
            state.last = task.path
            if rows.error is not None:
                result.failed.append((task.path, rows.error))
                state.failed += 1
                _record_failure(manifest, task, rows.error)
            else:
                w.add(rows)
                pending.append((task, rows))
                state.requests += rows.request_rows
                if w.rows >= flush_rows:
                    commit()
            if progress is not None:
                progress(state)
    except KeyboardInterrupt:
        results.close()  # the pool stops
        # the sessions read so far are written, unless the interrupt came while writing them
        # (the next scan removes what that left unnamed and reads them again)
        if not committing:
            commit()
        raise
    commit()
    result.seconds = time.monotonic() - started
    return result


def _record_failure(manifest: Manifest, task: _Task, error: str) -> None:
    """A file that cannot be read: its error and fingerprint (tried again once it changes);
    the rows it gave before stay, and so do their counts."""
    old = manifest.sessions.get(task.path)
    entry = task.entry
    if old is not None:
        entry.counts, entry.files = old.counts, old.files
    entry.error = error
    manifest.sessions[task.path] = entry


def _commit(
    out: str,
    manifest: Manifest,
    w: Writer,
    pending: list[tuple[_Task, FileRows]],
    result: ScanResult,
) -> None:
    """Write the buffered sessions: their old rows taken out where they are replaced, the new
    files written, then the manifest naming them (failures recorded meanwhile too)."""
    replaced: dict[str, set[str]] = {}
    for task, rows in pending:
        old = manifest.sessions.get(task.path)
        if old is None:
            continue
        for table in old.files:
            for rel in old.files.get(table, []):
                replaced.setdefault(rel, set()).add(rows.key)
    for rel, keys in replaced.items():
        remove_sessions(out, [rel], keys)
    written = w.flush() if pending else {}
    for task, rows in pending:
        entry = task.entry
        entry.counts = dict(rows.counts)
        entry.files = {t: list(fs) for t, fs in written.get(rows.key, {}).items()}
        manifest.sessions[task.path] = entry
        result.requests_written += rows.request_rows
        result.sessions_written += 1
        setattr(result, task.kind, getattr(result, task.kind) + 1)
        for kind, n in rows.redactions.items():
            result.redactions[kind] = result.redactions.get(kind, 0) + n
    manifest.save()
