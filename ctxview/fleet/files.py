"""Which files a scan reads: the sessions ``ctxview sessions`` lists, or the files and folders
given, and the shard of them one scan takes (``--shard K/N``)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from ctxview.fleet.rows import session_key

#: the file names a folder is searched for
SESSION_SUFFIXES = (".jsonl", ".json")


def listed_sessions() -> list[str]:
    """Every session file ``ctxview sessions`` lists: Claude Code's (its sub-agents are read
    with it), Codex's and Gemini CLI's."""
    from ctxview.live.sessions_all import list_all, session_roots

    return [info.path for info in list_all(session_roots())]


def _sub_agent_file(path: Path) -> bool:
    """A Claude Code sub-agent's transcript: read with its parent session, never alone."""
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def session_files(paths: Iterable[str]) -> list[str]:
    """The files to scan: each file given, and under each folder given every ``.jsonl`` and
    ``.json`` file but sub-agent transcripts (``subagents/``, ``agent-*.jsonl``) and hidden
    folders; in order, each once. A path that does not exist is kept: its scan says why."""
    out: list[str] = []
    seen: set[str] = set()

    def add(p: str) -> None:
        if p not in seen:
            seen.add(p)
            out.append(p)

    for given in paths:
        if not os.path.isdir(given):
            add(given)
            continue
        found: list[str] = []
        for folder, dirs, files in os.walk(given):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "subagents")
            for name in files:
                p = Path(folder, name)
                if p.suffix in SESSION_SUFFIXES and not _sub_agent_file(p):
                    found.append(str(p))
        for f in sorted(found):
            add(f)
    return out


def parse_shard(text: str) -> tuple[int, int]:
    """``K/N`` -> (K, N), 1 <= K <= N; ``ValueError`` naming what is wrong."""
    try:
        k_text, n_text = text.split("/")
        k, n = int(k_text), int(n_text)
    except ValueError:
        raise ValueError(f"--shard: expected K/N (e.g. 1/4), got {text!r}") from None
    if not 1 <= k <= n:
        raise ValueError(f"--shard: K must be between 1 and N, got {text!r}")
    return k, n


#: a writer's name: it starts the names of the files it writes (no folder, no control)
WRITER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def parse_writer(text: str) -> str:
    """``--writer NAME`` as it is; ``ValueError`` when it cannot start a file name in the
    dataset (a ``/`` or ``..`` would write outside it)."""
    if not WRITER_NAME.fullmatch(text):
        raise ValueError(
            "--writer: expected a name of letters, digits, '.', '_' or '-' (at most 64, "
            f"starting with a letter or digit: it names the dataset's files), got {text!r}"
        )
    return text


def in_shard(path: str, shard: tuple[int, int]) -> bool:
    """Is ``path`` one of shard K of N's files? By its session key (a hash of the absolute
    path): the same file falls in the same shard on every run, whatever else is scanned."""
    k, n = shard
    return n == 1 or int(session_key(path), 16) % n == k - 1
