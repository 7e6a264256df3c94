"""The sidebar: its verdict on the window about to be sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.apphelp import make_app, settle


@pytest.mark.parametrize("model", ["claude-haiku-4-5"])  # a 200k model (4.6+ have 1M)
async def test_sidebar_verdict_flags_a_window_over_the_context(tmp_path: Path, model: str) -> None:

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
