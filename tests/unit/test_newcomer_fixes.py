"""Defects a newcomer run found (the README's promises), kept fixed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import ROOT


def test_column_titles_never_lose_tokens_and_status() -> None:
    from ctxview.app.widgets.timeline import column_header

    for width in range(45, 200):
        header = column_header(width)
        assert "tokens" in header and "status" in header, (width, header)


def test_default_model_has_a_known_minimum_cacheable_length() -> None:
    from ctxview.config import DEFAULTS
    from ctxview.core.pricing import min_cacheable

    assert min_cacheable(DEFAULTS["model"])[1]
    assert min_cacheable("claude-sonnet-4-7") == (1024, True)  # the table's "Sonnet 4.x/5"
    assert min_cacheable("claude-opus-4-9")[1] is False  # no guess for another family


def _ctxview(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxview", *args],
        capture_output=True,
        text=True,
        timeout=20,
        env={**os.environ, **env},
    )


def test_config_set_refuses_a_fifo_system_prompt_file_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "prompt.txt"
    os.mkfifo(fifo)
    env = {"CTXVIEW_CONFIG": str(tmp_path / "c.toml")}
    r = _ctxview("config", "set", "system_prompt_file", str(fifo), env=env)  # used to hang
    assert r.returncode == 2 and "FIFO" in r.stderr and r.stderr.count("\n") == 1


def test_export_does_not_create_missing_folders(tmp_path: Path) -> None:
    root = ROOT
    target = tmp_path / "no" / "such" / "x.json"
    r = _ctxview(
        "export",
        str(root / "sample_sessions" / "long_chat.json"),
        "-o",
        str(target),
        env={"CTXVIEW_CONFIG": str(tmp_path / "c.toml")},
    )
    assert r.returncode == 2 and "no such folder" in r.stderr
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("model", ["claude-haiku-4-5"])  # a 200k model (4.6+ have 1M)
async def test_sidebar_verdict_flags_a_window_over_the_context(tmp_path: Path, model: str) -> None:
    from tests.support.apphelp import make_app, settle

    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 4000} for i in range(301)
    ]
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"model": model, "max_tokens": 10, "messages": messages}))
    app = make_app(str(p))
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        state, short, first = app.model.verdict()
        assert state == "bad" and "prompt is too long" in first, (short, first)
