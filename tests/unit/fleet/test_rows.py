"""The per-file step (``ctxview/fleet/rows.py``): a session file into the dataset's rows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from ctxview.core.pricing import PRICES
from ctxview.core.requests import CacheBreak, Request
from ctxview.fleet.rows import REQUEST_ROWS, ScanOptions, _break_lost, file_rows, map_paths
from ctxview.fleet.schema import SESSIONS, STRATEGIES
from tests.support.cli import one_line_error, run
from tests.support.fleet import TOOL_HEAVY, WITH_AGENTS
from tests.support.paths import ACCEPTANCE, SAMPLES
from tests.support.secrets import secrets
from tests.support.transcripts import rec, session_folder, text


def test_the_rows_are_the_requests_of_ctxview_requests(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = session_folder(tmp_path, WITH_AGENTS)
    rows = file_rows(str(main), ScanOptions(redact=False))
    assert rows.error is None
    code, out, _ = run(capsys, "requests", str(main), "--json")
    assert code == 0
    want = [
        (r["agent"], r["index"], r["input_tokens"], r["cache_read"], r["cost_usd"])
        for r in json.loads(out)["requests"]
    ]
    got = rows.requests.to_pylist()
    assert [
        (
            r["agent"],
            r["request_index"],
            r["input_tokens"],
            r["cache_read"],
            round(r["cost_usd"], 6),
        )
        for r in got
    ] == want  # (requests --json rounds the dollars to 6 places; the dataset keeps them whole)
    assert {r["agent"] for r in got} == {"main", "a881341", "acompact-fffbd0"}
    assert rows.counts == {a: sum(1 for r in got if r["agent"] == a) for a in rows.counts}
    assert {r["strategy"] for r in got} == {"as sent"}
    assert {r["provider"] for r in got} == {"anthropic"}
    assert rows.requests.schema.equals(REQUEST_ROWS, check_metadata=False)
    [session] = rows.sessions.to_pylist()
    assert session["requests"] == len(got) == json.loads(out)["totals"]["requests"]
    assert session["agents"] == 3


@pytest.mark.parametrize(
    ("path", "provider"),
    [
        (ACCEPTANCE / "gemini_cli" / "aim_control_flash.json", "gemini"),
        (ACCEPTANCE / "openai_chat" / "pai_complex_agent_run_req3.json", "openai"),
    ],
    ids=["gemini", "openai"],
)
def test_another_apis_session_is_priced_as_ctxview_requests_prices_it(
    path: Path, provider: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The dataset prices an OpenAI or Gemini session by its provider's price table, as
    ``requests`` does (not by Anthropic's alone, which left its dollars null)."""
    rows = file_rows(str(path), ScanOptions(redact=False))
    assert rows.error is None
    code, out, _ = run(capsys, "requests", str(path), "--json")
    assert code == 0
    want = json.loads(out)["totals"]["cost_usd"]
    assert want is not None and want > 0
    [session] = rows.sessions.to_pylist()
    assert session["provider"] == provider
    assert session["cost_usd"] == pytest.approx(want, abs=1e-5)
    tables = {r["price_table"] for r in rows.requests.to_pylist()}
    assert None not in tables and "config.toml" not in tables


def test_a_codex_or_gemini_cli_session_has_the_project_and_prompt_ctxview_sessions_lists(
    tmp_path: Path,
) -> None:
    """A rollout's folder is its day and a Gemini CLI file's is ``chats``: the dataset names
    their project as ``ctxview sessions`` does (the rollout's ``cwd``, the project hash), and
    their title is the first prompt."""
    day = tmp_path / "sessions" / "2025" / "10" / "28"
    day.mkdir(parents=True)
    rollout = day / "rollout-2025-10-28T05-27-00-a.jsonl"
    shutil.copy(ACCEPTANCE / "codex" / "agenthistory_codex_session_with_compaction.jsonl", rollout)
    chats = tmp_path / "tmp" / "3f9a2c1e" / "chats"
    chats.mkdir(parents=True)
    chat = chats / "session-2026-01-01T00-00-a.json"
    shutil.copy(ACCEPTANCE / "gemini_cli" / "aim_control_flash.json", chat)
    [codex] = file_rows(str(rollout), ScanOptions(redact=False)).sessions.to_pylist()
    assert codex["project"] == "/home/testuser/codex-compact-project"
    assert codex["title"] == "Help me build the API endpoints"
    [gemini] = file_rows(str(chat), ScanOptions(redact=False)).sessions.to_pylist()
    assert (gemini["project"], gemini["title"]) == ("3f9a2c1e", "hello")


def test_a_request_is_counted_to_the_tools_whose_results_it_sends_first() -> None:
    rows = file_rows(str(TOOL_HEAVY), ScanOptions(redact=False)).requests.to_pylist()
    assert rows[0]["tools"] == []  # the first request holds the prompt alone
    with_tools = [r["tools"] for r in rows if r["tools"]]
    assert with_tools, "a tool-heavy session's requests send tool results"
    assert {t for ts in with_tools for t in ts} <= {
        "Bash",
        "Read",
        "Glob",
        "Grep",
        "Edit",
        "Write",
        "WebSearch",
        "WebFetch",
        "TodoWrite",
        "Task",
    }


