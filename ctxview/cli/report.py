"""``ctxview report PATH``: a scanned dataset (a folder with ``requests/`` in it) gets the fleet
report (``ctxview.cli.fleet_report``); a session file gets the HTML report of one session
(``ctxview.cli.html_report``). The one parser holds both's flags; each checks its own."""

from __future__ import annotations

import argparse
from typing import Any

from ctxview.cli.common import EXIT_UNREADABLE, err


def add_parsers(sub: Any) -> None:
    from ctxview.cli import fleet_report

    p = sub.add_parser(
        "report",
        help="a scanned dataset (DIR): where the money goes, from every request (DuckDB)",
        description="ctxview report DIR: the fleet report over a dataset written by "
        "`ctxview scan` (docs/fleet.md).",
    )
    p.add_argument("path", metavar="PATH", help="a dataset folder written by `ctxview scan`")
    fleet_report.add_arguments(p)


def cmd_report(args: argparse.Namespace) -> int:
    from ctxview.fleet.dataset import is_dataset

    if is_dataset(args.path):
        from ctxview.cli import fleet_report

        return fleet_report.cmd_fleet_report(args)
    # a session file: the HTML report of one session (not on this branch yet)
    err(
        f"{args.path}: not a dataset written by `ctxview scan` (no requests/ folder in it); "
        "the HTML report of one session file is not part of this build"
    )
    return EXIT_UNREADABLE
