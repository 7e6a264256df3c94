"""``ctxview report DIR``: the questions a team asks of a scanned dataset, answered by DuckDB
(``ctxview.fleet.query``; the SQL is ``ctxview/fleet/sql/``, quoted in docs/fleet.md).

``--json``: ``{"dataset", "schema_version", "filters": {"since", "model", "project"},
"totals": {...}, "break_reasons": [...], "top_sessions": [...], "top_projects": [...],
"top_tools": [...], "hit_rate_by_model": [...], "by_day": [...], "limits": [...],
"strategy_savings": [...]}`` (every row's keys are its SQL's columns). Exit 0, or 2 when the
dataset cannot be read.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from typing import Any

from ctxview.cli.common import EXIT_OK, EXIT_UNREADABLE, err
from ctxview.textfmt import counted, fmt_tokens, fmt_usd, json_text, one_line, visible


def _date(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, got {text!r}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The fleet report's flags on ``report``'s parser."""
    p.add_argument("--json", action="store_true", help="print exactly one JSON object")
    p.add_argument("--since", type=_date, metavar="YYYY-MM-DD", help="requests from that day on")
    p.add_argument("--model", metavar="TEXT", help="requests whose model contains TEXT")
    p.add_argument("--project", metavar="TEXT", help="sessions whose project contains TEXT")


def cmd_fleet_report(args: argparse.Namespace) -> int:
    import duckdb

    from ctxview.fleet.query import Filters, query_error, report
    from ctxview.fleet.schema import SCHEMA_VERSION

    filters = Filters(since=args.since, model=args.model, project=args.project)
    try:
        answers = report(args.file, filters)
    except (duckdb.Error, OSError) as exc:
        err(f"{args.file}: cannot read the dataset ({one_line(query_error(exc), 300)})")
        return EXIT_UNREADABLE
    if args.json:
        out = {
            "dataset": args.file,
            "schema_version": SCHEMA_VERSION,
            "filters": filters.to_dict(),
            **answers,
        }
        sys.stdout.write(json_text(out) + "\n")
    else:
        _print(args.file, filters, answers)
    return EXIT_OK


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def _table(title: str, cols: list[tuple[str, str, Any]], rows: list[dict[str, Any]]) -> None:
    """A rich table; each column (heading, justify, cell function); untrusted text made
    visible (``ctxview.textfmt``) and never parsed as markup."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    if not rows:
        return
    # the title on a line of its own: as the table's, it wrapped to the table's width
    t = Table(box=None, pad_edge=False, padding=(0, 1))
    for head, just, _ in cols:
        t.add_column(head, justify=just)  # type: ignore[arg-type]
    for r in rows:
        t.add_row(*(Text(visible(str(fn(r)))) for _, _, fn in cols))
    console = Console(highlight=False)
    console.print(Text(title, style="italic"), crop=False)
    console.print(t, crop=False)


def _print(path: str, filters: Any, a: dict[str, Any]) -> None:
    t = a["totals"]
    w = sys.stdout.write
    shown = ", ".join(f"{k} {v}" for k, v in filters.to_dict().items() if v)
    w(
        f"ctxview report · {visible(path)}"
        + (f" · {visible(shown)}" if shown else "")
        + f" · {counted(t.get('sessions') or 0, 'session')} · {counted(t.get('requests') or 0, 'request')}"
        + (f" · {t['first_day']} to {t['last_day']}" if t.get("first_day") else "")
        + "\n"
    )
    if not t.get("requests"):
        w("no requests (nothing scanned, or the filters keep none)\n")
        return
    w(
        f"cost {fmt_usd(t['cost_usd'])} · the cache saved {fmt_usd(t['cache_saved_usd'])} "
        f"(uncached: {fmt_usd(t['uncached_cost_usd'])}) · cache breaks lost "
        f"{fmt_usd(t['break_lost_usd'])} · hit rate {_pct(t['hit_rate'])}"
        + (
            f" · {counted(t['unpriced_requests'], 'request')} unpriced"
            if t["unpriced_requests"]
            else ""
        )
        + "\n\n"
    )
    _table(
        "dollars lost per cache-break reason",
        [
            ("reason", "left", lambda r: r["reason"]),
            ("breaks", "right", lambda r: f"{r['breaks']:,}"),
            ("lost", "right", lambda r: fmt_usd(r["lost_usd"])),
            ("written", "right", lambda r: fmt_tokens(r["tokens_written"])),
        ],
        a["break_reasons"],
    )
    _table(
        "sessions that cost most",
        [
            ("cost", "right", lambda r: fmt_usd(r["cost_usd"])),
            ("lost", "right", lambda r: fmt_usd(r["lost_usd"])),
            ("hit", "right", lambda r: _pct(r["hit_rate"])),
            ("reqs", "right", lambda r: f"{r['requests']:,}"),
            ("session", "left", lambda r: one_line(r["session_id"] or "", 40)),
            ("title", "left", lambda r: one_line(r["title"] or "", 50)),
        ],
        a["top_sessions"],
    )
    _table(
        "projects that cost most",
        [
            ("cost", "right", lambda r: fmt_usd(r["cost_usd"])),
            ("lost", "right", lambda r: fmt_usd(r["lost_usd"])),
            ("hit", "right", lambda r: _pct(r["hit_rate"])),
            ("sessions", "right", lambda r: f"{r['sessions']:,}"),
            ("project", "left", lambda r: one_line(r["project"] or "", 60)),
        ],
        a["top_projects"],
    )
    _table(
        "tools that cost most (the requests their results started)",
        [
            ("cost", "right", lambda r: fmt_usd(r["cost_usd"])),
            ("requests", "right", lambda r: f"{r['requests']:,}"),
            ("tool", "left", lambda r: one_line(r["tool"] or "", 40)),
        ],
        a["top_tools"],
    )
    _table(
        "hit rate by model",
        [
            ("model", "left", lambda r: one_line(str(r["model"]), 40)),
            ("requests", "right", lambda r: f"{r['requests']:,}"),
            ("cost", "right", lambda r: fmt_usd(r["cost_usd"])),
            ("hit", "right", lambda r: _pct(r["hit_rate"])),
            ("recorded", "right", lambda r: _pct(r["recorded_hit_rate"])),
        ],
        a["hit_rate_by_model"],
    )
    _table(
        "by day",
        [
            ("day", "left", lambda r: r["date"]),
            ("requests", "right", lambda r: f"{r['requests']:,}"),
            ("cost", "right", lambda r: fmt_usd(r["cost_usd"])),
            ("lost", "right", lambda r: fmt_usd(r["lost_usd"])),
            ("hit", "right", lambda r: _pct(r["hit_rate"])),
        ],
        a["by_day"],
    )
    _table(
        "rejected, or within 10% of the context limit",
        [
            ("what", "left", lambda r: r["what"]),
            ("requests", "right", lambda r: f"{r['requests']:,}"),
            ("sessions", "right", lambda r: f"{r['sessions']:,}"),
            ("fullest", "right", lambda r: _pct(r["max_fill"])),
        ],
        a["limits"],
    )
    _table(
        "what each strategy would have saved (scan --compare)",
        [
            ("strategy", "left", lambda r: r["strategy"]),
            ("sessions", "right", lambda r: f"{r['sessions']:,}"),
            ("cost", "right", lambda r: fmt_usd(r["cost_usd"])),
            ("saved", "right", lambda r: fmt_usd(r["saved_usd"])),
            ("rejected", "right", lambda r: f"{r['rejected_requests']:,}"),
        ],
        a["strategy_savings"],
    )
