"""``ctxview requests`` and ``ctxview compare``: the request model on the command line.

Headless (no Textual, no SDK). JSON contracts:

* ``requests --json``: ``{"file", "format", "strategy", "max_context_messages", "model",
  "requests": [...], "totals": {...}, "notes": [...]}`` (``max_context_messages`` is null when
  the file is simulated as it was sent);
* ``compare --json``: ``{"file", "max_context_messages", "strategies": [...]}``.

Exit codes as ``inspect``: 0 ok, 1 the API would reject a request (``requests``: the last
request; ``compare``: any request under any strategy), 2 the file cannot be read.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ctxview.cli.common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_UNREADABLE,
    add_window_args,
    err,
    formats,
    load_file,
    positive_int,
    retain,
    unreadable,
    without_gc,
)
from ctxview.core.strategies import STRATEGIES
from ctxview.textfmt import (
    counted,
    escape_controls,
    fmt_tokens,
    fmt_total_usd,
    fmt_usd,
    json_text,
    one_line,
    visible,
)


def add_parsers(sub: Any) -> None:
    """Add the ``requests`` and ``compare`` subcommands to ``sub`` (argparse subparsers)."""
    req = sub.add_parser(
        "requests",
        help="every API request of a session: window, tokens, predicted cache, breaks, cost",
    )
    req.add_argument("file")
    add_window_args(req, "force the file format")
    req.add_argument("--json", action="store_true", help="print exactly one JSON object")
    _cache_arg(req)
    cmp_ = sub.add_parser(
        "compare", help="replay a session's requests under each strategy, one row per strategy"
    )
    cmp_.add_argument("file")
    cmp_.add_argument("--max", type=positive_int, metavar="N", help="max context messages")
    cmp_.add_argument(
        "--strategies",
        metavar="A,B,…",
        help=f"comma-separated strategies (default: all: {', '.join(STRATEGIES)})",
    )
    cmp_.add_argument("--format", choices=formats(), help="force the file format")
    cmp_.add_argument("--json", action="store_true", help="print exactly one JSON object")
    _cache_arg(cmp_)


def _cache_arg(parser: Any) -> None:
    parser.add_argument(
        "--cache",
        choices=("automatic", "none"),
        help="price the requests as cached up to their end (automatic) or not at all, in place "
        "of what the file asks for (a bare message list or request body without "
        "cache_control caches nothing)",
    )


def _load(args: argparse.Namespace) -> tuple[Any, Any, Any] | int:
    """(session, config, price table) or an exit code after printing why (``inspect``'s
    reading step, the request model needs no replay)."""
    from ctxview.config import price_overrides
    from ctxview.core.providers.registry import price_table

    session, cfg = load_file(args)
    if isinstance(session, int):
        return session
    return session, cfg, price_table(price_overrides(cfg))


def requests_report(
    log: Any,
    session: Any,
    *,
    config_used: dict[str, Any] | None = None,
    agents: Sequence[Any] = (),
) -> dict[str, Any]:
    """The ``requests --json`` object (``config_used``: the config values used, when given;
    ``agents``: the sub-agents' logs (``sessions.subagents.AgentLog``), whose requests follow the
    main session's, each with its ``agent``, and count in ``totals``)."""
    report = {
        "file": session.path,
        "format": session.format,
        "provider": session.provider,
        **session.route_fields(),
        "strategy": log.strategy,
        "max_context_messages": log.max_context_messages,
        "model": log.model,
        "cache_assumption": log.cache_assumption(),
        "requests": [
            {**r.to_dict(), "agent": name}
            for name, reqs in _agent_requests(log, agents)
            for r in reqs
        ],
        "totals": _totals(log, agents),
        "agents": _agents(log, agents),
        "notes": log.notes,
        "skipped": session.skipped(),
    }
    if config_used is not None:
        report["config_used"] = config_used
    return report


def _agent_requests(log: Any, agents: Sequence[Any]) -> list[tuple[str, list[Any]]]:
    return [("main", log.in_order())] + [
        (al.agent.agent_id, al.log.in_order()) for al in agents if al.log is not None
    ]


def _totals(log: Any, agents: Sequence[Any]) -> dict[str, Any]:
    from ctxview.sessions.subagents import totals_with_agents

    return totals_with_agents(log, list(agents))


def _agents(log: Any, agents: Sequence[Any]) -> list[dict[str, Any]]:
    main = {"agent": "main", "requests": len(log.in_order()), "totals": log.totals()}
    return [main, *(al.describe() for al in agents)]


#: the keys of ``Request.to_dict()`` that :func:`requests_json` writes itself, in order
_REQUEST_KEYS = (
    "index",
    "message_ids",
    "window_size",
    "input_tokens",
    "cache_read",
    "cache_write",
    "uncached",
    "cache_break",
    "recorded",
    "timestamp",
    "cost_usd",
    "model",
    "response_id",
    "redundancy",
    "off_branch",
    "recorded_break",
    "kind",
)


def _plain(r: Any) -> bool:
    """Does this request hold what :func:`requests_json` writes: these keys, ints as counts?"""
    if tuple(r.to_dict()) != _REQUEST_KEYS:
        return False
    ints = [r.index, r.window_size, r.input_tokens, r.cache_read, r.cache_write, r.uncached]
    ints.extend(r.message_ids)
    if r.cache_break is not None:
        ints.append(r.cache_break.position)
    if r.redundancy is not None:
        ints += [r.redundancy.items, r.redundancy.tokens]
    if r.response_id is not None:
        ints.append(r.response_id)
    return (
        all(type(v) is int for v in ints)
        and type(r.message_ids) is list
        and type(r.off_branch) is bool
    )


_NOT_FINITE = frozenset({"inf", "-inf", "nan"})


def money_text(v: float) -> str:
    """``repr(round(v, 6))`` for ``1e-4 <= v < 1e9``, in one conversion instead of three:
    ``round`` and ``%.6f`` round the same exact binary value to the same 6 decimals, and with at
    most 15 significant digits that decimal, without its trailing zeros, is the shortest text
    that reads back as the rounded float (``repr``'s choice); outside that range ``repr`` may
    switch to an exponent or need fewer digits. Held to ``repr(round(v, 6))`` by a test."""
    text = f"{v:.6f}".rstrip("0")
    return text + "0" if text[-1] == "." else text


def requests_json(
    log: Any,
    session: Any,
    *,
    config_used: dict[str, Any] | None = None,
    agents: Sequence[Any] = (),
) -> str:
    """``json_text(requests_report(log, session))``, the same text, without building a dict per
    request: each request is one f-string (50,000 requests: a tenth of the time of
    ``to_dict`` + ``json.dumps``). Falls back to the dicts when ``Request.to_dict`` holds other
    keys than these, or a count is not an int. ``tests/unit/core/test_request_window_sources.py`` holds the two against each other."""
    return "".join(requests_json_parts(log, session, config_used=config_used, agents=agents))


#: requests joined per piece of :func:`requests_json_parts`
_PIECE = 1024


def requests_json_parts(
    log: Any,
    session: Any,
    *,
    config_used: dict[str, Any] | None = None,
    agents: Sequence[Any] = (),
) -> list[str]:
    """:func:`requests_json`'s text in pieces of :data:`_PIECE` requests, to be written one after
    the other: 50,000 requests are not held as 50,000 strings, then 20 MB joined, then 20 MB
    encoded at once (each a fresh allocation the process pays page faults for). Everything is
    formatted before anything is written: an error leaves no half object on stdout."""
    import json
    from json.encoder import encode_basestring

    reqs = log.requests
    if reqs and not all(_plain(r) for r in (reqs[0], reqs[-1])):
        return [json_text(requests_report(log, session, config_used=config_used, agents=agents))]
    enc = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode
    # the pieces that repeat (break reasons and positions, models) are formatted once
    breaks: dict[int, str] = {}
    held: list[Any] = []
    models: dict[Any, str] = {None: "null"}

    def money(v: float | None) -> str:
        if v is None:
            return "null"
        if 1e-4 <= v < 1e9:
            return money_text(v)
        text = repr(round(v, 6))
        if text in _NOT_FINITE:
            return enc(v)  # raises, as json.dumps(allow_nan=False) does
        return text

    head = enc(
        {
            "file": session.path,
            "format": session.format,
            "provider": session.provider,
            **session.route_fields(),
            "strategy": log.strategy,
            "max_context_messages": log.max_context_messages,
            "model": log.model,
            "cache_assumption": log.cache_assumption(),
        }
    )
    # escaping is character by character: the pieces escaped apart are the whole escaped
    parts = [escape_controls(f'{head[:-1]}, "requests": [')]
    rows: list[str] = []
    append = rows.append

    def flush() -> None:
        """The rows so far as one piece (after a comma when a piece of rows came before)."""
        parts.append(escape_controls(("" if len(parts) == 1 else ", ") + ", ".join(rows)))
        rows.clear()

    for agent, r in (
        (encode_basestring(name), r) for name, rs in _agent_requests(log, agents) for r in rs
    ):
        # the counts are ints by construction (simulate): formatted as they are, as json does
        b = r.cache_break
        bs = breaks.get(id(b))  # by identity: the replays share one object per break
        if bs is None:
            bs = breaks[id(b)] = (
                "null"
                if b is None
                else f'{{"reason": {encode_basestring(b.reason)}, "position": {b.position}, '
                f'"api_reason": {enc(b.api_reason)}}}'
            )
            held.append(b)  # its id stays its own while the text is looked up by it
        m = r.model
        ms = models.get(m)
        if ms is None:
            ms = models[m] = encode_basestring(m) if type(m) is str else enc(m)
        ts = r.timestamp
        rec = r.recorded
        rid = r.response_id
        red = r.redundancy
        c = r.cost_usd
        cs = money(c)
        if red is None:
            rs = "null"
        else:
            rc = red.cost_usd
            rcs = money(rc)
            rs = f'{{"items": {red.items}, "tokens": {red.tokens}, "cost_usd": {rcs}}}'
        ids = r.message_ids
        # the usual one or two new messages without list.__repr__ (its recursion guard costs
        # more than the two numbers): the same text, as the ids are ints
        n_ids = len(ids)
        ids_s = f"[{ids[0]}, {ids[1]}]" if n_ids == 2 else f"[{ids[0]}]" if n_ids == 1 else ids
        append(
            f'{{"index": {r.index}, "message_ids": {ids_s}, '
            f'"window_size": {r.window_size}, "input_tokens": {r.input_tokens}, '
            f'"cache_read": {r.cache_read}, "cache_write": {r.cache_write}, '
            f'"uncached": {r.uncached}, "cache_break": {bs}, '
            f'"recorded": {"null" if rec is None else enc(rec)}, '
            f'"timestamp": {"null" if ts is None else encode_basestring(ts) if type(ts) is str else enc(ts)}, '
            f'"cost_usd": {cs}, '
            f'"model": {ms}, "response_id": {"null" if rid is None else rid}, '
            f'"redundancy": {rs}, '
            f'"off_branch": {"true" if r.off_branch is True else "false"}, '
            f'"recorded_break": {"null" if (rm := r.recorded_miss) is None else enc(rm.to_dict())}, '
            f'"kind": {encode_basestring(r.kind)}, "agent": {agent}}}'
        )
        if len(rows) == _PIECE:
            flush()
    if rows:
        flush()
    used = "" if config_used is None else f', "config_used": {enc(config_used)}'
    parts.append(
        escape_controls(
            f'], "totals": {enc(_totals(log, agents))}, '
            f'"agents": {enc(_agents(log, agents))}, "notes": {enc(log.notes)}, '
            f'"skipped": {enc(session.skipped())}{used}}}'
        )
    )
    return parts


@without_gc
def cmd_requests(args: argparse.Namespace) -> int:
    from ctxview.core.limits import context_problem
    from ctxview.core.protocol import check_protocol
    from ctxview.core.requests.points import session_rules
    from ctxview.sessions.request_model import session_requests

    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    session, cfg, prices = loaded
    try:
        log, agents = session_requests(
            session,
            max_context_messages=args.max,
            strategy=args.strategy,
            defaults=cfg.as_defaults(),
            prices=prices,
            cache=args.cache,
        )
    except ValueError as exc:
        return unreadable(args, f"{args.file}: {exc}")
    retain(log, agents)
    # exit 1 as inspect: the last request (the window the session would send) is rejected, by
    # a protocol error or by a prompt over the model's context (inspect's and compare's rule)
    rejected = False
    if log.requests:
        last = log.requests[-1]
        ids = _window_ids(log, last, session)
        window = [session.messages[i] for i in ids]
        rules = session_rules(session)
        rejected = any(
            p.severity == "error" for p in check_protocol(window, session.system, rules)
        ) or (
            context_problem(
                last.input_tokens, last.model or session.model, provider=session.provider
            )
            is not None
        )
    if args.json:
        out = sys.stdout
        if session.format == "proxy":
            report = {
                **requests_report(log, session, config_used=args.config_used, agents=agents),
                **recorded_report(session),
            }
            out.write(json_text(report))
        else:
            for part in requests_json_parts(
                log, session, config_used=args.config_used, agents=agents
            ):
                out.write(part)
        out.write("\n")
    else:
        _print_requests(requests_report(log, session, agents=agents), log, rejected)
        if session.format == "proxy":
            _print_recorded(session)
    return EXIT_PROBLEMS if rejected else EXIT_OK


def _recorded_summaries(session: Any) -> list[Any]:
    from ctxview.sessions.proxylog import RequestRecord, summarise

    out = []
    for i, d in enumerate(session.exchanges):
        rec = RequestRecord.from_dict(d, f"exchanges[{i}]")
        rec.conversation = session.conversation
        out.append(summarise(rec))
    return out


def recorded_report(session: Any) -> dict[str, Any]:
    """A proxy recording's own figures for ``requests --json``: every request of the shown
    conversation as recorded (``exchanges``: errors, cut streams, count_tokens calls) and the
    conversations the file holds."""
    import dataclasses

    return {
        "conversation": session.conversation,
        "conversations": session.conversations,
        "exchanges": [dataclasses.asdict(s) for s in _recorded_summaries(session)],
    }


def _print_recorded(session: Any) -> None:
    from ctxview.sessions.proxylog import recorded_counts, summary_line

    out = sys.stdout
    summaries = _recorded_summaries(session)
    out.write(
        f"\nrecorded in conversation #{session.conversation}: "
        f"{recorded_counts(session.exchanges)}, as the proxy saw them:\n"
    )
    for s in summaries:
        out.write("  " + one_line(summary_line(s), 400) + "\n")
    if len(session.conversations) > 1:
        out.write("\nconversations in this recording (open one as FILE#N):\n")
        for c in session.conversations:
            mark = "*" if c["conversation"] == session.conversation else " "
            reqs, msgs = c["requests"], c["messages"]
            out.write(
                f" {mark}#{c['conversation']:<3} {reqs} request{'s' if reqs != 1 else ''} · "
                f"{msgs} message{'s' if msgs != 1 else ''} · "
                f"{one_line(repr(c['first_prompt']), 80)}\n"
            )


def _window_ids(log: Any, req: Any, session: Any) -> list[int]:
    """The transcript ids of a request's window (replayed again for that one request)."""
    from ctxview.core.requests import window_of

    return list(window_of(session, log, req.index))


def _money(v: float | None) -> str:
    return fmt_usd(v)


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def _print_requests(report: dict[str, Any], log: Any, rejected: bool) -> None:
    out = sys.stdout
    from ctxview.core.clearing import STRATEGY_EDITS

    mode = (
        "as sent (no ctxview truncation)"
        if log.as_sent
        # context editing evicts nothing: max does not apply (the TUI's label says the same)
        else f"simulated: {log.strategy}"
        if log.strategy in STRATEGY_EDITS
        else f"simulated: {log.strategy}, max {log.max_context_messages}"
    )
    route = report.get("route")
    sent = f" · sent by {route['text']}" if route else ""
    out.write(
        f"ctxview requests · {visible(report['file'])} · {report['format']} · {mode} · "
        f"model {one_line(str(report['model']), 60)}{sent}\n"
    )
    head = (
        f"{'#':>5} {'time':8} {'window':>6} {'input':>7} {'read':>7} {'write':>7} "
        f"{'uncached':>8} {'recorded in/read/write':>24} {'break':<16} {'cost':>9}  redundant\n"
    )
    out.write(head)
    for r in log.in_order():
        ts = (r.timestamp or "")[11:19]
        rec = (
            f"{fmt_tokens(r.recorded['input_tokens'])}/"
            f"{fmt_tokens(r.recorded['cache_read_input_tokens'])}/"
            f"{fmt_tokens(r.recorded['cache_creation_input_tokens'])}"
            if r.recorded
            else "—"
        )
        brk = f"{r.cache_break.reason}@{r.cache_break.position}" if r.cache_break else ""
        said = r.recorded_label(log.as_sent)  # (a documented reason or ctxview's name)
        if said is not None:
            brk = f"{brk} {said}".lstrip()
        red = (
            f"{r.redundancy.items}× {fmt_tokens(r.redundancy.tokens)}"
            f" {_money(r.redundancy.cost_usd)}"
            if r.redundancy
            else ""
        )
        if r.off_branch:
            red = f"{red} off-branch".lstrip()
        if r.kind != "turn":
            red = f"{red} {r.kind} request".lstrip()
        out.write(
            f"{r.index:>5} {visible(ts):8} {r.window_size:>6} {fmt_tokens(r.input_tokens):>7} "
            f"{fmt_tokens(r.cache_read):>7} {fmt_tokens(r.cache_write):>7} "
            f"{fmt_tokens(r.uncached):>8} {rec:>24} {brk:<16} {_money(r.cost_usd):>9}  {red}\n"
        )
    for a in report["agents"][1:]:
        at = a["totals"]
        called = f", started by #{a['message_id']}" if a["message_id"] is not None else ""
        what = visible(one_line(a["description"] or a["agent_type"] or a["kind"], 60))
        out.write(
            f"\nsub-agent {visible(a['agent'])} ({what}{called}): "
            + (
                f"{at['requests']:,} request{'s' if at['requests'] != 1 else ''} · "
                f"input {fmt_tokens(at['input_tokens'])} · "
                f"hit rate {_pct(at['hit_rate'])} · cost {_money(at['cost_usd'])}"
                if at is not None
                else f"not read: {visible(a['error'] or '')}"
            )
        )
    if len(report["agents"]) > 1:
        out.write("\n(the totals below include the sub-agents)\n")
    t = report["totals"]
    out.write(
        f"\ntotal: {counted(t['requests'], 'request')} · input {fmt_tokens(t['input_tokens'])} · "
        f"read {fmt_tokens(t['cache_read'])} · write {fmt_tokens(t['cache_write'])} · "
        f"hit rate {_pct(t['hit_rate'])} (recorded {_pct(t['recorded_hit_rate'])}) · "
        f"cost {fmt_total_usd(t)}\n"
    )
    if t.get("token_error"):
        te = t["token_error"]
        out.write(
            f"token estimate vs recorded: median error {_pct(te['median'])}, "
            f"p90 {_pct(te['p90'])}\n"
        )
    if t["redundant_tokens"]:
        out.write(
            f"redundant content: {fmt_tokens(t['redundant_tokens'])} tokens over all requests "
            f"· {_money(t['redundant_cost_usd'])}\n"
        )
    breaks: dict[str, int] = {}
    for r in log.requests:
        if r.cache_break:
            breaks[r.cache_break.reason] = breaks.get(r.cache_break.reason, 0) + 1
    if breaks:
        out.write("cache breaks: " + ", ".join(f"{k} {v}" for k, v in breaks.items()) + "\n")
    if rejected:
        out.write("✗ the API would reject the last request (see `ctxview inspect`)\n")
    for n in report["notes"]:
        out.write(f"note: {visible(n)}\n")


@without_gc
def cmd_compare(args: argparse.Namespace) -> int:
    loaded = _load(args)
    if isinstance(loaded, int):
        return loaded
    session, cfg, prices = loaded
    names = list(STRATEGIES)
    if args.strategies:
        names = [s.strip() for s in args.strategies.split(",") if s.strip()]
        unknown = [s for s in names if s not in STRATEGIES]
        if unknown or not names:
            err(
                f"--strategies: unknown strategy {one_line(', '.join(unknown), 80)!r} "
                f"(known: {', '.join(STRATEGIES)})"
                if unknown
                else "--strategies: no strategy named"
            )
            return EXIT_UNREADABLE
    try:
        report = compare_report(session, cfg, prices, names, max_=args.max, cache=args.cache)
    except ValueError as exc:
        return unreadable(args, f"{args.file}: {exc}")
    rows = report["strategies"]
    if args.json:
        report["skipped"] = args.skipped
        report["config_used"] = args.config_used
        sys.stdout.write(json_text(report) + "\n")
    else:
        _print_compare(report)
    return EXIT_PROBLEMS if any(r["rejected_requests"] for r in rows) else EXIT_OK


def compare_report(
    session: Any,
    cfg: Any,
    prices: Any,
    names: Sequence[str],
    *,
    max_: int | None = None,
    cache: str | None = None,
) -> dict[str, Any]:
    """``compare --json``'s object without its ``skipped`` and ``config_used``: the requests
    under each strategy of ``names`` at ``max_`` (else the file's, else the config's max).
    ValueError when the session cannot be replayed."""
    from ctxview.core.requests import compare
    from ctxview.sessions.request_model import compare_max

    defaults = cfg.as_defaults()
    max_ = compare_max(session, defaults, max_)
    rows = compare(
        session,
        list(names),
        max_context_messages=max_,
        defaults=defaults,
        prices=prices,
        cache=cache,
    )
    return {
        "file": session.path,
        "provider": session.provider,
        "max_context_messages": max_,
        "strategies": rows,
    }


def _print_compare(report: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    console = Console(highlight=False)
    console.print(
        Text(
            f"ctxview compare · {visible(report['file'])} · max "
            f"{report['max_context_messages']} · "
            + counted(report["strategies"][0]["requests"] if report["strategies"] else 0, "request")
        )
    )
    rows: list[list[Text]] = []
    for r in report["strategies"]:
        rows.append(
            [
                Text(r["name"]),
                Text(
                    str(r["rejected_requests"]), style="bold red" if r["rejected_requests"] else ""
                ),
                Text("—" if r["first_rejected"] is None else f"#{r['first_rejected']}"),
                Text(str(r["newest_dropped"])),
                Text(f"{r['mean_window']:.1f}"),
                Text(fmt_tokens(r["input_tokens"])),
                Text(fmt_tokens(r["cache_read"])),
                Text(fmt_tokens(r["cache_write"])),
                Text(_pct(r["hit_rate"])),
                Text(_money(r["cost_usd"])),
                Text(f"{r['evicted_messages']:,}"),
            ]
        )
    t = Table(box=None, pad_edge=False, padding=(0, 1))
    for k, (col, just) in enumerate(
        (
            ("strategy", "left"),
            ("rej", "right"),
            ("1st", "right"),
            ("new↓", "right"),
            ("win", "right"),
            ("input", "right"),
            ("read", "right"),
            ("write", "right"),
            ("hit", "right"),
            ("cost", "right"),
            ("evict", "right"),
        )
    ):
        # nothing is cut (a narrow terminal, or a pipe's 80 columns): a number with an
        # ellipsis reads as another number
        widest = max([len(col), *(row[k].cell_len for row in rows)])
        t.add_column(col, justify=just, no_wrap=True, min_width=widest)  # type: ignore[arg-type]
    for row in rows:
        t.add_row(*row)
    console.print(t, crop=False)  # wider than the terminal: wrapped by it, never cut
    console.print(
        Text(
            "rej: requests the API would answer with 400 (1st: the first) · new↓: requests "
            "that dropped the message just added · win: mean messages sent · evict: messages "
            "evicted",
            style="dim",
        )
    )
