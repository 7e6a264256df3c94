"""``ctxview scan``, ``ctxview report DIR`` and ``ctxview fleet`` on the command line
(``ctxview/cli/fleet.py``, ``report.py``, ``fleet_report.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import one_line_error, run
from tests.support.fleet import TOOL_HEAVY, fleet_files
from tests.support.paths import ACCEPTANCE, SAMPLES

CODEX_ROLLOUT = (
    ACCEPTANCE
    / "codex"
    / "localpush_rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"
)
GEMINI_CHAT = ACCEPTANCE / "gemini_cli" / "aisessions_pomodoro_timer.json"


def test_scan_then_report_as_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    files = fleet_files(tmp_path / "in")
    out = tmp_path / "ds"
    code, text, err = run(
        capsys, "scan", str(tmp_path / "in"), "--out", str(out), "--json", "--jobs", "1"
    )
    assert code == 0
    summary = json.loads(text)
    assert (summary["files"], summary["new"], summary["unchanged"]) == (6, 5, 0)
    assert [f["file"] for f in summary["failed"]] == [files[-1]]
    assert summary["failed"][0]["error"].startswith(files[-1] + ": ")
    assert err.splitlines()[-1].startswith("scan: 6/6 files · ")  # plain progress: not a terminal
    code, text, _ = run(capsys, "report", str(out), "--json")
    assert code == 0
    report = json.loads(text)
    assert report["schema_version"] == "1.0"
    assert report["totals"]["requests"] == summary["requests_written"]
    assert report["filters"] == {"since": None, "model": None, "project": None}
    code, text, _ = run(capsys, "scan", str(tmp_path / "in"), "--out", str(out), "--json")
    again = json.loads(text)
    assert (again["unchanged"], again["requests_written"], again["failed"]) == (5, 0, [])
    assert [f["file"] for f in again["still_failing"]] == [files[-1]]


def test_report_prints_the_answers_as_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.copy(TOOL_HEAVY, tmp_path / "t.jsonl")
    run(capsys, "scan", str(tmp_path / "t.jsonl"), "--out", str(tmp_path / "ds"))
    code, text, _ = run(capsys, "report", str(tmp_path / "ds"), "--model", "opus")
    assert code == 0
    assert text.startswith(f"ctxview report · {tmp_path / 'ds'} · model opus · 1 session ·")
    for heading in ("sessions that cost most", "hit rate by model", "by day"):
        assert heading in text
    # each title whole on its line, however narrow its table
    lines = [ln.strip() for ln in text.splitlines()]
    assert "tools that cost most (the requests their results started)" in lines


def test_report_refuses_a_flag_of_the_other_kind_of_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One ``report`` command, two reports: a fleet flag on a session file, or an HTML report's
    flag on a dataset, is refused by name rather than ignored."""
    path = str(SAMPLES / "agent_loop.json")
    code, _, err = run(capsys, "report", path, "--json")
    assert code == 2
    assert one_line_error(err) == (
        f"ctxview: report {path}: --json: a flag of the fleet report (a dataset folder)"
    )
    (tmp_path / "requests").mkdir()
    code, _, err = run(capsys, "report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert code == 2
    assert "-o/--output: a flag of a session file's HTML report" in one_line_error(err)
    assert not (tmp_path / "r.html").exists()


@pytest.mark.parametrize("shard", ["3/2", "0/1", "1", "a/b"])
def test_a_bad_shard_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], shard: str
) -> None:
    code, _, err = run(capsys, "scan", "--out", str(tmp_path / "ds"), "--shard", shard)
    assert code == 2
    assert one_line_error(err).startswith("ctxview: --shard: ")
    assert not (tmp_path / "ds").exists()


@pytest.mark.parametrize("writer", ["../../outside", "a/b", "\x1b[2Jx", ""])
def test_a_writer_name_that_is_no_file_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], writer: str
) -> None:
    dataset = tmp_path / "in" / "ds"
    argv = ["scan", str(SAMPLES / "agent_loop.json"), "--out", str(dataset), "--writer", writer]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert one_line_error(err).startswith("ctxview: --writer: expected a name of letters")
    assert "\x1b" not in err  # the name is shown, never run
    assert list(tmp_path.rglob("*")) == []  # nothing written, inside the dataset or out of it


