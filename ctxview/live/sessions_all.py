"""Every agent session on this machine, newest first: Claude Code's transcripts, Codex CLI's
rollouts and Gemini CLI's session files, each listed by its own module with one shared summary
cache (what ``ctxview sessions`` and the TUI's sessions list show)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxview.live.sessions_codex import codex_roots, list_codex
from ctxview.live.sessions_gemini import gemini_roots, list_gemini
from ctxview.live.sessions_list import SessionInfo, list_sessions, open_cache, projects_roots


@dataclass(frozen=True)
class SessionRoots:
    """Where each agent keeps its sessions (the folders that exist)."""

    claude: list[Path]
    codex: list[Path]
    gemini: list[Path]

    def describe(self) -> str:
        """``Claude Code: ~/.claude/projects · Codex: … · Gemini CLI: …`` (what was searched)."""
        parts = [
            ("Claude Code", self.claude, "~/.claude/projects"),
            ("Codex", self.codex, "~/.codex/sessions"),
            ("Gemini CLI", self.gemini, "~/.gemini/tmp"),
        ]
        return " · ".join(
            f"{name}: {', '.join(str(r) for r in roots) or default + ' (not found)'}"
            for name, roots, default in parts
        )


def session_roots() -> SessionRoots:
    return SessionRoots(projects_roots(), codex_roots(), gemini_roots())


def list_all(
    roots: SessionRoots,
    cache_path: Path | bool | None = True,
    unreadable: dict[str, str] | None = None,
) -> list[SessionInfo]:
    """Every session of every agent under the roots, newest activity first. The files that
    hold no session (empty, binary) are not listed: ``unreadable`` receives each path with
    why."""
    cache = open_cache(cache_path)
    claude = list_sessions(roots.claude, cache=cache)
    codex = list_codex(roots.codex, cache)
    # Gemini CLI names a project by the hash of its folder: the folders the others name
    folders = {i.project for i in (*claude, *codex) if i.project.startswith("/")}
    gemini = list_gemini(roots.gemini, cache, folders)
    cache.save()
    if unreadable is not None:
        unreadable.update(cache.unreadable)
    out = [*claude, *codex, *gemini]
    out.sort(key=lambda i: i.last_activity, reverse=True)
    return out
