"""The chat loop through the app: offline demo model and the real SDK against the fake API."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from textual.widgets import Input

from ctxview.app.screens.modals import ConfirmSendScreen
from ctxview.core.protocol import check_protocol, errors
from tests.support.apphelp import make_app, screen_after, settle, wait_until
from tests.support.fake_api import FakeAPI, Response, error, text_events, tool_events
from tests.support.paths import ROOT

SAMPLES = ROOT / "sample_sessions"


async def send(pilot: Any, text: str) -> None:
    chat = pilot.app.query_one("#chat", Input)
    chat.focus()
    chat.value = text
    await pilot.press("enter")
    await settle(pilot)


def assert_tool_pairs(messages: list[dict[str, Any]]) -> None:
    assert errors(check_protocol(messages)) == [], check_protocol(messages)


async def test_offline_calculate_loop() -> None:
    app = make_app(None, system="be brief")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "calculate 6*7")
        msgs = app.model.context.messages
        assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
        use = msgs[1]["content"][1]
        assert use["type"] == "tool_use" and use["name"] == "calculator"
        assert msgs[2]["content"][0] == {
            "type": "tool_result",
            "tool_use_id": use["id"],
            "content": "42",
            "is_error": False,
        }
        assert "42" in msgs[3]["content"][0]["text"]
        assert app.model.transcript[1].meta["usage"]["output_tokens"] > 0
        assert "offline" in app.sub_title


async def test_offline_seed_orphan_fails_like_the_api() -> None:
    # at max 11 the seed's cut after the new user message lands on a tool_result (#18)
    app = make_app(str(SAMPLES / "agent_loop.json"), max_=11)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "what now?")
        assert isinstance(app.screen, ConfirmSendScreen)  # warned before sending
        n = len(app.model.transcript)
        await pilot.press("s")  # send anyway
        await settle(pilot)
        notes = " ".join(m for m, t, _ in app.notice_log)
        assert "400" in notes and "unexpected `tool_use_id` found in `tool_result` blocks" in notes
        assert len(app.model.transcript) == n  # nothing added; the user's message stays
        assert app.model.context.messages[-1] == {"role": "user", "content": "what now?"}
        assert app.model.draft is not None and app.model.draft.state == "failed"
        # switch to pair-safe and retry: no duplicate user message
        app.set_strategy("pair-safe")
        await pilot.press("ctrl+r")
        await settle(pilot)
        msgs = app.model.context.messages
        assert [m for m in msgs if m.get("content") == "what now?"] == [
            {"role": "user", "content": "what now?"}
        ]
        assert msgs[-1]["role"] == "assistant" and app.model.draft is None


async def test_confirm_offers_pair_safe() -> None:
    app = make_app(str(SAMPLES / "agent_loop.json"), max_=11)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "go on")
        await pilot.press("p")
        await settle(pilot)
        assert app.model.context.strategy == "pair-safe"
        assert app.model.context.messages[-1]["role"] == "assistant"


async def test_real_sdk_stream_and_tools(fake_api: FakeAPI) -> None:
    fake_api.queue(
        Response("sse", tool_events("calculator", {"expression": "6*7"}, "toolu_A")),
        Response("sse", text_events("It is 42.")),
    )
    app = make_app(None, api_url=fake_api.url, system="You are terse.", max_=20)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert "online" in app.sub_title
        await send(pilot, "calculate 6*7")
        assert len(fake_api.requests) == 2
        first, second = fake_api.requests
        assert first["system"] == "You are terse." and second["system"] == "You are terse."
        assert first["messages"] == [{"role": "user", "content": "calculate 6*7"}]
        assert {t["name"] for t in first["tools"]} >= {"calculator", "current_time", "word_count"}
        # the second request is exactly the window at that time: tool_use then its tool_result
        assert second["messages"][1]["content"][-1]["id"] == "toolu_A"
        assert second["messages"][2]["content"][0]["tool_use_id"] == "toolu_A"
        assert second["messages"][2]["content"][0]["content"] == "42"
        assert_tool_pairs(second["messages"])
        msgs = app.model.context.messages
        assert msgs[-1]["content"][0]["text"] == "It is 42."
        assert second["messages"] == msgs[:-1]  # max 20: nothing evicted, the window is everything
        assert [b["messages"] for b in fake_api.requests] == [
            b["messages"] for b in app.chat.requests
        ]
        usage = app.model.transcript[len(app.model.transcript) - 1].meta["usage"]
        assert usage["cache_read_input_tokens"] == 7 and usage["output_tokens"] == 12


async def test_window_sent_is_the_truncated_window(fake_api: FakeAPI) -> None:
    app = make_app(None, api_url=fake_api.url, max_=3, strategy="pair-safe")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for k in range(4):
            await send(pilot, f"message {k}")
        for body in fake_api.requests:
            assert len(body["messages"]) <= 3 and body["messages"][0] == {
                "role": "user",
                "content": "message 0",
            }
            assert_tool_pairs(body["messages"])
        # what went over the wire is exactly the window at each send
        assert [b["messages"] for b in fake_api.requests] == [
            b["messages"] for b in app.chat.requests
        ]
        assert len(fake_api.requests) == 4


async def test_cut_stream_not_added_and_never_sent_back(fake_api: FakeAPI) -> None:
    fake_api.queue(Response("sse", text_events("PARTIAL words that stop", cut=True)))
    app = make_app(None, api_url=fake_api.url)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "hello")
        assert [m["role"] for m in app.model.context.messages] == ["user"]
        d = app.model.draft
        assert d is not None and d.state == "incomplete" and "PARTIAL" in d.text
        assert any("message_stop" in m for m, t, _ in app.notice_log)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert len(fake_api.requests) == 2
        assert "PARTIAL" not in json.dumps(fake_api.requests[1])
        assert fake_api.requests[1]["messages"] == [{"role": "user", "content": "hello"}]
        assert [m["role"] for m in app.model.context.messages] == ["user", "assistant"]


async def test_faults_keep_app_running(fake_api: FakeAPI) -> None:
    fake_api.queue(
        error(529, "overloaded_error", "Overloaded"),
        error(429, "rate_limit_error", "Too many requests", **{"retry-after": "30"}),
        error(404, "not_found_error", "model: claude-nope"),
    )
    app = make_app(None, api_url=fake_api.url)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "hi")
        await pilot.press("ctrl+r")
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        notes = [m for m, t, _ in app.notice_log]
        assert any(n.startswith("529 overloaded") for n in notes)
        assert any("429" in n and "retry after 30 s" in n for n in notes)
        assert any("404" in n and "claude-nope" in n for n in notes)
        assert app.is_running
        assert app.model.context.messages == [{"role": "user", "content": "hi"}]
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert [m["role"] for m in app.model.context.messages] == ["user", "assistant"]


async def test_escape_cancels(fake_api: FakeAPI) -> None:
    fake_api.queue(Response("sse", text_events("slow"), delay=3))
    app = make_app(None, api_url=fake_api.url)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, 1)
        chat = app.query_one("#chat", Input)
        chat.value = "hi"
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.chat.busy)
        await pilot.press("escape")
        await settle(pilot)
        assert not app.chat.busy
        assert app.model.draft is not None and app.model.draft.state == "cancelled"
        assert app.model.context.messages == [{"role": "user", "content": "hi"}]


async def test_count_tokens(fake_api: FakeAPI) -> None:
    app = make_app(str(SAMPLES / "long_chat.json"), api_url=fake_api.url)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+k")
        await settle(pilot)
        assert app.exact_tokens == 1234
        assert "exact (count_tokens): 1,234" in str(app.query_one("#tokens").render())


async def test_autosave_and_resume(tmp_path: Path) -> None:
    app = make_app(None, autosave=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "calculate 2+2")
        await settle(pilot)
    from ctxview.chat.autosave import newest_autosave

    newest = newest_autosave()
    assert newest is not None and str(newest).startswith(os.environ["CTXVIEW_STATE_DIR"])
    doc = json.loads(newest.read_text())
    assert [t["message"]["role"] for t in doc["transcript"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert "ANTHROPIC_API_KEY" not in newest.read_text()


async def test_api_key_not_in_autosave(fake_api: FakeAPI, monkeypatch: Any) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-123456")
    app = make_app(None, api_url=fake_api.url, autosave=True)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "hello")
        await settle(pilot)
    from ctxview.chat.autosave import newest_autosave

    newest = newest_autosave()
    assert newest is not None and "sk-ant-secret" not in newest.read_text()
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    assert not cfg.exists() or "sk-ant-secret" not in cfg.read_text()


def test_resume_opens_newest_autosave(monkeypatch: Any) -> None:
    import ctxview.app.app as appmod
    from ctxview.chat.autosave import sessions_dir
    from ctxview.cli import main

    d = sessions_dir()
    d.mkdir(parents=True)
    older, newer = d / "chat-1.ctxview.json", d / "chat-2.ctxview.json"
    older.write_text((SAMPLES / "long_chat.json").read_text())
    newer.write_text((SAMPLES / "tool_errors.json").read_text())
    os.utime(older, (1, 1))
    seen: dict[str, Any] = {}

    def fake_run(self: Any, **kw: Any) -> int:
        seen["path"] = self.model.path
        seen["n"] = len(self.model.transcript)
        return 0

    monkeypatch.setattr(appmod.CtxviewApp, "run", fake_run)
    monkeypatch.setattr("ctxview.app.launch.has_terminal", lambda: True)  # (pytest captures)
    assert main(["--resume"]) == 0
    assert seen["path"] == str(newer) and seen["n"] == 18


def test_resume_without_autosave(capsys: Any) -> None:
    from ctxview.cli import main

    assert main(["--resume"]) == 2
    assert "no autosaved session" in capsys.readouterr().err


def test_launch_bad_file_exit_2(tmp_path: Path, capsys: Any) -> None:
    from ctxview.cli import main

    bad = tmp_path / "x.json"
    bad.write_bytes(b"\xff\xfe")
    assert main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "UTF-8" in err


async def test_chat_history_up_down() -> None:
    app = make_app(None)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "first question")
        await send(pilot, "second question")
        chat = app.query_one("#chat", Input)
        chat.focus()
        chat.value = "half typed"
        await pilot.press("up")
        assert chat.value == "second question"
        await pilot.press("up")
        assert chat.value == "first question"
        await pilot.press("up")
        assert chat.value == "first question"
        await pilot.press("down", "down")
        assert chat.value == "half typed"


async def test_thinking_kept_verbatim_and_sent_back(fake_api: FakeAPI) -> None:
    from tests.support.fake_api import thinking_events

    fake_api.queue(Response("sse", thinking_events("Consider the options.", "Answer one.")))
    app = make_app(None, api_url=fake_api.url)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "first")
        await send(pilot, "second")
        thinking = app.model.context.messages[1]["content"][0]
        assert thinking == {
            "type": "thinking",
            "thinking": "Consider the options.",
            "signature": "EqQBCkYIBxgCKkBzaWduZWQ=",
        }
        assert fake_api.requests[1]["messages"][1]["content"][0] == thinking


async def test_offline_rejects_a_window_over_the_context(tmp_path: Path) -> None:
    big = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": "x" * 40_000} for i in range(25)
    ]
    p = tmp_path / "big.json"
    p.write_text(json.dumps({"model": "m", "messages": big}))
    app = make_app(str(p), max_=100)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        tokens = app.query_one("#tokens")
        assert "over the model's context" in str(tokens.render()) and tokens.has_class("-over")
        await send(pilot, "and now?")
        notes = " ".join(m for m, t, _ in app.notice_log)
        assert "400" in notes and "prompt is too long" in notes
        assert app.model.context.messages[-1] == {"role": "user", "content": "and now?"}


async def test_count_tokens_changes_nothing_in_the_session(fake_api: FakeAPI) -> None:
    """ctrl+k measured the request a send would make by making it: the built-in tools were
    added to the session, and its tools, tokens, prices and export changed though nothing was
    sent (offline: 'estimate ~608' for a window the sidebar called 466)."""
    for api in (fake_api.url, None):
        app = make_app(str(SAMPLES / "agent_loop.json"), api_url=api)
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            tools = [t["name"] for t in app.model.session.tools]
            before = app.model.window_tokens
            await pilot.press("ctrl+k")
            await settle(pilot)
            assert [t["name"] for t in app.model.session.tools] == tools
            assert app.model.window_tokens == before
            if api is None:  # offline: the estimate given is the sidebar's
                assert any(f"estimate: ~{before:,}" in m for m, t, _ in app.notice_log)
            else:  # what was counted is what a send would offer: the built-in tools too
                assert app.exact_tokens == 1234
                counted = [t["name"] for t in fake_api.requests[-1]["tools"]]
                assert counted[: len(tools)] == tools and len(counted) > len(tools)


async def test_tool_loop_at_small_max_never_sends_an_orphan_or_crashes() -> None:
    """The loop reads the tool calls from the reply it just added (never ``messages[-1]``), and
    the safe strategies keep the newest message with its tool_use partner (max+1 at max 2): the
    offline model, which checks every request as the API does, answers every round."""
    for strategy in ("pair-safe", "token-budget", "low-water"):
        for max_ in (2, 3):
            app = make_app(None, max_=max_, strategy=strategy)
            async with app.run_test(size=(120, 40)) as pilot:
                await settle(pilot)
                await send(pilot, "calculate 6*7")
                records = [r.message for r in app.model.transcript.records]
                assert [m["role"] for m in records] == ["user", "assistant", "user", "assistant"], (
                    strategy,
                    max_,
                )
                assert "42" in records[3]["content"][0]["text"]
                assert app.model.draft is None  # no failed reply
                assert app.model.context.window_ids[-1] == 3


async def test_seed_tool_round_is_checked_before_it_is_sent_and_pair_safe_is_offered_only_if_it_helps() -> (
    None
):
    """At max 2 the seed strategy orphans the tool results of a round: that request is not sent
    (the API would answer 400); retrying asks, and pair-safe is not offered, since the newest
    message is the orphan and what was evicted never comes back."""
    app = make_app(None, max_=2, strategy="seed")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await send(pilot, "calculate 6*7")
        # the tool round was answered locally but not sent: two requests would be one too many
        assert len(app.chat.requests) == 1
        assert any("not sent" in m for m, t, _ in app.notice_log)
        screen = await screen_after(pilot, "ctrl+r", ConfirmSendScreen)
        assert screen.pair_safe_helps is False
        assert screen.check_action("choose", ("pair-safe",)) is False


async def test_ctrl_k_and_ctrl_e_work_from_the_chat_box() -> None:
    from ctxview.app.screens.modals import SystemPromptScreen

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        chat = app.query_one("#chat")
        assert app.focused is chat
        await pilot.press(*"hello")
        await pilot.press("home")
        await pilot.press("ctrl+k")  # the input's kill-to-end would empty the draft
        await settle(pilot)
        assert chat.value == "hello"  # type: ignore[attr-defined]
        assert any("count_tokens" in m for m, t, _ in app.notice_log)
        await pilot.press("ctrl+e")
        await pilot.pause()
        assert isinstance(app.screen, SystemPromptScreen)
        await pilot.press("ctrl+e")  # inside the dialog: the text area's own key, no second dialog
        await pilot.pause()
        assert len(app.screen_stack) == 2
        await pilot.press("escape")
        await pilot.pause()
        assert chat.value == "hello"  # type: ignore[attr-defined]


async def test_message_evicted_before_sending_is_warned() -> None:
    from textual.widgets import Static

    from ctxview.app.screens.modals import ConfirmSendScreen

    app = make_app(max_=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello", "enter")  # the first message is pinned: sent
        await settle(pilot, 6)
        assert len(app.chat.requests) == 1  # type: ignore[union-attr]
        await pilot.press(*"again", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmSendScreen)
        shown = " ".join(str(w.render()) for w in app.screen.query(Static))
        assert "not in the window" in shown and "s: send anyway" in shown
        assert "m: raise max to 3" in shown
        assert len(app.chat.requests) == 1  # type: ignore[union-attr]  # nothing sent yet
        await pilot.press("m")
        await settle(pilot, 6)
        while isinstance(app.screen, ConfirmSendScreen):  # a protocol warning may follow
            await pilot.press("s")
            await settle(pilot, 6)
        assert app.model.context.max_context_messages == 3
        sent = app.chat.requests[-1]["messages"]  # type: ignore[union-attr]
        assert any(m["role"] == "user" and m["content"] == "again" for m in sent)
        # a one-off answer to the pre-send question is this chat's, never a default
        assert not Path(os.environ["CTXVIEW_CONFIG"]).exists()


async def test_send_anyway_sends_without_the_message() -> None:
    from ctxview.app.screens.modals import ConfirmSendScreen

    app = make_app(max_=1)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello", "enter")
        await settle(pilot, 6)
        await pilot.press(*"again", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ConfirmSendScreen)
        await pilot.press("s")
        await settle(pilot, 6)
        assert len(app.chat.requests) == 2  # type: ignore[union-attr]
        assert app.model.context.max_context_messages == 1


async def test_one_eviction_notice_per_turn() -> None:
    app = make_app(max_=3)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await pilot.press(*"hello", "enter")  # fills the window: the next turn evicts
        await settle(pilot, 6)
        # a turn longer than the notice's 0.3 s debounce: it evicts at the tool call and again
        # after streaming the answer (4 words at 0.15 s), more than 0.3 s later
        app.chat.backend.delay = 0.15  # type: ignore[union-attr]
        await pilot.press(*"calculate 6*7", "enter")
        await settle(pilot, 6)
        await wait_until(pilot, lambda: not app.evictions.pending)
        notices = [m for m, t, _ in app.notice_log if t == "eviction"]
        assert len(notices) == 1, notices
        assert app.model.evicted_count() >= 2


async def test_an_offline_chat_prices_its_requests_so_far_and_the_next_as_one_model() -> None:
    from tests.support.apphelp import text_of, wait_prediction

    app = make_app(None)
    async with app.run_test(size=(140, 45)) as pilot:
        await settle(pilot)
        await send(pilot, "calculate 6*7")
        await wait_prediction(pilot)
        pred = app.model.cache_prediction
        assert pred is not None and pred.requests == 2
        answered = {
            r.meta.get("model") for r in app.model.transcript.records if r.meta.get("model")
        }
        assert answered == {pred.model} == {app.model.model}
        assert pred.cost_usd is not None and pred.cost_so_far is not None
        cache = text_of(app, "#cache")
        assert "n/a" not in cache and "cost so far $" in cache
