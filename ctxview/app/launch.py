"""Start the TUI: load the file (or start a chat), then run the app. No SDK import here."""

from __future__ import annotations

import argparse
import os
import sys

from ctxview.config import load_config
from ctxview.textfmt import one_line


def has_terminal() -> bool:
    """Can the TUI run here: are its input and output a terminal? Not with ``ctxview FILE >
    out.txt``, ``| less`` or ``< /dev/null``, where it would write its escape sequences into the
    file or pipe and wait for keys that never come. A browser tab (``ctxview serve``, Textual's
    web driver) has no terminal and needs none."""
    return bool(os.environ.get("TEXTUAL_DRIVER")) or (sys.stdin.isatty() and sys.stdout.isatty())


def no_terminal(what: str, instead: str) -> str | None:
    """Why the TUI cannot run here (:func:`has_terminal`), or None."""
    if has_terminal():
        return None
    return (
        f"{what} opens the terminal app, and its input or output is not a terminal; for text "
        f"or JSON: {instead}"
    )


def launch(args: argparse.Namespace, *, need_terminal: bool = False) -> int:
    """The TUI on what ``args`` names (``need_terminal``: refuse, exit 2, when stdin or stdout
    is not a terminal, after the file is read: its own errors come first)."""
    from ctxview.chat.autosave import open_chat, resume_path
    from ctxview.sessions import SessionError

    cfg = load_config()
    path: str | None = args.file
    try:
        path = resume_path(path, getattr(args, "resume", False))
        rep = open_chat(
            path,
            args.format,
            cfg,
            max_context_messages=args.max,
            strategy=args.strategy,
            as_sent=True,  # a recorded session opens as it was sent unless --max / --strategy
        )
    except SessionError as exc:
        print(f"ctxview: {one_line(str(exc), 1000)}", file=sys.stderr)
        return 2
    except ValueError as exc:
        print(f"ctxview: {one_line(f'{path}: {exc}', 1000)}", file=sys.stderr)
        return 2
    session = rep.session
    # --model, else the file's, else the config's: a Claude model, never another API's session's
    model_name = rep.model_name(cfg.as_defaults(), args.model)
    offline = bool(args.offline) or not os.environ.get("ANTHROPIC_API_KEY")

    from ctxview.app.app import CtxviewApp
    from ctxview.app.model import SessionModel
    from ctxview.sessions.model import freeze_long_lived

    model = SessionModel(rep, path or None, model_name)
    # the loaded session lives as long as the app: keep it out of every later GC pass
    freeze_long_lived()
    app = CtxviewApp(model, cfg, opened_file=bool(path), offline=offline)  # chat: after first paint
    if getattr(args, "follow", False):
        from ctxview.app.follow import FOLLOWABLE

        if session.format not in FOLLOWABLE:
            what = (
                f"{one_line(str(path), 1000)} is a {session.format} file"
                if path
                else "no FILE given"
            )
            print(
                f"ctxview: --follow: {what}; only Claude Code transcripts and Codex rollouts "
                "(.jsonl) can be followed",
                file=sys.stderr,
            )
            return 2
        app.follow_on_start = True
    if need_terminal and (
        why := no_terminal(
            f"ctxview {one_line(path or '', 1000)}".strip(),
            "ctxview inspect | requests | compare | export | report FILE (see --help)",
        )
    ):
        print(f"ctxview: {why}", file=sys.stderr)
        return 2
    try:
        app.run()
    except Exception as exc:  # outside Textual's own handling (driver start-up, say)
        return crash_report(exc)
    if app.crash is not None:
        return crash_report(app.crash[0], app.crash[1])
    return int(app.return_code or 0)


def launch_fleet(dataset: str, *, need_terminal: bool = False) -> int:
    """The TUI on the Fleet screen of a scanned dataset (``ctxview fleet DIR``), over a new
    offline chat: enter there opens a session in it."""
    if need_terminal and (
        why := no_terminal(
            f"ctxview fleet {one_line(dataset, 1000)}", "ctxview report DIR [--json]"
        )
    ):
        print(f"ctxview: {why}", file=sys.stderr)
        return 2
    cfg = load_config()
    from ctxview.chat.autosave import open_chat

    rep = open_chat(None, None, cfg)

    from ctxview.app.app import CtxviewApp
    from ctxview.app.model import SessionModel

    app = CtxviewApp(SessionModel(rep, None, cfg["model"]), cfg, opened_file=False, offline=True)
    app.fleet_on_start = dataset
    try:
        app.run()
    except Exception as exc:
        return crash_report(exc)
    if app.crash is not None:
        return crash_report(app.crash[0], app.crash[1])
    return int(app.return_code or 0)


def crash_report(exc: BaseException, text: str | None = None) -> int:
    """A crash: the traceback goes to a log file under the state directory, the terminal gets
    one line naming it, and the exit status is 1."""
    import time
    import traceback

    from ctxview.config import state_dir

    tb = text or "".join(traceback.format_exception(exc))
    where = "(could not write a log file)"
    try:
        logs = state_dir() / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = logs / time.strftime(f"crash-%Y%m%d-%H%M%S-{os.getpid()}.log")
        log.write_text(tb, encoding="utf-8")
        where = f"the traceback is in {log}"
    except OSError:
        pass
    summary = one_line(f"{type(exc).__name__}: {exc}", 200)
    print(f"ctxview: crashed ({summary}); {one_line(where, 1000)}", file=sys.stderr)
    return 1
