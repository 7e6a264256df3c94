from __future__ import annotations

import os
import sys
import time
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


@pytest.mark.parametrize(
    "expr",
    [
        "(3**2583)**10000",
        "2**4000*0.5",
        "1e999",
        "1e999 - 1e999",
        "inf - inf",
        "9**9**9**9",
        "(((2**4096)))",
        "10**1233*10**1233",
        "2**-100000",
    ],
)
def test_calculator_refuses_before_computing(expr: str) -> None:
    t0 = time.process_time()
    content, is_error = run_tool("calculator", {"expression": expr}, ToolSettings())
    assert is_error and "\n" not in content
    assert content != "inf" and "nan" not in content
    assert time.process_time() - t0 < 0.05


def test_calculator_nesting_and_edges() -> None:
    assert calculate("(" * 200 + "1+1" + ")" * 200) == "2"
    assert calculate("-" * 500 + "3") == "-3" if 500 % 2 else calculate("-" * 500 + "3") == "3"
    assert calculate("2**4095").startswith("5221944407")
    assert calculate("-2**2") == "-4" and calculate("2**-1*3") == "1.5"
    content, is_error = run_tool(
        "calculator", {"expression": "(" * 201 + "1" + ")" * 201}, ToolSettings()
    )
    assert is_error and "nested too deeply" in content


def test_worst_case_tool_calls_under_a_second_of_cpu(tmp_path: Path) -> None:
    root = tmp_path
    big = root / "big.txt"
    big.write_bytes(b"word " * 2_000_000)
    for i in range(3000):
        (root / f"f{i}.json").write_text("")
    s = ToolSettings.from_config({"file_tools": True}, root)
    worst = [
        ("calculator", {"expression": "*".join(["(2**4095)"] * 100)}),
        ("calculator", {"expression": "9" * 999}),
        ("calculator", {"expression": "+".join(["1.5**9999"] * 100)[:1000]}),
        ("calculator", {"expression": "(" * 499 + "1" + ")" * 499}),
        ("word_count", {"text": "a " * 500_000}),
        ("read_file", {"path": "big.txt"}),
        ("list_directory", {"path": "."}),
    ]
    for name, args in worst:
        t0 = time.process_time()
        content, _ = run_tool(name, args, s)
        assert time.process_time() - t0 < 1.0, (name, content[:80])


def test_every_tool_fault_is_an_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxview.chat import tools

    s = ToolSettings.from_config({"file_tools": True}, tmp_path)
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    content, err = run_tool("read_file", {"path": "loop"}, s)
    assert err and "\n" not in content
    if sys.platform != "win32":
        os.mkfifo(tmp_path / "fifo")
        content, err = run_tool("read_file", {"path": "fifo"}, s)
        assert err and "FIFO" in content and str(tmp_path) not in content
        os.symlink("/dev/zero", tmp_path / "zero")
        content, err = run_tool("read_file", {"path": "zero"}, s)
        assert err  # outside the root, and a device anyway

    def boom(*a: object) -> str:
        raise KeyError("unexpected\nbreak")

    monkeypatch.setattr(tools, "calculate", boom)
    content, err = run_tool("calculator", {"expression": "1"}, s)
    assert err and content.startswith("calculator failed: KeyError") and "\n" not in content
    assert run_tool("calculator", "not an object", ToolSettings())[1] is True
    assert run_tool(["x"], {}, ToolSettings())[1] is True  # type: ignore[arg-type]
