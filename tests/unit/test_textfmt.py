"""Text formatting shared by the CLI and the TUI: shares, plurals, shell words."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess

import pytest

from ctxview.textfmt import shell_word, visible


def test_share_never_rounds_something_to_nothing() -> None:
    from ctxview.app.widgets.sidebar import share

    assert [share(n, 1_000_000) for n in (0, 1, 466, 499, 500, 76_350)] == [
        "0.0%",
        "<0.1%",
        "<0.1%",
        "<0.1%",
        "0.1%",
        "7.6%",
    ]
    assert share(5, 0) == "0.0%"


def test_plurals() -> None:
    from ctxview.chat.tools import ToolSettings, run_tool
    from ctxview.textfmt import plural, tokens_text

    assert tokens_text(1) == "~1 token" and tokens_text(2) == "~2 tokens"
    assert tokens_text(1234) == "~1.2k tokens" and plural(1, "line") == "1 line"
    out, err = run_tool("word_count", {"text": "one"}, ToolSettings.from_config({}))
    assert not err and "1 word, 1 line, 3 characters" in out


def test_tail_text_marks_a_cut() -> None:
    from ctxview.textfmt import tail_text

    assert tail_text("/a/b", 4) == "/a/b"
    assert tail_text("/work/proj", 6) == "…/proj"
    assert tail_text("abc", 1) == "…"


def test_visible_shows_every_control_in_text_beyond_ascii() -> None:
    """Text with accents or emoji takes a scan before any translation: a control anywhere in
    it is still shown, and text without one comes back as it was."""
    from hypothesis import given
    from hypothesis import strategies as st

    from ctxview.textfmt import _TABLE, visible

    @given(st.text(), st.sampled_from(sorted(_TABLE)), st.text())
    def shown(before: str, control: int, after: str) -> None:
        text = f"é{before}{chr(control)}{after}"
        assert visible(text) == text.translate(_TABLE)
        assert chr(control) not in visible(text)

    shown()
    assert visible("naïve ✓ text") == "naïve ✓ text"


def test_money_puts_the_sign_before_the_dollar_and_sizes_by_magnitude() -> None:
    from ctxview.textfmt import fmt_usd

    assert [fmt_usd(v) for v in (0.0225, 15606, -0.0001, -15)] == [
        "$0.0225",
        "$15,606.00",
        "-$0.0001",
        "-$15.00",
    ]


SHELL_NAMES = [
    "plain.jsonl",
    "my session.jsonl",
    "it's $HOME `x`.jsonl",
    "esc\x1b[31m.jsonl",
    os.fsdecode(b"bad\xff\xfe.jsonl"),
    "nl\nx",
    "tab\tx",
    "bidi\u202eevil",
    "c1\x85x",
    "back\\slash'q",
    "ünïcode ok",
    "line\u2028sep",
    "del\x7f",
    "",
]


@pytest.mark.parametrize("name", SHELL_NAMES)
def test_a_shell_word_is_safe_on_a_terminal_and_one_word(name: str) -> None:
    word = shell_word(name)
    assert word == visible(word) and "\n" not in word and "\t" not in word
    word.encode("utf-8")  # no lone surrogate left: it can be printed
    if name and " " not in name and name.isascii() and name.isprintable():
        assert shlex.split(word) == [name]


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_a_shell_word_pasted_into_bash_gives_the_name_back() -> None:
    script = "; ".join(f"printf '%s\\0' {shell_word(n)}" for n in SHELL_NAMES)
    out = subprocess.run(
        ["bash", "-c", script],
        capture_output=True,
        check=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    ).stdout
    assert out.split(b"\0")[:-1] == [os.fsencode(n) for n in SHELL_NAMES]
