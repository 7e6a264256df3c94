"""Writing a file atomically, and only where a write is wanted: a crash leaves the old file or
the new one, never half of either; a directory, FIFO, device or socket is never replaced; an
output is never one of the inputs being read (unless forced); the API key is never written.

Every save ctxview makes (sessions, request bodies, the config, exports) goes through
:func:`atomic_write`; a path the user typed is checked first by :func:`check_output`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import time
from pathlib import Path

from ctxview.core.fileio import file_kind


class WriteRefused(OSError):
    """A save that cannot or must not happen. ``str()`` is the reason in one line (callers put
    the path the user typed in front); ``filename`` is that path, never a temp file's."""

    def __init__(self, path: str, reason: str, errno_: int = 0) -> None:
        super().__init__(errno_, reason, path)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


def _resolve_target(path: str) -> Path:
    """Where a save to ``path`` must land: through symlinks to the real file (a symlinked
    config.toml stays linked), and only onto a regular file or a new one."""
    try:
        real = Path(os.path.realpath(path, strict=False))
    except OSError as exc:
        raise WriteRefused(path, _reason(exc), exc.errno or 0) from None
    try:
        # the path as typed first: a link into /proc (/dev/stdout on a pipe) resolves to a name
        # like pipe:[123] that exists nowhere, though the file it opens does
        st = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise WriteRefused(path, _reason(exc), exc.errno or 0) from None
    try:
        st = st or os.stat(real)
    except FileNotFoundError:
        return real
    except OSError as exc:
        raise WriteRefused(path, _reason(exc), exc.errno or 0) from None
    if stat.S_ISDIR(st.st_mode):
        raise WriteRefused(path, "is a directory: give a file name", errno.EISDIR)
    if not stat.S_ISREG(st.st_mode):
        raise WriteRefused(
            path, f"is {file_kind(st.st_mode)}: refusing to write to or replace it", errno.EPERM
        )
    return real


def _reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "too many levels of symbolic links (a symlink loop)"
    return str(exc.strerror or exc.__class__.__name__)


def check_output(
    path: str | os.PathLike[str],
    inputs: tuple[str | os.PathLike[str] | None, ...] = (),
    *,
    force: bool = False,
) -> None:
    """Can ``path``, an output the user typed, be written? Checked before any work, by every
    command that writes one (``export``, ``repair``, ``chat -o``, the TUI's export).

    :class:`WriteRefused` (the reason in one line) when it is a directory, a FIFO, a device or a
    socket, when its folder does not exist (no folder is created for a typed path) or cannot be
    written in (read-only, immutable, another user's), or when it
    is one of ``inputs``: the same file by name, through a symlink or a hard link (writing would
    replace what is being read) unless ``force``.
    """
    spath = os.fspath(path)
    if not spath:
        raise WriteRefused(spath, "no file name given", errno.ENOENT)
    try:
        target = _resolve_target(spath)  # a directory, FIFO, device or socket: refused there
    except ValueError as exc:  # a NUL byte in the name
        raise WriteRefused(spath, str(exc), errno.EINVAL) from None
    if not target.parent.is_dir():
        missing = "not a folder" if target.parent.exists() else "no such folder"
        raise WriteRefused(spath, f"{missing}: {target.parent}", errno.ENOENT)
    if not os.access(target.parent, os.W_OK | os.X_OK):
        # the save makes its temp file there: found now, before a reply is paid for
        raise WriteRefused(spath, f"folder not writable: {target.parent}", errno.EACCES)
    if force:
        return
    for given in inputs:
        if given is not None and same_file(spath, given):
            raise WriteRefused(
                spath,
                "is the input file"
                + ("" if os.fspath(given) == spath else f" {os.fspath(given)}")
                + ": writing would replace it",
                errno.EEXIST,
            )


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Are ``a`` and ``b`` one file: the same path once symlinks are resolved, or the same
    inode (a hard link)?"""
    try:
        if os.path.realpath(a) == os.path.realpath(b):
            return True
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


_TMP_RE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[A-Za-z0-9_]+\.tmp$")
_OLD_TMP_SECONDS = 600
#: temp files of saves in flight in this process (a concurrent save must not delete them)
_in_flight: set[str] = set()


def _pid_alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def clean_stale_temps(target: Path) -> list[str]:
    """Remove the temp files earlier saves of ``target`` left behind (a process killed in the
    middle of a save): those of processes that are gone, of this process but not in flight, and
    any older than ten minutes. Returns the names removed."""
    removed: list[str] = []
    prefix = f".{target.name}."
    try:
        names = [
            n for n in os.listdir(target.parent) if n.startswith(prefix) and n.endswith(".tmp")
        ]
    except OSError:
        return removed
    now = time.time()
    for n in names:
        full = target.parent / n
        m = _TMP_RE.match(n)
        if m is not None and m.group("name") == target.name:
            pid = int(m.group("pid"))
            stale = not _pid_alive(pid) or (pid == os.getpid() and str(full) not in _in_flight)
        elif len(n) == len(prefix) + 8 + 4:  # ".name.XXXXXXXX.tmp", no pid (older ctxview): by age
            stale = False
        else:
            continue
        if not stale:
            with contextlib.suppress(OSError):
                stale = now - full.stat().st_mtime > _OLD_TMP_SECONDS
        if stale:
            with contextlib.suppress(OSError):
                full.unlink()
                removed.append(n)
    return removed


def atomic_write(path: str | os.PathLike[str], data: bytes, *, make_parents: bool = True) -> None:
    """Write via a temp file in the same folder + fsync + rename: a crash leaves old or new.

    A symlink is written through (its target is replaced, the link stays); a directory, FIFO,
    device or socket is refused (never replaced). Errors are :class:`WriteRefused` naming the
    path given, never the temp file. Temp files left by killed saves are removed here.
    ``make_parents=False`` (a path the user typed): a missing folder is an error, not created.
    """
    spath = os.fspath(path)
    target = _resolve_target(spath)
    if not make_parents and not target.parent.is_dir():
        raise WriteRefused(spath, f"no such folder: {target.parent}", 2)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WriteRefused(
            spath, f"cannot create its folder ({_reason(exc)})", exc.errno or 0
        ) from None
    clean_stale_temps(target)
    try:
        fd, tmp = tempfile.mkstemp(
            prefix=f".{target.name}.{os.getpid()}.", suffix=".tmp", dir=target.parent
        )
    except OSError as exc:
        raise WriteRefused(spath, _reason(exc), exc.errno or 0) from None
    _in_flight.add(tmp)
    try:
        try:
            mode = os.stat(target).st_mode & 0o777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and not isinstance(exc, WriteRefused):
            raise WriteRefused(spath, _reason(exc), exc.errno or 0) from None
        raise
    finally:
        _in_flight.discard(tmp)
    with contextlib.suppress(OSError):
        dfd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def check_no_api_key(data: bytes, what: str = "the session text") -> None:
    """ValueError when ``data`` holds the ANTHROPIC_API_KEY value (typed into the chat, say):
    the key is never written anywhere."""
    key = os.environ.get("ANTHROPIC_API_KEY")
    if key and len(key) >= 8 and key.encode() in data:
        raise ValueError(f"refusing to save: {what} contains the ANTHROPIC_API_KEY value")
