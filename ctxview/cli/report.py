"""``ctxview report PATH``: a dataset folder (a scan's, with ``requests/`` inside) gets the
fleet report; a session file gets the HTML report (``ctxview.cli.html_report``)."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ctxview.cli.common import EXIT_UNREADABLE, err
from ctxview.textfmt import one_line


def add_parsers(sub: Any) -> None:
    from ctxview.cli.html_report import add_arguments

    p = sub.add_parser(
        "report",
        help="a session FILE as one self-contained HTML file (-o report.html), secrets "
        "redacted; a scan's dataset folder as the fleet report",
    )
    p.add_argument("file", metavar="PATH", help="a session file, or a scan's dataset folder")
    add_arguments(p)


def is_dataset(path: str) -> bool:
    """A scan's dataset: a folder holding ``requests/``."""
    return os.path.isdir(os.path.join(path, "requests"))


def cmd_report(args: argparse.Namespace) -> int:
    if is_dataset(args.file):
        err(
            f"report {one_line(args.file, 200)}: the fleet report of a scan's dataset is not "
            "available in this build; give a session file for the HTML report"
        )
        return EXIT_UNREADABLE
    if os.path.isdir(args.file):
        err(
            f"report {one_line(args.file, 200)}: a folder without requests/ inside: give a "
            "session file, or a scan's dataset folder"
        )
        return EXIT_UNREADABLE
    from ctxview.cli.html_report import cmd_html_report

    return cmd_html_report(args)
