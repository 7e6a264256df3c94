"""Pilot tests of sub-agents in the app: enter on a Task call opens its sub-agent, b (or escape)
goes back to the session that started it, as it was left."""

from __future__ import annotations

from pathlib import Path

from tests.support import claude_code_shapes as shapes
from tests.support.apphelp import make_app, settle, wait_until
from tests.support.paths import ACCEPTANCE


def _detail_text(app: object) -> str:
    return " ".join(str(w.render()) for w in app.detail.query("Static"))  # type: ignore[attr-defined]


async def test_enter_on_a_task_call_opens_its_sub_agent_and_b_goes_back(tmp_path: Path) -> None:
    main, agent = shapes.with_subagent(tmp_path, sidecar=True)
    app = make_app(str(main), as_sent=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        parent = app.model
        assert app.timeline.select_id(1)  # the assistant message holding the Task call
        await settle(pilot)
        assert "enter: open its sub-agent (Find callers)" in _detail_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model is not parent)
        assert app.model.path == str(agent)
        assert len(app.model.transcript) == 6
        assert app.title == "ctxview · main › Find callers"
        await pilot.press("b")
        await wait_until(pilot, lambda: app.model is parent)
        await settle(pilot)
        assert app.timeline.selected_id == 1
        assert "agent-" not in app.title and app.title.endswith(main.name)
        # escape goes back too, and b at the main session says so
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model is not parent)
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.model is parent)
        await pilot.press("b")
        await settle(pilot)
        assert any("main session" in n.message for n in app._notifications)


async def test_enter_where_no_sub_agent_was_started_says_so(tmp_path: Path) -> None:
    main, _ = shapes.with_subagent(tmp_path, sidecar=True)
    app = make_app(str(main), as_sent=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        parent = app.model
        assert app.timeline.select_id(0)
        await pilot.press("enter")
        await settle(pilot)
        assert app.model is parent
        assert any("no sub-agent here" in n.message for n in app._notifications)


async def test_opening_another_file_from_a_sub_agent_ends_the_path(tmp_path: Path) -> None:
    main, _ = shapes.with_subagent(tmp_path, sidecar=True)
    app = make_app(str(main), as_sent=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        parent = app.model
        app.timeline.select_id(1)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model is not parent)
        app.open_path(str(main))
        await wait_until(pilot, lambda: app.model is not parent and not app.subagents.path)
        assert app.title == f"ctxview · {main.name}"


async def test_a_sidechain_sub_agent_inside_an_older_transcript_opens_too() -> None:
    path = ACCEPTANCE / "claude_code" / "ccviewer_5c0375b4-57a5-4f26-b12d-d022ee4e51b7.jsonl"
    app = make_app(str(path), as_sent=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        parent = app.model
        assert app.timeline.select_id(6)  # the tool_result of the Task call at #5
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model is not parent)
        assert len(app.model.transcript) == 6
        assert app.title == "ctxview · main › Check package configuration"
        await pilot.press("b")
        await wait_until(pilot, lambda: app.model is parent)


async def test_the_sidebar_and_the_requests_view_count_the_sub_agents_requests(
    tmp_path: Path,
) -> None:
    """As sent, the totals with the sub-agent's requests (labelled) beside the session's own:
    the figures ``ctxview requests`` gives."""
    from ctxview.app.screens.requests import RequestsScreen
    from ctxview.core.requests import simulate
    from ctxview.sessions import load_session
    from ctxview.sessions.subagents import agent_logs, subagents_of, totals_with_agents
    from tests.support.apphelp import screen_after

    main, _ = shapes.with_subagent(tmp_path, sidecar=True)
    session = load_session(main)
    log = simulate(session)
    own = log.totals()["requests"]
    total = totals_with_agents(log, agent_logs(subagents_of(session)))["requests"]
    assert total > own
    app = make_app(str(main), as_sent=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(
            pilot,
            lambda: (
                app.model.cache_prediction is not None
                and app.model.cache_prediction.with_agents is not None
            ),
        )
        await settle(pilot)
        sidebar = str(app.sidebar.query_one("#cache").render())
        assert f"{own} requests: hit" in sidebar
        assert "with 1 sub-agent:" in sidebar and f"{total} requests · hit" in sidebar
        screen = await screen_after(pilot, "R", RequestsScreen)
        text = str(screen.query_one("#summary").render())
        assert f"{own} requests ·" in text and f"with 1 sub-agent: {total} requests ·" in text


async def test_enter_on_a_codex_spawn_agent_call_opens_the_thread_it_spawned(
    tmp_path: Path,
) -> None:
    from tests.support.codex_rollouts import write_child, write_parent

    main = tmp_path / "2026/03/01/rollout-2026-03-01T10-00-00-019a-parent.jsonl"
    child = tmp_path / "2026/03/01/rollout-2026-03-01T10-01-00-019a-child.jsonl"
    write_parent(main, "019a-parent", "019a-child")
    write_child(child, "019a-child", "019a-parent")
    app = make_app(str(main), as_sent=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        parent = app.model
        assert app.timeline.select_id(1)  # the spawn_agent call
        await settle(pilot)
        assert "enter: open its sub-agent (explorer)" in _detail_text(app)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model is not parent)
        assert app.model.path == str(child)
        assert app.title == "ctxview · main › explorer"
        await pilot.press("b")
        await wait_until(pilot, lambda: app.model is parent)
