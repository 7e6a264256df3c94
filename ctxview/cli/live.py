"""``ctxview proxy`` and ``ctxview sessions``: the live sources on the command line (following a
transcript is the TUI's ``--follow``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from typing import Any

from ctxview.cli.common import EXIT_OK, EXIT_UNREADABLE, positive_int
from ctxview.textfmt import json_text, one_line, visible


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a port number, got {text!r}") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {value}")
    return value


def add_parsers(sub: Any) -> None:
    px = sub.add_parser(
        "proxy",
        help="record an agent's Messages API requests through a local proxy",
        description="A local recording proxy for the Anthropic Messages API. Point any agent at "
        "it (ANTHROPIC_BASE_URL=http://127.0.0.1:8787) and watch every request's window, "
        "protocol verdict and cache usage.",
    )
    px.add_argument("--port", type=_port, default=8787, help="port to listen on (default 8787)")
    px.add_argument(
        "--upstream",
        metavar="URL",
        help="where requests go (default: $ANTHROPIC_BASE_URL, else https://api.anthropic.com)",
    )
    px.add_argument(
        "--record",
        metavar="FILE",
        help="save every request to FILE (a ctxview session), atomically after each",
    )
    px.add_argument("--no-tui", action="store_true", help="print one line per request instead")
    px.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; anything else is reachable from elsewhere)",
    )
    ss = sub.add_parser("sessions", help="list Claude Code sessions, newest first")
    ss.add_argument("--json", action="store_true", help="print one JSON array")
    ss.add_argument(
        "--limit",
        type=positive_int,
        default=None,
        metavar="N",
        help="show only the newest N, N >= 1 (default all)",
    )


def _err(msg: str) -> None:
    """As :func:`ctxview.cli.common.err`, the text kept whole: an upstream URL or a listen
    error is printed as given, never cut at a length."""
    print(f"ctxview: {visible(msg)}", file=sys.stderr)


def cmd_proxy(args: argparse.Namespace) -> int:
    from ctxview.live.proxy import DEFAULT_UPSTREAM, check_upstream

    upstream = args.upstream or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_UPSTREAM
    problem = check_upstream(upstream, args.host, args.port)
    if problem:
        _err(problem)
        return EXIT_UNREADABLE
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"ctxview: warning: --host {visible(args.host)}: the proxy is reachable from other "
            "machines, and it forwards their requests with whatever key they send",
            file=sys.stderr,
        )
    if args.no_tui:
        import asyncio  # here, not at the top: `sessions` and the parser do not need it

        try:
            return asyncio.run(_run_headless(args, upstream))
        except KeyboardInterrupt:
            return EXIT_OK
    from ctxview.app.proxy import ProxyApp

    app = ProxyApp(host=args.host, port=args.port, upstream=upstream, record=args.record)
    rc = app.run()
    if app.start_error:
        _err(app.start_error)
        return EXIT_UNREADABLE
    return int(rc or 0)


async def _run_headless(args: argparse.Namespace, upstream: str) -> int:
    import asyncio

    from ctxview.live.proxy import Proxy
    from ctxview.live.recording import summarise, summary_line

    def show(rec: Any) -> None:
        print(one_line(summary_line(summarise(rec)), 400), flush=True)

    proxy = Proxy(upstream, record_path=args.record, on_record=show)
    try:
        host, port = await proxy.start(args.host, args.port)
    except OSError as exc:
        _err(f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc})")
        await proxy.close()
        return EXIT_UNREADABLE
    print(
        f"ctxview proxy on http://{host}:{port} -> {visible(upstream)}"
        + (f", recording to {visible(args.record)}" if args.record else "")
        + f"\npoint your agent at it: ANTHROPIC_BASE_URL=http://{host}:{port}",
        flush=True,
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await proxy.close()
    if proxy.save_error:
        _err(proxy.save_error)
        return EXIT_UNREADABLE
    return EXIT_OK


def cmd_sessions(args: argparse.Namespace) -> int:
    from ctxview.live.sessions_list import format_table, list_sessions, projects_roots

    roots = projects_roots()
    infos = list_sessions(roots)
    if args.limit is not None:
        infos = infos[: args.limit]
    if args.json:
        sys.stdout.write(json_text([i.to_dict() for i in infos]) + "\n")
        return EXIT_OK
    if not infos:
        where = ", ".join(str(r) for r in roots) or "~/.claude/projects"
        print(f"no Claude Code sessions under {visible(where)}")
        return EXIT_OK
    sys.stdout.write(format_table(infos))
    return EXIT_OK
