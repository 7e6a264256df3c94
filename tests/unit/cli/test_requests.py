"""``ctxview requests`` over a session with sub-agents: every agent's requests, each with its
``agent``, and totals that include them (``ctxview/cli/requests.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxview.cli.requests import requests_json, requests_report
from ctxview.core.requests import simulate
from ctxview.sessions import load_session
from ctxview.sessions.subagents import agent_logs, subagents_of
from ctxview.textfmt import json_text
from tests.support import claude_code_shapes as shapes
from tests.support.cli import run
from tests.support.transcripts import session_folder

SPOTTER = "spotter_258c7280-ae70-4798-800f-63464d01a85d"


def test_requests_json_lists_every_agents_requests_and_counts_them_in_the_totals(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = session_folder(tmp_path, SPOTTER)
    code, out, _ = run(capsys, "requests", str(main), "--json")
    assert code == 0
    doc = json.loads(out)
    agents = [r["agent"] for r in doc["requests"]]
    assert agents == ["main"] * 152 + ["a881341"] * 3 + ["acompact-fffbd0"] * 1
    assert [(a["agent"], a["requests"]) for a in doc["agents"]] == [
        ("main", 152),
        ("a881341", 3),
        ("acompact-fffbd0", 1),
    ]
    task = doc["agents"][1]
    assert task["tool_use_id"] == "toolu_01VmaERAwhb19LGUwu9GenaK" and task["kind"] == "task"
    assert doc["agents"][2]["kind"] == "compaction"
    # the acompact file's request is the compaction request the main transcript models, with
    # the usage the file recorded beside it (counted once)
    (comp,) = [r for r in doc["requests"] if r["kind"] == "compaction"]
    assert comp["agent"] == "acompact-fffbd0" and comp["recorded"]["cache_read_input_tokens"]
    assert comp["index"] == 102 and comp["cache_read"] > 160_000
    t = doc["totals"]
    assert t["requests"] == 156
    assert t["input_tokens"] == sum(a["totals"]["input_tokens"] for a in doc["agents"])
    assert t["cache_read"] == sum(a["totals"]["cache_read"] for a in doc["agents"])
    costs = [a["totals"]["cost_usd"] for a in doc["agents"]]
    assert t["cost_usd"] == pytest.approx(sum(costs), abs=1e-5)
    assert t["hit_rate"] == round(t["cache_read"] / t["input_tokens"], 4)
    # a simulation replays the main conversation alone
    code, out, _ = run(capsys, "requests", str(main), "--json", "--max", "30")
    doc = json.loads(out)
    assert {r["agent"] for r in doc["requests"]} == {"main"} and len(doc["agents"]) == 1


def test_the_requests_json_with_agents_is_the_reports_json(tmp_path: Path) -> None:
    main, _ = shapes.with_subagent(tmp_path, sidecar=True)
    session = load_session(main)
    log = simulate(session)
    logs = agent_logs(subagents_of(session))
    assert requests_json(log, session, agents=logs) == json_text(
        requests_report(log, session, agents=logs)
    )
    assert [a["agent"] for a in requests_report(log, session, agents=logs)["agents"]] == [
        "main",
        "a1b2c3d",
    ]


def test_requests_text_names_each_sub_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main, _ = shapes.with_subagent(tmp_path, sidecar=True)
    code, out, _ = run(capsys, "requests", str(main))
    assert code == 0
    assert "sub-agent a1b2c3d (Find callers, started by #1): 3 requests" in out
    assert "total: 5 requests" in out


def test_a_compaction_without_its_acompact_file_is_a_request_of_the_main_thread(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    main = session_folder(tmp_path, SPOTTER)
    shutil.rmtree(main.with_suffix("") / "subagents")
    code, out, _ = run(capsys, "requests", str(main), "--json")
    assert code == 0
    doc = json.loads(out)
    kinds = [(r["agent"], r["kind"], r["index"]) for r in doc["requests"]]
    assert kinds[102] == ("main", "compaction", 102) and kinds[103] == ("main", "turn", 102)
    assert doc["totals"]["requests"] == doc["agents"][0]["requests"] == 153
    assert doc["totals"]["cost_usd"] == pytest.approx(
        sum(r["cost_usd"] for r in doc["requests"]), abs=1e-5
    )
    code, out, _ = run(capsys, "requests", str(main))
    assert "compaction request" in out


def test_a_last_request_over_the_models_context_exits_1_as_inspect_and_compare_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``requests`` exits 1 when the API would reject its last request: a protocol error, or
    an estimated prompt over the model's context (``prompt is too long``), the rule ``inspect``
    and ``compare`` apply to the same body."""
    body = tmp_path / "long.json"
    body.write_text(
        json.dumps(
            {
                "model": "claude-sonnet-4-5",
                "max_tokens": 100,
                "messages": [{"role": "user", "content": "hello world " * 100_000}],
            }
        )
    )
    for command in ("inspect", "compare", "requests"):
        code, _, _ = run(capsys, command, str(body), "--json")
        assert code == 1, command
    code, out, _ = run(capsys, "requests", str(body))
    assert code == 1 and "the API would reject the last request" in out
    # under the context, the same body is accepted
    body.write_text(body.read_text().replace("hello world " * 100_000, "hello"))
    assert run(capsys, "requests", str(body), "--json")[0] == 0


def test_a_file_that_names_no_model_is_told_why_it_has_no_cost(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A Gemini API body names its model in the URL: the note says the file names none (the
    config's model, a Claude model, does not price it), not to pass a model in the config."""
    from tests.support.paths import ACCEPTANCE

    body = ACCEPTANCE / "gemini" / "llmgemini_tools_req3.json"
    code, out, _ = run(capsys, "requests", str(body), "--json")
    doc = json.loads(out)
    assert code == 0 and doc["model"] is None and doc["totals"]["cost_usd"] is None
    [note] = [n for n in doc["notes"] if n.startswith("no model named")]
    assert "the file names none" in note and "pass a model" not in note
