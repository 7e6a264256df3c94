"""The session layer's name for :mod:`ctxview.core.fileio` (reading a file the user named):
the readers, the live sources and the config import it from here."""

from __future__ import annotations

from ctxview.core.fileio import (
    FileRefused,
    file_kind,
    fmt_bytes,
    open_regular,
    read_regular,
    read_span,
)

__all__ = ["FileRefused", "file_kind", "fmt_bytes", "open_regular", "read_regular", "read_span"]
