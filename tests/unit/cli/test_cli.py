from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxview.cli import main
from tests.support import claude_code_shapes as shapes
from tests.support.cli import cli, run
from tests.support.paths import FIXTURES, ROOT

SAMPLES = ROOT / "sample_sessions"


def test_version_and_help() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "ctxview", "--version"], capture_output=True, text=True
    )
    assert out.returncode == 0 and out.stdout.startswith("ctxview ")
    out = subprocess.run(
        [sys.executable, "-m", "ctxview", "--help"], capture_output=True, text=True
    )
    assert out.returncode == 0 and "inspect" in out.stdout


def test_inspect_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", str(SAMPLES / "long_chat.json"), "--json")
    assert code == 0
    d = json.loads(out)
    assert d["provider"] == "anthropic"
    assert set(d) == {
        "file",
        "format",
        "provider",
        "mode",
        "messages_total",
        "max_context_messages",
        "strategy",
        "window",
        "pinned_id",
        "pinned_ids",
        "evicted",
        "problems",
        "fixes",
        "skipped_lines",
        "dangling_parents",
        "unplaced_lines",
        "skipped",
        "warnings",
        "subagents",
        "config_used",
    }
    assert d["mode"] == "simulated" and d["dangling_parents"] == d["unplaced_lines"] == []
    assert set(d["window"]) == {
        "ids",
        "size",
        "estimated_tokens",
        "token_breakdown",
        "billed_not_in_file",
    }
    assert d["window"]["billed_not_in_file"] == []
    assert set(d["window"]["token_breakdown"]) == {"system", "tools", "messages"}
    assert d["format"] == "ctxview" and d["messages_total"] == 62
    assert d["max_context_messages"] == 20 and d["window"]["size"] == 20
    assert d["pinned_id"] == 0 and d["window"]["ids"][0] == 0 and d["pinned_ids"] == []
    assert len(d["evicted"]) == 42 and all(
        set(e) == {"id", "evicted_at_step"} for e in d["evicted"]
    )
    assert out.count("\n") == 1


