"""The core, the readers and the chat loop import neither Textual nor the anthropic SDK."""

from __future__ import annotations

import subprocess
import sys

MODULES = [
    "ctxview",
    "ctxview.core",
    "ctxview.core.tokens",
    "ctxview.core.protocol",
    "ctxview.core.usage",
    "ctxview.core.requests",
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


def test_chat_imports_neither_textual_nor_sdk() -> None:
    """Every module of ``ctxview.chat`` (the headless agent loop and ``chat --no-tui``): the SDK
    is imported on the first request, never at import time."""
    import pkgutil

    import ctxview.chat

    names = ["ctxview.chat"] + [
        f"ctxview.chat.{m.name}" for m in pkgutil.iter_modules(ctxview.chat.__path__)
    ]
    assert {"ctxview.chat.loop", "ctxview.chat.run", "ctxview.chat.backends"} <= set(names)
    loaded = _loaded(names)
    bad = {m for m in loaded if m.split(".")[0] in {"textual", "anthropic", "httpx", "rich"}}
    assert not bad, bad
    assert not any(m.startswith("ctxview.app") for m in loaded)


def test_palette_and_chat_adapter_do_not_import_the_app_module() -> None:
    """No import circle: the palette provider and the chat adapter name the app for the type
    checker only."""
    loaded = _loaded(["ctxview.app.commands", "ctxview.app.chat"])
    assert "ctxview.app.commands" in loaded and "ctxview.app.chat" in loaded
    assert "ctxview.app.app" not in loaded


def test_live_modules_are_headless() -> None:
    loaded = _loaded(
        [
            "ctxview.live.sse",
            "ctxview.live.recording",
            "ctxview.live.follow",
            "ctxview.live.sessions_list",
            "ctxview.live.proxy",
            "ctxview.live.commands",
        ]
    )
    assert "ctxview.live.proxy" in loaded and "aiohttp" in loaded
    bad = {m for m in loaded if m.split(".")[0] in {"textual", "anthropic", "httpx", "httpx2"}}
    assert not bad, bad
