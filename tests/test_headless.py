"""The core and the readers import neither Textual nor the anthropic SDK."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "ctxview",
    "ctxview.core",
    "ctxview.core.tokens",
    "ctxview.core.protocol",
    "ctxview.sessions",
    "ctxview.config",
    "ctxview.cli",
]


def _loaded(modules: list[str]) -> set[str]:
    code = (
        "import sys, importlib\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_core_imports_neither_textual_nor_sdk() -> None:
    loaded = _loaded(MODULES)
    assert "ctxview.core" in loaded
    bad = {
        m for m in loaded if m.split(".")[0] in {"textual", "anthropic", "httpx", "httpx2", "rich"}
    }
    assert not bad, bad
