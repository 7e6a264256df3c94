"""The command line's config and its errors: request_timeout, set-time checks, JSON on
unreadable files, export's exit status, one path per error line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import run
from tests.support.paths import FIXTURES, ROOT

SAMPLES = ROOT / "sample_sessions"


def test_request_timeout_is_a_config_key(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    code, out, _ = run(capsys, "config", "show")
    assert "request_timeout = 120.0" in out
    code, out, err = run(capsys, "config", "set", "request_timeout", "30")
    assert code == 0, err
    assert "request_timeout = 30.0" in cfg.read_text()
    code, out, _ = run(capsys, "config", "show")
    assert "request_timeout = 30.0" in out
    code, _, err = run(capsys, "config", "set", "request_timeout", "0")
    assert code == 2 and "request_timeout" in err


def test_request_timeout_reaches_the_sdk_client(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxview.app.app import CtxviewApp
    from ctxview.app.chat import ChatController
    from ctxview.app.model import SessionModel
    from ctxview.chat.backends import AnthropicBackend
    from ctxview.config import load_config
    from ctxview.sessions import LoadedSession, replay

    run(capsys, "config", "set", "request_timeout", "7.5")
    cfg = load_config()
    assert cfg["request_timeout"] == 7.5
    rep = replay(LoadedSession(path="", format="new", messages=[], metas=[]))
    app = CtxviewApp(SessionModel(rep, None, "m"), cfg, opened_file=False, offline=False)
    chat = ChatController(app, offline=False, autosave=False)
    assert isinstance(chat.backend, AnthropicBackend)
    assert chat.backend._kwargs["timeout"] == 7.5


def test_set_refuses_unknown_theme_and_missing_prompt_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    code, _, err = run(capsys, "config", "set", "theme", "no-such-theme")
    assert code == 2 and "unknown theme 'no-such-theme'" in err and "textual-light" in err
    assert not cfg.exists()
    code, _, err = run(capsys, "config", "set", "system_prompt_file", str(tmp_path / "nope.txt"))
    assert code == 2 and "system_prompt_file" in err and "nope.txt" in err
    assert not cfg.exists()
    prompt = tmp_path / "prompt.txt"
    prompt.write_text("be brief")
    assert run(capsys, "config", "set", "system_prompt_file", str(prompt))[0] == 0
    assert run(capsys, "config", "set", "theme", "textual-light")[0] == 0


def test_broken_config_names_its_path_once(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text("this is = = not toml")
    code, _, err = run(capsys, "config", "set", "max_context_messages", "5")
    assert code == 2 and err.count(str(cfg)) == 1, err


def test_inspect_json_on_an_unreadable_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    missing = str(tmp_path / "missing.json")
    code, out, err = run(capsys, "inspect", missing, "--json")
    assert code == 2
    obj = json.loads(out)
    assert obj["file"] == missing and obj["exit"] == 2 and "missing.json" in obj["error"]
    assert "missing.json" in err
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [1, }')
    code, out, err = run(capsys, "inspect", str(bad), "--json")
    assert code == 2 and "line 1" in json.loads(out)["error"] and err


def test_messages_format_error_has_no_double_colon(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    req = tmp_path / "req.json"
    req.write_text('{"model": "x", "messages": [{"role": "user", "content": "hi"}]}')
    code, _, err = run(capsys, "inspect", str(req), "--format", "messages")
    assert code == 2 and ": :" not in err and "expected an array of messages" in err


def test_export_of_a_rejected_window_warns_and_exits_1(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out_path = tmp_path / "body.json"
    code, _, err = run(capsys, "export", str(SAMPLES / "agent_loop.json"), "-o", str(out_path))
    assert code == 1
    assert "would reject" in err and "tool_use_id" in err
    assert json.loads(out_path.read_text())["messages"]  # the body is still written
    code, out, err = run(
        capsys, "export", str(SAMPLES / "agent_loop.json"), "--strategy", "pair-safe"
    )
    assert code == 0 and "reject" not in err and json.loads(out)["messages"]


@pytest.mark.parametrize("command", ["requests", "compare"])
def test_requests_and_compare_json_on_an_unreadable_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: str
) -> None:
    """As ``inspect --json``: one ``{"file", "error", "exit"}`` object on stdout, exit 2."""
    missing = str(tmp_path / "missing.json")
    code, out, err = run(capsys, command, missing, "--json")
    assert code == 2 and "missing.json" in err
    obj = json.loads(out)
    assert obj == {"file": missing, "error": obj["error"], "exit": 2}
    assert "missing.json" in obj["error"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"messages": [1, }')
    code, out, err = run(capsys, command, str(bad), "--json")
    assert code == 2 and "line 1" in json.loads(out)["error"] and err
    # without --json: nothing on stdout
    code, out, _ = run(capsys, command, missing)
    assert code == 2 and out == ""


TRANSCRIPT = str(FIXTURES / "claude_code" / "spotter_short.jsonl")


@pytest.mark.parametrize("command", ["inspect", "requests", "compare", "repair"])
def test_headless_commands_say_which_config_values_they_used(
    capsys: pytest.CaptureFixture[str], command: str
) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('strategy = "pair-safe"\nmax_context_messages = 14\ntheme = "nord"\n')
    extra = ["--dry-run"] if command == "repair" else []
    _, out, err = run(capsys, command, TRANSCRIPT, "--json", *extra)
    assert json.loads(out)["config_used"] == {
        "path": str(cfg),
        "values": {"max_context_messages": 14, "strategy": "pair-safe"},
    }
    _, out, err = run(capsys, command, TRANSCRIPT, *extra)
    assert f'using {cfg}: max_context_messages = 14, strategy = "pair-safe"' in err
    assert "theme" not in err  # the TUI's, not the command's


def test_a_flag_or_the_files_own_settings_win_over_the_config(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('strategy = "pair-safe"\nmax_context_messages = 14\n')
    _, out, err = run(capsys, "inspect", TRANSCRIPT, "--json", "--max", "3")
    assert json.loads(out)["config_used"]["values"] == {"strategy": "pair-safe"}
    # the sample carries its own max and strategy: the config decided nothing
    _, out, err = run(capsys, "inspect", str(SAMPLES / "agent_loop.json"), "--json")
    assert json.loads(out)["config_used"]["values"] == {} and "using" not in err


def test_without_a_config_file_nothing_is_said(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, err = run(capsys, "requests", TRANSCRIPT, "--json")
    assert json.loads(out)["config_used"]["values"] == {} and err == ""


def test_the_help_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxview.cli.main import COMMANDS

    with pytest.raises(SystemExit) as exc:
        run(capsys, "-h")
    assert exc.value.code == 0
    text = " ".join(capsys.readouterr().out.split())  # joined where the help wraps
    assert [c for c in COMMANDS if f"ctxview {c} " not in text] == []


def test_a_usage_error_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxview.cli.main import COMMANDS

    with pytest.raises(SystemExit) as exc:
        run(capsys, "export", "x.json", "--no-such-flag")
    assert exc.value.code == 2
    usage = " ".join(capsys.readouterr().err.split())
    assert "{" + ",".join(COMMANDS) + "}" in usage
    assert all(command in usage for command in ("requests", "compare", "sessions", "proxy", "chat"))


@pytest.mark.parametrize("value", ['"lots"', "1.5", "1e999", "0", "true"])
def test_an_invalid_max_tokens_is_a_problem_never_a_default(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, value: str
) -> None:
    body = tmp_path / "body.json"
    body.write_text(
        '{"messages": [{"role": "user", "content": "hi"}], "model": "m", "max_tokens": '
        + value
        + "}"
    )
    code, out, _ = run(capsys, "inspect", str(body), "--json")
    assert code == 1
    (problem,) = json.loads(out)["problems"]
    assert problem["message"].startswith("max_tokens: ")
    out_path = tmp_path / "out.json"
    code, _, err = run(capsys, "export", str(body), "-o", str(out_path))
    assert code == 2 and "not exported: max_tokens: " in err and not out_path.exists()


def test_a_valid_max_tokens_is_kept_and_one_message_is_singular(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    body = tmp_path / "body.json"
    body.write_text('{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 77}')
    out_path = tmp_path / "out.json"
    code, _, err = run(capsys, "export", str(body), "-o", str(out_path))
    assert code == 0 and json.loads(out_path.read_text())["max_tokens"] == 77
    assert err.strip() == f"wrote {out_path} (1 message)"


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo", "not utf-8"])
def test_a_new_headless_chat_without_its_system_prompt_file_sends_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """The config's system_prompt_file cannot be read: one line naming the config and the
    file, exit 2, no turn sent and nothing saved (it used to chat without the prompt, the
    reason noted after the config's errors were printed, so never shown)."""
    prompt = tmp_path / "prompt.txt"
    if kind == "folder":
        prompt.mkdir()
    elif kind == "fifo":
        os.mkfifo(prompt)
    elif kind == "not utf-8":
        prompt.write_bytes(b"\xff\xfe")
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text(f"system_prompt_file = {json.dumps(str(prompt))}\n")
    out_file = tmp_path / "out.json"
    code, out, err = run(capsys, "chat", "--no-tui", "--offline", "hi", "-o", str(out_file))
    assert (code, out) == (2, "")
    assert err.startswith(f"ctxview: chat: {cfg}: system_prompt_file: {prompt}")
    assert "nothing sent" in err and len(err.splitlines()) == 1 and "Traceback" not in err
    assert not out_file.exists()
    # --json: the same, as one object
    code, out, _ = run(capsys, "chat", "--no-tui", "--offline", "hi", "--json")
    assert code == 2 and str(prompt) in json.loads(out)["error"]


def test_a_chat_continued_from_a_file_keeps_its_own_system_prompt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text(f"system_prompt_file = {json.dumps(str(tmp_path / 'none.txt'))}\n")
    out_file = tmp_path / "out.json"
    code, _, err = run(
        capsys,
        "chat",
        "--no-tui",
        "--offline",
        "hi",
        str(SAMPLES / "agent_loop.json"),
        "-o",
        str(out_file),
    )
    assert code in (0, 1) and out_file.exists(), err
