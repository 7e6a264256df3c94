"""A Claude Code session's sub-agents linked to the tool calls that started them
(``ctxview/sessions/subagents.py``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ctxview.sessions import load_session, replay
from ctxview.sessions.subagents import subagents_of
from tests.support import claude_code_shapes as shapes
from tests.support.paths import ACCEPTANCE
from tests.support.transcripts import session_folder

ACC = ACCEPTANCE / "claude_code"
SPOTTER = "spotter_258c7280-ae70-4798-800f-63464d01a85d"


def test_a_recorded_sub_agent_is_linked_by_the_agent_id_of_its_tool_result(
    tmp_path: Path,
) -> None:
    session = load_session(session_folder(tmp_path, SPOTTER))
    agents = subagents_of(session)
    assert [(a.agent_id, a.kind) for a in agents] == [
        ("a881341", "task"),
        ("acompact-fffbd0", "compaction"),
    ]
    task = agents[0]
    assert task.tool_use_id == "toolu_01VmaERAwhb19LGUwu9GenaK"
    assert task.label == "Research Claude hook output"
    call = session.messages[task.call.message_id] if task.call else None
    assert call is not None and any(
        b.get("id") == task.tool_use_id for b in call["content"] if isinstance(b, dict)
    )
    assert task._loaded is None  # read when opened
    assert len(task.load().messages) == 6
    assert agents[1].call is None


@pytest.mark.parametrize(("sidecar", "link"), [(True, False), (False, True), (False, False)])
def test_the_sidecar_the_tool_result_and_the_prompt_each_link_a_sub_agent(
    tmp_path: Path, sidecar: bool, link: bool
) -> None:
    main, agent = shapes.with_subagent(tmp_path, sidecar=sidecar, link=link)
    rep = replay(load_session(main), as_sent=True)
    [a] = rep.subagents
    assert a.agent_id == "a1b2c3d" and a.path == str(agent)
    assert a.tool_use_id == "toolu_task_0001" and a.call is not None and a.call.message_id == 1
    assert a.label == "Find callers"
    assert rep.subagent_for("toolu_task_0001") is a
    assert rep.subagent_for("toolu_other") is None


def test_an_agent_started_by_another_agent_is_listed_under_it(tmp_path: Path) -> None:
    main, agent = shapes.with_subagent(tmp_path, sidecar=True)
    nested = agent.with_name("agent-n3st3d.jsonl")
    shutil.copy(agent, nested)
    nested.with_suffix(".meta.json").write_text(
        json.dumps({"toolUseId": "toolu_in_agent", "parentAgentId": "a1b2c3d", "spawnDepth": 2})
    )
    [top] = subagents_of(load_session(main))
    assert [a.agent_id for a in top.walk()] == ["a1b2c3d", "n3st3d"]


def test_sidechain_lines_inside_an_older_transcript_are_its_sub_agents() -> None:
    session = load_session(ACC / "ccviewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl")
    agents = subagents_of(session)
    assert [(a.path, a.label, a.tool_use_id) for a in agents] == [
        (None, "Check package configuration", "toolu_014YF9TXhDRR7BnpasNJ7gjC"),
        (None, "Analyze current project structure", "toolu_01LKfUwrsnof18CpWZQcJH44"),
    ]
    loaded = agents[0].load()
    assert loaded.format == "claude-code" and len(loaded.messages) == 6
    assert loaded.messages[0]["content"].startswith("Examine the package.json")
    # the main conversation holds none of them
    assert all("Examine the package.json" not in str(m["content"])[:40] for m in session.messages)


def test_a_session_without_sub_agents_has_none() -> None:
    assert subagents_of(load_session(ACC / "spotter_tool_heavy.jsonl")) == []


def test_an_agent_file_beside_the_session_that_names_it_is_its_sub_agent(tmp_path: Path) -> None:
    main, agent = shapes.with_subagent(tmp_path, beside=True)
    # another session's agent file in the same folder is not
    other = tmp_path / "agent-0th3r.jsonl"
    other.write_text(agent.read_text().replace(shapes.SESSION, "another-session"))
    [a] = subagents_of(load_session(main))
    assert a.path == str(agent) and a.tool_use_id == "toolu_task_0001"
    # inspect --json lists it as requests counts it
    assert replay(load_session(main)).summary()["subagents"] == [str(agent)]


def test_a_linked_compaction_request_sends_the_hook_reminders_its_acompact_file_recorded(
    tmp_path: Path,
) -> None:
    from ctxview.core.requests import simulate
    from ctxview.core.requests.compaction_request import reminder_tokens
    from ctxview.sessions.subagents import agent_logs, link_compactions

    session = load_session(session_folder(tmp_path, SPOTTER))
    log = simulate(session)
    (modelled,) = log.compactions
    agents = subagents_of(session)
    _, linked = link_compactions(log, agent_logs(agents))
    (req,) = next(al for al in linked if al.agent.kind == "compaction").log.requests
    # the file's first message: two PostToolUse hook reminders (1,606 and 332 characters), then
    # the compact instruction the model already counts
    acompact = next(a for a in agents if a.kind == "compaction").load()
    extra = reminder_tokens(acompact.messages[0], log.rates)
    assert 400 < extra < 800
    assert req.input_tokens == modelled.input_tokens + extra
    assert req.cache_read == modelled.cache_read
    assert req.cache_write == modelled.cache_write + extra
    assert req.cost_usd is not None and modelled.cost_usd is not None
    assert req.cost_usd > modelled.cost_usd
    # the prompt the file recorded, within 1%
    assert req.recorded_total is not None
    assert abs(req.input_tokens - req.recorded_total) / req.recorded_total < 0.01
