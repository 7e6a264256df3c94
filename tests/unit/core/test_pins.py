"""Pinned messages: never evicted, tool pairs pinned together, every strategy's
invariants kept; saved, reopened and replayed under other settings."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st

from ctxview import ConversationContext, check_protocol
from ctxview.core.protocol import errors
from ctxview.core.transcript import Transcript
from ctxview.sessions.readers import load_session
from ctxview.sessions.replay import replay
from ctxview.sessions.store import save_session, session_document
from tests.support.agentgen import agent_events
from tests.support.invariants import assert_window_basics

ALL = ["seed", "pair-safe", "token-budget", "low-water"]


def _tool_ids(msg: dict[str, Any]) -> set[str]:
    out: set[str] = set()
    for b in msg.get("content") if isinstance(msg.get("content"), list) else []:
        if b.get("type") == "tool_use":
            out.add(b["id"])
        elif b.get("type") == "tool_result":
            out.add(b["tool_use_id"])
    return out


def _partners(ctx: ConversationContext) -> dict[int, set[int]]:
    """For each window message, the others sharing a tool_use id with it (either side)."""
    ids = {i: _tool_ids(m) for i, m in ctx.entries()}
    return {
        i: {j for j, other in ids.items() if j != i and mine & other} for i, mine in ids.items()
    }


def _check(
    ctx: ConversationContext,
    history: list[dict[str, Any]],
    gone: set[int],
    pinned: set[int],
    added: int | None,
    unpinned: bool = False,
) -> None:
    assert_window_basics(ctx, history, gone, sorted(pinned))
    ids = ctx.window_ids
    assert pinned <= set(ids), f"pinned {sorted(pinned - set(ids))} left the window"
    assert set(ctx.pinned_ids) == pinned
    partners = _partners(ctx) if pinned else {}
    for p in pinned:  # pins are closed over tool pairs
        assert partners[p] <= pinned, (p, partners[p], pinned)
    # the strategy counts what it counted before: first + tail, held pins on top
    w = ctx._window
    # held: the pinned messages the eviction front passed (and, right after an unpin, the
    # released ones, which leave before the next truncation)
    assert all(e[0] in pinned for e in w.held) or (unpinned and w.released)
    counted = w.counted
    # (an unpin evicts nothing: what it released is over max until the next add)
    if ctx.strategy != "seed" and counted > ctx.max_context_messages and not unpinned:
        assert counted <= max(ctx.max_context_messages, 2) + 1
    if added is not None and not (ctx.strategy == "seed" and ctx.max_context_messages == 1):
        assert added in ids, f"the message just added (#{added}) was evicted"
        assert "newest_not_in_window" not in {p.code for p in ctx.window_notes()}


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(
    events=agent_events(live_changes=True),
    strategy=st.sampled_from(ALL),
    max_=st.integers(min_value=1, max_value=10),
    budget=st.integers(min_value=20, max_value=3000),
    data=st.data(),
)
def test_pinned_messages_are_never_evicted(
    events: list[tuple[str, Any]], strategy: str, max_: int, budget: int, data: Any
) -> None:
    ctx = ConversationContext(
        max_context_messages=max_, strategy=strategy, max_context_tokens=budget
    )
    transcript = Transcript(ctx)
    history: list[dict[str, Any]] = []
    gone: set[int] = set()
    pinned: set[int] = set()

    def on_event(e: Any) -> None:
        if e.kind == "evicted":
            gone.update(e.ids)
        elif e.kind == "pinned":
            (pinned.update if e.reason == "pin" else pinned.difference_update)(e.ids)

    ctx.subscribe(on_event)
    for kind, value in events:
        added = None
        if kind == "msg":
            added = ctx.add_message(value)
            history.append(value)
        elif kind == "max":
            ctx.max_context_messages = value
        else:
            ctx.strategy = value
        note(f"{kind} {added if kind == 'msg' else value} -> {ctx.window_ids}")
        _check(ctx, history, gone, pinned, added)
        action = data.draw(st.sampled_from(["none", "none", "pin", "pin", "unpin"]))
        ids = ctx.window_ids
        if action == "none" or not ids:
            continue
        target = data.draw(st.sampled_from(ids))
        if action == "pin":
            try:
                group = ctx.pin_group(target)
            except ValueError:
                with pytest.raises(ValueError):
                    ctx.pin(target)
                continue
            new = ctx.pin(target)
            note(f"pin {target} -> {new} {ctx.window_ids}")
            assert set(new) == set(group) - (pinned - set(new))
        else:
            ctx.unpin(target)
        _check(ctx, history, gone, pinned, None, unpinned=action == "unpin")
        for mid in ids:
            assert transcript.status(mid) == ("pinned" if mid in pinned or mid == 0 else "kept")


def _tool_loop(ctx: ConversationContext, n: int) -> None:
    start = ctx.next_id
    for k in range(start, start + n):
        ctx.add_user_message(f"question {k}")
        ctx.add_message(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": f"t{k}", "name": "read", "input": {}}],
            }
        )
        ctx.add_tool_results([{"tool_use_id": f"t{k}", "content": f"result {k}"}])
        ctx.add_message({"role": "assistant", "content": [{"type": "text", "text": f"a{k}"}]})


def test_pinning_a_tool_result_pins_its_tool_use_and_both_stay() -> None:
    ctx = ConversationContext(max_context_messages=4, strategy="pair-safe")
    _tool_loop(ctx, 1)  # ids 0..3: user, tool_use, tool_result, text
    assert ctx.pin(2) == [1, 2]
    _tool_loop(ctx, 5)
    assert ctx.window_ids[:3] == [0, 1, 2]
    assert ctx.pinned_ids == [1, 2]
    assert errors(check_protocol(ctx.messages)) == []
    # pins are kept on top of what the strategy counts: first + the newest max-1
    assert len(ctx.window_ids) == 4 + 2


def test_a_result_added_after_its_pinned_tool_use_is_pinned_with_it() -> None:
    ctx = ConversationContext(max_context_messages=3, strategy="seed")
    ctx.add_user_message("go")
    a = ctx.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}],
        }
    )
    ctx.pin(a)
    r = ctx.add_tool_results([{"tool_use_id": "t1", "content": "r"}])
    assert ctx.pinned_ids == [a, r]
    _tool_loop(ctx, 3)
    assert ctx.window_ids[:3] == [0, a, r]


def test_unpin_evicts_nothing_now_and_the_strategy_evicts_it_at_the_next_add() -> None:
    ctx = ConversationContext(max_context_messages=3, strategy="seed")
    for k in range(3):
        ctx.add_user_message(f"m{k}")
    ctx.pin(1)
    for k in range(3, 6):
        ctx.add_user_message(f"m{k}")
    assert ctx.window_ids == [0, 1, 4, 5]
    assert ctx.unpin(1) == [1]
    assert ctx.window_ids == [0, 1, 4, 5]  # nothing evicted by the unpin itself
    ctx.add_user_message("m6")
    assert ctx.window_ids == [0, 5, 6]


def test_pinning_an_orphaned_tool_result_is_refused() -> None:
    ctx2 = ConversationContext(max_context_messages=2, strategy="seed")
    ctx2.add_user_message("go")
    ctx2.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t1", "name": "read", "input": {}}],
        }
    )
    r = ctx2.add_tool_results([{"tool_use_id": "t1", "content": "r"}])
    assert ctx2.window_ids == [0, r]  # seed orphaned the result
    with pytest.raises(ValueError, match="orphan"):
        ctx2.pin(r)
    with pytest.raises(KeyError):
        ctx2.pin(1)


def test_pins_survive_an_edit_and_its_undo() -> None:
    ctx = ConversationContext(max_context_messages=3, strategy="pair-safe")
    for k in range(4):
        ctx.add_user_message(f"m{k}")
    ctx.pin(2)
    before = ctx.messages[1]
    ctx.remove_message(2)
    assert ctx.pinned_ids == []
    ctx.readmit_message(2, before)
    assert ctx.pinned_ids == [2]
    for k in range(4, 9):
        ctx.add_user_message(f"m{k}")
    assert 2 in ctx.window_ids


def test_pins_are_saved_reopened_and_kept_under_other_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = ConversationContext(max_context_messages=4, strategy="pair-safe")
    transcript = Transcript(ctx)
    _tool_loop(ctx, 2)
    ctx.pin(5)  # the second tool_use: its result (6) comes with it
    _tool_loop(ctx, 3)
    window = ctx.window_ids
    assert ctx.pinned_ids == [5, 6] and {5, 6} <= set(window)
    path = tmp_path / "s.ctxview.json"
    save_session(path, session_document(ctx, transcript))
    doc = json.loads(path.read_text())
    assert doc["window"]["pinned"] == [5, 6]
    again = replay(load_session(str(path)))
    assert again.context.window_ids == window
    assert again.context.pinned_ids == [5, 6]
    assert again.transcript.status(5) == "pinned"
    again.context.add_user_message("next")  # the restored window evicts as the saved one did
    ctx.add_user_message("next")
    assert again.context.window_ids == ctx.window_ids
    other = replay(load_session(str(path)), max_context_messages=3, strategy="seed")
    assert {5, 6} <= set(other.context.window_ids)
    assert other.context.pinned_ids == [5, 6]
    # inspect shows them
    from ctxview.cli import main

    assert main(["inspect", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pinned_ids"] == [5, 6]
    assert main(["inspect", str(path)]) == 0
    assert "#0, #5, #6" in capsys.readouterr().out


def test_a_bad_pinned_list_is_one_line_naming_the_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ctx = ConversationContext(max_context_messages=4)
    transcript = Transcript(ctx)
    _tool_loop(ctx, 2)
    doc = session_document(ctx, transcript)
    doc["window"]["pinned"] = [99]
    path = tmp_path / "bad.ctxview.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(Exception, match=r"window\.pinned\[0\]: 99 is not the id of a window"):
        load_session(str(path))
    from ctxview.cli import main

    for bad, where in [("\x1b[31mx", "window.pinned: expected an array"), ([True], "[0]: True")]:
        doc["window"]["pinned"] = bad
        path.write_text(json.dumps(doc))
        assert main(["inspect", str(path)]) == 2
        err = capsys.readouterr().err
        assert where in err and "\x1b" not in err and len(err.strip().splitlines()) == 1


def test_unpinning_a_pair_whose_result_is_still_in_the_tail_leaves_no_orphan() -> None:
    """The tool_use was held, its result (then the newest) still in
    the tail; after the unpin the next add evicts the tool_use, and pair-safe the result."""
    for strategy in ("pair-safe", "token-budget", "low-water"):
        ctx = ConversationContext(max_context_messages=4, strategy=strategy)
        ctx.add_user_message("go")
        ctx.add_message(
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t0", "name": "read", "input": {}}],
            }
        )
        ctx.add_tool_results([{"tool_use_id": "t0", "content": "ok"}])
        assert ctx.pin(1) == [1, 2]
        ctx.add_message({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
        assert ctx.unpin(1) == [1, 2]
        ctx.add_user_message("next")
        assert errors(check_protocol(ctx.messages)) == [], (strategy, ctx.window_ids)
        assert 1 not in ctx.window_ids and 2 not in ctx.window_ids


def test_repair_keeps_the_pins_of_a_session(tmp_path: Path) -> None:
    from ctxview.cli import main

    ctx = ConversationContext(max_context_messages=3, strategy="seed")
    transcript = Transcript(ctx)
    ctx.add_user_message("go")
    ctx.add_user_message("keep me")
    ctx.pin(1)
    _tool_loop(ctx, 2)  # seed orphans a tool_result: repair has work to do
    assert errors(check_protocol(ctx.messages))
    path = tmp_path / "s.ctxview.json"
    save_session(path, session_document(ctx, transcript))
    out = tmp_path / "fixed.ctxview.json"
    assert main(["repair", str(path), "-o", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["window"]["pinned"] == [1]
    assert replay(load_session(str(out))).context.pinned_ids == [1]


@settings(max_examples=60, deadline=None)
@given(
    events=agent_events(live_changes=False),
    strategy=st.sampled_from(ALL),
    max_=st.integers(min_value=2, max_value=8),
    data=st.data(),
)
def test_the_request_model_keeps_what_the_pinned_window_keeps(
    events: list[tuple[str, Any]], strategy: str, max_: int, data: Any
) -> None:
    """The request model, given the pins, ends on the window the live context keeps when the
    same messages are pinned as they are added (as opening a session with pins replays it)."""
    from types import SimpleNamespace

    from ctxview.core.requests import simulate

    msgs = [v for k, v in events if k == "msg"]
    if len(msgs) < 2:
        return
    want_pins = set(data.draw(st.sets(st.integers(0, len(msgs) - 1), max_size=3)))
    ctx = ConversationContext(max_context_messages=max_, strategy=strategy)
    pinned: list[int] = []
    for m in msgs:
        mid = ctx.add_message(m)
        if mid in want_pins:
            try:
                ctx.pin(mid)
                pinned.append(mid)
            except (KeyError, ValueError):
                pass
    view = SimpleNamespace(
        path="p",
        format="ctxview",
        messages=msgs,
        metas=[{} for _ in msgs],
        system="",
        tools=[],
        model="claude-sonnet-4-5",
        pinned=pinned,
    )
    log = simulate(view, max_context_messages=max_, strategy=strategy)
    # the last request's window is the context after the last response was added: replay up
    # to it and compare
    if not log.requests:
        return
    last = log.requests[-1]
    upto = last.response_id if last.response_id is not None else len(msgs)
    ref = ConversationContext(max_context_messages=max_, strategy=strategy)
    for m in msgs[:upto]:
        mid = ref.add_message(m)
        if mid in pinned:
            with contextlib.suppress(KeyError, ValueError):
                ref.pin(mid)
    assert log.windows[last.index] == ref.window_ids
    for mid in pinned:
        if mid < upto:
            assert mid in log.windows[last.index]


def _opening_call_loop() -> list[dict[str, Any]]:
    """A history that opens with an assistant tool call (a conversation handed over mid-loop),
    its answer, then plain turns."""
    call = {"type": "tool_use", "id": "toolu_open", "name": "read_file", "input": {}}
    answer = {"type": "tool_result", "tool_use_id": "toolu_open", "content": "ok"}
    msgs: list[dict[str, Any]] = [
        {"role": "assistant", "content": [call]},
        {"role": "user", "content": [answer]},
    ]
    for t in range(4):
        msgs += [{"role": "user", "content": f"q{t}"}, {"role": "assistant", "content": f"a{t}"}]
    return msgs


@pytest.mark.parametrize("strategy", ["pair-safe", "token-budget", "low-water"])
def test_a_safe_strategy_keeps_the_answer_of_the_first_messages_tool_call(strategy: str) -> None:
    ctx = ConversationContext(max_context_messages=3, strategy=strategy, max_context_tokens=40)
    for m in _opening_call_loop():
        ctx.add_message(m)
    assert ctx.window_ids[:2] == [0, 1]
    assert errors(check_protocol(ctx.messages)) == []
    assert ctx.unpin(1) == []  # kept with the first message while the strategy keeps pairs


def test_seed_drops_the_answer_of_the_first_messages_tool_call_as_the_java_does() -> None:
    ctx = ConversationContext(max_context_messages=3, strategy="pair-safe")
    msgs = _opening_call_loop()
    for m in msgs[:4]:
        ctx.add_message(m)
    ctx.strategy = "seed"  # the answer is no longer kept with the first message
    for m in msgs[4:]:
        ctx.add_message(m)
    assert 1 not in ctx.window_ids
    assert ctx.window_ids == [0, len(msgs) - 2, len(msgs) - 1]


def test_the_request_replay_keeps_the_answer_of_the_first_messages_tool_call() -> None:
    from ctxview.core.requests import simulate
    from ctxview.sessions.model import LoadedSession

    msgs = _opening_call_loop()
    session = LoadedSession("x.json", "messages", msgs, [{} for _ in msgs])
    log = simulate(
        session, strategy="pair-safe", max_context_messages=3, keep_windows=range(len(msgs) + 1)
    )
    assert log.windows and all(w[:2] == [0, 1] for w in log.windows.values() if len(w) > 1)
