"""Which packages stay headless: the core, the sessions, the config, the command line, the chat
loop and the live sources import neither Textual nor the anthropic SDK (nor the HTTP and terminal
libraries those pull in); the SDK is imported on a backend's first request, never before. Each
check runs in a fresh interpreter, so what the test process already imported cannot hide it."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import ctxview.chat
import ctxview.fleet
from tests.support.paths import SAMPLES

#: what a headless module must never import
UI_OR_SDK = {"textual", "anthropic", "httpx", "httpx2", "rich"}

CHAT = ["ctxview.chat", "ctxview.cli.chat"] + [
    f"ctxview.chat.{m.name}" for m in pkgutil.iter_modules(ctxview.chat.__path__)
]
LIVE = [
    "ctxview.sessions.replies",
    "ctxview.live.recording",
    "ctxview.live.follow",
    "ctxview.live.sessions_list",
    "ctxview.live.proxy",
    "ctxview.cli.live",
]
FLEET = ["ctxview.cli.fleet", "ctxview.cli.report", "ctxview.cli.fleet_report"] + [
    f"ctxview.fleet.{m.name}" for m in pkgutil.iter_modules(ctxview.fleet.__path__)
]
CORE = [
    "ctxview",
    "ctxview.core",
    "ctxview.core.tokens",
    "ctxview.core.protocol",
    "ctxview.core.usage",
    "ctxview.core.requests",
    "ctxview.sessions",
    "ctxview.config",
    "ctxview.cli",
    "ctxview.html",
    "ctxview.cli.report",
    "ctxview.cli.html_report",
]


def _loaded(code: str) -> set[str]:
    """The modules loaded after running ``code`` in a fresh interpreter."""
    code += "\nimport sys\nprint('\\n'.join(sorted(sys.modules)))\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def _imported(modules: list[str]) -> set[str]:
    return _loaded(f"import importlib\nfor m in {modules!r}: importlib.import_module(m)")


def _ui_or_sdk(loaded: set[str]) -> set[str]:
    return {m for m in loaded if m.split(".")[0] in UI_OR_SDK}


@pytest.mark.parametrize(
    "modules", [CORE, CHAT, LIVE, FLEET], ids=["core", "chat", "live", "fleet"]
)
def test_headless_modules_import_neither_textual_nor_sdk(modules: list[str]) -> None:
    loaded = _imported(modules)
    assert set(modules) <= loaded
    assert not _ui_or_sdk(loaded), _ui_or_sdk(loaded)
    assert not any(m.startswith("ctxview.app") for m in loaded)


def test_the_lists_name_what_they_hold() -> None:
    assert {"ctxview.chat.loop", "ctxview.cli.chat", "ctxview.chat.backends"} <= set(CHAT)
    assert "aiohttp" in _imported(["ctxview.live.proxy"])  # the proxy's server, headless


def test_inspect_runs_without_textual_or_sdk() -> None:
    """Running a command, not only importing the CLI: nothing it calls imports them lazily."""
    loaded = _loaded(
        "from ctxview.cli import main\n"
        f"main(['inspect', {str(SAMPLES / 'long_chat.json')!r}, '--json'])"
    )
    assert not _ui_or_sdk(loaded), _ui_or_sdk(loaded)


def test_a_backend_imports_the_sdk_on_its_first_request_only() -> None:
    loaded = _loaded(
        "from ctxview.chat.backends import AnthropicBackend\n"
        "b = AnthropicBackend(api_key='k', base_url='http://127.0.0.1:9')"
    )
    assert "ctxview.chat.backends" in loaded and "anthropic" not in loaded


def test_palette_and_chat_adapter_do_not_import_the_app_module() -> None:
    """No import circle: the palette provider and the chat adapter name the app for the type
    checker only."""
    loaded = _imported(["ctxview.app.commands", "ctxview.app.chat"])
    assert "ctxview.app.commands" in loaded and "ctxview.app.chat" in loaded
    assert "ctxview.app.app" not in loaded
