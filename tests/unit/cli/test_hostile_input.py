"""The command line on hostile input: hostile JSON, a key in what is exported, control characters
and undecodable file names in JSON and tables."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxview.sessions.store import save_request
from tests.support.cli import cli, one_line_error, run
from tests.support.paths import ROOT


def test_export_refuses_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = "sk-ant-test-0123456789"
    p = tmp_path / "k.json"
    p.write_text(json.dumps([{"role": "user", "content": f"my key is {key}"}]))
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    for extra in ([], ["-o", str(tmp_path / "out.json")]):
        code, out, err = run(capsys, "export", str(p), *extra)
        assert code == 2 and key not in out and "ANTHROPIC_API_KEY" in one_line_error(err)
    assert not (tmp_path / "out.json").exists()
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY"):
        save_request(tmp_path / "r.json", {"messages": [{"role": "user", "content": key}]})


# -- hostile JSON ------------------------------------------------------------------------------
HOSTILE = {
    "bigint": (
        '{"messages": [{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "x",'
        ' "input": {"n": ' + "9" * 5000 + "}}]}]}",
        "messages[0].content[0].input.n: an integer with 5,000 digits",
    ),
    "strategy": (
        json.dumps(
            {
                "format": "ctxview.session",
                "version": 1,
                "settings": {"strategy": []},
                "transcript": [],
            }
        ),
        "settings.strategy",
    ),
    "deep": (
        '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": '
        '[{"type": "tool_use", "id": "a", "name": "x", "input": '
        + '{"a": ' * 981
        + '{"x": 1}'
        + "}" * 981
        + "}]}]}",
        "messages[1].content[0].input.a.a",
    ),
    "nan": (
        '[{"role": "user", "content": [{"type": "tool_use", "id": "a", "name": "x", '
        '"input": {"v": NaN}}]}]',
        "[0].content[0].input.v: NaN is not valid JSON",
    ),
    "infinity": ('{"messages": [], "max_tokens": -Infinity}', "max_tokens: -Infinity"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_json_one_line_exit_2(
    tmp_path: Path, name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each form in the test's process, and ``inspect --json`` also as a user runs it (a
    subprocess: the console script's path, a fresh interpreter's stack)."""
    text, needle = HOSTILE[name]
    p = tmp_path / f"{name}.json"
    p.write_text(text)
    for argv in (["inspect", str(p)], ["inspect", str(p), "--json"], ["export", str(p)], [str(p)]):
        t0 = time.monotonic()
        code, out, err = run(capsys, *argv)
        results = [(code, out, err)]
        if "--json" in argv:
            r = cli(*argv)
            results.append((r.returncode, r.stdout, r.stderr))
        for code, out, err in results:
            assert code == 2, (argv, err)
            line = one_line_error(err)
            assert str(p) in line and needle in line, line
            if "--json" in argv:  # scripts parse stdout: one object with the same line
                obj = json.loads(out)
                assert obj["exit"] == 2 and obj["file"] == str(p) and needle in obj["error"]
            else:
                assert out == ""
        assert time.monotonic() - t0 < 8


def test_export_never_writes_nan(tmp_path: Path) -> None:
    from ctxview.textfmt import json_text

    with pytest.raises(ValueError):
        json_text({"v": float("nan")})


# -- JSON outputs escape C1 and bidi controls --------------------------------------------------
def test_json_outputs_escape_c1_and_bidi(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    evil = "a\x1b]0;t\x07\x85\x9b\u202e\u2066\u200f\u2028z é"
    p = tmp_path / "e.json"
    p.write_text(json.dumps({"model": evil, "messages": [{"role": "user", "content": evil}]}))
    bad = {"\x1b", "\x07", "\x85", "\x9b", "\u202e", "\u2066", "\u200f", "\u2028"}
    # inspect's JSON names the file, not its text: a file named with the same controls
    named = tmp_path / f"n{evil.replace(chr(0x2028), '')}.json"
    named.write_text(p.read_text())
    code, out, _ = run(capsys, "inspect", str(named), "--json")
    assert code == 0 and not set(out) & bad and "\\u202e" in out
    assert json.loads(out)["file"] == str(named)
    code, out, _ = run(capsys, "export", str(p))
    assert code == 0 and not set(out) & bad and "\\u0085" in out and "\\u202e" in out
    assert json.loads(out)["messages"][0]["content"] == evil and "é" in out  # UTF-8 kept
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('system_prompt = "x\\u0085\\u202e\\u001b"\n')
    code, out, _ = run(capsys, "config", "show")
    assert code == 0 and not set(out) & bad and "\\u0085" in out and "\\u202e" in out


def test_config_values_quoted_at_most_80_chars(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('strategy = "' + "x" * 900_000 + '"\n')
    code, _out, err = run(capsys, "config", "show")
    line = one_line_error(err)
    assert code == 0 and "strategy: expected one of" in line and len(line) < 400
    quoted = line.split("got ", 1)[1].split(";")[0]
    assert len(quoted) <= 80 and quoted.endswith("…")
    code, _out, err = run(capsys, "config", "set", "max_tokens", "y" * 10_000)
    assert code == 2 and len(one_line_error(err)) < 400
    cfg.write_text('strategy = "' + "x" * 10_000_000 + '"\n')  # over the config size cap
    code, _out, err = run(capsys, "config", "show")
    line = one_line_error(err)
    assert code == 0 and "too large (9.5 MiB; the limit is 1 MiB)" in line and len(line) < 400


@pytest.mark.parametrize("command", ["inspect", "requests", "compare"])
def test_a_file_name_that_is_not_utf8_keeps_every_output_utf8(tmp_path: Path, command: str) -> None:
    """A file name's undecodable byte (kept by Python as a lone surrogate) went out raw: the
    JSON was not UTF-8 any more, and the table printed the byte. Now the JSON escapes it
    (``json.loads`` gives the name back as Python holds it) and the table shows ``\\xff``."""
    name = os.fsencode(tmp_path) + b"/bad\xff.json"
    with open(name, "wb") as f:
        f.write((ROOT / "sample_sessions" / "agent_loop.json").read_bytes())
    for extra in ([b"--json"], []):
        out = subprocess.run(
            [sys.executable.encode(), b"-m", b"ctxview", command.encode(), name, *extra],
            capture_output=True,
            timeout=60,
            cwd=ROOT,
            # wide enough for the temporary path on one line: rich wraps at $COLUMNS (80 when
            # unset and stdout is a pipe), and pytest-xdist's temporary paths are longer
            env={**os.environ, "COLUMNS": "400"},
        )
        assert out.returncode == 1, out.stderr  # agent_loop.json at the default max has problems
        text = out.stdout.decode("utf-8")  # strict: raises on a raw byte
        out.stderr.decode("utf-8")
        if extra:
            assert json.loads(text)["file"] == os.fsdecode(name)
        else:
            assert "bad\\xff.json" in text


def test_diff_reports_a_reader_failure_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unexpected error inside a reader is one line naming the file and exit 2, as
    ``inspect`` reports it, never a traceback."""
    from ctxview.sessions import diffio

    def broken(path: str, *a: object) -> None:
        raise KeyError("message")

    monkeypatch.setattr(diffio, "side_of", broken)
    sample = str(ROOT / "sample_sessions" / "agent_loop.json")
    code, _, err = run(capsys, "diff", sample, sample)
    assert code == 2
    assert one_line_error(err) == (
        f"ctxview: {sample}: cannot read the file (internal error: KeyError: 'message')"
    )
