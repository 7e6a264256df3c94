"""``ctxview chat --no-tui "prompt"``: one agent turn without a terminal UI (the headless loop).

Prints the turn (tool calls, their results, the reply) and the window's verdict, saves the session
(the autosave directory, or ``-o``). Exit 0 on success, 1 when the request was rejected (by the API,
or by the pre-send check unless ``--send-anyway``) or did not complete, 2 on unreadable input.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from ctxview.cli.common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_UNREADABLE,
    add_output_args,
    add_window_args,
    err,
    json_error,
    output_problem,
)
from ctxview.textfmt import id_ranges, json_text, one_line, plural, visible


def add_parsers(sub: Any) -> None:
    ch = sub.add_parser(
        "chat",
        help="run one agent turn (tools included) without the TUI: --no-tui PROMPT",
        description="Run one agent turn against Claude (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) "
        "or the offline model, print the reply and the window's verdict, save the session.",
    )
    ch.add_argument("prompt", help="the user message")
    ch.add_argument("file", nargs="?", help="continue this session (default: a new chat)")
    ch.add_argument("--no-tui", action="store_true", help="run without the TUI (required)")
    ch.add_argument("--offline", action="store_true", help="the offline demo model")
    add_window_args(ch, "force the file format")
    ch.add_argument("--model", help="model (default: the file's, else the config's)")
    ch.add_argument("--resume", action="store_true", help="continue the newest autosaved chat")
    add_output_args(ch, "save the session here (default: autosave dir)")
    ch.add_argument("--json", action="store_true", help="print exactly one JSON object")
    ch.add_argument(
        "--send-anyway",
        action="store_true",
        help="send even when the pre-send check finds protocol errors or an evicted message",
    )


def _err(msg: str) -> None:
    err(msg, "chat: ")


def _fail(args: argparse.Namespace, code: int, msg: str) -> int:
    _err(msg)
    if args.json:
        json_error(args.file, msg, code)
    return code


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(
        str(b.get("text", ""))
        for b in content or []
        if isinstance(b, dict) and b.get("type") == "text"
    )


def cmd_chat(args: argparse.Namespace) -> int:
    if not args.no_tui:
        return _fail(
            args, EXIT_UNREADABLE, "only --no-tui for now; the TUI chat is `ctxview` (no file)"
        )
    from ctxview.chat.autosave import open_chat, resume_path
    from ctxview.config import load_config
    from ctxview.sessions import SessionError

    cfg = load_config()
    for e in cfg.errors:
        _err(e)
    path: str | None = args.file
    if args.resume and path:
        return _fail(args, EXIT_UNREADABLE, "give FILE or --resume, not both")
    try:
        path = resume_path(path, args.resume)
        if (problem := output_problem(args, path)) is not None:
            return _fail(args, EXIT_UNREADABLE, problem)
        if path is None and (problem := _system_prompt_problem(cfg)) is not None:
            return _fail(args, EXIT_UNREADABLE, problem)
        rep = open_chat(
            path, args.format, cfg, max_context_messages=args.max, strategy=args.strategy
        )
    except SessionError as exc:
        return _fail(args, EXIT_UNREADABLE, str(exc))
    except (ValueError, RecursionError, MemoryError) as exc:
        return _fail(args, EXIT_UNREADABLE, f"{path}: {type(exc).__name__}: {exc}")
    args.file = path
    from ctxview.chat.loop import cannot_chat

    if (why := cannot_chat(rep.provider, rep.session.format)) is not None:
        return _fail(args, EXIT_UNREADABLE, f"{path}: {why}")
    return _run(args, cfg, rep)


def _system_prompt_problem(cfg: Any) -> str | None:
    """Why a new chat cannot have the system prompt the config names (its
    ``system_prompt_file`` missing, unreadable, not a regular file or not UTF-8), or None. Read
    here, before anything is sent: a turn sent without it would be another conversation, and
    the reason, noted in the config's errors while the chat opens, came after they were printed."""
    if not cfg.get("system_prompt_file"):
        return None
    known = len(cfg.errors)
    cfg.system_prompt()
    if len(cfg.errors) == known:
        return None
    return (
        f"{cfg.errors[-1]}: nothing sent (fix the file, or unset it: "
        "ctxview config set system_prompt_file '')"
    )


