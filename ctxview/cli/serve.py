"""``ctxview serve [FILE]``: the same app in a browser, through ``textual-serve``.

Each browser tab that connects starts its own ``ctxview [FILE]`` process, driven by Textual's
web driver: every screen and key is the terminal app's. The server listens on the loopback
address unless ``--host`` says otherwise; the app reads and writes files as the user who runs
it (and chats with their API key), so exposing it says so first.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import re
import shlex
import sys
from typing import Any

from ctxview.cli.common import EXIT_OK, EXIT_UNREADABLE, add_window_args, err, fixed_port
from ctxview.textfmt import one_line, visible

LOOPBACK = "127.0.0.1"


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "serve", help="the app in a browser (textual-serve), on the loopback address by default"
    )
    p.add_argument(
        "file",
        nargs="?",
        help="a session, request body or Claude Code transcript (default: a new chat)",
    )
    add_window_args(p)
    p.add_argument("--port", type=fixed_port, default=8000, help="the port (default 8000)")
    p.add_argument(
        "--host",
        default=LOOPBACK,
        help=f"the address to listen on (default {LOOPBACK}; another one lets other machines "
        "use the app as you: a warning says so)",
    )
    p.add_argument(
        "--public-url",
        metavar="URL",
        help="the address browsers reach the server by, when it is not http://HOST:PORT "
        "(behind a reverse proxy, or --host 0.0.0.0)",
    )


def is_loopback(host: str) -> bool:
    """Does ``host`` name this machine alone (``localhost``, 127.0.0.0/8, ``::1``)?"""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False  # a host name: it may resolve to any interface


def app_command(args: argparse.Namespace) -> str:
    """The shell command each browser connection runs: this interpreter's ctxview on the same
    file and settings. The file is made absolute (a name starting with ``-``, or one that is a
    subcommand's, stays a file) and every part is quoted for the shell textual-serve starts it
    with."""
    argv = [sys.executable, "-m", "ctxview"]
    if args.file is not None:
        argv.append(os.path.abspath(args.file))
    for flag, value in (("--max", args.max), ("--strategy", args.strategy)):
        if value is not None:
            argv += [flag, str(value)]
    if args.format is not None:
        argv += ["--format", args.format]
    return shlex.join(argv)


def cmd_serve(args: argparse.Namespace) -> int:
    if args.file is not None:
        from ctxview.sessions import load_session
        from ctxview.sessions.model import load_error

        # each tab opens the file: one that would not open (missing, a FIFO, empty, not a
        # session) is refused once, here, with why, before anything listens
        try:
            load_session(args.file, args.format)
        except Exception as exc:
            err(load_error(args.file, exc))
            return EXIT_UNREADABLE
    if not is_loopback(args.host):
        err(
            f"serving on {one_line(args.host, 200)}: anyone who can reach port {args.port} there "
            "uses ctxview as you (it opens and saves files, and chats with your API key)"
        )
    host = args.host
    url = args.public_url
    if url is None:
        shown = f"[{host}]" if ":" in host else host
        url = f"http://{shown}:{args.port}"
    title = "ctxview" if args.file is None else f"ctxview · {one_line(os.path.basename(args.file))}"
    server = local_server()(
        app_command(args), host=host, port=args.port, title=title, public_url=url
    )
    try:
        server.serve()
    except OSError as exc:  # the port is taken, the host is not this machine's
        err(f"cannot listen on {one_line(host, 200)}:{args.port} ({exc.strerror or exc})")
        return EXIT_UNREADABLE
    return EXIT_OK


#: textual-serve's page asks Google's font service for its font: every visit would tell a third
#: party; the same font ships with textual-serve and is served from here instead
_FONT_LINK = re.compile(r"<link[^>]*fonts\.googleapis\.com[^>]*>")
_LOCAL_FONT = (
    '<style>@font-face { font-family: "Roboto Mono"; '
    'src: url("static/fonts/RobotoMono-VariableFont_wght.ttf"); }</style>'
)


def local_server() -> Any:
    """textual-serve's Server, its page asking nothing of another host."""
    from aiohttp import web
    from textual_serve.server import Server

    @web.middleware
    async def local_font(request: web.Request, handler: Any) -> web.StreamResponse:
        response: web.StreamResponse = await handler(request)
        if request.path == "/" and isinstance(response, web.Response) and response.text:
            response.text = _FONT_LINK.sub(_LOCAL_FONT, response.text)
        return response

    class LocalServer(Server):
        async def on_startup(self, app: web.Application) -> None:
            # textual-serve's banner parses its command as markup: a file named with `[/x]`
            # stopped the server (MarkupError), `[red]` coloured it; the command and the URL
            # are printed as plain text, made visible
            from textual_serve.server import LOGO

            self.console.print(LOGO, highlight=False)
            self.console.print(
                f"Serving {visible(self.command)} on {visible(self.public_url)}",
                markup=False,
                highlight=False,
            )
            self.console.print("\n[cyan]Press Ctrl+C to quit")

        async def _make_app(self) -> web.Application:
            app = await super()._make_app()
            app.middlewares.append(local_font)
            return app

    return LocalServer