def test_a_file_that_cannot_be_read_gives_inspects_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{"messages": [1]}', encoding="utf-8")
    rows = file_rows(str(bad))
    assert rows.requests is None
    _, _, err = run(capsys, "inspect", str(bad))
    assert f"ctxview: {rows.error}" == one_line_error(err)


def _transcript_with(tmp_path: Path, secret: str) -> Path:
    path = tmp_path / "s.jsonl"
    path.write_text(
        rec("user", "u1", None, text(f"deploy with {secret} please"), cwd=f"/work/{secret}")
        + rec("assistant", "a1", "u1", text("ok"), mid="m1"),
        encoding="utf-8",
    )
    return path


def test_secrets_in_the_project_and_title_are_redacted_unless_asked(tmp_path: Path) -> None:
    secret = next(s for s in secrets() if s.kind == "github-token")
    path = _transcript_with(tmp_path, secret.secret)
    kept = file_rows(str(path), ScanOptions(redact=False))
    assert secret.secret in kept.sessions.to_pylist()[0]["project"]
    assert secret.secret in kept.sessions.to_pylist()[0]["title"]
    rows = file_rows(str(path))
    [session] = rows.sessions.to_pylist()
    assert session["project"] == "/work/[REDACTED:github-token]"
    assert session["title"] == "deploy with [REDACTED:github-token] please"
    assert {r["project"] for r in rows.requests.to_pylist()} == {session["project"]}
    assert rows.redactions == {"github-token": 2}


def test_control_characters_in_names_are_written_visible(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(
        rec("user", "u1", None, text("hi"), cwd="/work/\x1b[31mred")
        + rec("assistant", "a1", "u1", text("ok"), mid="m1"),
        encoding="utf-8",
    )
    [session] = file_rows(str(path)).sessions.to_pylist()
    assert "\x1b" not in session["project"]


def test_map_paths_turns_batches_of_paths_into_the_files_request_batches(tmp_path: Path) -> None:
    files = [str(SAMPLES / "agent_loop.json"), str(tmp_path / "missing.json"), str(TOOL_HEAVY)]
    paths = pa.RecordBatch.from_pydict({"path": files})
    out = list(map_paths([paths]))
    assert len(out) == 2  # the missing file gives no batch
    for batch, path in zip(out, [files[0], files[2]], strict=True):
        assert batch.to_pylist() == file_rows(path).requests.to_pylist()
    sessions = list(map_paths([paths], table="sessions"))
    assert [b.schema.equals(SESSIONS, check_metadata=False) for b in sessions] == [True, True]


def test_compare_rows_hold_every_strategy_beside_the_sessions_own_cost(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    shutil.copy(SAMPLES / "agent_loop.json", path)
    rows = file_rows(str(path), ScanOptions(compare=True))
    strategies = rows.strategies.to_pylist()
    assert rows.strategies.schema.equals(STRATEGIES, check_metadata=False)
    assert "seed" in {s["strategy"] for s in strategies}
    own = rows.sessions.to_pylist()[0]["cost_usd"]
    assert {s["baseline_cost_usd"] for s in strategies} == {own}
    assert file_rows(str(path)).strategies is None


def test_a_break_loses_the_previous_prompt_written_again_over_its_read_price() -> None:
    price = PRICES["claude-sonnet-4-5"]  # $3 input, $3.75 5m write, $0.30 read
    r = Request(1, [3], 3, 12_000, 0, 12_000, 0, CacheBreak("ttl", 0), None, None, 0.0)
    assert _break_lost(r, 10_000, price) == pytest.approx(10_000 * (3.75 - 0.30) / 1e6)
    below_minimum = Request(1, [3], 3, 900, 0, 0, 900, CacheBreak("model", 0), None, None, 0.0)
    assert _break_lost(below_minimum, 800, price) == pytest.approx(800 * (3 - 0.30) / 1e6)
    assert _break_lost(r, None, price) == 0.0  # a first request


def test_every_rejected_request_names_the_first_error_of_its_window(tmp_path: Path) -> None:
    """``error_code`` of every rejected row, however many there are: the code of the first
    error the full check finds in that request's window (``rejected`` and the code come from
    the request model's own check)."""
    from ctxview.core.protocol import check_protocol, first_error_code
    from ctxview.core.requests import simulate
    from ctxview.sessions.readers import load_session
    from tests.support.agentgen import agent_loop

    msgs = agent_loop([[1, 2], [3], [1, 1, 1], [2], [1], [2, 1], [1, 1]], seed=5)
    # an empty text block the first message keeps in every window (seed pins it), and a
    # window of 6 that cuts tool_uses from their results
    msgs[0]["content"] = [{"type": "text", "text": ""}, {"type": "text", "text": "go"}]
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(msgs))
    defaults = {"max_context_messages": 6, "strategy": "seed"}
    rows = file_rows(str(path), ScanOptions(defaults=defaults, redact=False)).requests.to_pylist()
    session = load_session(str(path))
    log = simulate(session, defaults=defaults, check=True, keep_windows=range(len(rows)))
    want = []
    for r in log.requests:
        window = [session.messages[i] for i in log.windows[r.index]]
        want.append(first_error_code(check_protocol(window)))
    assert [r["error_code"] for r in rows] == want
    assert [r["rejected"] for r in rows] == [w is not None for w in want]
    assert sum(w is not None for w in want) > 8 and "empty_text_block" in want
