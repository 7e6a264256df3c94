"""What a scan has read, so the next one reads only what changed: per session file its
fingerprint (size, mtime, a hash of its first bytes and of the bytes before its end, and its
sub-agents' sizes), the requests per agent written, the dataset files holding its rows, or the
error it gave.

One manifest per writer and shard (``DIR/_ctxview/<writer>-<K>of<N>.json``): scans of other
shards or machines into the same dataset never touch each other's. Written atomically, after
the Parquet files it names: an interrupted scan leaves the previous manifest, and the files
the next scan finds unnamed in it are its unfinished work (removed, then done again).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ctxview.sessions.fileio import FileRefused, open_regular, read_span

MANIFEST_VERSION = 1
MANIFEST_DIR = "_ctxview"
HEAD_BYTES = 8 * 1024
END_BYTES = 4 * 1024


class ManifestError(Exception):
    """A manifest that cannot be read: the message names the file."""


@dataclass(frozen=True)
class Fingerprint:
    size: int
    mtime_ns: int
    #: the sub-agents' transcripts: [path, size, mtime_ns] each
    agents: tuple[tuple[str, int, int], ...] = ()


@dataclass
class Entry:
    """One session file as the last scan left it."""

    size: int
    mtime_ns: int
    agents: list[list[Any]]
    #: sha256 of the first HEAD_BYTES and of the END_BYTES before ``size``
    head: str
    end: str
    #: requests per agent written to the dataset
    counts: dict[str, int] = field(default_factory=dict)
    #: table -> the dataset files (relative to the dataset) holding this session's rows
    files: dict[str, list[str]] = field(default_factory=dict)
    error: str | None = None

    def fingerprint(self) -> Fingerprint:
        return Fingerprint(self.size, self.mtime_ns, tuple((a, s, m) for a, s, m in self.agents))


def _digest(path: str, start: int, length: int) -> str:
    """sha256 of ``length`` bytes from ``start``; OSError when the file cannot be read or is
    no regular file (a FIFO found by a scan would wait for a writer forever)."""
    try:
        with open_regular(path, what="session file") as (fd, _):
            return hashlib.sha256(read_span(fd, max(0, start), max(0, length))).hexdigest()[:32]
    except FileRefused as exc:
        raise OSError(str(exc)) from None


def fingerprint(path: str) -> Fingerprint:
    """Size, mtime and sub-agents of a session file (``OSError`` when it cannot be read)."""
    from ctxview.sessions.readers import subagent_paths

    st = os.stat(path)
    agents = []
    for a in subagent_paths(path):
        with contextlib.suppress(OSError):
            ast = os.stat(a)
            agents.append((a, ast.st_size, ast.st_mtime_ns))
    return Fingerprint(st.st_size, st.st_mtime_ns, tuple(agents))


def new_entry(path: str, fp: Fingerprint) -> Entry:
    """An entry for ``path`` as it is now (its head and end hashed)."""
    return Entry(
        fp.size,
        fp.mtime_ns,
        [list(a) for a in fp.agents],
        _digest(path, 0, min(HEAD_BYTES, fp.size)),
        _digest(path, fp.size - END_BYTES, min(END_BYTES, fp.size)),
    )


def grew(path: str, old: Entry, fp: Fingerprint) -> bool:
    """Did the file only grow since ``old`` (a live transcript): the same first bytes and the
    same bytes before its old end, and no sub-agent shrank? (Counted apart from a file
    rewritten otherwise; either has its rows written again.)"""
    if old.error is not None and not old.counts:
        return False
    if fp.size < old.size:
        return False
    try:
        if _digest(path, 0, min(HEAD_BYTES, old.size)) != old.head:
            return False
        if _digest(path, old.size - END_BYTES, min(END_BYTES, old.size)) != old.end:
            return False
    except OSError:
        return False
    before = {a[0]: a[1] for a in old.agents}
    return all(size >= before.get(a, 0) for a, size, _ in fp.agents)


def scanned_files(root: str) -> dict[str, str]:
    """Session key -> the path of its file as scanned, from every manifest of the dataset
    ``root``. The ``file`` column shows the path with its control characters made visible and
    its secrets redacted, which may name no file: this is the path to open. A manifest that
    cannot be read gives nothing."""
    from ctxview.fleet.rows import session_key

    found: dict[str, str] = {}
    for manifest in sorted(Path(root, MANIFEST_DIR).glob("*.json")):
        try:
            sessions = json.loads(manifest.read_text(encoding="utf-8"))["sessions"]
            found.update((session_key(p), p) for p in sessions if isinstance(p, str))
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return found


class Manifest:
    """The sessions one writer's shard has scanned into a dataset."""

    def __init__(self, root: str, writer: str, shard: tuple[int, int]) -> None:
        self.root = root
        self.writer = writer
        self.shard = shard
        self.path = Path(root, MANIFEST_DIR, f"{writer}-{shard[0]}of{shard[1]}.json")
        self.sessions: dict[str, Entry] = {}

    @property
    def prefix(self) -> str:
        """What the names of this writer's shard's Parquet files start with."""
        return f"{self.writer}-{self.shard[0]}of{self.shard[1]}-"

    @classmethod
    def load(cls, root: str, writer: str, shard: tuple[int, int]) -> Manifest:
        m = cls(root, writer, shard)
        try:
            text = m.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return m
        except OSError as exc:
            raise ManifestError(f"{m.path}: cannot read the scan's manifest ({exc})") from None
        try:
            data = json.loads(text)
            if data.get("version") != MANIFEST_VERSION:
                raise ValueError(f"version {data.get('version')!r}, not {MANIFEST_VERSION}")
            m.sessions = {p: Entry(**e) for p, e in data["sessions"].items()}
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            raise ManifestError(
                f"{m.path}: not a ctxview scan manifest ({exc}); remove it to scan again "
                "from nothing"
            ) from None
        return m

    def files(self) -> set[str]:
        """Every dataset file this manifest names."""
        return {f for e in self.sessions.values() for fs in e.files.values() for f in fs}

    def save(self) -> None:
        """Atomically: a temporary file beside it, then renamed over it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        data = {
            "version": MANIFEST_VERSION,
            "writer": self.writer,
            "shard": list(self.shard),
            # (an entry's fields as they are: JSON values already, not copied as asdict
            # would, 0.15 s of each save of 10,000 entries)
            "sessions": {p: vars(e) for p, e in self.sessions.items()},
        }
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, separators=(",", ":"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.path)