def test_inspect_exit_1_on_orphan_and_0_with_pair_safe(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(SAMPLES / "agent_loop.json")
    code, out, _ = run(capsys, "inspect", path, "--json")
    assert code == 1
    d = json.loads(out)
    assert "orphan_tool_result" in [p["code"] for p in d["problems"]]
    code, out, _ = run(capsys, "inspect", path, "--json", "--strategy", "pair-safe")
    assert code == 0
    assert all(p["severity"] == "warning" for p in json.loads(out)["problems"])


def test_inspect_checks_a_recorded_session_as_it_was_sent(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # 15 tool rounds: a max-20 seed window would start at a tool_result that was never sent alone
    w = shapes.Writer()
    shapes.grow(w, w.user(None, "go"), 15, 0, 20_000, 500)
    path = str(shapes.write(tmp_path / "loop.jsonl", w.records))
    code, out, _ = run(capsys, "inspect", path, "--json")
    d = json.loads(out)
    assert code == 0, d["problems"]
    assert d["mode"] == "as sent" and d["window"]["size"] == 31 and d["evicted"] == []
    code, out, _ = run(capsys, "inspect", path, "--json", "--max", "20")
    d = json.loads(out)
    assert code == 1 and d["mode"] == "simulated"
    assert "orphan_tool_result" in [p["code"] for p in d["problems"]]
    code, out, _ = run(capsys, "inspect", path, "--strategy", "seed")
    assert code == 1 and "seed, max 20" in out


def test_inspect_max_override_replays(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "inspect",
        str(FIXTURES / "claude_code" / "spotter_short.jsonl"),
        "--json",
        "--max",
        "2",
    )
    d = json.loads(out)
    assert code == 1 and d["window"]["ids"] == [0, 2]
    assert d["evicted"] == [{"id": 1, "evicted_at_step": 3}]


def test_inspect_unreadable_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    p = tmp_path / "x.json"
    p.write_text("{oops")
    code, out, err = run(capsys, "inspect", str(p), "--json")
    assert code == 2 and json.loads(out) == {"file": str(p), "error": err.strip()[9:], "exit": 2}
    assert str(p) in err and "line 1, column 2" in err and "Traceback" not in err


def test_inspect_skipped_lines(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "inspect", str(FIXTURES / "claude_code" / "cclog_edge_cases.jsonl"), "--json"
    )
    d = json.loads(out)
    assert 13 in d["skipped_lines"] and code == 1
    assert [s["line"] for s in d["skipped"]] == d["skipped_lines"]
    assert all(s["reason"] for s in d["skipped"])


def test_inspect_names_each_skipped_line_and_why_then_counts_the_rest(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    good = '{"type":"user","uuid":"u","parentUuid":null,"message":{"role":"user","content":"hi"}}'
    p = tmp_path / "t.jsonl"
    p.write_text(good + "\n" + "{oops\n" * 13)
    code, out, _ = run(capsys, "inspect", str(p))
    assert code == 0
    assert "line 2: invalid JSON at column 2: Expecting property name" in out
    assert "line 11: invalid JSON" in out and "line 12:" not in out
    assert "and 3 more (--json lists them all)" in out


def test_inspect_rich_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "inspect", str(SAMPLES / "agent_loop.json"))
    assert code == 1
    assert "orphan_tool_result" in out and "evicted" in out


def test_max_defaults_to_config(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    Path(os.environ["CTXVIEW_CONFIG"]).write_text("max_context_messages = 3\n")
    messages = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"} for i in range(9)
    ]
    p = tmp_path / "m.json"
    p.write_text(json.dumps(messages))
    _, out, _ = run(capsys, "inspect", str(p), "--json")
    assert json.loads(out)["window"]["ids"] == [0, 7, 8]
    # a recorded request body is checked as it was sent, unless --max or --strategy is given
    r = tmp_path / "r.json"
    r.write_text(json.dumps({"model": "m", "max_tokens": 10, "messages": messages}))
    _, out, _ = run(capsys, "inspect", str(r), "--json")
    assert json.loads(out)["window"]["ids"] == list(range(9))
    _, out, _ = run(capsys, "inspect", str(r), "--json", "--max", "3")
    assert json.loads(out)["window"]["ids"] == [0, 7, 8]
    # a session's own setting wins over the config
    _, out, _ = run(capsys, "inspect", str(SAMPLES / "long_chat.json"), "--json")
    assert json.loads(out)["max_context_messages"] == 20


def test_export_request_body(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(
        capsys, "export", str(SAMPLES / "agent_loop.json"), "--strategy", "pair-safe"
    )
    assert code == 0
    body = json.loads(out)
    assert list(body) == ["model", "max_tokens", "system", "messages", "tools"]
    assert body["model"] == "claude-sonnet-5-5" and body["tools"][0]["name"] == "read_file"
    _, ins, _ = run(
        capsys, "inspect", str(SAMPLES / "agent_loop.json"), "--strategy", "pair-safe", "--json"
    )
    assert len(body["messages"]) == json.loads(ins)["window"]["size"]
    out_path = tmp_path / "req.json"
    code, out, err = run(
        capsys, "export", str(SAMPLES / "agent_loop.json"), "--max", "4", "-o", str(out_path)
    )
    assert code == 1 and out == "" and "wrote" in err and "would reject" in err
    assert len(json.loads(out_path.read_text())["messages"]) == 4


def test_export_fixture_round_trip(capsys: pytest.CaptureFixture[str]) -> None:
    src = FIXTURES / "anthropic_requests" / "anthropic_test_anthropic_tool_with_thinking_req2.json"
    _, out, _ = run(capsys, "export", str(src))
    body, orig = json.loads(out), json.loads(src.read_text())
    assert body["messages"] == orig["messages"] and body["tools"] == orig["tools"]


def test_config_commands(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    code, out, _ = run(capsys, "config", "path")
    assert out.strip() == str(cfg)
    code, out, _ = run(capsys, "config", "show")
    assert 'model = "claude-sonnet-5-5"' in out and "max_context_messages = 20" in out
    code, out, _ = run(capsys, "config", "set", "max_context_messages", "7")
    assert code == 0 and "max_context_messages = 7" in cfg.read_text()
    code, _, err = run(capsys, "config", "set", "max_context_messages", "zero")
    assert code == 2 and "max_context_messages" in err
    code, _, err = run(capsys, "config", "set", "strategy", "bogus")
    assert code == 2 and "strategy" in err
    code, _, err = run(capsys, "config", "set", "api_key", "sk-secret")
    assert code == 2 and "ANTHROPIC_API_KEY" in err
    assert "sk-secret" not in cfg.read_text()
    code, _, _ = run(capsys, "config", "set", "strategy", "low-water")
    text = cfg.read_text()
    assert 'strategy = "low-water"' in text and "max_context_messages = 7" in text


def test_invalid_config_reported_defaults_used_file_untouched(
    capsys: pytest.CaptureFixture[str],
) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('max_context_messages = "lots"\nstrategy = "pair-safe"\n')
    before = cfg.read_bytes()
    code, _out, err = run(capsys, "inspect", str(SAMPLES / "untrusted_text.json"), "--json")
    assert code == 0
    assert str(cfg) in err and "max_context_messages" in err
    assert cfg.read_bytes() == before
    cfg.write_text("this is = = not toml")
    before = cfg.read_bytes()
    code, _out, err = run(capsys, "config", "show")
    assert "invalid TOML" in err and cfg.read_bytes() == before
    code, _, err = run(capsys, "config", "set", "strategy", "seed")
    assert code == 2 and cfg.read_bytes() == before


def test_a_command_imports_only_its_own_family() -> None:
    """The dispatch table imports the module of the command run: ``inspect`` pays neither for
    the request model, nor for the proxy's asyncio, nor for the chat loop."""
    code = (
        "import sys, io, contextlib\nfrom ctxview.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['inspect', {str(SAMPLES / 'long_chat.json')!r}, '--json'])\n"
        "print(' '.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(out.stdout.split())
    assert "ctxview.cli.inspect" in loaded
    unwanted = {"ctxview.cli.requests", "ctxview.cli.live", "ctxview.cli.chat", "asyncio"}
    assert not loaded & (unwanted | {"ctxview.core.requests", "ctxview.chat.loop", "rich"})


def _assert_key_absent(obj: Any, key: str) -> None:
    assert key not in json.dumps(obj)


def test_id_ranges() -> None:
    from ctxview.textfmt import fmt_tokens, id_ranges

    assert id_ranges([1, 2, 3, 7, 9, 10]) == "#1–#3, #7, #9–#10"
    assert id_ranges([1, 3, 5, 7, 9, 11], 4) == "#1, #3, #5, …, #11"
    assert id_ranges([]) == ""
    assert [fmt_tokens(n) for n in (999, 1234, 45678, 2_500_000)] == ["999", "1.2k", "46k", "2.5M"]
    # no "1000k", "10.0k" or "6296.2M": each unit starts where the smaller would round to 1000
    cases = {9_949: "9.9k", 9_950: "10k", 999_499: "999k", 999_500: "1.0M", 46_230_000: "46.2M"}
    cases |= {999_949_999: "999.9M", 999_950_000: "1.0B", 6_296_200_000: "6.3B"}
    assert {n: fmt_tokens(n) for n in cases} == cases


def test_inspect_output_never_carries_control_sequences(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    evil = "toolu_\x1b]0;pwned\x07\x1b[31mX"
    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "hi"},
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": evil, "content": "r"}],
            },
        ],
    }
    p = tmp_path / "evil\x1b[2J.json"
    p.write_text(json.dumps(body))
    code, out, err = run(capsys, "inspect", str(p))
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "␛]0;pwned␇" in out.replace("\n", "").replace(" ", "") or "␛]0;pwned" in out
    code, out, err = run(capsys, "inspect", str(tmp_path / "missing\x1b[2J.json"))
    assert code == 2 and "\x1b" not in err and "␛[2J" in err
    code, out, _ = run(capsys, "inspect", str(p), "--json")
    assert "\x1b" not in out  # JSON escapes it: \u001b
    assert json.loads(out)["problems"][0]["message"].count("\x1b") == 2


def test_the_console_script_exits_without_freeing_and_loses_nothing(tmp_path: Path) -> None:
    """``run`` ends a headless command that retained its session with ``os._exit``: the whole
    output is there, the exit codes are the commands' (0, 1 for a rejected window, 2 for an
    unreadable file), and a reader that leaves early is not a traceback."""
    sample = str(ROOT / "sample_sessions" / "long_chat.json")
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}  # config isolated
    out = cli("requests", sample, "--json", env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)  # all of it, flushed before the exit
    assert doc["totals"]["requests"] == len(doc["requests"]) > 0
    assert out.stdout.endswith("}\n")
    orphan = tmp_path / "orphan.json"
    orphan.write_text(
        json.dumps(
            [
                {"role": "user", "content": "go"},
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"}],
                },
            ]
        )
    )
    for cmd in (["requests", str(orphan), "--json"], ["inspect", str(orphan), "--json"]):
        out = cli(*cmd, env=env, timeout=120)
        assert out.returncode == 1, (cmd, out.stderr)
        json.loads(out.stdout)
    out = cli("inspect", str(tmp_path / "missing.json"), env=env, timeout=120)
    assert out.returncode == 2 and "no such file" in out.stderr
    # a reader that stops after the first bytes (``| head -c 1``) of an output longer than
    # the pipe holds (the write fails)
    chat = tmp_path / "chat.json"
    turns = [
        {"role": r, "content": f"turn {k}"} for k in range(1500) for r in ("user", "assistant")
    ]
    chat.write_text(json.dumps(turns))
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxview", "requests", str(chat), "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(1)
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert err == "" and proc.returncode == 0


