"""The Gemini vocabulary for the tests that count with it (the ``with_gemini_vocabulary``
fixture of tests/conftest.py): the file named by
``$CTXVIEW_TEST_GEMINI_VOCABULARY`` (a Gemma 3 ``tokenizer.json``; `.ci/run` fetches one).
Without it those tests skip, or fail where ``CTXVIEW_REQUIRE_GEMINI_VOCABULARY`` is set (CI, once
it has fetched the file), so a missing file cannot pass for a passing check."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def vocabulary_file() -> Path:
    """The test vocabulary's path, or skip (fail where it is required)."""
    named = os.environ.get("CTXVIEW_TEST_GEMINI_VOCABULARY", "")
    if named and Path(named).is_file():
        return Path(named)
    why = (
        "no Gemini vocabulary: set CTXVIEW_TEST_GEMINI_VOCABULARY to a Gemma 3 tokenizer.json "
        "(docs/gemini.md says where to get one)"
    )
    if os.environ.get("CTXVIEW_REQUIRE_GEMINI_VOCABULARY"):
        pytest.fail(why)
    pytest.skip(why)
