"""``ctxview inspect``: replay a file and summarise its window (exit 1 on protocol errors)."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctxview.cli.common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    add_window_args,
    load_replay,
    without_gc,
)
from ctxview.textfmt import id_ranges, json_text, plural, visible


def add_parsers(sub: Any) -> None:
    ins = sub.add_parser(
        "inspect", help="replay a file and summarise the window (exit 1 on protocol errors)"
    )
    ins.add_argument("file")
    add_window_args(ins)
    ins.add_argument("--json", action="store_true", help="print exactly one JSON object")


@without_gc
def cmd_inspect(args: argparse.Namespace) -> int:
    rep, cfg = load_replay(args, as_sent=True)
    if isinstance(rep, int):
        return rep
    summary = rep.summary(rep.model_name(cfg.as_defaults()))
    if args.json:
        summary["config_used"] = args.config_used
        sys.stdout.write(json_text(summary) + "\n")
    else:
        _print_rich(summary, rep.session.warnings)
    has_error = any(p["severity"] == "error" for p in summary["problems"])
    return EXIT_PROBLEMS if has_error else EXIT_OK


def _print_rich(summary: dict[str, Any], warnings: list[str]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ctxview.sessions.request import breakdown_text

    console = Console(highlight=False)
    t = Table(
        title=Text(f"ctxview inspect · {visible(summary['file'])}"), show_header=False, box=None
    )
    t.add_column(style="bold")
    t.add_column()
    errors = [p for p in summary["problems"] if p["severity"] == "error"]
    status = (
        Text("✓ valid: the API will accept this window", style="green")
        if not errors
        else Text(
            f"✗ {plural(len(errors), 'problem')}: the API will reject this request",
            style="bold red",
        )
    )
    rows = [
        ("format", summary["format"]),
        *(
            [("route", _route_text(summary["route"]))]
            if "route" in summary  # (a Gemini session: the route its tokens were estimated for)
            else []
        ),
        ("messages", f"{summary['messages_total']:,} in the file"),
        (
            "strategy",
            "as sent (the whole conversation; a compaction starts it again)"
            if summary["mode"] == "as sent"
            else f"{summary['strategy']}, max {summary['max_context_messages']}",
        ),
        (
            "window",
            f"{plural(size := summary['window']['size'], 'message', f'{size:,}')}"
            f" · ~{summary['window']['estimated_tokens']:,} request tokens "
            f"({breakdown_text(summary['window']['token_breakdown'])})",
        ),
        *(
            [("not in the file", "; ".join(summary["window"]["billed_not_in_file"]))]
            if summary["window"].get("billed_not_in_file")
            else []
        ),
        (
            "pinned",
            "none"
            if summary["pinned_id"] is None
            else ", ".join(f"#{i}" for i in [summary["pinned_id"], *summary.get("pinned_ids", [])]),
        ),
        (
            "evicted",
            f"{len(summary['evicted']):,}: {id_ranges([e['id'] for e in summary['evicted']]) or 'none'}",
        ),
        ("window ids", id_ranges(summary["window"]["ids"]) or "none"),
    ]
    if summary["skipped"]:
        rows.append(("skipped lines", skipped_text(summary["skipped"])))
    if summary["unplaced_lines"]:
        rows.append(("unplaced lines", ", ".join(map(str, summary["unplaced_lines"]))))
    if summary["dangling_parents"]:
        rows.append(
            (
                "dangling parents",
                ", ".join(f"line {d['line']}" for d in summary["dangling_parents"]),
            )
        )
    for k, v in rows:
        t.add_row(k, Text(visible(str(v))))
    t.add_row("protocol", status)
    console.print(t)
    # a row names its message as the rows above do (``window ids #0, #14–#26``), not by its
    # position in the window (1), which no other line of the output shows
    ids = summary["window"]["ids"]

    def message_id(index: int) -> str:
        return f"#{ids[index]}" if 0 <= index < len(ids) else "—"

    if summary["problems"]:
        pt = Table(title="problems (as the API words them)")
        pt.add_column("#", justify="right")
        pt.add_column("severity")
        pt.add_column("code")
        pt.add_column("message")
        for p in summary["problems"]:
            style = "red" if p["severity"] == "error" else "yellow"
            pt.add_row(
                message_id(p["index"]),
                Text(p["severity"], style=style),
                Text(p["code"]),
                Text(visible(p["message"])),
            )
        console.print(pt)
    if summary["fixes"]:
        ft = Table(title="fixes (`ctxview repair FILE -o OUT` applies them)")
        ft.add_column("#", justify="right")
        ft.add_column("action")
        ft.add_column("detail")
        for f in summary["fixes"]:
            ft.add_row(message_id(f["index"]), Text(f["action"]), Text(visible(f["detail"])))
        console.print(ft)
    for w in warnings:
        console.print(Text(f"note: {visible(w)}", style="dim"))


def _route_text(route: dict[str, Any] | None) -> str:
    if route is None:
        return "not in the file (tokens estimated as the Gemini API bills)"
    return f"{route['text']} (from the request's URL)"


#: skipped lines listed with their reasons by ``inspect``; the rest are counted (--json: all)
SKIPPED_SHOWN = 10


def skipped_text(skipped: list[dict[str, Any]]) -> str:
    """``line 31: invalid JSON at column 5: Expecting value`` for each skipped line (the first
    SKIPPED_SHOWN of them, then "and N more"), one a line."""
    out = [f"line {s['line']}: {s['reason']}" for s in skipped[:SKIPPED_SHOWN]]
    if len(skipped) > SKIPPED_SHOWN:
        out.append(f"and {len(skipped) - SKIPPED_SHOWN:,} more (--json lists them all)")
    return "\n".join(out)
