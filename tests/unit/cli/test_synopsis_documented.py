"""Every option a headless command accepts is named on that command's line of the synopsis
at the top of docs/cli.md, which says ``ctxview COMMAND --help`` prints the same synopsis
(``export`` and ``repair`` accept ``--no-redact`` and their lines showed only ``--redact``)."""

from __future__ import annotations

import argparse
import re

import pytest

from ctxview.cli.main import build_sub_parser
from tests.support.paths import ROOT

CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


def _synopsis() -> str:
    """The first fenced block of docs/cli.md, continuation lines joined."""
    found = re.search(r"```sh\n(.*?)```", CLI_DOC, re.S)
    assert found is not None
    return found.group(1).replace("\\\n", " ")


def _lines(command: str) -> str:
    """Every synopsis line of ``ctxview COMMAND`` (``report`` has two)."""
    lines = [ln for ln in _synopsis().splitlines() if ln.startswith(f"ctxview {command} ")]
    assert lines, command
    return "\n".join(lines)


def _options(command: str) -> set[str]:
    """The long options of ``command``'s parser, ``--help`` aside."""
    parser = build_sub_parser(command)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    own = sub.choices[command]
    return {
        s for a in own._actions for s in a.option_strings if s.startswith("--") and s != "--help"
    }


@pytest.mark.parametrize(
    "command",
    [
        "inspect",
        "export",
        "requests",
        "compare",
        "repair",
        "diff",
        "sessions",
        "proxy",
        "serve",
        "report",
        "scan",
        "chat",
    ],
)
def test_every_option_is_on_the_commands_synopsis_line(command: str) -> None:
    text = _lines(command)
    missing = sorted(o for o in _options(command) if not re.search(rf"{o}(?![\w-])", text))
    # -o's long form is said once for all commands, beside -o OUT
    missing = [o for o in missing if o != "--output"]
    assert missing == [], f"{command}: {missing}"


def test_the_follow_flag_is_described_as_its_help_says() -> None:
    """``--follow`` follows a Codex rollout as well as a Claude Code transcript (its --help
    says so); docs/cli.md named only the transcript."""
    from ctxview.cli.view import build_app_parser

    follow = next(a for a in build_app_parser()._actions if "--follow" in a.option_strings)
    assert follow.help is not None and "Codex rollout" in follow.help
    said = re.search(r"`--follow` follows (.*?)\(\[live\]", CLI_DOC, re.S)
    assert said is not None
    assert "Codex rollout" in " ".join(said.group(1).split())
