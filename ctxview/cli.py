"""Command line: ``ctxview [FILE]`` opens the TUI; ``inspect``, ``export`` and ``config`` are
headless (they never import Textual or the anthropic SDK)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ctxview import __version__
from ctxview.core.strategies import STRATEGIES
from ctxview.textfmt import escape_controls, id_ranges, json_text, one_line, visible

SUBCOMMANDS = (
    "inspect",
    "export",
    "config",
    "requests",
    "compare",
    "proxy",
    "sessions",
    "repair",
    "diff",
    "chat",
)

EXIT_OK, EXIT_PROBLEMS, EXIT_UNREADABLE = 0, 1, 2


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {value}")
    return value


def _add_window_args(p: argparse.ArgumentParser) -> None:
    from ctxview.sessions.readers import FORMATS

    p.add_argument("--max", type=_positive_int, metavar="N", help="max context messages")
    p.add_argument("--strategy", choices=list(STRATEGIES), help="eviction strategy")
    p.add_argument(
        "--format", choices=list(FORMATS), help="force the file format (default: detect)"
    )


def _formats() -> list[str]:
    from ctxview.sessions.readers import FORMATS

    return list(FORMATS)


def build_app_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxview",
        description="See what an LLM agent's context holds, what it forgets, and whether the "
        "next API request will be accepted.",
        epilog="Headless: ctxview inspect FILE [--json] | ctxview export FILE [-o OUT] | "
        "ctxview requests FILE [--json] | ctxview compare FILE [--json] | "
        "ctxview repair FILE [-o OUT] [--dry-run] [--json] | ctxview diff A B [--json] | "
        "ctxview config path|show|set KEY VALUE. Live: ctxview FILE --follow | ctxview sessions "
        "[--json] | ctxview proxy [--record FILE]. Chat: ctxview chat --no-tui PROMPT. See `ctxview COMMAND --help`.",
    )
    p.add_argument("--version", action="version", version=f"ctxview {__version__}")
    p.add_argument(
        "file", nargs="?", help="a ctxview session, API request body or Claude Code transcript"
    )
    _add_window_args(p)
    p.add_argument("--model", help="model for chat (default: the config's)")
    p.add_argument("--offline", action="store_true", help="chat with the offline demo model")
    p.add_argument("--resume", action="store_true", help="reopen the newest autosaved session")
    p.add_argument(
        "--follow",
        action="store_true",
        help="follow a Claude Code transcript as the agent writes it (like tail -f)",
    )
    return p


def build_sub_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The headless commands' parser; with ``command``, the modules that define the other
    commands' arguments (chat, live, requests) are not imported for it."""
    p = argparse.ArgumentParser(prog="ctxview")
    sub = p.add_subparsers(dest="command", required=True)
    ins = sub.add_parser(
        "inspect", help="replay a file and summarise the window (exit 1 on protocol errors)"
    )
    ins.add_argument("file")
    _add_window_args(ins)
    ins.add_argument("--json", action="store_true", help="print exactly one JSON object")
    exp = sub.add_parser("export", help="write the request body ctxview would send next")
    exp.add_argument("file")
    _add_window_args(exp)
    exp.add_argument(
        "--model", help="model to put in the request (default: the file's, else the config's)"
    )
    exp.add_argument(
        "-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout"
    )
    exp.add_argument(
        "--context-management",
        action="store_true",
        help="with --strategy clear-tool-uses or clear-thinking: the full messages plus the "
        "context_management block (the API edits them) instead of the edited messages",
    )
    rep = sub.add_parser(
        "repair",
        help="apply the minimal fix of every protocol error and write the repaired file "
        "(exit 1 when a problem has no safe fix)",
    )
    rep.add_argument("file")
    _add_window_args(rep)
    rep.add_argument(
        "-o", "--output", metavar="OUT", help="write here (atomically) instead of stdout"
    )
    rep.add_argument("--dry-run", action="store_true", help="list the fixes, write nothing")
    rep.add_argument(
        "--json", action="store_true", help="print the fixes as one JSON object on stdout"
    )
    dif = sub.add_parser(
        "diff", help="compare two requests (or two sessions' final windows) block by block"
    )
    dif.add_argument("a", metavar="A")
    dif.add_argument("b", metavar="B")
    dif.add_argument("--format", choices=_formats(), help="force the files' format")
    dif.add_argument("--json", action="store_true", help="print exactly one JSON object")
    if command is None or command in ("requests", "compare"):
        from ctxview.cli_requests import add_parsers as add_request_parsers

        add_request_parsers(sub, _positive_int)
    cfg = sub.add_parser("config", help="show or change config.toml")
    csub = cfg.add_subparsers(dest="action", required=True)
    csub.add_parser("path", help="print the config file's path")
    csub.add_parser("show", help="print the effective config as TOML")
    st = csub.add_parser("set", help="set KEY to VALUE in the config file")
    st.add_argument("key")
    st.add_argument("value")
    if command is None or command in ("proxy", "sessions"):
        from ctxview.live.commands import add_parsers as add_live_parsers

        add_live_parsers(sub)
    if command is None or command == "chat":
        from ctxview.chat.run import add_parser as add_chat_parser

        add_chat_parser(sub, _positive_int)
    return p


