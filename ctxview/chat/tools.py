"""Built-in tools, safe by default.

``calculator`` (a recursive-descent arithmetic parser: never ``eval``), ``current_time``,
``word_count``; ``read_file`` and ``list_directory`` are read-only, confined to the working
directory (no ``..``, no symlink escape, size-capped) and offered only when the config enables
file tools. A tool that fails returns ``is_error: true`` with the reason.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxview.sessions.fileio import FileRefused, read_regular
from ctxview.textfmt import one_line, plural

SCHEMAS: dict[str, dict[str, Any]] = {
    "calculator": {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression: numbers, + - * / // % ** and parentheses.",
        "input_schema": {
            "type": "object",
            "properties": {"expression": {"type": "string", "description": "e.g. (2 + 3) * 7"}},
            "required": ["expression"],
        },
    },
    "current_time": {
        "name": "current_time",
        "description": "The current date and time in UTC (ISO 8601).",
        "input_schema": {"type": "object", "properties": {}},
    },
    "word_count": {
        "name": "word_count",
        "description": "Count the words, lines and characters of a text.",
        "input_schema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
    "read_file": {
        "name": "read_file",
        "description": "Read a UTF-8 text file inside the working directory (size-capped).",
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "relative to the working directory"}
            },
            "required": ["path"],
        },
    },
    "list_directory": {
        "name": "list_directory",
        "description": "List a directory inside the working directory.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string", "description": "relative; default ."}},
        },
    },
}

FILE_TOOLS = ("read_file", "list_directory")


class ToolError(Exception):
    pass


# -- calculator ------------------------------------------------------------------------------------
_TOKEN = re.compile(
    r"\s*(?:(\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|(\*\*|//|[-+*/%()^]))"
)
MAX_EXPONENT = 10_000
MAX_MAGNITUDE = 1e308


def _tokenize(expr: str) -> list[str]:
    pos, out = 0, []
    expr = expr.strip()
    while pos < len(expr):
        m = _TOKEN.match(expr, pos)
        if not m or m.end() == pos:
            bad = expr[pos:].strip()[:10]
            raise ToolError(
                f"unexpected {bad!r} at position {pos + 1}: only numbers, + - * / // % ** and parentheses"
            )
        out.append(m.group(1) or ("**" if m.group(2) == "^" else m.group(2)))
        pos = m.end()
    return out


#: results (and operands) are refused past this many bits, *before* the operation runs: the
#: size of a product or power is known from its operands' sizes, so no call computes a huge number
MAX_BITS = 4096
MAX_NESTING = 200  #: parentheses deep

_BINARY = {"+": (1, "left"), "-": (1, "left"), "*": (2, "left"), "/": (2, "left")}
_BINARY.update({"//": (2, "left"), "%": (2, "left"), "**": (4, "right")})
_UNARY_PREC = 3  # -2**2 == -(2**2), 2**-1 == 2**(-1): below ** and above * /

Number = float | int


def _too_large() -> ToolError:
    return ToolError(f"the result is too large (limit {MAX_BITS} bits, about 1,233 digits)")


def _bits(v: Number) -> int:
    if isinstance(v, int):
        return v.bit_length()
    return 0 if v == 0 or not math.isfinite(v) else max(0, math.frexp(v)[1])


def _apply(op: str, a: Number, b: Number) -> Number:
    """One binary operation, refused before it runs when its result would be too large."""
    ints = isinstance(a, int) and isinstance(b, int)
    # the size of a product or power is known before it is computed: refuse it then
    if op == "*" and ints and _bits(a) + _bits(b) - 1 > MAX_BITS:
        raise _too_large()
    if op == "**":
        if abs(b) > MAX_EXPONENT and a not in (0, 1, -1):
            raise ToolError(f"exponent {b} is too large (limit {MAX_EXPONENT})")
        if ints and abs(a) > 1 and abs(b) * math.log2(abs(a)) > MAX_BITS + 1:
            raise _too_large()
        if ints and b < 0 and a == 0:
            raise ToolError("zero cannot be raised to a negative power")
    if op in ("/", "//", "%") and b == 0:
        raise ToolError("division by zero")
    try:
        if op == "+":
            v: Number = a + b
        elif op == "-":
            v = a - b
        elif op == "*":
            v = a * b
        elif op == "/":
            v = a / b
            if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
                v = int(v)
        elif op == "//":
            v = a // b
        elif op == "%":
            v = a % b
        else:
            v = a**b
    except OverflowError:
        raise _too_large() from None
    except ZeroDivisionError:
        raise ToolError("division by zero") from None
    if isinstance(v, complex):
        raise ToolError("the result is not a real number")
    _check(v)
    return v


def _number(tok: str) -> Number:
    if any(c in tok for c in ".eE"):
        v = float(tok)
        if not math.isfinite(v):
            raise ToolError(f"{tok[:20]} is too large for a number")
        return v
    if len(tok) > 1000:
        raise _too_large()
    return int(tok)


def _evaluate(tokens: list[str]) -> Number:
    """Shunting-yard: no recursion, so 200 nested parentheses or 900 unary minuses are fine."""
    out: list[Number] = []
    ops: list[str] = []  # "(", "u-", "u+" or a binary operator
    depth = 0
    expect_operand = True

    def reduce() -> None:
        op = ops.pop()
        if op in ("u-", "u+"):
            v = out.pop()
            out.append(-v if op == "u-" else v)
            return
        b, a = out.pop(), out.pop()
        out.append(_apply(op, a, b))

    def prec(op: str) -> int:
        return _UNARY_PREC if op in ("u-", "u+") else _BINARY[op][0]

    for tok in tokens:
        if expect_operand:
            if tok in ("+", "-"):
                ops.append("u" + tok)
            elif tok == "(":
                depth += 1
                if depth > MAX_NESTING:
                    raise ToolError(f"parentheses nested too deeply (limit {MAX_NESTING})")
                ops.append("(")
            elif tok[0].isdigit() or tok[0] == ".":
                out.append(_number(tok))
                expect_operand = False
            else:
                raise ToolError(f"unexpected {tok!r}")
        elif tok == ")":
            while ops and ops[-1] != "(":
                reduce()
            if not ops:
                raise ToolError("unexpected ')'")
            ops.pop()
            depth -= 1
        elif tok in _BINARY:
            p, assoc = _BINARY[tok]
            while ops and ops[-1] != "(":
                top = prec(ops[-1])
                if top > p or (top == p and assoc == "left"):
                    reduce()
                else:
                    break
            ops.append(tok)
            expect_operand = True
        else:
            raise ToolError(f"unexpected {tok!r} after the expression")
    if expect_operand:
        raise ToolError("the expression ends too early")
    while ops:
        if ops[-1] == "(":
            raise ToolError("the expression ends too early: missing closing parenthesis")
        reduce()
    return out[0]


def _check(v: Number) -> None:
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        raise _too_large() if math.isinf(v) else ToolError("the result is not a number")
    if isinstance(v, int) and v.bit_length() > MAX_BITS:
        raise _too_large()


def calculate(expression: str) -> str:
    if not isinstance(expression, str) or not expression.strip():
        raise ToolError("expression is empty")
    if len(expression) > 1000:
        raise ToolError("expression is too long (limit 1000 characters)")
    value = _evaluate(_tokenize(expression))
    if isinstance(value, float):
        return repr(round(value, 12)).removesuffix(".0") if value.is_integer() else repr(value)
    return str(value)


# -- file tools ------------------------------------------------------------------------------------
def _confined(root: Path, rel: Any) -> Path:
    if not isinstance(rel, str):
        raise ToolError("path must be a string")
    if "\x00" in rel:
        raise ToolError("path contains a NUL byte")
    raw = Path(rel)
    if raw.is_absolute() or ".." in raw.parts:
        raise ToolError(
            f"{rel}: only paths inside the working directory are allowed (no absolute paths, no ..)"
        )
    try:
        root = root.resolve()
        target = (root / raw).resolve()
    except (OSError, RuntimeError) as exc:  # a symlink loop (RuntimeError before Python 3.13)
        raise ToolError(f"{rel}: cannot resolve the path ({exc})") from None
    if target != root and root not in target.parents:
        raise ToolError(f"{rel}: resolves outside the working directory (symlink escape refused)")
    return target


def read_file(root: Path, path: Any, max_bytes: int) -> str:
    target = _confined(root, path)
    try:
        data = read_regular(target, max_bytes, truncate=True, what="text file")
    except FileRefused as exc:
        # the message names the path the model gave, not the resolved one
        raise ToolError(str(exc).replace(str(target), str(path), 1)) from None
    if b"\x00" in data[:8192]:
        raise ToolError(f"{path}: binary file, not shown")
    truncated = len(data) > max_bytes
    text = data[:max_bytes].decode("utf-8", errors="replace")
    if truncated:
        text += f"\n[truncated at {max_bytes:,} bytes]"
    return text


def list_directory(root: Path, path: Any = ".", limit: int = 500) -> str:
    target = _confined(root, path if path not in (None, "") else ".")
    if not target.is_dir():
        raise ToolError(f"{path}: not a directory")
    entries: list[tuple[bool, str]] = []
    total = 0
    with os.scandir(target) as it:
        for entry in it:
            total += 1
            if total <= 100_000:  # bounded: a huge directory is counted, not sorted
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                entries.append((is_dir, entry.name))
    entries.sort(key=lambda e: (not e[0], e[1].lower()))
    lines = [name + ("/" if is_dir else "") for is_dir, name in entries[:limit]]
    if total > limit:
        lines.append(f"[{total - limit} more entries]")
    return "\n".join(lines) if lines else "(empty directory)"


@dataclass
class ToolSettings:
    enabled: tuple[str, ...] = ("calculator", "current_time", "word_count")
    file_tools: bool = False
    max_bytes: int = 65536
    root: Path = Path(".")

    @classmethod
    def from_config(cls, values: Mapping[str, Any], root: Path | None = None) -> ToolSettings:
        enabled = tuple(values.get("tools_enabled", cls.enabled))
        file_tools = bool(values.get("file_tools", False))
        if file_tools:
            enabled = tuple(dict.fromkeys((*enabled, *FILE_TOOLS)))
        else:
            enabled = tuple(t for t in enabled if t not in FILE_TOOLS)
        return cls(
            enabled, file_tools, int(values.get("file_tool_max_bytes", 65536)), root or Path.cwd()
        )

    def schemas(self) -> list[dict[str, Any]]:
        return [SCHEMAS[name] for name in self.enabled if name in SCHEMAS]


def run_tool(name: str, tool_input: Any, settings: ToolSettings) -> tuple[str, bool]:
    """(content, is_error) of one tool call. Never raises: every fault is an error result with
    a one-line message, so the tool_use is always answered and the chat goes on."""
    try:
        return _run_tool(name, tool_input, settings)
    except BaseException as exc:
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return one_line(f"{name} failed: {type(exc).__name__}", 200), True


def _run_tool(name: str, tool_input: Any, settings: ToolSettings) -> tuple[str, bool]:
    if not isinstance(name, str) or name not in settings.enabled:
        hint = (
            " (file tools are off: set file_tools = true in the config)"
            if name in FILE_TOOLS
            else ""
        )
        return f"unknown or disabled tool {one_line(repr(name), 100)}{hint}", True
    args = tool_input if isinstance(tool_input, Mapping) else {}
    try:
        if name == "calculator":
            return calculate(args.get("expression", "")), False
        if name == "current_time":
            return datetime.now(UTC).isoformat(timespec="seconds"), False
        if name == "word_count":
            text = args.get("text", "")
            if not isinstance(text, str):
                raise ToolError("text must be a string")
            return (
                f"{plural(len(text.split()), 'word')}, "
                f"{plural(len(text.splitlines()) or (1 if text else 0), 'line')}, "
                f"{plural(len(text), 'character')}",
                False,
            )
        if name == "read_file":
            return read_file(settings.root, args.get("path"), settings.max_bytes), False
        if name == "list_directory":
            return list_directory(settings.root, args.get("path", ".")), False
    except ToolError as exc:
        return one_line(str(exc), 500), True
    except OSError as exc:
        return one_line(f"{exc.strerror or exc}", 500), True
    except RecursionError:
        return f"{name} failed: the input is nested too deeply", True
    except MemoryError:
        return f"{name} failed: out of memory", True
    except Exception as exc:  # any fault is the model's tool_result, never an unanswered tool_use
        return one_line(f"{name} failed: {type(exc).__name__}: {exc}", 500), True
    return f"tool {name!r} has no implementation", True