def test_main_called_from_python_retains_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """Only the console script keeps what a command built until its exit: ``main`` called by
    a test or another tool frees it as usual."""
    from ctxview.cli import common

    sample = str(ROOT / "sample_sessions" / "long_chat.json")
    assert main(["requests", sample, "--json"]) == 0
    assert common._retained is None
    capsys.readouterr()


def test_a_saved_window_past_its_max_is_not_called_a_tool_pair(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A file whose saved window holds 14 messages at max 1 was described as 'max+13: kept a
    tool pair' (no strategy keeps more than max+1: the file's own window does)."""
    doc = json.loads((ROOT / "sample_sessions" / "agent_loop.json").read_text())
    doc["settings"]["max_context_messages"] = 1
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    main(["inspect", str(path), "--json"])
    out = json.loads(capsys.readouterr().out)
    notes = [p["message"] for p in out["problems"] if p["code"] == "over_max"]
    assert notes == ["max+13: the window as the file saved it (no strategy keeps more than max+1)"]


def test_export_does_not_create_missing_folders(tmp_path: Path) -> None:
    target = tmp_path / "no" / "such" / "x.json"
    r = cli(
        "export",
        str(ROOT / "sample_sessions" / "long_chat.json"),
        "-o",
        str(target),
        timeout=20,
        env={**os.environ, "CTXVIEW_CONFIG": str(tmp_path / "c.toml")},
    )
    assert r.returncode == 2 and "no such folder" in r.stderr
    assert not (tmp_path / "no").exists()


def test_inspect_flags_a_window_over_the_context(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # ~250k tokens: over a 200k model's context, inside a 1M model's
    body = {"model": "claude-haiku-4-5", "max_tokens": 100, "messages": []}
    body["messages"] = [{"role": "user", "content": "word " * 200_000}]
    p = tmp_path / "huge.json"
    p.write_text(json.dumps(body))
    code, out, _ = run(capsys, "inspect", str(p), "--json")
    problems = json.loads(out)["problems"]
    assert code == 1
    assert [(q["code"], q["severity"]) for q in problems] == [("over_context_window", "error")]
    assert "prompt is too long" in problems[0]["message"]
    assert "> 200,000 maximum" in problems[0]["message"]
    p.write_text(json.dumps({**body, "model": "claude-sonnet-5-5"}))
    code, out, _ = run(capsys, "inspect", str(p), "--json")
    assert code == 0 and json.loads(out)["problems"] == []
    code, out, _ = run(
        capsys,
        "inspect",
        str(SAMPLES / "agent_loop.json"),
        "--max",
        "40",
        "--strategy",
        "pair-safe",
    )
    assert code == 0


def _transcript_with_a_bad_block(tmp_path: Path) -> Path:
    user = '{"type":"user","uuid":"u","parentUuid":null,"message":{"role":"user","content":"hi"}}'
    blocks = [{"type": "text", "text": "good"}, {"type": {}}]
    bad = {
        "type": "assistant",
        "uuid": "a",
        "parentUuid": "u",
        "message": {"role": "assistant", "content": blocks},
    }
    p = tmp_path / "t.jsonl"
    p.write_text(user + "\n" + json.dumps(bad) + "\n")
    return p


def test_a_skipped_block_names_its_path_and_what_is_wrong(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    p = _transcript_with_a_bad_block(tmp_path)
    _, out, _ = run(capsys, "inspect", str(p), "--json")
    (skipped,) = json.loads(out)["skipped"]
    assert skipped["line"] == 2
    assert "message.content[1]" in skipped["reason"]
    assert "type is an object, not a string" in skipped["reason"]


@pytest.mark.parametrize(
    "argv",
    [
        ("export", "-o", "OUT"),
        ("repair", "-o", "OUT", "--json"),
        ("requests", "--json"),
        ("compare", "--json"),
    ],
)
def test_commands_that_write_or_price_a_session_say_lines_were_skipped(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: tuple[str, ...]
) -> None:
    p = _transcript_with_a_bad_block(tmp_path)
    args = [a.replace("OUT", str(tmp_path / "out.json")) for a in argv]
    _, out, err = run(capsys, args[0], str(p), *args[1:])
    assert f"ctxview: {p}: 1 line skipped (see ctxview inspect {p})" in err.splitlines()
    if "--json" in argv:
        assert [s["line"] for s in json.loads(out)["skipped"]] == [2]


def test_options_may_stand_between_a_commands_paths() -> None:
    from ctxview.cli.main import parse_command

    args = parse_command(["scan", "a.json", "--jobs", "1", "b.json", "--out", "d"])
    assert (args.command, args.paths, args.jobs, args.out) == ("scan", ["a.json", "b.json"], 1, "d")
    config = parse_command(["config", "set", "strategy", "pair-safe"])
    assert (config.command, config.action, config.key) == ("config", "set", "strategy")


@pytest.mark.parametrize(
    ("path", "provider"),
    [
        (SAMPLES / "agent_loop.json", "anthropic"),
        (
            ROOT / "tests" / "acceptance" / "openai_chat" / "pai_complex_agent_run_req3.json",
            "openai",
        ),
        (ROOT / "tests" / "acceptance" / "gemini" / "llmgemini_tools_req3.json", "gemini"),
    ],
    ids=["anthropic", "openai", "gemini"],
)
def test_every_per_file_commands_json_names_the_provider(
    path: Path, provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (
        ["inspect", "--json"],
        ["requests", "--json"],
        ["compare", "--json"],
        ["repair", "--dry-run", "--json"],
    ):
        _, out, _ = run(capsys, argv[0], str(path), *argv[1:])
        assert json.loads(out)["provider"] == provider, argv
    _, out, _ = run(capsys, "diff", str(path), str(path), "--json")
    assert json.loads(out)["provider"] == {"a": provider, "b": provider}


def test_the_app_without_a_terminal_says_so_and_writes_no_escape(tmp_path: Path) -> None:
    """``ctxview FILE > out.txt`` or ``| less``: the app refuses (exit 2, one line naming the
    headless commands) instead of writing its escape sequences into the file and waiting for
    keys that never come (the timeout proves it does not wait). A bad file is named first."""
    env = {
        **{k: v for k, v in os.environ.items() if k != "TEXTUAL_DRIVER"},
        "CTXVIEW_CONFIG": str(tmp_path / "c.toml"),
        "CTXVIEW_STATE_DIR": str(tmp_path / "state"),
    }
    for argv in ([str(SAMPLES / "agent_loop.json")], ["fleet", str(tmp_path)]):
        if argv[0] == "fleet":
            (tmp_path / "requests").mkdir()
        out = cli(*argv, env=env, timeout=30, stdin=subprocess.DEVNULL)
        assert out.returncode == 2, out.stderr
        assert "opens the terminal app, and its input or output is not a terminal" in out.stderr
        assert out.stdout == "" and "\x1b" not in out.stderr
    (tmp_path / "bad.json").write_text("[1,")
    out = cli(str(tmp_path / "bad.json"), env=env, timeout=30, stdin=subprocess.DEVNULL)
    assert out.returncode == 2 and "invalid JSON" in out.stderr


def test_the_proxy_without_a_terminal_runs_without_its_tui(tmp_path: Path) -> None:
    """``ctxview proxy > log &``: no terminal, so the proxy runs as ``--no-tui`` does (its
    lines in the log, never the TUI's escape sequences), and says so on stderr."""
    import select
    import signal
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if k != "TEXTUAL_DRIVER"},
        "CTXVIEW_CONFIG": str(tmp_path / "c.toml"),
        "CTXVIEW_STATE_DIR": str(tmp_path / "state"),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctxview",
            "proxy",
            "--port",
            str(port),
            "--upstream",
            "http://127.0.0.1:9",
        ],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None
        ready, _, _ = select.select([proc.stdout], [], [], 30)
        assert ready, "the proxy wrote nothing in 30 s"
        first = os.read(proc.stdout.fileno(), 200).decode("utf-8", "replace")
        assert first.startswith("ctxview proxy on http://127.0.0.1:") and "\x1b" not in first
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=30)
    assert "no terminal: running without the TUI" in err.decode()


#: runs the headless proxy and sends it ctrl+c the moment its banner is printed
_CTRL_C_AFTER_THE_BANNER = """
import builtins, signal, sys
import ctxview.cli.live as live

def print_then_ctrl_c(*args, **kw):
    builtins.print(*args, **kw)
    if args and str(args[0]).startswith("ctxview proxy on"):
        signal.raise_signal(signal.SIGINT)

live.print = print_then_ctrl_c
from ctxview.cli import main
sys.exit(main(["proxy", "--port", "0", "--no-tui", "--upstream", "http://127.0.0.1:9"]))
"""


def test_the_headless_proxy_stops_on_ctrl_c_sent_once_its_banner_is_out(tmp_path: Path) -> None:
    """A script that starts ``ctxview proxy --no-tui &``, waits for its banner and sends ctrl+c
    stops it, also when SIGINT was ignored at its start (a shell script's background job)."""
    import signal

    env = {
        **os.environ,
        "CTXVIEW_CONFIG": str(tmp_path / "c.toml"),
        "CTXVIEW_STATE_DIR": str(tmp_path / "state"),
    }
    proc = subprocess.run(
        [sys.executable, "-c", _CTRL_C_AFTER_THE_BANNER],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ctxview proxy on http://127.0.0.1:")
