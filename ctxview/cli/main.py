"""The command line's entry: ``ctxview [FILE]`` opens the TUI; every subcommand is dispatched
to the module of its family, and only that module is imported (``inspect`` does not pay for the
proxy's asyncio or the request model; no headless command imports Textual or the SDK)."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Protocol, cast

from ctxview.cli.common import EXIT_OK, EXIT_UNREADABLE, err, retained, start_retaining

#: the command families: each module defines ``add_parsers(sub)`` (the parsers of its commands)
#: and ``cmd_<command>(args) -> exit code``. In this order their commands are listed (a usage
#: error names them); the cheap ones' parsers are always built, the others' only for their own
#: commands (``inspect`` must not import the request model, the proxy's or the chat's modules).
FAMILIES: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("ctxview.cli.inspect", ("inspect",), True),
    ("ctxview.cli.files", ("export", "repair", "diff"), True),
    ("ctxview.cli.requests", ("requests", "compare"), False),
    ("ctxview.cli.config", ("config",), True),
    ("ctxview.cli.live", ("proxy", "sessions"), False),
    ("ctxview.cli.chat", ("chat",), False),
    ("ctxview.cli.serve", ("serve",), False),
    ("ctxview.cli.fleet", ("scan", "fleet"), False),
    ("ctxview.cli.report", ("report",), False),
)
#: each subcommand -> the module of its family
COMMANDS = {command: module for module, commands, _ in FAMILIES for command in commands}

Handler = Callable[[argparse.Namespace], int]


class _Family(Protocol):
    def add_parsers(self, sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None: ...


def build_sub_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The headless commands' parser: with ``command``, the always-built families and its own
    (the other families' modules are not imported); without, every family's."""
    p = argparse.ArgumentParser(prog="ctxview")
    # every command in the usage line, also those whose family's parsers are not built here
    sub = p.add_subparsers(dest="command", required=True, metavar="{" + ",".join(COMMANDS) + "}")
    for module, commands, always in FAMILIES:
        if always or command is None or command in commands:
            cast(_Family, importlib.import_module(module)).add_parsers(sub)
    return p


def parse_command(args_list: Sequence[str]) -> argparse.Namespace:
    """A subcommand's arguments: options may stand between its paths (``scan a.json --jobs 1
    b.json``), as in most command lines. argparse reads them so only through the command's own
    parser (``parse_intermixed_args`` refuses a parser with subcommands, as ``config``'s)."""
    parser = build_sub_parser(args_list[0])
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    own: argparse.ArgumentParser = sub.choices[args_list[0]]
    if not any(isinstance(a, argparse._SubParsersAction) for a in own._actions):
        args, extra = own.parse_known_intermixed_args(args_list[1:])
        if not extra:
            args.command = args_list[0]
            return args
    # (an unknown argument: the whole parser's error, whose usage lists every command)
    return parser.parse_args(args_list)


def handler(command: str) -> Handler:
    """The function of a subcommand (its family's module imported now)."""
    fn: Handler = getattr(importlib.import_module(COMMANDS[command]), f"cmd_{command}")
    return fn


def run() -> None:
    """The console script (``ctxview``, ``python -m ctxview``): :func:`main`, then, when the
    command retained what it built (``ctxview.cli.common.retain``), an exit that frees
    nothing, as mypy's does: the output is flushed first, and a failing flush is reported as a
    normal exit would."""
    start_retaining()
    code = main()
    if not retained():
        sys.exit(code)  # the usual exit (atexit handlers, the app's cleanup)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass  # the reader left: as main treats it
    except OSError as exc:
        err(f"cannot write the output: {exc.strerror or exc}")
        code = code or EXIT_UNREADABLE
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in COMMANDS:
        args = parse_command(args_list)
        fn = handler(args.command)
        try:
            return fn(args)
        except BrokenPipeError:
            return EXIT_OK
    from ctxview.cli.view import build_app_parser, view

    return view(build_app_parser().parse_args(args_list))
