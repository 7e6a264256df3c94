"""What every command module of the CLI shares: exit codes, the one-line error, argument types,
checking the file a command writes (``-o``), reading the file a command names, and keeping what
a command built until the process exits.

The bottom of ``ctxview.cli``: it imports no other module of the package."""

from __future__ import annotations

import argparse
import errno
import functools
import sys
from collections.abc import Callable
from typing import Any

from ctxview.textfmt import json_text, one_line

EXIT_OK, EXIT_PROBLEMS, EXIT_UNREADABLE = 0, 1, 2


def err(msg: str, where: str = "") -> None:
    """One line on stderr: untrusted parts (file names, JSON keys, values) made visible.
    ``where`` names the command in front of the message (``chat: ``)."""
    print(f"ctxview: {where}{one_line(msg, 1000)}", file=sys.stderr)


def json_error(file: Any, error: str, code: int) -> None:
    """``inspect --json``'s object for a file that cannot be read or replayed: scripts parse
    stdout, so a failure is one object there too."""
    sys.stdout.write(json_text({"file": file, "error": error, "exit": code}) + "\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _port_from(text: str, lowest: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not lowest <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number {lowest}-65535, got {value}")
    return value


def port_number(text: str) -> int:
    """A ``--port`` to listen on (0: any free one, said once it listens)."""
    return _port_from(text, 0)


def fixed_port(text: str) -> int:
    """A ``--port`` that an address printed before listening names (not 0)."""
    return _port_from(text, 1)


def formats() -> list[str]:
    from ctxview.sessions.readers import FORMATS

    return list(FORMATS)


def strategies() -> list[str]:
    from ctxview.core.strategies import STRATEGIES

    return list(STRATEGIES)


def add_window_args(p: argparse.ArgumentParser, format_help: str | None = None) -> None:
    """``--max``, ``--strategy`` and ``--format``: the settings a file is replayed under."""
    p.add_argument("--max", type=positive_int, metavar="N", help="max context messages")
    p.add_argument("--strategy", choices=strategies(), help="eviction strategy")
    p.add_argument(
        "--format",
        choices=formats(),
        help=format_help or "force the file format (default: detect)",
    )


def add_output_args(p: argparse.ArgumentParser, what: str) -> None:
    """``-o OUT`` and ``--force``: where a command writes, checked before it starts."""
    p.add_argument("-o", "--output", metavar="OUT", help=what)
    p.add_argument(
        "--force",
        action="store_true",
        help="write OUT even when it is the input file (replacing it)",
    )


def add_redact_args(p: argparse.ArgumentParser, default: bool, what: str) -> None:
    """``--redact`` / ``--no-redact``: secrets in the output replaced by ``[REDACTED:kind]``
    (docs/redaction.md); ``what`` says what is redacted and why the default is what it is."""
    p.add_argument(
        "--redact",
        action=argparse.BooleanOptionalAction,
        default=default,
        help=what,
    )


def redaction_said(redactions: Any) -> None:
    """The count of what was redacted, one line on stderr (the output may be stdout)."""
    print(f"ctxview: {redactions.note()}", file=sys.stderr)


def output_problem(args: argparse.Namespace, *inputs: str | None) -> str | None:
    """Why ``args.output`` cannot be written (one line naming it), or None: a directory, FIFO or
    device, a missing folder (never created), or one of ``inputs`` without ``--force``
    (``ctxview.sessions.store.check_output``, the rule every writing command shares)."""
    output = getattr(args, "output", None)
    if output is None:
        return None
    from ctxview.sessions.store import WriteRefused, check_output

    try:
        check_output(output, inputs, force=bool(getattr(args, "force", False)))
    except WriteRefused as exc:
        again = "; give another name, or --force" if exc.errno == errno.EEXIST else ""
        return f"{output}: cannot write ({exc}){again}"
    return None


