from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


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
    for name in (
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "GEMINI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_GEMINI_BASE_URL",
        "CTXVIEW_ANTHROPIC_UPSTREAM",
        "CTXVIEW_OPENAI_UPSTREAM",
        "CTXVIEW_GEMINI_UPSTREAM",
        "CODEX_HOME",
        "GEMINI_CLI_HOME",
    ):
        monkeypatch.delenv(name, raising=False)
    from ctxview.core.providers import gemini_vocabulary

    # every test counts Gemini text by words unless it asks for the vocabulary
    # (tests/support/gemini_vocabulary.py), whatever the user's environment or data folder
    # holds: an empty value is no vocabulary, read afresh
    monkeypatch.setenv(gemini_vocabulary.ENV, "")
    gemini_vocabulary.reset()


@pytest.fixture(autouse=True)
def _unfreeze_gc() -> object:
    """The app freezes its loaded session out of GC; in one test process that freeze would pile
    up across tests and make every later collection and load slower."""
    yield
    from ctxview.sessions.model import unfreeze

    unfreeze()
    styles_cache = sys.modules.get("textual._styles_cache")
    if styles_cache is not None:
        # Textual memoises ``StylesCache.get_inner_outer`` with ``lru_cache`` on the instance
        # method: its 1024 keys keep every widget's StylesCache, and the strips it holds, alive
        # after the app is gone. A process of many Pilot tests then carries millions of objects
        # that every full collection walks (a third of a Pilot file's time went to the GC).
        styles_cache.StylesCache.get_inner_outer.cache_clear()


@pytest.fixture
def fake_api():  # type: ignore[no-untyped-def]
    from tests.support.fake_api import running

    yield from running()


@pytest.fixture
def with_gemini_vocabulary(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Gemini text counted by the real vocabulary for this test, as a user who installed it
    (tests/support/gemini_vocabulary.py: skipped, or failed where required, without it)."""
    from ctxview.core.providers import gemini_vocabulary
    from tests.support.gemini_vocabulary import vocabulary_file

    path = vocabulary_file()
    monkeypatch.setenv(gemini_vocabulary.ENV, str(path))
    gemini_vocabulary.reset()
    assert gemini_vocabulary.active().vocabulary is not None, gemini_vocabulary.active().problem
    yield path
    gemini_vocabulary.reset()
