"""ctxview's command line, run as a user runs it (a subprocess) or in the test's process."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.support.paths import ROOT


def cli(*argv: str, timeout: float = 10, **kw: object) -> subprocess.CompletedProcess[str]:
    """ctxview in a subprocess, as a user runs it (``python -m ctxview``: the console script's
    path, ``cli.run``); the timeout proves it never hangs."""
    return subprocess.run(
        [sys.executable, "-m", "ctxview", *argv],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        **kw,  # type: ignore[arg-type]
    )


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """ctxview's ``main`` in the test's process: (exit code, stdout, stderr)."""
    from ctxview.cli import main

    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    """The one line an error prints (never a traceback)."""
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]
