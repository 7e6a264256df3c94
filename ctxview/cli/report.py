"""``ctxview report PATH``: a scanned dataset (a folder with ``requests/`` in it) gets the fleet
report (``ctxview.cli.fleet_report``); a session file gets the HTML report of one session
(``ctxview.cli.html_report``). The one parser holds both's flags; a flag of the other kind is
refused, naming it, rather than ignored."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ctxview.cli.common import EXIT_UNREADABLE, err
from ctxview.textfmt import one_line

#: flags only the HTML report of one session reads (dest -> flag), and only the fleet report's
_HTML_ONLY = {
    "output": "-o/--output",
    "compare": "--compare",
    "force": "--force",
    "max": "--max",
    "strategy": "--strategy",
    "format": "--format",
}
_FLEET_ONLY = {"json": "--json", "since": "--since", "model": "--model", "project": "--project"}


def add_parsers(sub: Any) -> None:
    from ctxview.cli import fleet_report
    from ctxview.cli.html_report import add_arguments

    p = sub.add_parser(
        "report",
        help="a session FILE as one self-contained HTML file (-o report.html), secrets "
        "redacted; a scanned dataset DIR as the fleet report: where the money goes (DuckDB)",
        description="ctxview report FILE -o report.html: one session as a self-contained HTML "
        "file (docs/share.md). ctxview report DIR: the fleet report over a dataset written by "
        "`ctxview scan` (docs/fleet.md).",
    )
    p.add_argument("file", metavar="PATH", help="a session file, or a dataset folder")
    add_arguments(p)
    fleet_report.add_arguments(p)


def _given(args: argparse.Namespace, flags: dict[str, str]) -> list[str]:
    return [flag for dest, flag in flags.items() if getattr(args, dest, None) not in (None, False)]


def cmd_report(args: argparse.Namespace) -> int:
    from ctxview.fleet.dataset import is_dataset

    path = one_line(args.file, 200)
    if is_dataset(args.file):
        if wrong := _given(args, _HTML_ONLY):
            err(f"report {path}: {', '.join(wrong)}: a flag of a session file's HTML report")
            return EXIT_UNREADABLE
        from ctxview.cli import fleet_report

        return fleet_report.cmd_fleet_report(args)
    if not os.path.lexists(args.file):  # neither kind: say so before asking for -o
        err(f"report {path}: no such file or folder")
        return EXIT_UNREADABLE
    if os.path.isdir(args.file):
        err(
            f"report {path}: a folder without requests/ inside: give a session file, or a "
            "dataset folder written by `ctxview scan`"
        )
        return EXIT_UNREADABLE
    if wrong := _given(args, _FLEET_ONLY):
        err(f"report {path}: {', '.join(wrong)}: a flag of the fleet report (a dataset folder)")
        return EXIT_UNREADABLE
    from ctxview.cli.html_report import cmd_html_report

    return cmd_html_report(args)
