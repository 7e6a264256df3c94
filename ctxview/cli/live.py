"""``ctxview proxy`` and ``ctxview sessions``: the live sources on the command line (following a
transcript is the TUI's ``--follow``)."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from typing import Any

from ctxview.cli.common import (
    EXIT_OK,
    EXIT_UNREADABLE,
    add_redact_args,
    err,
    port_number,
    positive_int,
    redaction_said,
)
from ctxview.textfmt import json_text, one_line, shell_word, visible


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not 0 < value <= 86400:
        raise argparse.ArgumentTypeError(f"expected seconds in (0, 86400], got {text}")
    return value


def add_parsers(sub: Any) -> None:
    px = sub.add_parser(
        "proxy",
        help="record an agent's API requests (Anthropic, OpenAI, Gemini) through a local proxy",
        description="A local recording proxy for the Anthropic Messages API, OpenAI's Chat "
        "Completions and Responses APIs and Gemini's generateContent. Point any agent at it "
        "(ANTHROPIC_BASE_URL=http://127.0.0.1:8787, OPENAI_BASE_URL=http://127.0.0.1:8787/v1, "
        "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:8787) and watch every request's window, "
        "protocol verdict and cache usage. Each provider's requests go to its own upstream.",
    )
    px.add_argument(
        "--port", type=port_number, default=8787, help="port to listen on (default 8787)"
    )
    px.add_argument(
        "--upstream",
        metavar="URL",
        help="where Anthropic requests go (default: $CTXVIEW_ANTHROPIC_UPSTREAM, else "
        "$ANTHROPIC_BASE_URL, else https://api.anthropic.com)",
    )
    px.add_argument(
        "--openai-upstream",
        metavar="URL",
        help="where OpenAI requests go (/v1/chat/completions, /v1/responses; default: "
        "$CTXVIEW_OPENAI_UPSTREAM, else $OPENAI_BASE_URL, else https://api.openai.com; a "
        "trailing /v1 is dropped: requests carry it)",
    )
    px.add_argument(
        "--gemini-upstream",
        metavar="URL",
        help="where Gemini requests go (…:generateContent, …:streamGenerateContent; default: "
        "$CTXVIEW_GEMINI_UPSTREAM, else $GOOGLE_GEMINI_BASE_URL, else "
        "https://generativelanguage.googleapis.com)",
    )
    px.add_argument(
        "--record",
        metavar="FILE",
        help="append every request to FILE (a log of requests, JSON Lines; see "
        "docs/proxy-recording.md) as it ends; a crash loses only the requests in flight. "
        "FILE is new or an earlier recording; its folder must exist",
    )
    add_redact_args(
        px,
        True,
        "replace secrets (API keys, tokens, private keys, passwords) in what is recorded by "
        "[REDACTED:kind] (on by default; --no-redact keeps them; see docs/redaction.md)",
    )
    px.add_argument(
        "--upstream-timeout",
        type=_seconds,
        default=None,
        metavar="S",
        help="longest silence from the upstream before a request is cut (default 600 s)",
    )
    px.add_argument("--no-tui", action="store_true", help="print one line per request instead")
    px.add_argument(
        "--host",
        default="127.0.0.1",
        help="address to bind (default 127.0.0.1; an address that is not loopback is reachable "
        "from other machines)",
    )
    ss = sub.add_parser(
        "sessions", help="list Claude Code, Codex and Gemini CLI sessions, newest first"
    )
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
    from ctxview.live.proxy import (
        UPSTREAM_TIMEOUT,
        check_upstream,
        is_loopback,
    )
    from ctxview.live.recording import check_record_path

    upstreams = upstreams_of(args)
    if args.upstream_timeout is None:
        args.upstream_timeout = UPSTREAM_TIMEOUT
    if not args.host.strip():
        _err("--host: expected an address to bind (default 127.0.0.1), got an empty one")
        return EXIT_UNREADABLE
    problem = next(
        (
            p
            for provider, url in upstreams.items()
            if (p := check_upstream(url, args.host, args.port, provider)) is not None
        ),
        None,
    )
    if problem is None and args.record:
        problem = check_record_path(args.record)
    if problem:
        _err(problem)
        return EXIT_UNREADABLE
    if not is_loopback(args.host):
        print(
            f"ctxview: warning: --host {visible(args.host)}: the proxy is reachable from other "
            "machines, and it forwards their requests with whatever key they send",
            file=sys.stderr,
        )
    from ctxview.app.launch import has_terminal

    if not args.no_tui and not has_terminal():
        # (`ctxview proxy > log &`): the TUI would write its escape sequences into the log
        print("ctxview: proxy: no terminal: running without the TUI (--no-tui)", file=sys.stderr)
        args.no_tui = True
    if args.no_tui:
        import asyncio  # here, not at the top: `sessions` and the parser do not need it

        try:
            return asyncio.run(_run_headless(args, upstreams))
        except KeyboardInterrupt:
            return EXIT_OK
    from ctxview.app.proxy import ProxyApp

    app = ProxyApp(
        host=args.host,
        port=args.port,
        upstream=upstreams["anthropic"],
        openai_upstream=upstreams["openai"],
        gemini_upstream=upstreams["gemini"],
        record=args.record,
        upstream_timeout=args.upstream_timeout,
    )
    app.redact_secrets = args.redact
    rc = app.run()
    if args.record and args.redact and app.redactions is not None:
        redaction_said(app.redactions)
    if app.start_error:
        _err(app.start_error)
        return EXIT_UNREADABLE
    # a signal's exit status (143, 129) is the app's return code, not its result
    return int(app.return_code or rc or 0)


def upstreams_of(args: argparse.Namespace) -> dict[str, str]:
    """Each provider's upstream: its flag, else its variable(s), else the provider's API."""
    from ctxview.live.proxy import DEFAULT_UPSTREAMS

    env = os.environ.get
    return {
        "anthropic": args.upstream
        or env("CTXVIEW_ANTHROPIC_UPSTREAM")
        or env("ANTHROPIC_BASE_URL")
        or DEFAULT_UPSTREAMS["anthropic"],
        "openai": args.openai_upstream
        or env("CTXVIEW_OPENAI_UPSTREAM")
        or env("OPENAI_BASE_URL")
        or DEFAULT_UPSTREAMS["openai"],
        "gemini": args.gemini_upstream
        or env("CTXVIEW_GEMINI_UPSTREAM")
        or env("GOOGLE_GEMINI_BASE_URL")
        or DEFAULT_UPSTREAMS["gemini"],
    }


async def _run_headless(args: argparse.Namespace, upstreams: dict[str, str]) -> int:
    import asyncio

    from ctxview.live.proxy import Proxy
    from ctxview.live.recording import summarise, summary_line

    def show(rec: Any) -> None:
        print(one_line(summary_line(summarise(rec)), 400), flush=True)

    proxy = Proxy(
        upstreams["anthropic"],
        openai_upstream=upstreams["openai"],
        gemini_upstream=upstreams["gemini"],
        record_path=args.record,
        on_record=show,
        upstream_timeout=args.upstream_timeout,
        recent=0,
    )
    proxy.log.redact_secrets = args.redact
    # the handlers before the banner: a script that waits for the banner and then sends ctrl+c
    # (or SIGTERM) must stop the proxy, also when it started with SIGINT ignored (`proxy &` in
    # a script: the shell ignores SIGINT for it, and Python leaves it ignored)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        host, port = await proxy.start(args.host, args.port)
    except OSError as exc:
        _err(start_error(args, exc))
        await proxy.close()
        return EXIT_UNREADABLE
    url = url_of(host, port)
    print(
        f"ctxview proxy on {url} -> {visible(proxy.upstream)}"
        + (f", recording to {visible(args.record)}" if args.record else "")
        + f"\nOpenAI -> {visible(proxy.upstreams['openai'].url)}, "
        f"Gemini -> {visible(proxy.upstreams['gemini'].url)}"
        + f"\npoint your agent at it: ANTHROPIC_BASE_URL={url}"
        f"\n  OpenAI, Codex: OPENAI_BASE_URL={url}/v1 · Gemini: GOOGLE_GEMINI_BASE_URL={url}",
        flush=True,
    )
    try:
        await stop.wait()
    finally:
        await proxy.close()
    if args.record and args.redact:
        redaction_said(proxy.log.redactions)
    if proxy.save_error:
        _err(proxy.save_error)
        return EXIT_UNREADABLE
    return EXIT_OK


def url_of(host: str, port: int) -> str:
    """``http://HOST:PORT``, an IPv6 address in brackets."""
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def start_error(args: argparse.Namespace, exc: OSError) -> str:
    """Why the proxy could not start: its recording could not be opened, or its port."""
    if exc.filename is not None:
        return f"--record {exc.filename}: {exc.strerror or exc}"
    return f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc})"