def _err(msg: str) -> None:
    """One line on stderr: untrusted parts (file names, JSON keys, values) made visible."""
    print(f"ctxview: {one_line(msg, 1000)}", file=sys.stderr)


def load_file(args: argparse.Namespace, failures: list[str] | None = None) -> Any:
    """(session, config) or (exit code, config) after printing the reason in one line (also
    appended to ``failures``): what every command that reads ``args.file`` starts with."""
    from ctxview.config import load_config
    from ctxview.sessions import SessionError, load_session

    cfg = load_config()
    for e in cfg.errors:
        _err(e)
    try:
        session = load_session(args.file, args.format)
        retain(session)
        return session, cfg
    except SessionError as exc:
        _err(str(exc))
        if failures is not None:
            failures.append(str(exc))
        return EXIT_UNREADABLE, cfg
    except (RecursionError, MemoryError) as exc:
        msg = f"{args.file}: cannot read the file ({type(exc).__name__})"
    except Exception as exc:  # a reader bug must not become a traceback: one line, exit 2
        msg = f"{args.file}: cannot read the file (internal error: {type(exc).__name__}: {exc})"
    _err(msg)
    if failures is not None:
        failures.append(msg)
    return EXIT_UNREADABLE, cfg


def _load(args: argparse.Namespace, failures: list[str] | None = None) -> Any:
    """(replay, config) or (exit code, config) after printing the reason (also appended to
    ``failures``)."""
    from ctxview.sessions import replay

    session, cfg = load_file(args, failures)
    if isinstance(session, int):
        return session, cfg
    try:
        rep = replay(
            session,
            max_context_messages=args.max,
            strategy=args.strategy,
            defaults=cfg.as_defaults(),
        )
    except ValueError as exc:
        _err(f"{args.file}: {exc}")
        if failures is not None:
            failures.append(f"{args.file}: {exc}")
        return EXIT_UNREADABLE, cfg
    except Exception as exc:
        _err(f"{args.file}: cannot replay the file (internal error: {type(exc).__name__}: {exc})")
        return EXIT_UNREADABLE, cfg
    retain(rep)
    return rep, cfg


def _fixes(window: list[Any], system: Any, problems: list[Any]) -> list[dict[str, Any]]:
    """What ``ctxview repair`` would do (only computed when the window has an error)."""
    if not any(p.severity == "error" for p in problems):
        return []
    from ctxview.core.repair import repair

    return [f.to_dict() for f in repair(window, system).fixes]


def inspect_summary(rep: Any, model: str | None = None) -> dict[str, Any]:
    from ctxview.core.limits import context_problem
    from ctxview.core.protocol import check_protocol
    from ctxview.core.tokens import estimate_window
    from ctxview.sessions.request import token_breakdown

    ctx = rep.context
    window = [m for _, m in ctx.entries()]
    # the API's rules, then what ctxview notes about the window itself (max+1, budget, newest)
    problems = check_protocol(window, rep.session.system) + ctx.window_notes()
    system = rep.session.system if isinstance(rep.session.system, list) else ctx.system_prompt
    # messages as the API reads them (from the last compaction block on; as sent, under a
    # context-editing strategy)
    sent = [m for _, m in ctx.sent_entries()] if ctx.edits_messages else window
    breakdown = token_breakdown(system, rep.session.tools, estimate_window(sent))
    # the sidebar's rule: system + tools + window against the model's context
    over = context_problem(sum(breakdown.values()), model or rep.session.model)
    if over is not None:
        problems.append(over)
    return {
        "file": rep.session.path,
        "format": rep.session.format,
        "messages_total": len(rep.transcript),
        "max_context_messages": ctx.max_context_messages,
        "strategy": ctx.strategy,
        "window": {
            "ids": ctx.window_ids,
            "size": len(ctx),
            # the whole request: system + tools + messages (as the app's sidebar counts it)
            "estimated_tokens": sum(breakdown.values()),
            "token_breakdown": breakdown,
        },
        "pinned_id": ctx.pinned_id,
        "pinned_ids": ctx.pinned_ids,
        "evicted": [
            {"id": r.id, "evicted_at_step": r.evicted_step}
            for r in rep.transcript.records
            if r.evicted_step is not None
        ],
        "problems": [p.to_dict() for p in problems],
        "fixes": _fixes(window, rep.session.system, problems),
        "skipped_lines": rep.session.skipped_lines,
        "subagents": rep.session.subagents,
        **_editing_summary(ctx),
    }


