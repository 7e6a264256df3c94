"""``ctxview scan`` and ``ctxview report DIR`` over a generated fleet of Claude Code sessions.

10,000 sessions / 1,000,000 requests at full size (``--quick``: 200 / 20,000; ``FLEET_SESSIONS``
and ``FLEET_REQUESTS`` set another size): requests per session log-uniform from 5 to 2,000,
one session in 8 with a compaction, one in 10 with two sub-agents. Measured on two worker
processes: the request model alone on the same files (what ``ctxview requests`` computes per
file, the same pool, nothing written) against the scan (targets: within 1.5x; the scan also
checks every request against the protocol, works out the rejected requests' codes, prices the
uncached and lost dollars, redacts names and writes Parquet), the peak memory of a worker and of
the writer, a rescan with nothing changed (target 5 s) and the report over every row (2 s).
"""

from __future__ import annotations

import json
import math
import os
import random
import resource
import shutil
import time
from multiprocessing import get_context
from pathlib import Path

from benchmarks.common import Bench, Figure, cc_line, iso, report, say

#: the fleet's size at full scale
SESSIONS, REQUESTS = 10_000, 1_000_000
QUICK_SESSIONS, QUICK_REQUESTS = 200, 20_000
WORKERS = 2


def _sizes(rng: random.Random, sessions: int, requests: int) -> list[int]:
    """Requests per session: log-uniform from 5 to 2,000, scaled to ``requests`` in all."""
    raw = [10 ** rng.uniform(math.log10(5), math.log10(2000)) for _ in range(sessions)]
    scale = requests / sum(raw)
    sizes = [max(1, round(r * scale)) for r in raw]
    sizes[0] += requests - sum(sizes)
    return sizes


def write_session(path: Path, rounds: int, k: int, *, compaction: bool) -> None:
    """A transcript of ``rounds`` tool rounds (a response with a tool_use, then its result),
    recorded usage on each response; with ``compaction``, a compact boundary and summary half
    way through."""
    parent = f"s{k}-u0"
    cached = 8_000
    tools = ("Read", "Bash", "Grep", "Edit")
    lines = [
        cc_line(
            "user", parent, None, f"Task {k}: fix the failing tests.", iso(0), cwd=f"/p/{k % 37}"
        )
    ]
    half = rounds // 2 if compaction else -1
    for i in range(rounds):
        t = 30.0 * i
        if i == half:
            boundary = {
                "type": "system",
                "subtype": "compact_boundary",
                "uuid": f"s{k}-b{i}",
                "parentUuid": None,
                "logicalParentUuid": parent,
                "timestamp": iso(t),
                "compactMetadata": {"trigger": "auto", "preTokens": cached},
            }
            lines.append(json.dumps(boundary) + "\n")
            lines.append(
                cc_line(
                    "user",
                    f"s{k}-cs{i}",
                    f"s{k}-b{i}",
                    "This session is being continued from a previous conversation. " + "s" * 400,
                    iso(t),
                    isCompactSummary=True,
                )
            )
            parent, cached = f"s{k}-cs{i}", 8_000
        tool = tools[i % len(tools)]
        usage = {
            "input_tokens": 4,
            "cache_read_input_tokens": cached,
            "cache_creation_input_tokens": 300,
            "output_tokens": 80,
        }
        cached += 300
        content = [
            {"type": "text", "text": f"Step {i}. " + "r" * 120},
            {"type": "tool_use", "id": f"t{k}-{i}", "name": tool, "input": {"arg": f"f{i}"}},
        ]
        lines.append(
            cc_line(
                "assistant",
                f"s{k}-a{i}",
                parent,
                content,
                iso(t + 10),
                message_id=f"m{k}-{i}",
                usage=usage,
            )
        )
        result = [{"type": "tool_result", "tool_use_id": f"t{k}-{i}", "content": "ok\n" * 150}]
        lines.append(cc_line("user", f"s{k}-u{i + 1}", f"s{k}-a{i}", result, iso(t + 20)))
        parent = f"s{k}-u{i + 1}"
    path.write_text("".join(lines))


