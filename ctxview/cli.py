"""Command line: ``ctxview [FILE]`` (the TUI) and the headless subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from ctxview import __version__

SUBCOMMANDS = ("inspect", "export", "config")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ctxview",
        description="See what an LLM agent's context holds, what it forgets, and whether the "
        "next API request will be accepted.",
        epilog="Subcommands: ctxview inspect FILE | ctxview export FILE | ctxview config ...",
    )
    parser.add_argument("--version", action="version", version=f"ctxview {__version__}")
    parser.add_argument("file", nargs="?", help="a session, request body or transcript to open")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    parser.parse_args(args)
    return 0
