"""``ctxview report FILE -o report.html``: a session as one self-contained HTML file.

The figures are the other commands': the window and verdict are ``inspect``'s (the session
replayed as it was sent, or under ``--max`` / ``--strategy``), the requests and sub-agents
``requests``', the strategy table ``compare``'s (``--compare``). ``ctxview.html`` draws them.
Secrets are redacted unless ``--no-redact``; the count is said on stderr and in the file.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctxview.cli.common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_UNREADABLE,
    add_window_args,
    err,
    load_replay,
    output_problem,
    unreadable,
    without_gc,
)
from ctxview.textfmt import counted, one_line, visible


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The HTML report's flags (``report``'s parser, shared with the fleet report's)."""
    add_window_args(p)
    p.add_argument(
        "-o", "--output", metavar="OUT", help="the HTML file to write (atomically; required)"
    )
    p.add_argument(
        "--force",
        action="store_true",
        help="write OUT even when it is the input file (replacing it)",
    )
    p.add_argument(
        "--compare", action="store_true", help="add compare's table: every strategy's requests"
    )
    p.add_argument(
        "--no-redact",
        dest="redact",
        action="store_false",
        help="keep secrets as they are (default: API keys, tokens, private keys and passwords "
        "become [REDACTED:kind])",
    )


@without_gc
def cmd_html_report(args: argparse.Namespace) -> int:
    if args.output is None:
        err(f"report {one_line(args.file, 200)}: give the HTML file to write: -o report.html")
        return EXIT_UNREADABLE
    if (problem := output_problem(args, args.file)) is not None:
        return unreadable(args, problem)
    rep, cfg = load_replay(args, as_sent=True)
    if isinstance(rep, int):
        return rep
    from ctxview import __version__
    from ctxview.cli.requests import compare_report, requests_report
    from ctxview.config import price_overrides
    from ctxview.core.providers.registry import price_table
    from ctxview.html import build_report
    from ctxview.sessions.request_model import session_requests
    from ctxview.sessions.store import WriteRefused, atomic_write, check_no_api_key

    defaults = cfg.as_defaults()
    summary = rep.summary(rep.model_name(defaults))
    session = rep.session
    prices = price_table(price_overrides(cfg))  # every provider's, as `requests` prices
    try:
        log, agents = session_requests(
            session,
            max_context_messages=args.max,
            strategy=args.strategy,
            defaults=defaults,
            prices=prices,
        )
        requests = requests_report(log, session, agents=agents)
        compared: dict[str, Any] | None = None
        if args.compare:
            from ctxview.core.strategies import STRATEGIES

            compared = compare_report(session, cfg, prices, list(STRATEGIES), max_=args.max)
    except ValueError as exc:
        return unreadable(args, f"{args.file}: {exc}")
    html, redactions = build_report(
        rep, summary, requests, compared, redact=args.redact, version=__version__
    )
    data = html.encode("utf-8")
    try:
        check_no_api_key(data, "the report")
        atomic_write(args.output, data, make_parents=False)
    except WriteRefused as exc:
        err(f"{args.output}: cannot write ({exc})")
        return EXIT_UNREADABLE
    except ValueError as exc:
        err(f"{args.file}: not written: {exc}")
        return EXIT_UNREADABLE
    said = "not redacted (--no-redact)" if redactions is None else redactions.note()
    size = f"{len(data) / 1e6:.1f} MB" if len(data) >= 1e5 else f"{len(data) / 1e3:.0f} KB"
    print(
        f"wrote {visible(args.output)} ({size}, {counted(len(rep.transcript), 'message')}; {said})",
        file=sys.stderr,
    )
    errors = sum(1 for p in summary["problems"] if p["severity"] == "error")
    return EXIT_PROBLEMS if errors else EXIT_OK
