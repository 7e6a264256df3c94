"""``inspect``'s problems and fixes tables name each message as its other rows do (``window ids
#0, #14–#26``): by its id, not by its position in the window, which the text shows nowhere
else (agent_loop.json's broken message #14 was listed as ``1``)."""

from __future__ import annotations

import json

import pytest

from tests.support.cli import run
from tests.support.paths import SAMPLES


def test_the_problems_and_fixes_name_the_message_by_its_id(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(SAMPLES / "agent_loop.json")
    code, out, _ = run(capsys, "inspect", path, "--json")
    summary = json.loads(out)
    # (the JSON keeps the window position, as documented)
    assert {p["index"] for p in summary["problems"]} == {1}
    assert summary["window"]["ids"][1] == 14
    code, out, _ = run(capsys, "inspect", path)
    assert code == 1
    rows = [ln for ln in out.splitlines() if ln.startswith("│") and "│ " in ln[1:]]
    firsts = [ln.split("│")[1].strip() for ln in rows]
    assert "#14" in firsts and "1" not in firsts
    assert "index" not in out