#: the files without a session (empty, binary) named on stderr; the rest are counted
UNREADABLE_SHOWN = 10


def cmd_sessions(args: argparse.Namespace) -> int:
    from ctxview.live.sessions_all import list_all, session_roots
    from ctxview.live.sessions_list import format_table

    roots = session_roots()
    unreadable: dict[str, str] = {}
    infos = list_all(roots, unreadable=unreadable)
    if args.limit is not None:
        infos = infos[: args.limit]
    if args.json:
        sys.stdout.write(json_text([i.to_dict() for i in infos]) + "\n")
    elif not infos:
        # every agent's folder, found or not: the command lists Codex and Gemini CLI sessions
        # too, and a user whose sessions are elsewhere learns where it looked
        print(f"no agent sessions found ({visible(roots.describe())})")
    else:
        sys.stdout.write(format_table(infos))
    sys.stdout.flush()
    # on stderr, after the list: stdout stays the list (and valid JSON)
    for path, why in sorted(unreadable.items())[:UNREADABLE_SHOWN]:
        err(f"skipped {shell_word(path)}: {why}: no session in it")
    if len(unreadable) > UNREADABLE_SHOWN:
        err(f"and {len(unreadable) - UNREADABLE_SHOWN} more files without a session skipped")
    return EXIT_OK