def _editing_summary(ctx: Any) -> dict[str, Any]:
    """``context_editing``: what a context-editing strategy sends edited (ids, and the API's
    ``applied_edits`` as estimated); nothing for the other strategies."""
    sf = ctx.sent_form() if ctx.edits_messages else None
    if sf is None:
        return {}
    return {
        "context_editing": {
            "cleared_ids": sorted(sf.edited),
            "applied_edits": sf.applied_edits(),
            "context_management": ctx.context_editing.context_management(ctx.strategy),
        }
    }


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
            f"✗ {len(errors)} problem{'s' if len(errors) != 1 else ''}: "
            "the API will reject this request",
            style="bold red",
        )
    )
    rows = [
        ("format", summary["format"]),
        ("messages", f"{summary['messages_total']:,} in the file"),
        ("strategy", f"{summary['strategy']}, max {summary['max_context_messages']}"),
        (
            "window",
            f"{summary['window']['size']:,} message{'s' if summary['window']['size'] != 1 else ''}"
            f" · ~{summary['window']['estimated_tokens']:,} request tokens "
            f"({breakdown_text(summary['window']['token_breakdown'])})",
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
    if summary["skipped_lines"]:
        rows.append(("skipped lines", ", ".join(map(str, summary["skipped_lines"]))))
    for k, v in rows:
        t.add_row(k, Text(visible(str(v))))
    t.add_row("protocol", status)
    console.print(t)
    if summary["problems"]:
        pt = Table(title="problems (as the API words them)")
        pt.add_column("index", justify="right")
        pt.add_column("severity")
        pt.add_column("code")
        pt.add_column("message")
        for p in summary["problems"]:
            style = "red" if p["severity"] == "error" else "yellow"
            pt.add_row(
                str(p["index"]),
                Text(p["severity"], style=style),
                Text(p["code"]),
                Text(visible(p["message"])),
            )
        console.print(pt)
    if summary["fixes"]:
        ft = Table(title="fixes (`ctxview repair FILE -o OUT` applies them)")
        ft.add_column("index", justify="right")
        ft.add_column("action")
        ft.add_column("detail")
        for f in summary["fixes"]:
            ft.add_row(str(f["index"]), Text(f["action"]), Text(visible(f["detail"])))
        console.print(ft)
    for w in warnings:
        console.print(Text(f"note: {visible(w)}", style="dim"))


def cmd_inspect(args: argparse.Namespace) -> int:
    from ctxview.sessions.model import gc_paused

    with gc_paused():  # nothing here is a cycle: no collection walks the loaded session
        return _inspect(args)


def _inspect(args: argparse.Namespace) -> int:
    failures: list[str] = []
    rep, cfg = _load(args, failures)
    if isinstance(rep, int):
        if args.json:  # scripts parse stdout: one object there too
            obj = {
                "file": args.file,
                "error": failures[0] if failures else "",
                "exit": rep,
            }
            sys.stdout.write(json_text(obj) + "\n")
        return rep
    summary = inspect_summary(rep, rep.session.model or cfg["model"])
    if args.json:
        sys.stdout.write(json_text(summary) + "\n")
    else:
        _print_rich(summary, rep.session.warnings)
    has_error = any(p["severity"] == "error" for p in summary["problems"])
    return EXIT_PROBLEMS if has_error else EXIT_OK


def request_body(
    rep: Any, cfg: Any, model: str | None = None, context_management: bool = False
) -> dict[str, Any]:
    """The Messages API request ctxview would send next for this context (under a
    context-editing strategy: the edited messages, or with ``context_management`` the full ones
    plus the ``context_management`` block)."""
    from ctxview.sessions.request import build_request

    session = rep.session
    return build_request(
        rep.context,
        model=model or session.model or cfg["model"],
        max_tokens=session.max_tokens or cfg["max_tokens"],
        system=session.system if isinstance(session.system, list) else None,
        tools=session.tools,
        params=session.request_params,
        context_management=context_management,
    )


def cmd_export(args: argparse.Namespace) -> int:
    rep, cfg = _load(args)
    if isinstance(rep, int):
        return rep
    from ctxview.sessions.store import check_no_api_key, save_request

    if args.context_management and not rep.context.edits_messages:
        _err(
            f"{args.file}: --context-management needs a context-editing strategy "
            f"(--strategy clear-tool-uses or clear-thinking; this one is {rep.context.strategy})"
        )
        return EXIT_UNREADABLE
    body = request_body(rep, cfg, args.model, args.context_management)
    try:
        if args.output:
            save_request(args.output, body)
        else:
            text = json_text(body, indent=2) + "\n"
            check_no_api_key(text.encode("utf-8"), "the request body")
            sys.stdout.write(text)
    except OSError as exc:
        _err(f"{args.output}: cannot write ({exc.strerror or exc})")
        return EXIT_UNREADABLE
    except ValueError as exc:  # the API key in the body; NaN (never written)
        _err(f"{args.file}: not exported: {exc}")
        return EXIT_UNREADABLE
    if args.output:
        print(f"wrote {visible(args.output)} ({len(body['messages'])} messages)", file=sys.stderr)
    # the same contract as inspect: a window the API would reject is exit 1 (the body is written)
    from ctxview.core.protocol import check_protocol

    window = [m for _, m in rep.context.entries()]
    errors = [p for p in check_protocol(window, rep.session.system) if p.severity == "error"]
    if errors:
        n = len(errors)
        _err(f"warning: the API would reject this request ({n} problem{'s' if n != 1 else ''}):")
        for p in errors:
            _err(f"  {visible(p.message)}")
        return EXIT_PROBLEMS
    return EXIT_OK


def cmd_repair(args: argparse.Namespace) -> int:
    from ctxview.core.repair import describe_unfixable
    from ctxview.sessions.repairio import repair_replay

    failures: list[str] = []
    rep, cfg = _load(args, failures)
    if isinstance(rep, int):
        if args.json:  # scripts parse stdout: one object there too, as inspect --json
            obj = {"file": args.file, "error": failures[0] if failures else "", "exit": rep}
            sys.stdout.write(json_text(obj) + "\n")
        return rep
    repaired = repair_replay(rep, cfg.as_defaults())
    result = repaired.result
    unfixable = [
        {
            "index": p.index,
            "code": p.code,
            "message": p.message,
            "reason": describe_unfixable(p),
        }
        for p in result.unfixable
    ]
    wrote: str | None = None
    if not args.dry_run and (args.output or not args.json):
        from ctxview.sessions.store import atomic_write, check_no_api_key

        try:
            text = json_text(repaired.document, indent=2) + "\n"
            check_no_api_key(text.encode("utf-8"), "the repaired file")
        except ValueError as exc:  # the API key in the text; NaN (never written)
            _err(f"{args.file}: not written: {exc}")
            return EXIT_UNREADABLE
        if args.output:
            try:
                atomic_write(args.output, text.encode("utf-8"))
            except (OSError, ValueError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                _err(f"{args.output}: cannot write ({reason})")
                return EXIT_UNREADABLE
            wrote = args.output
        else:
            sys.stdout.write(text)
    if args.json:
        report: dict[str, Any] = {"fixes": [f.to_dict() for f in result.fixes]}
        report["unfixable"] = unfixable
        report["valid"] = result.valid
        report["format"] = repaired.format
        report["output"] = wrote
        sys.stdout.write(json_text(report) + "\n")
    else:
        out = sys.stdout if args.dry_run else sys.stderr
        for f in result.fixes:
            print(visible(f"messages.{f.index}: {f.code}: {f.action}: {f.detail}"), file=out)
        if not result.fixes and not unfixable:
            print("nothing to repair: the API will accept this window", file=out)
    for u in unfixable:
        _err(f"{args.file}: messages.{u['index']}: {u['code']}: no safe fix: {u['reason']}")
    if wrote:
        n = len(result.fixes)
        print(
            f"wrote {wrote} ({repaired.format}, {n} fix{'es' if n != 1 else ''})", file=sys.stderr
        )
    return EXIT_OK if result.valid else EXIT_PROBLEMS


def cmd_diff(args: argparse.Namespace) -> int:
    from ctxview.config import load_config
    from ctxview.core.diff import diff_requests
    from ctxview.sessions import SessionError
    from ctxview.sessions.diffio import render, request_of

    cfg = load_config()
    for e in cfg.errors:
        _err(e)
    bodies = []
    for path in (args.a, args.b):
        try:
            bodies.append(request_of(path, args.format, cfg.as_defaults()))
        except (SessionError, ValueError) as exc:
            msg = str(exc) if isinstance(exc, SessionError) else f"{path}: {exc}"
            _err(msg)
            if args.json:  # one object on stdout, as inspect --json
                obj = {"a": args.a, "b": args.b, "error": msg, "exit": EXIT_UNREADABLE}
                sys.stdout.write(json_text(obj) + "\n")
            return EXIT_UNREADABLE
    diff = diff_requests(bodies[0], bodies[1])
    if args.json:
        report = {"a": args.a, "b": args.b, **diff.to_dict()}
        sys.stdout.write(json_text(report) + "\n")
    else:
        print(f"A {visible(args.a)}\nB {visible(args.b)}")
        for line in render(diff):
            print(line)
    return EXIT_OK if diff.identical else EXIT_PROBLEMS


def cmd_config(args: argparse.Namespace) -> int:
    from ctxview.config import (
        ConfigError,
        check_for_set,
        config_path,
        load_config,
        parse_value,
        save_config_values,
    )

    if args.action == "path":
        print(config_path())
        return EXIT_OK
    if args.action == "show":
        import tomli_w

        cfg = load_config()
        for e in cfg.errors:
            _err(e)
        print(
            f"# {one_line(str(cfg.path), 1000)}"
            f"{'' if cfg.path.exists() else ' (not created yet: defaults)'}"
        )
        sys.stdout.write(escape_controls(tomli_w.dumps(cfg.values)))
        return EXIT_OK
    try:
        value = parse_value(args.key, args.value)
        check_for_set(args.key, value)
        path = save_config_values({args.key: value})
    except ConfigError as exc:
        where = str(config_path())
        text = str(exc)
        _err(text if text.startswith(where) else f"{where}: {text}")  # the path once
        return EXIT_UNREADABLE
    except OSError as exc:
        _err(f"{config_path()}: cannot write ({exc.strerror or exc})")
        return EXIT_UNREADABLE
    print(one_line(f"{args.key} = {value!r} written to {path}", 1000))
    return EXIT_OK


def _handler(command: str) -> Callable[[argparse.Namespace], int]:
    """The function of a subcommand; the modules of the others are not imported (``inspect`` must
    not pay for the proxy's asyncio or the request model)."""
    if command in ("requests", "compare"):
        from ctxview import cli_requests

        fn: Callable[[argparse.Namespace], int] = getattr(cli_requests, f"cmd_{command}")
        return fn
    if command in ("proxy", "sessions"):
        from ctxview.live import commands

        live: Callable[[argparse.Namespace], int] = getattr(commands, f"cmd_{command}")
        return live
    if command == "chat":
        from ctxview.chat.run import cmd_chat

        return cmd_chat
    return {
        "inspect": cmd_inspect,
        "export": cmd_export,
        "config": cmd_config,
        "repair": cmd_repair,
        "diff": cmd_diff,
    }[command]


#: what the command built, kept alive until a :func:`run` process exits (None: not kept)
_RETAINED: list[Any] | None = None


def retain(*objects: Any) -> None:
    """Keep what a headless command built (the loaded session, its replay, its requests) alive
    until the process exits, when it was started by :func:`run`: the exit then frees nothing.
    Freeing a 100,000-message session and 50,000 requests object by object took 0.2-0.3 s of
    ``requests --json`` (``benchmarks/README.md``); the OS drops the whole heap at once. In
    ``main`` called from Python (tests, other tools) nothing is kept."""
    if _RETAINED is not None:
        _RETAINED.extend(objects)


def run() -> None:
    """The console script (``ctxview``, ``python -m ctxview``): :func:`main`, then, when the
    command retained what it built (:func:`retain`), an exit that frees nothing, as mypy's
    does: the output is flushed first, and a failing flush is reported as a normal exit would."""
    global _RETAINED
    _RETAINED = []
    code = main()
    if not _RETAINED:
        sys.exit(code)  # the usual exit (atexit handlers, the app's cleanup)
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        pass  # the reader left: as main treats it
    except OSError as exc:
        _err(f"cannot write the output: {exc.strerror or exc}")
        code = code or EXIT_UNREADABLE
    with contextlib.suppress(OSError):
        sys.stderr.flush()
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in SUBCOMMANDS:
        args = build_sub_parser(args_list[0]).parse_args(args_list)
        handler = _handler(args.command)
        try:
            return handler(args)
        except BrokenPipeError:
            return EXIT_OK
    args = build_app_parser().parse_args(args_list)
    from ctxview.app.launch import launch

    return launch(args)
