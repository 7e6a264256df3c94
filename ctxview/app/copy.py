"""Copying the selected message: its text to the clipboard (``y``), the message as JSON (``Y``),
or both in the user's pager (``v``).

The clipboard is the terminal's (Textual's ``copy_to_clipboard``: OSC 52), so it works over ssh
and in tmux (with ``set-clipboard on``), not in macOS Terminal: the pager is the fallback. What
leaves the app is visible text (``textfmt.visible``: a session's ESC, C1 or bidi controls never
reach the terminal, pasted or paged), and the pager gets it in a private temporary file, never
on a command line or through a shell."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxview.textfmt import json_text, visible

if TYPE_CHECKING:
    from textual.app import App

#: the most characters sent through OSC 52 (terminals drop longer payloads, some silently)
CLIPBOARD_LIMIT = 1_000_000
#: pagers tried in turn when $PAGER is not set
PAGERS = ("less", "more")


def _block_text(block: Any) -> str:
    if not isinstance(block, Mapping):
        return json.dumps(block, ensure_ascii=False, default=str)
    t = block.get("type")
    if t == "text":
        return str(block.get("text", ""))
    if t == "thinking":
        return str(block.get("thinking", ""))
    if t == "tool_use":
        args = json.dumps(block.get("input", {}), ensure_ascii=False, indent=2, default=str)
        return f"{block.get('name', '?')}({args})"
    if t == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return "\n".join(_block_text(c) for c in content)
        return "" if content is None else str(content)
    if t == "compaction":
        return str(block.get("content", ""))
    return json.dumps(block, ensure_ascii=False, indent=2, default=str)


def message_text(message: Mapping[str, Any]) -> str:
    """The message as a reader copies it: every block's text (a tool call as ``name({input})``),
    blocks apart by a blank line; visible text."""
    content = message.get("content")
    if isinstance(content, str):
        return visible(content)
    if not isinstance(content, list):
        return ""
    return visible("\n\n".join(_block_text(b) for b in content))


def message_page(mid: int, message: Mapping[str, Any]) -> str:
    """What the pager shows: a heading, each block under its own, then the message's JSON."""
    role = str(message.get("role", "?"))
    out = [f"#{mid} {role}", ""]
    content = message.get("content")
    blocks = content if isinstance(content, list) else [{"type": "text", "text": content or ""}]
    for j, block in enumerate(blocks):
        kind = block.get("type", "?") if isinstance(block, Mapping) else "?"
        out += [f"── [{j}] {kind} ──", _block_text(block), ""]
    out += ["── the message as JSON ──", json_text(dict(message), indent=2), ""]
    return visible("\n".join(out))


def copy(app: App[Any], what: str, text: str) -> None:
    """Put ``text`` (visible text already) on the terminal's clipboard and say so."""
    if len(text) > CLIPBOARD_LIMIT:
        app.notify(
            f"{what} is {len(text):,} characters, more than a terminal's clipboard takes: "
            "v opens it in your pager",
            severity="warning",
            markup=False,
        )
        return
    app.copy_to_clipboard(text)
    app.notify(
        f"copied {what} ({len(text):,} characters) to the clipboard through the terminal "
        "(none? v opens it in your pager)",
        markup=False,
        timeout=3,
    )


def pager_command(env: Mapping[str, str]) -> list[str] | None:
    """The pager's argv: $PAGER split as a shell would split it (but never run by one), or the
    first of PAGERS on the PATH; None when there is none."""
    configured = env.get("PAGER", "").strip()
    if configured:
        try:
            argv = shlex.split(configured)
        except ValueError:
            return None
        return argv if argv and shutil.which(argv[0]) else None
    for name in PAGERS:
        found = shutil.which(name)
        if found:
            return [found]
    return None


def page(app: App[Any], text: str) -> None:
    """Show ``text`` in the user's pager, the app suspended meanwhile."""
    from textual.app import SuspendNotSupported

    argv = pager_command(os.environ)
    if argv is None:
        configured = os.environ.get("PAGER", "").strip()
        app.notify(
            f"no pager: $PAGER ({configured}) is not a command found on the PATH"
            if configured
            else "no pager found (less, more): set $PAGER",
            severity="warning",
            markup=False,
        )
        return
    fd, path = tempfile.mkstemp(prefix="ctxview-", suffix=".txt")  # (mode 0600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        try:
            with app.suspend():
                # less: show UTF-8 as is; its -R is off so nothing is read as an escape
                env = {**os.environ, "LESSCHARSET": os.environ.get("LESSCHARSET", "utf-8")}
                result = subprocess.run([*argv, path], env=env, check=False)
        except SuspendNotSupported:
            app.notify("this terminal cannot hand over to a pager", markup=False)
            return
        except OSError as exc:
            app.notify(f"the pager did not start: {exc.strerror or exc}", markup=False)
            return
        if result.returncode not in (0, None):
            app.notify(
                f"the pager exited with status {result.returncode}",
                severity="warning",
                markup=False,
            )
    finally:
        os.unlink(path)
