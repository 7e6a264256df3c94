"""Every top-level field of a headless command's ``--json`` object is named where
docs/cli.md describes that command's output (``requests``, ``compare`` and ``repair`` printed a
``skipped`` list the page did not mention)."""

from __future__ import annotations

import json
import re

import pytest

from tests.support.cli import run
from tests.support.paths import ACCEPTANCE, ROOT, SAMPLES

CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
AGENT = str(SAMPLES / "agent_loop.json")
#: a Gemini body: its objects add the route its tokens were estimated for
GEMINI = str(
    ACCEPTANCE
    / "unseen4"
    / "gemini"
    / "fantasy_testgooglecommon_gemini_2_5_flash_multi_tool_req2.json"
)
#: documented once for every command that replays a file ("The config values a command used")
EVERY_COMMAND = {"config_used"}


def _section(title: str) -> str:
    """The text of docs/cli.md's ``## title`` section."""
    found = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", CLI_DOC, re.S | re.M)
    assert found is not None, title
    return found.group(1)


@pytest.mark.parametrize(
    ("argv", "section"),
    [
        (("inspect", AGENT, "--json"), "`inspect`"),
        (("inspect", GEMINI, "--json"), "`inspect`"),
        (("requests", AGENT, "--json"), "`requests` and `compare`"),
        (("compare", AGENT, "--json"), "`requests` and `compare`"),
        (("repair", AGENT, "--json", "--dry-run"), "`repair` and `diff`"),
        (("requests", GEMINI, "--json"), "`requests` and `compare`"),
        (("diff", AGENT, AGENT, "--json"), "`repair` and `diff`"),
    ],
)
def test_each_json_field_is_named_in_the_commands_section(
    argv: tuple[str, ...], section: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out, _ = run(capsys, *argv)
    text = _section(section)
    # named as a JSON string ("key") or in code (`key`, `key {…}` as inspect's section does)
    missing = [
        key
        for key in json.loads(out)
        if key not in EVERY_COMMAND
        and f'"{key}"' not in text
        and not re.search(rf"`{re.escape(key)}\b", text)
    ]
    assert not missing, f"{argv[0]} --json: {missing} not in docs/cli.md's {section}"
