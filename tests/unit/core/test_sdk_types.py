"""The SDK's types reach the core for annotations alone: ``ctxview.core.sdk_types`` imports
``anthropic`` only under ``TYPE_CHECKING`` (``.importlinter`` lets that one module import it),
and using the library's names loads no SDK."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import ctxview.core.sdk_types

SOURCE = Path(ctxview.core.sdk_types.__file__)


def _sdk_imports_outside_type_checking(tree: ast.Module) -> list[int]:
    """Line numbers of ``anthropic`` imports not inside an ``if TYPE_CHECKING:`` block."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            guarded.update(id(n) for n in ast.walk(node))
    bad = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom):
            names = [node.module or ""]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        if any(n.split(".")[0] == "anthropic" for n in names) and id(node) not in guarded:
            bad.append(node.lineno)
    return bad


def test_the_sdk_is_imported_for_annotations_only() -> None:
    tree = ast.parse(SOURCE.read_text())
    assert _sdk_imports_outside_type_checking(tree) == []
    assert "anthropic" in SOURCE.read_text()  # (the check has something to check)


def test_the_check_sees_a_runtime_import() -> None:
    tree = ast.parse("from typing import TYPE_CHECKING\nimport anthropic\n")
    assert _sdk_imports_outside_type_checking(tree) == [2]


def test_using_the_library_loads_no_sdk_nor_textual() -> None:
    code = (
        "import ctxview, sys\n"
        "for name in ctxview.__all__: getattr(ctxview, name)\n"
        "ctx = ctxview.ConversationContext(tools=[{'name': 't', 'input_schema': {}}])\n"
        "ctx.add_user_message('hi'); ctx.request(model='m', max_tokens=1, check=True)\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = {m.split(".")[0] for m in out.stdout.split()}
    assert not loaded & {"anthropic", "textual", "rich", "httpx"}
