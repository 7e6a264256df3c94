"""``ctxview export``, ``repair`` and ``diff``: write or compare the request a file stands for."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctxview.cli.common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_UNREADABLE,
    add_output_args,
    add_redact_args,
    add_window_args,
    config_used,
    err,
    formats,
    load_replay,
    output_problem,
    redaction_said,
    say_config_used,
    unreadable,
)
from ctxview.textfmt import json_text, plural, visible


def add_parsers(sub: Any) -> None:
    exp = sub.add_parser("export", help="write the request body ctxview would send next")
    exp.add_argument("file")
    add_window_args(exp)
    exp.add_argument(
        "--model", help="model to put in the request (default: the file's, else the config's)"
    )
    add_output_args(exp, "write here (atomically) instead of stdout")
    exp.add_argument(
        "--context-management",
        action="store_true",
        help="with --strategy clear-tool-uses or clear-thinking: the full messages plus the "
        "context_management block (the API edits them) instead of the edited messages",
    )
    add_redact_args(
        exp,
        False,
        "replace secrets (API keys, tokens, private keys, passwords) in the body by "
        "[REDACTED:kind] and print their count (off by default: the body is meant to be sent "
        "to the API again; see docs/redaction.md)",
    )
    rep = sub.add_parser(
        "repair",
        help="apply the minimal fix of every protocol error and write the repaired file "
        "(exit 1 when a problem has no safe fix)",
    )
    rep.add_argument("file")
    add_window_args(rep)
    add_output_args(rep, "write here (atomically) instead of stdout")
    rep.add_argument("--dry-run", action="store_true", help="list the fixes, write nothing")
    rep.add_argument(
        "--json", action="store_true", help="print the fixes as one JSON object on stdout"
    )
    add_redact_args(
        rep,
        False,
        "replace secrets (API keys, tokens, private keys, passwords) in the written file by "
        "[REDACTED:kind] and print their count (off by default: the file is meant to be sent "
        "to the API again; see docs/redaction.md)",
    )
    dif = sub.add_parser(
        "diff", help="compare two requests (or two sessions' final windows) block by block"
    )
    dif.add_argument("a", metavar="A")
    dif.add_argument("b", metavar="B")
    dif.add_argument("--format", choices=formats(), help="force the files' format")
    dif.add_argument("--json", action="store_true", help="print exactly one JSON object")


def cmd_export(args: argparse.Namespace) -> int:
    if (problem := output_problem(args, args.file)) is not None:
        return unreadable(args, problem)
    rep, cfg = load_replay(args, as_sent=True)
    if isinstance(rep, int):
        return rep
    from ctxview.sessions.store import check_no_api_key, save_request

    if args.context_management and not rep.context.edits_messages:
        err(
            f"{args.file}: --context-management needs a context-editing strategy "
            f"(--strategy clear-tool-uses or clear-thinking; this one is {rep.context.strategy})"
        )
        return EXIT_UNREADABLE
    if rep.session.invalid_fields:
        # the body is rebuilt from these fields: a default in their place would be a silent edit
        for why in rep.session.invalid_fields.values():
            err(f"{args.file}: not exported: {visible(why)}")
        return EXIT_UNREADABLE
    body = rep.request_body(
        cfg.as_defaults(), args.model, context_management=args.context_management
    )
    redactions = None
    if args.redact:
        body, redactions = _redacted(body, args.file)
    try:
        if args.output:
            save_request(args.output, body)
        else:
            text = json_text(body, indent=2) + "\n"
            check_no_api_key(text.encode("utf-8"), "the request body")
            sys.stdout.write(text)
    except OSError as exc:
        err(f"{args.output}: cannot write ({exc.strerror or exc})")
        return EXIT_UNREADABLE
    except ValueError as exc:  # the API key in the body; NaN (never written)
        err(f"{args.file}: not exported: {exc}")
        return EXIT_UNREADABLE
    if args.output:
        n = len(rep.window_messages())  # (an OpenAI body has ``input``, a Gemini one ``contents``)
        print(f"wrote {visible(args.output)} ({plural(n, 'message')})", file=sys.stderr)
    if not body.get("model") and rep.provider == "openai":
        err(f"warning: {visible(args.file)} names no model: the body has none (give --model M)")
    if redactions is not None:
        redaction_said(redactions)
    # the same contract as inspect: a window the API would reject is exit 1 (the body is written)
    errors = [p for p in rep.protocol_problems() if p.severity == "error"]
    if errors:
        n = len(errors)
        err(f"warning: the API would reject this request ({plural(n, 'problem')}):")
        for p in errors:
            err(f"  {visible(p.message)}")
        return EXIT_PROBLEMS
    return EXIT_OK


def cmd_repair(args: argparse.Namespace) -> int:
    from ctxview.core.repair import describe_unfixable
    from ctxview.sessions.repairio import repair_replay
    from ctxview.sessions.store import same_file

    if (problem := output_problem(args, args.file)) is not None:
        return unreadable(args, problem)
    rep, cfg = load_replay(args, as_sent=True)
    if isinstance(rep, int):
        return rep
    repaired = repair_replay(rep, cfg.as_defaults())
    result = repaired.result
    unfixable = [
        {
            "index": p.index,
            "path": rep.wire_place(p.index) if p.index >= 0 else None,
            "code": p.code,
            "message": p.message,
            "reason": describe_unfixable(p),
        }
        for p in result.unfixable
    ]
    wrote: str | None = None
    unchanged = (  # the input itself (--force) with nothing to fix: left as it is
        args.output is not None
        and not result.fixes
        and not args.redact
        and same_file(args.output, args.file)
    )
    redactions = None
    if not args.dry_run and not unchanged and (args.output or not args.json):
        from ctxview.core.session_file import SESSION_FORMAT
        from ctxview.sessions.store import atomic_write, check_no_api_key

        document = repaired.document
        if args.redact:
            document, redactions = _redacted(document, args.file)
            if isinstance(document, dict) and document.get("format") == SESSION_FORMAT:
                # a session file has room for the note (a request body has none: the API
                # refuses a field it does not know)
                document = {**document, "redacted": redactions.to_json()}
        try:
            text = json_text(document, indent=2) + "\n"
            check_no_api_key(text.encode("utf-8"), "the repaired file")
        except ValueError as exc:  # the API key in the text; NaN (never written)
            err(f"{args.file}: not written: {exc}")
            return EXIT_UNREADABLE
        if args.output:
            try:
                atomic_write(args.output, text.encode("utf-8"), make_parents=False)
            except (OSError, ValueError) as exc:
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                err(f"{args.output}: cannot write ({reason})")
                return EXIT_UNREADABLE
            wrote = args.output
        else:
            sys.stdout.write(text)
    if args.json:
        report: dict[str, Any] = {"fixes": [rep.fix_dict(f) for f in result.fixes]}
        report["unfixable"] = unfixable
        report["valid"] = result.valid
        report["format"] = repaired.format
        report["provider"] = rep.provider  # (as every per-file command's --json names it)
        report["output"] = wrote
        report["skipped"] = args.skipped
        report["config_used"] = args.config_used
        report["redacted"] = redactions.to_json() if redactions is not None else None
        sys.stdout.write(json_text(report) + "\n")
    else:
        out = sys.stdout if args.dry_run else sys.stderr
        for f in result.fixes:
            d = rep.fix_dict(f)
            print(visible(f"{d['path']}: {f.code}: {f.action}: {d['detail']}"), file=out)
        if not result.fixes and not unfixable:
            left = f" ({visible(args.file)} left as it is)" if unchanged else ""
            print(f"nothing to repair: the API will accept this window{left}", file=out)
    for u in unfixable:
        err(f"{args.file}: {u['path']}: {u['code']}: no safe fix: {u['reason']}")
    if wrote:
        n = len(result.fixes)
        print(
            f"wrote {visible(wrote)} ({repaired.format}, {n} fix{'es' if n != 1 else ''})",
            file=sys.stderr,
        )
    if redactions is not None:
        redaction_said(redactions)
    return EXIT_OK if result.valid else EXIT_PROBLEMS


def _redacted(document: Any, source: str) -> tuple[Any, Any]:
    """``document`` with its secrets redacted, and what was; a warning for each thinking block
    a redaction changed (the API rejects it: its signature no longer matches)."""
    from ctxview.core.redact import changed_thinking, redact_value

    redacted, redactions = redact_value(document)
    for place in changed_thinking(document, redacted):
        err(
            f"warning: {source}: {place}: a secret was redacted in a thinking block: the API "
            "rejects a changed thinking block (its signature no longer matches)"
        )
    return redacted, redactions


def cmd_diff(args: argparse.Namespace) -> int:
    from ctxview.config import load_config
    from ctxview.core.diff import diff_requests
    from ctxview.sessions import SessionError
    from ctxview.sessions.diffio import render, side_of

    cfg = load_config()
    for e in cfg.errors:
        err(e)
    used = config_used(cfg, args)
    say_config_used(used)
    bodies = []
    providers = []
    for path in (args.a, args.b):
        try:
            body, prov = side_of(path, args.format, cfg.as_defaults())
            bodies.append(body)
            providers.append(prov)
        except Exception as exc:  # a reader bug too: one line, exit 2, as load_file says it
            if isinstance(exc, SessionError):
                msg = str(exc)
            elif isinstance(exc, ValueError):
                msg = f"{path}: {exc}"
            else:
                msg = f"{path}: cannot read the file (internal error: {type(exc).__name__}: {exc})"
            err(msg)
            if args.json:  # one object on stdout, as inspect --json
                obj = {"a": args.a, "b": args.b, "error": msg, "exit": EXIT_UNREADABLE}
                sys.stdout.write(json_text(obj) + "\n")
            return EXIT_UNREADABLE
    diff = diff_requests(bodies[0], bodies[1])
    if args.json:
        report = {
            "a": args.a,
            "b": args.b,
            "provider": {"a": providers[0], "b": providers[1]},
            **diff.to_dict(),
            "config_used": used,
        }
        sys.stdout.write(json_text(report) + "\n")
    else:
        print(f"A {visible(args.a)}\nB {visible(args.b)}")
        for line in render(diff):
            print(line)
        if providers[0] != providers[1]:
            # the prefix line above compares the two bodies; no cache is shared across APIs
            print(
                f"note: A goes to {providers[0]}'s API, B to {providers[1]}'s: "
                "they share no prompt cache"
            )
    return EXIT_OK if diff.identical else EXIT_PROBLEMS