def without_gc(command: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    """``command`` run with the cyclic GC paused: nothing a headless command builds is a cycle,
    so no collection needs to walk the loaded session (``ctxview.sessions.model.gc_paused``)."""

    @functools.wraps(command)
    def run(args: argparse.Namespace) -> int:
        from ctxview.sessions.model import gc_paused

        with gc_paused():
            return command(args)

    return run


def unreadable(args: argparse.Namespace, msg: str, *, in_json: bool = True) -> int:
    """Exit 2 after the reason in one line (and, with ``--json``, the error object; ``in_json``
    False: an empty error there)."""
    err(msg)
    if getattr(args, "json", False):
        json_error(args.file, msg if in_json else "", EXIT_UNREADABLE)
    return EXIT_UNREADABLE


#: config keys no headless command reads (the TUI's and the chat's own)
_NOT_HEADLESS = frozenset(
    {
        "theme",
        "animation",
        "tools_enabled",
        "file_tools",
        "file_tool_max_bytes",
        "request_timeout",
        "tool_rounds",
    }
)
#: a config key -> the flag and the session setting that win over it
_OVERRIDES = {
    "max_context_messages": ("max", "max_context_messages"),
    "strategy": ("strategy", "strategy"),
    "model": ("model", "model"),
}


def config_used(cfg: Any, args: argparse.Namespace, session: Any = None) -> dict[str, Any]:
    """The values a command took from the config file, not ctxview's defaults: ``{"path",
    "values"}`` (``--json``'s ``config_used``). A key a flag or the file's own saved settings
    decided is left out: the config did not decide it."""
    values: dict[str, Any] = {}
    for key in sorted(cfg.from_file):
        flag, setting = _OVERRIDES.get(key, ("", ""))
        if key in _NOT_HEADLESS or (
            flag and (getattr(args, flag, None) or getattr(session, setting, None))
        ):
            continue
        values[key] = cfg.values[key]
    return {"path": str(cfg.path), "values": values}


def say_config_used(used: dict[str, Any]) -> None:
    """On stderr, one line naming the config values a command used (none: nothing)."""
    if not used["values"]:
        return
    shown = ", ".join(
        f"{key} = {one_line(json_text(value), 80)}" for key, value in used["values"].items()
    )
    err(f"using {used['path']}: {shown} (flags --max, --strategy win over them)")


def say_skipped(args: argparse.Namespace) -> None:
    """On stderr, one line counting the file's skipped lines (``inspect`` lists them itself):
    a command that writes or prices the session must not drop lines unsaid."""
    n = len(args.skipped)
    if n and getattr(args, "command", None) != "inspect":
        err(
            f"{args.file}: {n:,} line{'s' if n != 1 else ''} skipped "
            f"(see ctxview inspect {args.file})"
        )


def load_file(args: argparse.Namespace) -> Any:
    """(session, config) or (exit code, config) after printing the reason in one line (with
    ``--json`` also the error object on stdout): what every command that reads ``args.file``
    starts with."""
    from ctxview.config import load_config
    from ctxview.sessions import load_session
    from ctxview.sessions.model import load_error

    cfg = load_config()
    for e in cfg.errors:
        err(e)
    try:
        session = load_session(args.file, args.format)
        retain(session)
        args.config_used = config_used(cfg, args, session)
        say_config_used(args.config_used)
        args.skipped = session.skipped()
        say_skipped(args)
        return session, cfg
    except Exception as exc:  # a reader bug must not become a traceback: one line, exit 2
        msg = load_error(args.file, exc)
    return unreadable(args, msg), cfg


def load_replay(args: argparse.Namespace, *, as_sent: bool = False) -> Any:
    """(session replayed under ``--max`` and ``--strategy``, config) or (exit code, config)
    after printing the reason as :func:`load_file` does. ``as_sent``: a recorded session with
    neither flag is replayed as it was sent, as the TUI opens it (``sessions.replay``)."""
    from ctxview.sessions import replay

    session, cfg = load_file(args)
    if isinstance(session, int):
        return session, cfg
    try:
        rep = replay(
            session,
            max_context_messages=args.max,
            strategy=args.strategy,
            defaults=cfg.as_defaults(),
            as_sent=as_sent,
        )
    except ValueError as exc:
        return unreadable(args, f"{args.file}: {exc}"), cfg
    except Exception as exc:
        msg = f"{args.file}: cannot replay the file (internal error: {type(exc).__name__}: {exc})"
        return unreadable(args, msg, in_json=False), cfg
    retain(rep)
    return rep, cfg


#: what the command built, kept alive until a ``run`` process exits (None: not kept)
_retained: list[Any] | None = None


def start_retaining() -> None:
    """From now on :func:`retain` keeps what it is given (the console script's process)."""
    global _retained
    _retained = []


def retained() -> bool:
    """Has a command retained anything (so the process may exit without freeing it)?"""
    return bool(_retained)


def retain(*objects: Any) -> None:
    """Keep what a headless command built (the loaded session, its replay, its requests) alive
    until the process exits, when it was started by the console script: the exit then frees
    nothing. Freeing a 100,000-message session and 50,000 requests object by object took
    0.2-0.3 s of ``requests --json`` (``benchmarks/README.md``); the OS drops the whole heap at
    once. In ``main`` called from Python (tests, other tools) nothing is kept."""
    if _retained is not None:
        _retained.extend(objects)
