"""``examples/agent_loop.py``, the library page's agent loop: it runs against the loopback fake
of the Messages API through the real SDK, saves a session ctxview opens, and type-checks under
``mypy --strict`` from an installed copy of ctxview (its ``py.typed``), with no cast or ignore."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import ctxview
from tests.support.cli import run
from tests.support.fake_api import FakeAPI, Response
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "agent_loop.py"


def _load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("agent_loop_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _message(n: int, content: list[dict[str, Any]], stop: str) -> Response:
    return Response(
        "json",
        body={
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": 100 + n, "output_tokens": 20},
        },
    )


def _tool_use(n: int, name: str, a: float, b: float) -> Response:
    use = {"type": "tool_use", "id": f"toolu_{n}", "name": name, "input": {"a": a, "b": b}}
    return _message(n, [{"type": "text", "text": "Computing."}, use], "tool_use")


def test_the_loop_runs_against_the_fake_api(
    fake_api: FakeAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    fake_api.queue(
        _tool_use(1, "multiply", 1234, 5678),
        _tool_use(2, "add", 7006652, 42),
        _message(3, [{"type": "text", "text": "1234 * 5678 + 42 = 7006694"}], "end_turn"),
    )
    saved = tmp_path / "run.json"
    assert _load_example().main(["--save", str(saved), "--model", "claude-fake"]) == 0
    assert capsys.readouterr().out.strip() == "1234 * 5678 + 42 = 7006694"
    sent = fake_api.requests
    assert len(sent) == 3
    assert sent[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert [t["name"] for t in sent[0]["tools"]] == ["add", "multiply"]
    assert sent[1]["messages"][-1]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_1",
        "content": "7006652",
        "is_error": False,
    }
    # the saved session reopens as the loop left it, and the app reads it
    ctx = ctxview.load(saved)
    assert len(ctx) == 6 and ctx.strategy == "pair-safe"
    history = ctx.transcript
    assert history[1].meta["usage"]["input_tokens"] == 101
    assert history[1].meta["stop_reason"] == "tool_use"
    code, out, _ = run(capsys, "inspect", str(saved), "--json")
    assert code == 0
    assert json.loads(out)["window"]["size"] == 6


def test_the_loop_goes_on_from_a_saved_run(
    fake_api: FakeAPI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-key")
    fake_api.queue(
        _message(1, [{"type": "text", "text": "4"}], "end_turn"),
        _tool_use(2, "multiply", 4, 2),
        _message(3, [{"type": "text", "text": "8"}], "end_turn"),
    )
    example = _load_example()
    saved = tmp_path / "run.json"
    assert example.main(["--save", str(saved), "--model", "claude-fake", "2 + 2?"]) == 0
    first = saved.read_bytes()
    resumed = ["--resume", str(saved), "--model", "claude-fake", "times 2?"]
    assert example.main([*resumed, "--save", str(saved)]) == 0
    assert capsys.readouterr().out.split() == ["4", "8"]
    # the second run's first request goes on from the saved window, settings and tools
    sent = fake_api.requests[1]
    assert [m["content"] for m in sent["messages"][:3]] == [
        "2 + 2?",
        [{"type": "text", "text": "4"}],
        "times 2?",
    ]
    assert [t["name"] for t in sent["tools"]] == ["add", "multiply"]
    ctx = ctxview.load(saved)
    assert saved.read_bytes() != first and len(ctx) == 6 and ctx.step == 6
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert example.main(["--resume", str(broken)]) == 2
    assert capsys.readouterr().err.startswith(f"cannot resume: {broken}: invalid JSON")


def test_the_library_page_shows_the_examples_loop_as_it_is() -> None:
    page = (ROOT / "docs" / "library.md").read_text()
    start = page.index("```python\ndef agent(") + len("```python\n")
    shown = page[start : page.index("```", start)]
    assert shown in EXAMPLE.read_text()


def test_the_example_has_no_cast_nor_ignore() -> None:
    text = EXAMPLE.read_text()
    assert "type: ignore" not in text and "cast(" not in text


def _installed_copy(tmp: Path) -> Path:
    """A virtual environment holding ctxview as its wheel installs it, and this interpreter's
    other packages; returns its python."""
    wheels = tmp / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--quiet",
            "-w",
            str(wheels),
            str(ROOT),
        ],
        check=True,
        capture_output=True,
    )
    (wheel,) = wheels.glob("ctxview-*.whl")
    venv = tmp / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    with zipfile.ZipFile(wheel) as zf:
        assert "ctxview/py.typed" in zf.namelist()
        zf.extractall(site)
    # the dependencies (the SDK and what it imports) from this interpreter, linked one by one:
    # a .pth to its whole site-packages would bring the editable ctxview of a development
    # install along, and mypy would read that one instead
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        name = entry.name
        if name.endswith(".pth") or name.startswith(("ctxview", "_editable", "__")):
            continue
        if not (site / name).exists():
            (site / name).symlink_to(entry)
    return python


@pytest.mark.slow
def test_mypy_strict_sees_the_types_of_an_installed_copy(tmp_path: Path) -> None:
    python = _installed_copy(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent_loop.py").write_text(EXAMPLE.read_text())
    (project / "probe.py").write_text(
        "from ctxview import ConversationContext\n"
        "ctx = ConversationContext()\n"
        "wrong: int = ctx.messages  # the one error: mypy knows what messages is\n"
        "from ctxview import Budget, register_strategy, safe_cut\n"
        "def keep_recent(messages: list[dict[str, object]], budget: Budget) -> int:\n"
        "    return safe_cut(messages, len(messages) - budget.max_messages)\n"
        "register_strategy('keep-recent', keep_recent)\n"
        "ConversationContext(strategy=keep_recent, token_counter=lambda r: len(r['messages']))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--python-executable",
            str(python),
            "agent_loop.py",
            "probe.py",
        ],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
    )
    lines = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert len(lines) == 1, out.stdout
    assert lines[0].startswith("probe.py:3: error: Incompatible types in assignment")
    assert "MessageParam" in lines[0]