def test_scan_without_paths_reads_the_sessions_ctxview_sessions_lists(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "claude" / "projects" / "-work-app"
    project.mkdir(parents=True)
    shutil.copy(TOOL_HEAVY, project / "s1.jsonl")
    # Codex's and Gemini CLI's sessions too, as `ctxview sessions` lists them
    rollouts = tmp_path / "codex" / "sessions" / "2026" / "02" / "23"
    rollouts.mkdir(parents=True)
    shutil.copy(CODEX_ROLLOUT, rollouts / CODEX_ROLLOUT.name.removeprefix("localpush_"))
    chats = tmp_path / "gemini" / ".gemini" / "tmp" / "abc" / "chats"
    chats.mkdir(parents=True)
    shutil.copy(GEMINI_CHAT, chats / "session-2026-01-01T00-00-x.json")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "gemini"))
    monkeypatch.setenv("CTXVIEW_STATE_DIR", str(tmp_path / "state"))
    code, text, _ = run(capsys, "scan", "--out", str(tmp_path / "ds"), "--json")
    assert code == 0
    summary = json.loads(text)
    assert (summary["new"], summary["failed"]) == (3, [])
    code, text, _ = run(capsys, "report", str(tmp_path / "ds"), "--json")
    providers = {row["provider"] for row in json.loads(text)["top_sessions"]}
    assert providers == {"anthropic", "openai", "gemini"}


def test_a_manifest_that_is_not_one_is_reported_not_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    manifest = tmp_path / "ds" / "_ctxview" / "local-1of1.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("{not json", encoding="utf-8")
    code, _, err = run(
        capsys, "scan", str(SAMPLES / "agent_loop.json"), "--out", str(tmp_path / "ds")
    )
    assert code == 2
    assert one_line_error(err).startswith(f"ctxview: {manifest}: not a ctxview scan manifest")
    assert manifest.read_text(encoding="utf-8") == "{not json"


def test_fleet_on_a_folder_that_is_no_dataset_is_one_clear_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "fleet", str(tmp_path))
    assert code == 2
    assert "not a dataset written by `ctxview scan`" in one_line_error(err)


def test_fleet_and_report_on_a_path_that_does_not_exist_say_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nothing"
    code, _, err = run(capsys, "fleet", str(missing))
    assert code == 2
    assert (
        one_line_error(err)
        == f"ctxview: {missing}: no such folder (a dataset written by `ctxview scan`)"
    )
    code, _, err = run(capsys, "report", str(missing))
    assert code == 2
    assert one_line_error(err) == f"ctxview: report {missing}: no such file or folder"


def _children(pid: int) -> list[int]:
    """Every process under ``pid`` (Linux /proc)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = [int(k) for k in (task / "children").read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


def _ignores_sigint(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    ignored = next(ln for ln in status.splitlines() if ln.startswith("SigIgn:")).split()[1]
    return bool(int(ignored, 16) & (1 << (2 - 1)))  # SIGINT is signal 2


@pytest.mark.slow
def test_ctrl_c_stops_the_scan_cleanly_and_the_next_scan_completes(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys
    import time

    from tests.support.fleet import LONG
    from tests.support.paths import ROOT

    folder = tmp_path / "in"
    folder.mkdir()
    files = 8
    for k in range(files):
        shutil.copy(LONG, folder / f"s{k}.jsonl")
    argv = [sys.executable, "-m", "ctxview", "scan", str(folder), "--out", str(tmp_path / "ds")]
    proc = subprocess.Popen(
        [*argv, "--jobs", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: ctrl+c reaches it and its workers
        # as a terminal's foreground job starts it: a test run started in the background (a
        # script's `pytest &`, a CI runner) hands its processes SIGINT ignored, and a scan
        # started so rightly ignores ctrl+c
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 30
    # both workers started, and ignoring SIGINT (ctrl+c is the main process's to handle)
    while sum(map(_ignores_sigint, _children(proc.pid))) < 2 and proc.poll() is None:
        assert time.monotonic() < deadline, "the pool never started, or its workers take ctrl+c"
    os.killpg(proc.pid, signal.SIGINT)  # what ctrl+c in a terminal does
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert "scan interrupted" in one_line_error(err)
    again = subprocess.run([*argv, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert json.loads(again.stdout)["failed"] == []
    report = subprocess.run(
        [sys.executable, "-m", "ctxview", "report", str(tmp_path / "ds"), "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(report.stdout)["totals"]["sessions"] == files
    assert json.loads(report.stdout)["totals"]["requests"] == files * 152
