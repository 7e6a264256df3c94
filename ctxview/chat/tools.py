"""Built-in tools, safe by default.

``calculator`` (a recursive-descent arithmetic parser: never ``eval``), ``current_time``,
``word_count``; ``read_file`` and ``list_directory`` are read-only, confined to the working
directory (no ``..``, no symlink escape, size-capped) and offered only when the config enables
file tools. A tool that fails returns ``is_error: true`` with the reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ctxview.textfmt import plural

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


class _Parser:
    def __init__(self, tokens: list[str]) -> None:
        self.t = tokens
        self.i = 0

    def peek(self) -> str | None:
        return self.t[self.i] if self.i < len(self.t) else None

    def take(self) -> str:
        tok = self.peek()
        if tok is None:
            raise ToolError("the expression ends too early")
        self.i += 1
        return tok

    def expr(self) -> float | int:
        v = self.term()
        while self.peek() in ("+", "-"):
            op = self.take()
            r = self.term()
            v = v + r if op == "+" else v - r
        return v

    def term(self) -> float | int:
        v = self.unary()
        while self.peek() in ("*", "/", "//", "%"):
            op = self.take()
            r = self.unary()
            if op == "*":
                v = v * r
            elif r == 0:
                raise ToolError("division by zero")
            elif op == "/":
                v = v / r
                if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
                    v = int(v)
            elif op == "//":
                v = v // r
            else:
                v = v % r
            _check(v)
        return v

    def unary(self) -> float | int:
        if self.peek() in ("+", "-"):
            op = self.take()
            v = self.unary()
            return -v if op == "-" else v
        return self.power()

    def power(self) -> float | int:
        base = self.atom()
        if self.peek() == "**":
            self.take()
            exp = self.unary()  # right-associative
            if abs(exp) > MAX_EXPONENT:
                raise ToolError(f"exponent {exp} is too large (limit {MAX_EXPONENT})")
            try:
                v = base**exp
            except (OverflowError, ZeroDivisionError) as exc:
                raise ToolError(str(exc)) from None
            if isinstance(v, complex):
                raise ToolError("the result is not a real number")
            _check(v)
            return v
        return base

    def atom(self) -> float | int:
        tok = self.take()
        if tok == "(":
            v = self.expr()
            if self.take() != ")":
                raise ToolError("missing closing parenthesis")
            return v
        if tok[0].isdigit() or tok[0] == ".":
            return float(tok) if any(c in tok for c in ".eE") else int(tok)
        raise ToolError(f"unexpected {tok!r}")


def _check(v: float | int) -> None:
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        raise ToolError("the result is too large")
    if isinstance(v, int) and v.bit_length() > 4096:
        raise ToolError("the result is too large")


def calculate(expression: str) -> str:
    if not isinstance(expression, str) or not expression.strip():
        raise ToolError("expression is empty")
    if len(expression) > 1000:
        raise ToolError("expression is too long (limit 1000 characters)")
    p = _Parser(_tokenize(expression))
    value = p.expr()
    if p.peek() is not None:
        raise ToolError(f"unexpected {p.peek()!r} after the expression")
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
    root = root.resolve()
    target = (root / raw).resolve()
    if target != root and root not in target.parents:
        raise ToolError(f"{rel}: resolves outside the working directory (symlink escape refused)")
    return target


def read_file(root: Path, path: Any, max_bytes: int) -> str:
    target = _confined(root, path)
    if not target.exists():
        raise ToolError(f"{path}: no such file")
    if target.is_dir():
        raise ToolError(f"{path}: is a directory")
    with open(target, "rb") as fh:
        data = fh.read(max_bytes + 1)
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
    entries = sorted(target.iterdir(), key=lambda p: (not p.is_dir(), p.name.lower()))
    lines = [p.name + ("/" if p.is_dir() else "") for p in entries[:limit]]
    if len(entries) > limit:
        lines.append(f"[{len(entries) - limit} more entries]")
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
    """(content, is_error) of one tool call."""
    if name not in settings.enabled:
        hint = (
            " (file tools are off: set file_tools = true in the config)"
            if name in FILE_TOOLS
            else ""
        )
        return f"unknown or disabled tool {name!r}{hint}", True
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
        return str(exc), True
    except OSError as exc:
        return f"{exc.strerror or exc}", True
    return f"tool {name!r} has no implementation", True
