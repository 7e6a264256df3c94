"""``ConversationContext.save`` / ``ConversationContext.load``: a context saved in the ctxview
session format reopens equal (messages, window, pins, settings, steps, history) and goes on as
the original would; ``ctxview.save`` / ``ctxview.load`` are the same code; bad files are named
with the place; saves are atomic, never replace the file read, never hold the API key."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxview
from ctxview.core import session_file
from ctxview.core.atomic import WriteRefused
from ctxview.core.clearing import ClearToolUses, ContextEditing
from ctxview.core.context import ConversationContext
from ctxview.core.jsonfile import SessionError
from ctxview.core.transcript import Transcript
from ctxview.sessions import open_session
from tests.support.agentgen import agent_events

TOOL = {"name": "read_file", "input_schema": {"type": "object", "properties": {}}}
SYSTEMS = st.sampled_from(
    [
        "",
        "be brief",
        [{"type": "text", "text": "rules", "cache_control": {"type": "ephemeral"}}],
        [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}],
    ]
)
STRATEGIES = st.sampled_from(
    ["seed", "pair-safe", "token-budget", "low-water", "clear-tool-uses", "clear-thinking"]
)
EDITING = st.sampled_from([None, ContextEditing(ClearToolUses(trigger=300, keep=1))])


def state(ctx: ConversationContext, tools: bool = True) -> dict[str, Any]:
    """Everything a reopened context must hold as the saved one did (``tools=False``: but its
    tools, which the app keeps with the session instead)."""
    history = ctx.transcript
    assert isinstance(history, Transcript)
    return {
        "messages": ctx.messages,
        "window": ctx.window_ids,
        "pinned": ctx.pinned_ids,
        "compacted": ctx.compacted_ids,
        "step": ctx.step,
        "next_id": ctx.next_id,
        "max": ctx.max_context_messages,
        "strategy": ctx.strategy,
        "max_tokens": ctx.max_context_tokens,
        "low_water": ctx.low_water_fraction,
        "editing": ctx.context_editing.to_dict(),
        "system": ctx.system_prompt,
        "tools": ctx.tools if tools else None,
        "sent": [m for _, m in ctx.sent_entries()],
        "records": [
            (r.id, r.message, r.added_step, r.evicted_step, r.meta, history.status(r.id))
            for r in history.records
        ],
    }


def run_events(ctx: ConversationContext, events: list[tuple[str, Any]], pins: set[int]) -> None:
    for n, (kind, value) in enumerate(events):
        if kind == "msg":
            meta = {"timestamp": f"2026-01-01T00:00:{n % 60:02d}Z"} if n % 3 == 0 else None
            if n % 4 == 1:
                meta = {"usage": {"input_tokens": n, "output_tokens": 1}, "note": n}
            ctx.add_message(value, meta=meta)
        elif kind == "max":
            ctx.set_max_context_messages(value)
        elif kind == "strategy":
            ctx.set_strategy(value)
        if n in pins and ctx.window_ids:
            with contextlib.suppress(KeyError, ValueError):  # an orphan tool_result is refused
                ctx.pin(ctx.window_ids[n % len(ctx.window_ids)])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    events=agent_events(opening_call=True),
    system=SYSTEMS,
    strategy=STRATEGIES,
    max_messages=st.integers(min_value=1, max_value=12),
    max_tokens=st.sampled_from([200_000, 400, 1500]),
    tools=st.booleans(),
    editing=EDITING,
    pins=st.sets(st.integers(min_value=0, max_value=60), max_size=4),
)
def test_a_saved_context_loads_equal_and_goes_on_the_same(
    tmp_path: Path,
    events: list[tuple[str, Any]],
    system: Any,
    strategy: str,
    max_messages: int,
    max_tokens: int,
    tools: bool,
    editing: ContextEditing | None,
    pins: set[int],
) -> None:
    ctx = ConversationContext(
        max_messages,
        system,
        strategy,
        max_context_tokens=max_tokens,
        low_water_fraction=0.5,
        tools=[TOOL] if tools else None,
        context_editing=editing,
    )
    Transcript(ctx)
    run_events(ctx, events, pins)
    path = tmp_path / "ctx.json"
    ctx.save(path)
    back = ConversationContext.load(path)
    assert state(back) == state(ctx)
    # what the app opens from the file is the same context
    assert state(open_session(str(path)).context, tools=False) == state(back, tools=False)
    # a document without its window is replayed under its settings, as the app replays it
    doc = json.loads(path.read_text())
    del doc["window"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc))
    replayed = state(ConversationContext.load(bare), tools=False)
    assert replayed == state(open_session(str(bare)).context, tools=False)
    # the reopened context goes on as the original would: adds, unpins, another strategy
    for c in (ctx, back):
        c.add_user_message("and then?")
        c.add_assistant_message("more")
    assert state(back) == state(ctx)
    for mid in ctx.pinned_ids:
        assert back.unpin(mid) == ctx.unpin(mid)
    assert state(back) == state(ctx)
    for c in (ctx, back):
        c.set_strategy("seed")
        c.add_user_message("last")
    assert state(back) == state(ctx)


def test_the_method_and_ctxview_save_write_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_file, "_now", lambda: "2026-01-02T03:04:05+00:00")
    ctx = ConversationContext(4, "sys", "pair-safe", tools=[TOOL])
    Transcript(ctx)
    for n in range(6):
        ctx.add_user_message(f"q{n}")
        ctx.add_assistant_message(f"a{n}")
    by_method, by_alias = tmp_path / "method.json", tmp_path / "alias.json"
    ctx.save(by_method, model="claude-x", max_tokens=100, title="run")
    ctxview.save(ctx, by_alias, model="claude-x", max_tokens=100, title="run")
    assert by_method.read_bytes() == by_alias.read_bytes()
    ctxview.save(ctx.transcript, by_alias, model="claude-x", max_tokens=100, title="run")
    assert by_method.read_bytes() == by_alias.read_bytes()
    assert state(ctxview.load(by_alias)) == state(ConversationContext.load(by_method))


def _saved(tmp_path: Path, name: str = "s.json") -> Path:
    ctx = ConversationContext(3)
    Transcript(ctx)
    for n in range(5):
        ctx.add_user_message(f"m{n}")
    path = tmp_path / name
    ctx.save(path)
    return path


def test_load_names_the_file_and_the_place(tmp_path: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(SessionError) as err:
        ConversationContext.load(missing)
    assert str(err.value) == f"{missing}: no such file"
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "ctxview.session",\n "version": 1,\n "step": }\n')
    with pytest.raises(SessionError) as err:
        ConversationContext.load(bad)
    assert str(err.value) == f"{bad}: invalid JSON at line 3, column 10: Expecting value"
    path = _saved(tmp_path)
    doc = json.loads(path.read_text())
    for change, expected in [
        (
            {"version": 2},
            "version: written by a newer ctxview (version 2); this one reads version 1",
        ),
        ({"version": "1"}, "version: expected 1, got '1'"),
        ({"format": "other"}, 'format: expected "ctxview.session"'),
        ({"window": {"ids": [0, 9]}}, "window.ids[1]: 9 is not the id of a transcript message"),
    ]:
        path.write_text(json.dumps({**doc, **change}))
        with pytest.raises(SessionError) as err:
            ConversationContext.load(path)
        assert str(err.value) == f"{path}: {expected}"
    doc["transcript"][2]["message"]["content"] = [{"type": "text"}]
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionError, match=r": transcript\[2\]\.message\.content\[0\]: text block"):
        ConversationContext.load(path)
    request = tmp_path / "request.json"
    request.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"}]}))
    with pytest.raises(SessionError) as err:
        ctxview.load(request)
    assert str(err.value) == f'{request}: format: expected "ctxview.session"'


def test_a_proxy_recording_of_the_single_document_form_is_named(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    doc = json.loads(path.read_text())
    doc["settings"]["as_sent"] = "proxy"
    doc["requests"] = []
    path.write_text(json.dumps(doc))
    with pytest.raises(SessionError, match=r"is a proxy recording .*: open it in the app"):
        ConversationContext.load(path)


def test_saving_over_the_file_read_needs_force(tmp_path: Path) -> None:
    path = _saved(tmp_path)
    before = path.read_bytes()
    ctx = ConversationContext.load(path)
    ctx.add_user_message("one more")
    with pytest.raises(WriteRefused) as err:
        ctx.save(path)
    assert str(err.value) == (
        f"{path}: is the input file: writing would replace it (save(..., force=True) replaces it)"
    )
    assert err.value.filename == str(path)
    link = tmp_path / "link.json"
    link.symlink_to(path)  # the same file by another name
    with pytest.raises(WriteRefused, match="is the input file"):
        ctxview.save(ctx, link)
    assert path.read_bytes() == before
    ctx.save(path, force=True)
    assert ConversationContext.load(path).window_ids == ctx.window_ids
    # another file is the context's to write; a missing folder or a directory is refused
    ctx.save(tmp_path / "copy.json")
    with pytest.raises(WriteRefused, match="no such folder"):
        ctx.save(tmp_path / "nowhere" / "x.json")
    with pytest.raises(WriteRefused, match="is a directory"):
        ctx.save(tmp_path)


def test_a_failed_save_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _saved(tmp_path)
    before = path.read_bytes()
    ctx = ConversationContext(3)
    Transcript(ctx)
    for n in range(200):
        ctx.add_user_message("long " * 50 + str(n))

    def failing_replace(*args: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(WriteRefused) as err:
        ctx.save(path)
    assert str(err.value) == f"{path}: No space left on device"
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp file left


def test_the_api_key_is_never_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-ant-api03-" + "k" * 40
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    path = _saved(tmp_path)
    before = path.read_bytes()
    for where in ("message", "system", "tools"):
        ctx = ConversationContext(3, key if where == "system" else "")
        Transcript(ctx)
        ctx.add_user_message(f"my key is {key}" if where == "message" else "hi")
        tools = [{**TOOL, "description": key}] if where == "tools" else None
        with pytest.raises(ValueError, match="contains the ANTHROPIC_API_KEY value"):
            ctx.save(path, tools=tools)
        assert path.read_bytes() == before
    assert key.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())


def test_saving_needs_the_history(tmp_path: Path) -> None:
    ctx = ConversationContext()
    ctx.add_user_message("hi")
    with pytest.raises(ValueError, match=r"Transcript\(ctx\) before the first add"):
        ctx.save(tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()
    # a transcript that is no longer its context's history is not saved in its place
    ctx = ConversationContext()
    first = Transcript(ctx)
    Transcript(ctx)
    with pytest.raises(ValueError, match="no longer its context's history"):
        ctxview.save(first, tmp_path / "x.json")


OPENING_CALL = [
    {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t0", "name": "read", "input": {}}],
    },
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t0", "content": "ok"}]},
    {"role": "user", "content": "go on"},
]


def _reopened(tmp_path: Path, ctx: ConversationContext) -> ConversationContext:
    ctx.save(tmp_path / "reopened.json")
    back = ConversationContext.load(tmp_path / "reopened.json")
    assert state(back) == state(ctx)
    return back


def test_a_pinned_message_the_strategy_has_not_passed_reopens_counted(tmp_path: Path) -> None:
    # the answer to the first message's call is pinned as it comes, and still counted against
    # max until the strategy passes it: reopened, it is where it was
    ctx = ConversationContext(3, strategy="low-water")
    Transcript(ctx)
    for message in OPENING_CALL:
        ctx.add_message(message)
    back = _reopened(tmp_path, ctx)
    assert json.loads((tmp_path / "reopened.json").read_text())["window"]["held"] == []
    for c in (ctx, back):
        c.add_user_message("and then?")
        c.add_assistant_message("more")
    assert back.window_ids == ctx.window_ids == [0, 1, 3, 4]


def test_an_answer_to_the_first_call_stays_pinned_under_a_pair_keeping_strategy(
    tmp_path: Path,
) -> None:
    ctx = ConversationContext(4, strategy="seed")
    Transcript(ctx)
    for message in OPENING_CALL:
        ctx.add_message(message)
    ctx.pin(1)  # pinned by hand under seed, then held as the first call's answer
    ctx.set_strategy("pair-safe")
    back = _reopened(tmp_path, ctx)
    assert ctx.unpin(1) == back.unpin(1)
    assert 1 in ctx.pinned_ids  # unpinned, pair-safe could drop it and send t0 unanswered
    assert state(back) == state(ctx)
