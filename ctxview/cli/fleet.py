"""``ctxview scan`` (session files -> a Parquet dataset) and ``ctxview fleet`` (the TUI's
Fleet screen over one). docs/fleet.md.

``scan --json``: ``{"out", "files", "new", "grown", "changed", "unchanged", "failed":
[{"file", "error"}], "still_failing": [...], "requests_written", "sessions_written",
"redactions", "seconds"}``. Exit 0 (bad files are listed, never fatal), 2 when the dataset's
manifest or the arguments are unusable, 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any

from ctxview.cli.common import EXIT_OK, EXIT_UNREADABLE, err, positive_int
from ctxview.textfmt import json_text, visible

EXIT_INTERRUPTED = 130
#: seconds between two plain progress lines (stderr not a terminal)
PLAIN_EVERY = 5.0


def add_parsers(sub: Any) -> None:
    sc = sub.add_parser(
        "scan",
        help="every request of many sessions into a Parquet dataset (incremental, parallel)",
        description="Run the request model on session files and write one row per request "
        "(and per session) to a Hive-partitioned Parquet dataset: DIR/requests/date=…/, "
        "DIR/sessions/. A second scan reads only new or changed files. Query it with "
        "`ctxview report DIR` or any engine (docs/fleet.md).",
    )
    sc.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="session files and folders (default: every session `ctxview sessions` lists)",
    )
    sc.add_argument("--out", required=True, metavar="DIR", help="the dataset's folder")
    sc.add_argument(
        "--shard",
        default="1/1",
        metavar="K/N",
        help="scan only shard K of N of the files (by a hash of each path): N scans, one per "
        "machine or process, into one dataset",
    )
    sc.add_argument(
        "--writer",
        default="local",
        metavar="NAME",
        help="name of this writer (default local): scans from several machines into one "
        "dataset each use their own",
    )
    sc.add_argument(
        "--compare",
        action="store_true",
        help="also replay each session under every strategy (DIR/strategies/, `compare`'s rows)",
    )
    sc.add_argument(
        "--no-redact",
        dest="redact",
        action="store_false",
        help="keep secrets found in file names, projects and titles (redacted by default)",
    )
    sc.add_argument(
        "--jobs", type=positive_int, metavar="N", help="worker processes (default: every core)"
    )
    sc.add_argument("--json", action="store_true", help="print one JSON object at the end")
    fl = sub.add_parser(
        "fleet",
        help="the Fleet screen over a scanned dataset: sessions by cost or waste, cost per day",
    )
    fl.add_argument("dir", metavar="DIR", help="a dataset written by `ctxview scan`")


def _progress(stream: Any) -> tuple[Any, Any]:
    """(callback, close): a rich progress bar on a terminal, else a plain line every
    PLAIN_EVERY seconds."""
    if stream.isatty():
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
        )

        bar = Progress(
            TextColumn("scan"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("files · {task.fields[requests]:,} requests · {task.fields[rate]}"),
            TimeRemainingColumn(),
            console=Console(file=stream),
            transient=True,
        )
        task_id: list[Any] = []

        def update(p: Any) -> None:
            if not task_id:
                bar.start()
                task_id.append(bar.add_task("scan", total=p.total, requests=0, rate=""))
            elapsed = max(1e-6, time.monotonic() - p.started)
            bar.update(
                task_id[0], completed=p.done, requests=p.requests, rate=f"{p.done / elapsed:.1f}/s"
            )

        return update, bar.stop
    last = [time.monotonic()]

    def line(p: Any) -> None:
        now = time.monotonic()
        if now - last[0] < PLAIN_EVERY and p.done != p.total:
            return
        last[0] = now
        elapsed = max(1e-6, now - p.started)
        rate = p.done / elapsed
        eta = (p.total - p.done) / rate if rate else 0
        print(
            f"scan: {p.done:,}/{p.total:,} files · {p.requests:,} requests · "
            f"{rate:.1f} files/s · ETA {eta:.0f}s",
            file=stream,
            flush=True,
        )

    return line, lambda: None


def cmd_scan(args: argparse.Namespace) -> int:
    from ctxview.config import load_config, price_overrides
    from ctxview.fleet.files import listed_sessions, parse_shard, parse_writer, session_files
    from ctxview.fleet.manifest import ManifestError
    from ctxview.fleet.rows import ScanOptions
    from ctxview.fleet.scan import scan

    try:
        shard = parse_shard(args.shard)
        parse_writer(args.writer)
    except ValueError as exc:
        err(str(exc))
        return EXIT_UNREADABLE
    cfg = load_config()
    for e in cfg.errors:
        err(e)
    paths = session_files(args.paths) if args.paths else listed_sessions()
    options = ScanOptions(
        defaults=cfg.as_defaults(),
        price_overrides=price_overrides(cfg),
        compare=args.compare,
        redact=args.redact,
    )
    update, close = _progress(sys.stderr)
    try:
        result = scan(
            paths,
            args.out,
            options,
            shard=shard,
            writer=args.writer,
            workers=args.jobs,
            progress=update,
        )
    except ManifestError as exc:
        close()
        err(str(exc))
        return EXIT_UNREADABLE
    except KeyboardInterrupt:
        close()
        err(
            f"scan interrupted: the sessions read so far are in {args.out}; "
            "scan again to complete it"
        )
        return EXIT_INTERRUPTED
    except OSError as exc:
        close()
        err(f"{args.out}: cannot write the dataset ({exc.strerror or exc})")
        return EXIT_UNREADABLE
    close()
    if args.json:
        sys.stdout.write(json_text(_summary(args.out, result)) + "\n")
    else:
        _print_summary(args.out, result, args.redact)
    return EXIT_OK


def _summary(out: str, r: Any) -> dict[str, Any]:
    return {
        "out": out,
        "files": r.files,
        "new": r.new,
        "grown": r.grown,
        "changed": r.changed,
        "unchanged": r.unchanged,
        "failed": [{"file": f, "error": e} for f, e in r.failed],
        "still_failing": [{"file": f, "error": e} for f, e in r.still_bad],
        "requests_written": r.requests_written,
        "sessions_written": r.sessions_written,
        "redactions": r.redactions,
        "seconds": round(r.seconds, 3),
    }


def _print_summary(out: str, r: Any, redact: bool) -> None:
    w = sys.stdout.write
    w(
        f"scanned {r.files:,} file{'s' if r.files != 1 else ''} into {visible(out)}: "
        f"{r.new:,} new, {r.grown:,} grown, {r.changed:,} changed, {r.unchanged:,} unchanged; "
        f"{r.requests_written:,} requests written ({r.seconds:.1f} s)\n"
    )
    for _, e in r.failed:
        w(f"  not read: {visible(e)}\n")
    if r.still_bad:
        w(
            f"  {len(r.still_bad):,} file{'s' if len(r.still_bad) != 1 else ''} unchanged since "
            "they failed (not read again; `--json` lists them)\n"
        )
    if redact and r.redactions:
        found = ", ".join(f"{k} {v}" for k, v in sorted(r.redactions.items()))
        w(f"  secrets redacted from names and titles: {found} (--no-redact keeps them)\n")
    w(f"query it: ctxview report {visible(out)}\n")


def cmd_fleet(args: argparse.Namespace) -> int:
    from ctxview.fleet.dataset import is_dataset

    if not os.path.isdir(args.dir):
        err(f"{args.dir}: no such folder (a dataset written by `ctxview scan`)")
        return EXIT_UNREADABLE
    if not is_dataset(args.dir):
        err(f"{args.dir}: not a dataset written by `ctxview scan` (no requests/ folder in it)")
        return EXIT_UNREADABLE
    from ctxview.app.launch import launch_fleet

    return launch_fleet(args.dir, need_terminal=True)