def make_fleet(root: Path, sessions: int, requests: int, seed: int = 27) -> tuple[int, int]:
    """The fleet's files under ``root`` (a Claude Code projects folder); (files, bytes)."""
    rng = random.Random(seed)
    files = total = 0
    for k, size in enumerate(_sizes(rng, sessions, requests)):
        proj = root / f"-p-{k % 37}"
        proj.mkdir(parents=True, exist_ok=True)
        main = proj / f"s{k}.jsonl"
        with_agents = k % 10 == 3 and size > 4
        own = size - 2 * (size // 4) if with_agents else size
        write_session(main, own, k, compaction=k % 8 == 5 and own >= 10)
        files += 1
        total += main.stat().st_size
        if with_agents:
            sub = proj / f"s{k}" / "subagents"
            sub.mkdir(parents=True, exist_ok=True)
            for a in range(2):
                agent = sub / f"agent-{k}x{a}.jsonl"
                write_session(agent, size // 4, k * 10 + a, compaction=False)
                total += agent.stat().st_size
    return files, total


def _model_alone(path: str) -> int:
    """What ``ctxview requests`` computes for one file, nothing written: its request count."""
    from ctxview.core.pricing import PriceTable
    from ctxview.sessions.readers import load_session
    from ctxview.sessions.request_model import session_requests

    log, agents = session_requests(load_session(path), prices=PriceTable(), defaults={})
    return len(log.requests) + sum(len(a.log.requests) for a in agents if a.log)


def _peak_mb(who: int) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tasks:
            try:
                kids = Path(f"/proc/{p}/task/{t}/children").read_text().split()
            except OSError:
                continue
            for k in map(int, kids):
                out.append(k)
                todo.append(k)
    return out


class Watch:
    """The processes under this one while it runs, polled: their highest peak RSS
    (``VmHWM``) and the CPU seconds they used (user + system, the last value seen of each)."""

    def __init__(self) -> None:
        import threading

        self.peak_kb = 0
        self.own_cpu = 0.0
        self._cpu_ticks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)

    @property
    def cpu_seconds(self) -> float:
        return sum(self._cpu_ticks.values()) / os.sysconf("SC_CLK_TCK")

    def _poll(self) -> None:
        for pid in _descendants(os.getpid()):
            try:
                status = Path(f"/proc/{pid}/status").read_text()
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                continue
            for line in status.splitlines():
                if line.startswith("VmHWM:"):
                    self.peak_kb = max(self.peak_kb, int(line.split()[1]))
            fields = stat.rsplit(")", 1)[1].split()
            self._cpu_ticks[pid] = int(fields[11]) + int(fields[12])  # utime + stime

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            self._poll()
        self._poll()
        #: this thread's own CPU (it runs in the measuring process: not the measured work's)
        self.own_cpu = time.thread_time()

    def __enter__(self) -> Watch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _own_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _one_session_peak(path: str) -> float:
    """The peak RSS (MB) of a fresh process that turns one file into rows."""
    from ctxview.fleet.rows import file_rows

    file_rows(path)
    return _peak_mb(resource.RUSAGE_SELF)


def run(b: Bench) -> None:
    from ctxview.fleet.files import session_files
    from ctxview.fleet.query import report as fleet_report
    from ctxview.fleet.rows import ScanOptions
    from ctxview.fleet.scan import scan

    sessions = int(os.environ.get("FLEET_SESSIONS", QUICK_SESSIONS if b.quick else SESSIONS))
    requests = int(os.environ.get("FLEET_REQUESTS", QUICK_REQUESTS if b.quick else REQUESTS))
    root = b.data / f"fleet_{sessions}_{requests}"
    if not root.exists():
        t0 = time.perf_counter()
        files, size = make_fleet(root, sessions, requests)
        say(f"made {files:,} sessions, {size / 1e6:.0f} MB ({time.perf_counter() - t0:.0f} s)")
    paths = session_files([str(root)])

    import ctxview.core.redact
    import ctxview.sessions.readers
    import ctxview.sessions.request_model  # noqa: F401 (imported before the fork, as the scan does)

    ctx = get_context("fork")  # as the scan's pool
    cpu0 = _own_cpu()
    t0 = time.perf_counter()
    with Watch() as model_watch, ctx.Pool(WORKERS) as pool:
        counted = sum(pool.imap_unordered(_model_alone, paths, chunksize=1))
        pool.close()
        pool.join()
    alone = time.perf_counter() - t0
    # both sides count the process that hands out the files and takes the results (without
    # the thread that measures)
    model_main_cpu = _own_cpu() - cpu0 - model_watch.own_cpu
    say(
        f"request model alone: {counted:,} requests in {alone:.1f} s (load average {os.getloadavg()[0]:.1f})"
    )

    out = b.data / "fleet_dataset"
    shutil.rmtree(out, ignore_errors=True)
    cpu0 = _own_cpu()
    t0 = time.perf_counter()
    with Watch() as scan_watch:
        result = scan(paths, str(out), ScanOptions(), workers=WORKERS)
    scanned = time.perf_counter() - t0
    writer_cpu = _own_cpu() - cpu0 - scan_watch.own_cpu
    writer_peak = _peak_mb(resource.RUSAGE_SELF)
    assert result.requests_written == counted, (result.requests_written, counted)
    say(
        f"scan: {result.requests_written:,} requests in {scanned:.1f} s (load average {os.getloadavg()[0]:.1f})"
    )
    t0 = time.perf_counter()
    again = scan(paths, str(out), ScanOptions(), workers=WORKERS)
    rescan = time.perf_counter() - t0
    assert again.requests_written == 0 and again.unchanged == len(paths)
    t0 = time.perf_counter()
    answers = fleet_report(str(out))
    reported = time.perf_counter() - t0
    assert answers["totals"]["requests"] == counted
    largest = max(paths, key=lambda p: os.stat(p).st_size)
    with ctx.Pool(1) as pool:
        one = pool.apply(_one_session_peak, (largest,))
    model_cpu = model_watch.cpu_seconds + model_main_cpu
    scan_cpu = scan_watch.cpu_seconds + writer_cpu

    report(Figure(f"request model alone, {counted:,} requests, {WORKERS} workers", alone, "s"))
    report(Figure(f"scan, {len(paths):,} sessions, {WORKERS} workers", scanned, "s"))
    report(Figure("scan / request model alone (wall time)", scanned / alone, "x", 1.5))
    report(Figure("request model alone: CPU of its workers and main process", model_cpu, "s"))
    report(Figure("scan: CPU of its workers and main process (the writer)", scan_cpu, "s"))
    report(Figure("scan: CPU of the writer alone", writer_cpu, "s"))
    report(Figure("scan / request model alone (CPU time)", scan_cpu / model_cpu, "x", 1.5))
    report(Figure("peak memory of a scan's worker", scan_watch.peak_kb / 1024, "MB"))
    report(Figure("peak memory of one process scanning the largest session alone", one, "MB"))
    report(Figure("peak memory of the scan's writer (main process)", writer_peak, "MB"))
    report(Figure("rescan, nothing changed", rescan, "s", 5.0))
    report(Figure(f"report over {counted:,} rows (DuckDB)", reported, "s", 2.0))
