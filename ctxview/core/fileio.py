"""Reading a file the user named, safely: only regular files, never a hang, never unbounded.

Every way ctxview opens a file (``inspect``, ``export``, ``ctxview FILE``, ctrl+o, the
``read_file`` tool) goes through :func:`read_regular`; the sessions list reads the head and tail
of a transcript through :func:`open_regular` and :func:`read_span`. A FIFO is opened without
blocking and refused (it would hang a plain ``open`` until a writer comes), a device
(``/dev/zero``) or socket is refused before a byte is read, a symlink loop is named as such, and
the size is capped before reading, with the size in the message.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager

from ctxview.textfmt import plural


class FileRefused(Exception):
    """A file that cannot be read; the message is one line naming the path."""


def fmt_bytes(n: int) -> str:
    """1536 -> "1.5 KiB"; exact bytes below 1 KiB."""
    if n < 1024:
        return f"{plural(n, 'byte')}"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB"):
        value /= 1024
        if value < 1024 or unit == "TiB":
            return f"{value:.1f} {unit}".replace(".0 ", " ")
    return f"{n} bytes"  # pragma: no cover


def file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def open_error(path: str, exc: OSError) -> FileRefused:
    """What an OSError opening or reading ``path`` means, in one line naming it."""
    if isinstance(exc, FileNotFoundError):
        return FileRefused(f"{path}: no such file")
    if isinstance(exc, PermissionError):
        return FileRefused(f"{path}: permission denied")
    if exc.errno == errno.ELOOP:
        return FileRefused(f"{path}: too many levels of symbolic links (a symlink loop)")
    if exc.errno == errno.ENOTDIR:
        return FileRefused(f"{path}: a part of the path is not a directory")
    if exc.errno == errno.ENAMETOOLONG:
        return FileRefused(f"{path[:80]}…: file name too long")
    return FileRefused(f"{path}: cannot read the file ({exc.strerror or exc})")


@contextmanager
def open_regular(
    path: str | os.PathLike[str], *, what: str = "file"
) -> Iterator[tuple[int, os.stat_result]]:
    """``(fd, stat)`` of a regular file, opened for reading, closed on leaving.

    The file is opened without blocking (a FIFO would hang a plain ``open`` until a writer
    comes) and checked with ``fstat`` on what was opened (a symlink swapped after a ``stat`` is
    caught); a directory, FIFO, device or socket is :class:`FileRefused`, as is any error opening
    it. The fd is blocking again when yielded (a regular file never waits)."""
    spath = os.fspath(path)
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(spath, flags)
    except IsADirectoryError:
        raise FileRefused(f"{spath}: is a directory, not a {what}") from None
    except OSError as exc:
        raise open_error(spath, exc) from None
    try:
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise FileRefused(
                    f"{spath}: is {file_kind(st.st_mode)}, not a {what}"
                    + (" (only regular files are read)" if not stat.S_ISDIR(st.st_mode) else "")
                )
            os.set_blocking(fd, True)
        except OSError as exc:
            raise open_error(spath, exc) from None
        yield fd, st
    finally:
        os.close(fd)


def read_span(fd: int, offset: int, count: int) -> bytes:
    """At most ``count`` bytes of an open file from ``offset`` (fewer at its end)."""
    chunks: list[bytes] = []
    got = 0
    while got < count:
        chunk = os.pread(fd, min(count - got, 1 << 30), offset + got)
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_regular(
    path: str | os.PathLike[str],
    max_bytes: int,
    *,
    truncate: bool = False,
    what: str = "file",
) -> bytes:
    """The bytes of a regular file, at most ``max_bytes``.

    Over the cap: :class:`FileRefused` naming the size, or, with ``truncate``, the first
    ``max_bytes + 1`` bytes (the caller sees that there was more). Anything but a regular file
    (directory, FIFO, device, socket) is refused without reading or waiting.
    """
    spath = os.fspath(path)
    with open_regular(spath, what=what) as (fd, st):
        if st.st_size > max_bytes and not truncate:
            raise too_large(spath, st.st_size, max_bytes)
        try:
            chunks: list[bytes] = []
            got = 0
            # one read of the whole file (plus one byte, to see growth) where the OS allows it
            want = min(st.st_size, max_bytes) + 1
            while got <= max_bytes:
                chunk = os.read(fd, min(max(want - got, 1 << 16), max_bytes + 1 - got, 1 << 30))
                if not chunk:
                    break
                chunks.append(chunk)
                got += len(chunk)
        except OSError as exc:
            raise open_error(spath, exc) from None
    data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    if len(data) > max_bytes and not truncate:
        raise grew_too_large(spath, max_bytes)
    return data


def too_large(path: str, size: int, max_bytes: int) -> FileRefused:
    """A file over the size cap, with its size."""
    return FileRefused(
        f"{path}: file is too large ({fmt_bytes(size)}; the limit is {fmt_bytes(max_bytes)})"
    )


def grew_too_large(path: str, max_bytes: int) -> FileRefused:
    """A file that was under the size cap when opened and passed it while being read."""
    return FileRefused(
        f"{path}: file is too large (over {fmt_bytes(max_bytes)}, the limit; it grew while "
        "being read)"
    )