def _run(args: argparse.Namespace, cfg: Any, rep: Any) -> int:
    from ctxview.chat.loop import (
        Added,
        AgentLoop,
        ChatEvent,
        HeadlessSession,
        PreSend,
        ToolCall,
        ToolResult,
        make_backend,
    )
    from ctxview.chat.tools import ToolSettings

    defaults = cfg.as_defaults()
    model_name = rep.model_name(defaults, args.model)
    offline = bool(args.offline) or not os.environ.get("ANTHROPIC_API_KEY")
    hs = HeadlessSession(rep, model_name, rep.max_tokens(defaults))

    async def decide(pre: PreSend) -> str | None:
        return "send" if args.send_anyway else None

    loop = AgentLoop(
        hs,
        make_backend(offline, cfg.values),
        tools=ToolSettings.from_config(cfg.values),
        rounds=int(cfg.get("tool_rounds", 8)),
        autosave=args.output is None,
        decide=decide,
    )
    ctx = rep.context
    first_new = len(rep.transcript)
    calls: list[dict[str, Any]] = []

    def on_event(event: ChatEvent) -> None:
        if isinstance(event, ToolCall):
            calls.append({"id": event.id, "name": event.name, "input": event.input})
            if not args.json:
                arg = json.dumps(event.input, ensure_ascii=False)
                print(one_line(f"→ {event.name}({arg})", 300))
        elif isinstance(event, ToolResult):
            for c in calls:
                if c["id"] == event.tool_use_id:
                    c.update(result=event.content, is_error=event.is_error)
            if not args.json:
                mark = "✗" if event.is_error else "←"
                print(one_line(f"{mark} {event.content}", 300))
        elif isinstance(event, Added) and event.what == "reply" and not args.json:
            text = _text_of(rep.transcript[event.id].message)
            if text:
                print(visible(text))

    loop.subscribe(on_event)
    evicted: list[int] = []

    def on_context(event: Any) -> None:  # evictions come from the context itself
        if event.kind == "evicted":
            evicted.extend(event.ids)

    ctx.subscribe(on_context)

    async def turn() -> Any:
        try:
            return await loop.submit(args.prompt)
        finally:
            await loop.wait_saved()

    import asyncio  # here: the parser does not need it

    result = asyncio.run(turn())

    saved: str | None = str(loop.autosave_path) if loop.autosave_path else None
    code = EXIT_OK if result.ok else EXIT_PROBLEMS
    error: str | None = None
    if args.output:
        from ctxview.sessions.store import save_session

        try:
            save_session(args.output, hs.session_document(), make_parents=False)
            saved = args.output
        except OSError as exc:
            error = f"{args.output}: cannot write ({exc.strerror or exc})"
            code = EXIT_UNREADABLE
        except ValueError as exc:  # the API key in the text
            error = f"{args.output}: not saved: {exc}"
            code = EXIT_UNREADABLE

    summary = rep.summary(model_name)
    probs = [p for p in summary["problems"] if p["severity"] == "error"]
    verdict = (
        "✓ valid" if not probs else f"✗ {plural(len(probs), 'problem')}: {probs[0]['message']}"
    )
    window = (
        f"window {summary['window']['size']}/{ctx.max_context_messages} ({ctx.strategy})"
        f" · ~{summary['window']['estimated_tokens']:,} tokens"
    )
    if not result.ok:
        if result.outcome == "declined" and result.presend is not None:
            pre = result.presend
            what = list(pre.problems) + ([pre.missing] if pre.missing else [])
            error = (
                f"not sent: the API will reject this request ({'; '.join(what)}); "
                "--send-anyway sends it"
                if pre.problems
                else f"not sent: {'; '.join(what)}; --send-anyway sends it"
            )
        else:
            error = result.message
        if saved:
            error += f" (your message is saved in {saved})"
    elif result.outcome == "rounds" and not args.json:
        _err(result.message)
    new = [r.message for r in rep.transcript.records[first_new:]]
    if args.json:
        replies = [m for m in new if m.get("role") == "assistant"]
        obj = {
            "file": args.file,
            "model": model_name,
            "backend": loop.backend.name,
            "outcome": result.outcome,
            "stop_reason": result.stop_reason,
            "reply": _text_of(replies[-1]) if replies else None,
            "tool_calls": calls,
            "messages": new,
            "evicted": evicted,
            "verdict": {
                "valid": not probs,
                "window_size": summary["window"]["size"],
                "max_context_messages": ctx.max_context_messages,
                "strategy": ctx.strategy,
                "estimated_tokens": summary["window"]["estimated_tokens"],
                "problems": summary["problems"],
            },
            "saved": saved,
            "error": error,
            "exit": code,
        }
        sys.stdout.write(json_text(obj) + "\n")
        if error:
            _err(error)
        return code
    if error:
        _err(error)
        return code
    if evicted:
        n = len(evicted)
        print(f"evicted {id_ranges(sorted(evicted), 4)} · {plural(n, 'message')}")
    print(one_line(f"{window} · {verdict}", 1000))
    if saved:
        print(one_line(f"saved {saved}", 1000))
    return code
