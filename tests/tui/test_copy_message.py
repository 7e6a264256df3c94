"""Copying the selected message: y its text, Y its JSON (the terminal's clipboard), v the
user's pager; visible text only, never through a shell."""

from __future__ import annotations

import contextlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.apphelp import FORBIDDEN, make_app, settle, wait_until

HOSTILE = "run \x1b]52;c;ZXZpbA==\x07 this \u202etxt.exe\x9b then [b]bold[/b]"


def _session(tmp_path: Path) -> str:
    p = tmp_path / "s.json"
    p.write_text(
        json.dumps(
            {
                "messages": [
                    {"role": "user", "content": HOSTILE},
                    {
                        "role": "assistant",
                        "content": [
                            {"type": "text", "text": "Listing."},
                            {
                                "type": "tool_use",
                                "id": "t1",
                                "name": "Bash",
                                "input": {"command": "ls"},
                            },
                        ],
                    },
                ]
            }
        )
    )
    return str(p)


def _notices(app: Any) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def test_y_copies_visible_text_and_Y_the_json(tmp_path: Path) -> None:
    app = make_app(_session(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        app.timeline.select_id(0)
        await pilot.press("y")
        copied = app.clipboard
        assert copied == "run ␛]52;c;ZXZpbA==␇ this ⟨U+202E⟩txt.exe\\x9b then [b]bold[/b]"
        assert not FORBIDDEN & set(copied)
        assert any(n.startswith("copied #0 (") for n in _notices(app))
        app.timeline.select_id(1)
        await pilot.press("y")
        assert app.clipboard == 'Listing.\n\nBash({\n  "command": "ls"\n})'
        app.timeline.select_id(0)
        await pilot.press("Y")
        assert json.loads(app.clipboard) == {"role": "user", "content": HOSTILE}
        assert not FORBIDDEN & set(app.clipboard.replace("\n", ""))


async def test_v_pages_the_message_through_a_file_never_a_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "paged.txt"
    argv_file = tmp_path / "argv.json"
    pager = tmp_path / "pager.py"
    pager.write_text(
        "import json, shutil, sys\n"
        f"json.dump(sys.argv[1:], open({str(argv_file)!r}, 'w'))\n"
        f"shutil.copy(sys.argv[-1], {str(out)!r})\n"
    )
    monkeypatch.setenv("PAGER", f"{sys.executable} {pager} --flag")
    app = make_app(_session(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        # a headless app cannot hand the terminal over: suspending is the driver's part
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)
        app.timeline.select_id(0)
        await pilot.press("v")
        await wait_until(pilot, out.exists)
        argv = json.loads(argv_file.read_text())
        assert argv[0] == "--flag" and len(argv) == 2  # the file's name, never its text
        assert not Path(argv[1]).exists()  # removed once the pager is done
        paged = out.read_text()
        assert paged.startswith("#0 user\n\n── [0] text ──\nrun ␛]52")
        assert not FORBIDDEN & set(paged.replace("\n", ""))


async def test_a_missing_pager_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAGER", "no-such-pager-here -R")
    app = make_app(_session(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await wait_until(
            pilot,
            lambda: (
                "no pager: $PAGER (no-such-pager-here -R) is not a command found on the PATH"
                in _notices(app)
            ),
        )
