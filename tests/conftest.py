from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"


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


@pytest.fixture(autouse=True)
def _isolated_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Never touch the user's real config or state."""
    base = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("CTXVIEW_CONFIG", str(base / "config.toml"))
    monkeypatch.setenv("CTXVIEW_STATE_DIR", str(base / "state"))
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_BASE_URL", raising=False)


@pytest.fixture(autouse=True)
def _unfreeze_gc() -> object:
    """The app freezes its loaded session out of GC; in one test process that freeze would pile
    up across tests and make every later collection and load slower."""
    yield
    from ctxview.sessions.model import unfreeze

    unfreeze()


@pytest.fixture
def fake_api():  # type: ignore[no-untyped-def]
    from fake_api import running

    yield from running()
