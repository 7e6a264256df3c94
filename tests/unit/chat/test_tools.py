from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxview.chat.tools import ToolSettings, calculate, run_tool


@pytest.mark.parametrize(
    "expr, want",
    [
        ("6*7", "42"),
        ("(2 + 3) * 7", "35"),
        ("2 ** 10", "1024"),
        ("2^3", "8"),
        ("-3 + +5", "2"),
        ("7 / 2", "3.5"),
        ("8 / 2", "4"),
        ("7 // 2", "3"),
        ("7 % 4", "3"),
        ("1.5e3 + .5", "1500.5"),
        ("2 ** -1", "0.5"),
        ("2 ** 3 ** 2", "512"),
    ],
)
def test_calculator(expr: str, want: str) -> None:
    assert calculate(expr) == want


@pytest.mark.parametrize(
    "expr, needle",
    [
        ("__import__('os').system('true')", "unexpected"),
        ("1/0", "division by zero"),
        ("9 ** 9 ** 9", "too large"),
        ("(1 + 2", "ends too early"),
        ("1 + 2)", "unexpected ')'"),
        ("", "empty"),
        ("x" * 2000, "too long"),
        ("(-8) ** 0.5", "not a real number"),
    ],
)
def test_calculator_errors(expr: str, needle: str) -> None:
    content, is_error = run_tool("calculator", {"expression": expr}, ToolSettings())
    assert is_error and needle in content


def test_other_tools() -> None:
    s = ToolSettings()
    content, err = run_tool("word_count", {"text": "the quick brown fox\njumps"}, s)
    assert not err and content.startswith("5 words, 2 lines")
    content, err = run_tool("current_time", {}, s)
    assert not err and content.endswith("+00:00")
    content, err = run_tool("read_file", {"path": "x"}, s)
    assert err and "file tools are off" in content
    content, err = run_tool("nope", {}, s)
    assert err and "unknown" in content


def test_file_tools_confined(tmp_path: Path) -> None:
    root = tmp_path / "work"
    root.mkdir()
    (root / "a.txt").write_text("hello")
    (root / "big.txt").write_text("x" * 100)
    (root / "bin.dat").write_bytes(b"\x00\x01\x02")
    (root / "sub").mkdir()
    (tmp_path / "secret.txt").write_text("top secret")
    os.symlink(tmp_path / "secret.txt", root / "link.txt")
    s = ToolSettings.from_config({"file_tools": True, "file_tool_max_bytes": 10}, root)
    assert {"read_file", "list_directory"} <= set(s.enabled)
    assert run_tool("read_file", {"path": "a.txt"}, s) == ("hello", False)
    content, err = run_tool("read_file", {"path": "big.txt"}, s)
    assert not err and content.startswith("x" * 10) and "truncated at 10 bytes" in content
    for bad, needle in [
        ("../secret.txt", "no .."),
        (str(tmp_path / "secret.txt"), "no absolute"),
        ("link.txt", "symlink escape"),
        ("bin.dat", "binary"),
        ("missing.txt", "no such file"),
        ("sub", "is a directory"),
    ]:
        content, err = run_tool("read_file", {"path": bad}, s)
        assert err and needle in content, (bad, content)
        assert "top secret" not in content
    content, err = run_tool("list_directory", {"path": "."}, s)
    assert not err and content.splitlines()[0] == "sub/" and "a.txt" in content
    content, err = run_tool("list_directory", {"path": ".."}, s)
    assert err
