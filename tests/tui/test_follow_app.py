"""Following in the TUI: appended lines appear, evictions happen, the view stays put unless at
the bottom, a truncated file is replayed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.apphelp import make_app, settle, wait_until
from tests.support.transcripts import rec, text


def _turn(k: int, parent: str) -> str:
    return rec("user", f"u{k}", parent, f"question {k}") + rec(
        "assistant", f"a{k}", f"u{k}", text(f"answer {k}")
    )


def _compaction(parent: str, trigger: str, pre: int) -> str:
    """A Claude Code compact_boundary line after ``parent``, its summary and the next answer."""
    import json

    boundary = {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "c1",
        "parentUuid": None,
        "logicalParentUuid": parent,
        "sessionId": "s",
        "timestamp": "2026-01-01T00:00:00Z",
        "compactMetadata": {"trigger": trigger, "preTokens": pre},
    }
    return (
        json.dumps(boundary)
        + "\n"
        + rec("user", "s1", "c1", "Summary: ...", isCompactSummary=True)
        + rec("assistant", "a99", "s1", text("continuing"))
    )


async def test_follow_appends_and_evicts(tmp_path: Path) -> None:
    p = tmp_path / "live.jsonl"
    p.write_text(rec("user", "u0", None, "first") + rec("assistant", "a0", "u0", text("ok")))
    app = make_app(str(p), max_=4)
    app.follow_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: getattr(app, "_following", None) is not None)
        assert "following" in app.sub_title
        tl = app.timeline
        tl.action_jump_end()
        parent = "a0"
        with open(p, "a") as fh:
            for k in range(1, 4):
                fh.write(_turn(k, parent))
                parent = f"a{k}"
        await wait_until(pilot, lambda: len(app.model.transcript) == 8)
        ctx = app.model.context
        assert len(ctx) == 4  # max 4: the middle was evicted
        assert app.model.evicted_count() == 4  # 8 messages, 4 in the window
        assert tl.selected_id == 7  # it was at the bottom: it follows
        # scroll up: the view stays there while lines arrive
        tl.action_jump_home()
        await pilot.pause()
        with open(p, "a") as fh:
            fh.write(_turn(4, parent))
        await wait_until(pilot, lambda: len(app.model.transcript) == 10)
        assert tl.selected_id == 0
        # a partial line waits for its newline
        line = rec("user", "u5", "a4", "half")
        with open(p, "a") as fh:
            fh.write(line[:30])
        await pilot.pause(0.6)
        assert len(app.model.transcript) == 10
        with open(p, "a") as fh:
            fh.write(line[30:])
        await wait_until(pilot, lambda: len(app.model.transcript) == 11)
        # truncated and rewritten: replayed from the start
        p.write_text(rec("user", "n0", None, "new file") + rec("assistant", "n1", "n0", text("hi")))
        await wait_until(pilot, lambda: len(app.model.transcript) == 2)
        assert app.model.transcript.records[0].message["content"] == "new file"
        assert "following" in app.sub_title
        # f stops following
        await pilot.press("f")
        await wait_until(pilot, lambda: "following" not in app.sub_title)


async def test_f_on_a_non_transcript_says_why(tmp_path: Path) -> None:
    p = tmp_path / "req.json"
    p.write_text('{"messages": [{"role": "user", "content": "hi"}]}')
    app = make_app(str(p))
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await wait_until(pilot, lambda: any("Claude Code" in m for m, t, _ in app.notice_log))
        assert getattr(app, "_following", None) is None


async def test_sessions_screen_opens_and_follows(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    proj = tmp_path / ".claude" / "projects" / "-work"
    proj.mkdir(parents=True)
    (proj / "old.jsonl").write_text(
        rec("user", "o0", None, "old \x1b[2J prompt", timestamp="2026-01-01T00:00:00Z")
    )
    newer = proj / "new.jsonl"
    newer.write_text(
        rec("user", "u0", None, "newest prompt").replace("2026-01-01", "2026-02-01")
        + rec("assistant", "a0", "u0", text("ok")).replace("2026-01-01", "2026-02-01")
    )
    (proj / "new" / "subagents").mkdir(parents=True)
    (proj / "new" / "subagents" / "agent-1.jsonl").write_text(rec("user", "s0", None, "sub task"))
    app = make_app(None)
    async with app.run_test(size=(120, 36)) as pilot:
        from textual.widgets import Tree

        await settle(pilot)
        await pilot.press("ctrl+l")
        await wait_until(pilot, lambda: bool(app.screen.query(Tree)))
        tree = app.screen.query_one(Tree)
        await wait_until(pilot, lambda: len(tree.root.children) == 2)
        labels = [str(n.label) for n in tree.root.children]
        assert "newest prompt" in labels[0] and "1 sub-agent" in labels[0]
        assert "\x1b" not in labels[1] and "␛[2J" in labels[1]
        assert [str(c.label).split()[0] for c in tree.root.children[0].children] == [
            "agent-1.jsonl"
        ]
        await pilot.press("f")
        await wait_until(
            pilot,
            lambda: app.model.path == str(newer) and getattr(app, "_following", None) is not None,
        )
        with open(newer, "a") as fh:
            fh.write(rec("user", "u1", "a0", "more"))
        await wait_until(pilot, lambda: len(app.model.transcript) == 3)
        await pilot.press("f")  # stop following, and let the last update's messages settle
        for _ in range(3):
            await pilot.pause()


async def test_open_dialog_has_the_sessions_list_as_a_tab(tmp_path: Path, monkeypatch: Any) -> None:
    from textual.widgets import TabbedContent, Tree

    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    proj = tmp_path / ".claude" / "projects" / "-work"
    proj.mkdir(parents=True)
    session = proj / "s.jsonl"
    session.write_text(
        rec("user", "u0", None, "a prompt") + rec("assistant", "a0", "u0", text("ok"))
    )
    app = make_app(None)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+o")
        await wait_until(pilot, lambda: bool(app.screen.query(TabbedContent)))
        path = app.screen.query_one("#path")
        await wait_until(pilot, lambda: app.screen.focused is path)
        # switch as a click on the tab does: the path input gives up the focus first. Switched
        # under it, the input is hidden while focused, Textual hands its focus to a sibling in
        # the same hidden pane, and a focus inside a pane makes that pane's tab active again.
        app.screen.set_focus(None)
        tabs = app.screen.query_one(TabbedContent)
        tabs.active = "sessions-tab"
        tree = app.screen.query_one("#cc-sessions Tree", Tree)
        # listed once the tab shows
        await wait_until(pilot, lambda: len(tree.root.children) == 1, timeout=20)

        def shown_and_focused() -> bool:
            # the dialog itself moves the focus to the list it shows: enter opens the session
            # (the screen's focus: a widget's has_focus is only updated by its Focus and Blur
            # events, so it may still read True when the keys already go elsewhere)
            return (
                tabs.active == "sessions-tab"
                and app.screen.focused is tree
                and tree.cursor_node is not None
            )

        await wait_until(pilot, shown_and_focused)
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.model.path == str(session), timeout=20)
        assert getattr(app, "_following", None) is None


async def test_follow_as_sent_grows_untruncated_and_applies_a_compaction(tmp_path: Path) -> None:
    """Opened as sent (the default for a transcript), following never truncates; a compaction
    arriving starts the request again at its summary (the rest is compacted)."""
    p = tmp_path / "live.jsonl"
    p.write_text(rec("user", "u0", None, "first") + rec("assistant", "a0", "u0", text("ok")))
    app = make_app(str(p), as_sent=True)
    app.follow_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: getattr(app, "_following", None) is not None)
        assert app.model.as_sent == "claude-code"
        parent = "a0"
        with open(p, "a") as fh:
            for k in range(1, 16):  # 32 messages: past the config's max (20)
                fh.write(_turn(k, parent))
                parent = f"a{k}"
        await wait_until(pilot, lambda: len(app.model.transcript) == 32)
        assert len(app.model.context) == 32 and app.model.evicted_count() == 0
        with open(p, "a") as fh:
            fh.write(_compaction(parent, "auto", 160000))
        await wait_until(
            pilot,
            lambda: len(app.model.transcript) == 34 and app.model.compacted_before == 32,
        )
        model = app.model
        assert model.as_sent == "claude-code"
        assert model.context.window_ids == [32, 33]
        assert model.status(0) == "compacted" and model.status(31) == "compacted"
        assert app._following.model is model  # following goes on with the new view


async def test_follow_simulated_starts_again_at_a_compaction(tmp_path: Path) -> None:
    """In a simulation (max 4), a compaction arriving while following starts the window again
    at its summary, as opening the file would: what it replaced is compacted, what seed had
    evicted before stays evicted."""
    p = tmp_path / "live.jsonl"
    p.write_text(rec("user", "u0", None, "first") + rec("assistant", "a0", "u0", text("ok")))
    app = make_app(str(p), max_=4)
    app.follow_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: getattr(app, "_following", None) is not None)
        assert app.model.as_sent is None
        parent = "a0"
        with open(p, "a") as fh:
            for k in range(1, 4):
                fh.write(_turn(k, parent))
                parent = f"a{k}"
        await wait_until(pilot, lambda: len(app.model.transcript) == 8)
        assert app.model.context.window_ids == [0, 5, 6, 7]
        with open(p, "a") as fh:
            fh.write(_compaction(parent, "manual", 9000))
        await wait_until(pilot, lambda: len(app.model.transcript) == 10)
        model = app.model
        assert model.as_sent is None  # still the simulation
        assert model.context.window_ids == [8, 9] and model.context.pinned_id == 8
        assert [model.status(i) for i in range(10)] == [
            "compacted",
            "evicted",
            "evicted",
            "evicted",
            "evicted",
            "compacted",
            "compacted",
            "compacted",
            "pinned",
            "kept",
        ]
        assert model.compacted_count() == 4


async def test_follow_a_codex_rollout(tmp_path: Path) -> None:
    """A Codex rollout grows: its items appear, the reply with the usage its token_count line
    brings (the usage comes after the reply: the reply is shown with it)."""
    import json

    def line(kind: str, payload: dict[str, Any]) -> str:
        return (
            json.dumps({"timestamp": "2026-01-01T00:00:00Z", "type": kind, "payload": payload})
            + "\n"
        )

    def item(role: str, words: str) -> str:
        kind = "input_text" if role == "user" else "output_text"
        body = {"type": "message", "role": role, "content": [{"type": kind, "text": words}]}
        return line("response_item", body)

    p = tmp_path / "rollout-2026-01-01T00-00-00-x.jsonl"
    p.write_text(
        line("session_meta", {"id": "x", "cwd": "/w"})
        + line("turn_context", {"model": "gpt-5-codex"})
        + item("user", "first")
    )
    app = make_app(str(p))
    app.follow_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: getattr(app, "_following", None) is not None)
        assert app.model.session.format == "codex" and "following" in app.sub_title
        usage = {"input_tokens": 2000, "cached_input_tokens": 1536, "output_tokens": 9}
        info = {"total_token_usage": usage, "last_token_usage": usage}
        with open(p, "a") as fh:
            fh.write(
                item("assistant", "done") + line("event_msg", {"type": "token_count", "info": info})
            )
            fh.write(item("user", "again"))
        await wait_until(pilot, lambda: len(app.model.transcript) == 3)
        meta = app.model.transcript.records[1].meta
        assert meta["usage"]["cache_read_input_tokens"] == 1536


async def test_a_message_followed_while_a_replay_is_on_its_way_is_kept(tmp_path: Path) -> None:
    """A followed update handled after a switch of view was replayed, but before the app shows
    that replay, is added to the shown session: the replay is made again with it, never shown
    without it."""
    p = tmp_path / "live.jsonl"
    p.write_text(rec("user", "u0", None, "first") + rec("assistant", "a0", "u0", text("ok")))
    app = make_app(str(p), as_sent=True)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot)
        switched = app.settings._switched
        late: list[bool] = []

        def then_followed(old: Any, model: Any, *rest: Any) -> None:
            switched(old, model, *rest)
            if not late:  # a followed update queued before the replay's message
                late.append(True)
                old.context.add_message({"role": "user", "content": "late"}, meta={})

        app.settings._switched = then_followed  # type: ignore[method-assign]
        app.settings.switch(as_sent=False, max_messages=4, strategy="seed")
        await wait_until(
            pilot, lambda: app.model.as_sent is None and len(app.model.transcript) == 3
        )
        assert late and app.model.transcript.records[-1].message["content"] == "late"


async def test_following_takes_the_model_the_file_records(tmp_path: Path) -> None:
    """A transcript followed from before its first reply opens on the configured model; the
    model its replies then record is the one the next request goes to (appended, and after a
    replay), unless a model was chosen."""
    p = tmp_path / "live.jsonl"
    p.write_text(rec("user", "u0", None, "first"))
    app = make_app(str(p), as_sent=True)
    default = app.model.model
    assert app.model.session.model is None and default != "claude-x"
    app.follow_on_start = True
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_until(pilot, lambda: getattr(app, "_following", None) is not None)
        with open(p, "a") as fh:
            fh.write(rec("assistant", "a0", "u0", text("ok")))
        await wait_until(pilot, lambda: len(app.model.transcript) == 2)
        assert (app.model.model, app.model.session.model) == ("claude-x", "claude-x")
        # rewritten with another model: replayed, and that model taken
        p.write_text(
            rec("user", "n0", None, "new")
            + rec("assistant", "n1", "n0", text("hi")).replace("claude-x", "claude-y")
        )
        await wait_until(pilot, lambda: app.model.transcript.records[0].message["content"] == "new")
        assert app.model.model == "claude-y"
