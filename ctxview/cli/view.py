"""``ctxview [FILE]``: the TUI (a file, a new chat, ``--resume``, ``--follow``)."""

from __future__ import annotations

import argparse

from ctxview import __version__
from ctxview.cli.common import add_window_args


def build_app_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="ctxview",
        description="See what an LLM agent's context holds, what it forgets, and whether the "
        "next API request will be accepted.",
        epilog="Headless: ctxview inspect FILE [--json] | ctxview export FILE [-o OUT] | "
        "ctxview requests FILE [--json] | ctxview compare FILE [--json] | "
        "ctxview repair FILE [-o OUT] [--dry-run] [--json] | ctxview diff A B [--json] | "
        "ctxview config path|show|set KEY VALUE. Live: ctxview FILE --follow | ctxview sessions "
        "[--json] | ctxview proxy [--record FILE]. Chat: ctxview chat --no-tui PROMPT. Share: ctxview "
        "serve [FILE] | ctxview report FILE -o report.html. Fleet: ctxview scan [PATH ...] --out DIR "
        "| ctxview report DIR [--json] | ctxview fleet DIR. See `ctxview COMMAND --help`.",
    )
    p.add_argument("--version", action="version", version=f"ctxview {__version__}")
    p.add_argument(
        "file", nargs="?", help="a ctxview session, API request body or Claude Code transcript"
    )
    add_window_args(p)
    p.add_argument("--model", help="model for chat (default: the config's)")
    p.add_argument("--offline", action="store_true", help="chat with the offline demo model")
    p.add_argument("--resume", action="store_true", help="reopen the newest autosaved session")
    p.add_argument(
        "--follow",
        action="store_true",
        help="follow a Claude Code transcript or a Codex rollout as the agent writes it (like "
        "tail -f)",
    )
    return p


def view(args: argparse.Namespace) -> int:
    """The TUI on what ``args`` names (Textual is imported here, never for a headless command)."""
    from ctxview.app.launch import launch

    return launch(args, need_terminal=True)
