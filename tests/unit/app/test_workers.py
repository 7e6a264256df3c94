"""Every Textual worker of ctxview names itself. Without ``description=``, ``@work`` builds one
from ``repr()`` of every argument, on the UI thread, at every call: the cache-line and check
workers take the session's 100,000 messages, and their repr held the first paint of a 100k
transcript for about 0.7 s (and every later change that restarts them)."""

from __future__ import annotations

import ast

from tests.support.paths import ROOT


def _work_decorators() -> list[tuple[str, int, ast.expr]]:
    """Every ``@work`` decorator and every ``run_worker(...)`` call (the app's controllers)."""
    found = []
    for path in sorted((ROOT / "ctxview").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for dec in node.decorator_list:
                    target = dec.func if isinstance(dec, ast.Call) else dec
                    if isinstance(target, ast.Name) and target.id == "work":
                        found.append((str(path.relative_to(ROOT)), node.lineno, dec))
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "run_worker"
            ):
                found.append((str(path.relative_to(ROOT)), node.lineno, node))
    return found


def test_every_worker_has_a_description() -> None:
    decorators = _work_decorators()
    assert len(decorators) >= 8  # the app's, the screens', the live views'
    missing = [
        f"{path}:{line}"
        for path, line, dec in decorators
        if not (isinstance(dec, ast.Call) and any(k.arg == "description" for k in dec.keywords))
    ]
    assert missing == []
