from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from anthropic.types import RedactedThinkingBlock, TextBlock, ThinkingBlock, ToolUseBlock

from ctxview import ConversationContext, Transcript
from ctxview.core.context import ContextEvent
from tests.support.java_context import LiteralJavaContext


def test_defaults() -> None:
    ctx = ConversationContext()
    assert ctx.max_context_messages == 20
    assert ctx.system_prompt == ""
    assert ctx.strategy == "seed"
    assert ctx.messages == []


def test_add_user_message_is_string_as_is() -> None:
    ctx = ConversationContext()
    ctx.add_user_message("  hello [bold]\n")
    assert ctx.messages == [{"role": "user", "content": "  hello [bold]\n"}]


def test_add_assistant_message_from_sdk_blocks() -> None:
    ctx = ConversationContext()
    ctx.add_user_message("hi")
    blocks = [
        ThinkingBlock(type="thinking", thinking="hmm", signature="sig-ABC=="),
        RedactedThinkingBlock(type="redacted_thinking", data="opaque"),
        TextBlock(type="text", text="hello", citations=None),
        ToolUseBlock(type="tool_use", id="toolu_1", name="calc", input={"x": 1}),
    ]
    ctx.add_assistant_message(blocks)
    msg = ctx.messages[1]
    assert msg["role"] == "assistant"
    assert msg["content"][0] == {"type": "thinking", "thinking": "hmm", "signature": "sig-ABC=="}
    assert msg["content"][1] == {"type": "redacted_thinking", "data": "opaque"}
    assert msg["content"][2] == {"type": "text", "text": "hello"}
    assert msg["content"][3]["id"] == "toolu_1" and msg["content"][3]["input"] == {"x": 1}
    for block in msg["content"]:
        assert None not in block.values()
    import json

    json.dumps(ctx.messages)


def test_add_assistant_message_from_dicts_drops_none() -> None:
    ctx = ConversationContext()
    ctx.add_assistant_message([{"type": "text", "text": "a", "citations": None}])
    assert ctx.messages[0]["content"] == [{"type": "text", "text": "a"}]


def test_add_tool_results_one_message_in_order() -> None:
    ctx = ConversationContext()
    ctx.add_tool_results(
        [
            {"tool_use_id": "b", "content": "B"},
            {"tool_use_id": "a"},
            {"tool_use_id": "c", "content": "C", "is_error": True},
        ]
    )
    assert ctx.messages == [
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "b", "content": "B", "is_error": False},
                {"type": "tool_result", "tool_use_id": "a", "content": "", "is_error": False},
                {"type": "tool_result", "tool_use_id": "c", "content": "C", "is_error": True},
            ],
        }
    ]


@pytest.mark.parametrize(
    "results, needle",
    [
        ([], "empty"),
        ([{"tool_use_id": "a"}, {"content": "x"}], "item 1"),
        ([{"tool_use_id": ""}], "item 0"),
    ],
)
def test_add_tool_results_rejects_and_leaves_context(
    results: list[dict[str, Any]], needle: str
) -> None:
    ctx = ConversationContext()
    ctx.add_user_message("hi")
    before = ctx.messages
    with pytest.raises(ValueError, match=needle):
        ctx.add_tool_results(results)
    assert ctx.messages == before
    assert ctx.next_id == 1


def test_messages_is_a_copy() -> None:
    ctx = ConversationContext()
    ctx.add_assistant_message([{"type": "text", "text": "a"}])
    got = ctx.messages
    got[0]["content"][0]["text"] = "changed"
    got.append({"role": "user", "content": "x"})
    assert ctx.messages == [{"role": "assistant", "content": [{"type": "text", "text": "a"}]}]


def test_input_is_copied_too() -> None:
    ctx = ConversationContext()
    blocks = [{"type": "tool_use", "id": "t", "name": "n", "input": {"k": [1]}}]
    ctx.add_assistant_message(blocks)
    blocks[0]["input"]["k"].append(2)  # type: ignore[index]
    assert ctx.messages[0]["content"][0]["input"] == {"k": [1]}


@pytest.mark.parametrize("bad", [0, -3, 1.5, "5", True, None])
def test_max_validation(bad: Any) -> None:
    with pytest.raises(ValueError, match="max_context_messages"):
        ConversationContext(max_context_messages=bad)
    ctx = ConversationContext(5)
    with pytest.raises(ValueError, match="max_context_messages"):
        ctx.max_context_messages = bad
    assert ctx.max_context_messages == 5


def test_seed_truncation_matches_java() -> None:
    ctx = ConversationContext(max_context_messages=4)
    java = LiteralJavaContext(4)
    for i in range(10):
        ctx.add_user_message(f"m{i}")
        java.add_user_message(f"m{i}")
        assert ctx.messages == java.messages
    assert [m["content"] for m in ctx.messages] == ["m0", "m7", "m8", "m9"]


def test_max_one_keeps_only_first() -> None:
    ctx = ConversationContext(max_context_messages=1)
    for i in range(5):
        ctx.add_user_message(f"m{i}")
    assert ctx.messages == [{"role": "user", "content": "m0"}]


def test_lowering_max_truncates_at_once_and_raising_brings_nothing_back() -> None:
    ctx = ConversationContext(max_context_messages=10)
    for i in range(8):
        ctx.add_user_message(f"m{i}")
    evicted = ctx.set_max_context_messages(3)
    assert evicted == [1, 2, 3, 4, 5]
    assert ctx.window_ids == [0, 6, 7]
    ctx.max_context_messages = 50
    assert ctx.window_ids == [0, 6, 7]


def test_strategy_switch_applies_at_once() -> None:
    ctx = ConversationContext(max_context_messages=3)
    ctx.add_user_message("go")
    ctx.add_assistant_message([{"type": "tool_use", "id": "t1", "name": "x", "input": {}}])
    ctx.add_tool_results([{"tool_use_id": "t1", "content": "r"}])
    ctx.add_assistant_message([{"type": "tool_use", "id": "t2", "name": "x", "input": {}}])
    ctx.add_tool_results([{"tool_use_id": "t2", "content": "r"}])
    # seed keeps [go, tool_use t2, result t2]: valid here; make it orphan with one more round
    ctx.add_assistant_message([{"type": "text", "text": "done"}])
    assert ctx.window_ids == [0, 4, 5]  # seed: result t2 lost its tool_use
    ctx.strategy = "pair-safe"
    assert ctx.window_ids == [0, 5]
    with pytest.raises(ValueError, match="unknown strategy"):
        ctx.strategy = "nope"
    assert ctx.strategy == "pair-safe"


def test_system_prompt_and_file(tmp_path: Path) -> None:
    ctx = ConversationContext(system_prompt="be brief")
    assert ctx.system_prompt == "be brief"
    p = tmp_path / "sp.txt"
    p.write_text("héllo système", encoding="utf-8")
    ctx.load_system_prompt(p)
    assert ctx.system_prompt == "héllo système"
    with pytest.raises(ValueError, match="not found"):
        ctx.load_system_prompt(tmp_path / "missing.txt")
    with pytest.raises(ValueError, match="directory"):
        ctx.load_system_prompt(tmp_path)
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(ValueError, match="UTF-8"):
        ctx.load_system_prompt(bad)
    assert ctx.system_prompt == "héllo système"


def test_events_have_stable_ids_never_reused() -> None:
    ctx = ConversationContext(max_context_messages=3)
    events: list[ContextEvent] = []
    ctx.subscribe(events.append)
    for i in range(5):
        ctx.add_user_message(f"m{i}")
    added = [e.ids[0] for e in events if e.kind == "added"]
    evicted = [e.ids for e in events if e.kind == "evicted"]
    assert added == [0, 1, 2, 3, 4]
    assert evicted == [(1,), (2,)]
    ctx.max_context_messages = 1
    assert events[-1].kind == "evicted" and events[-1].ids == (3, 4) and events[-1].reason == "max"
    ctx.add_user_message("again")
    assert events[-2].ids == (5,)  # new id, not reused
    assert events[-1].ids == (5,) and events[-1].kind == "evicted"


def test_unsubscribe() -> None:
    ctx = ConversationContext()
    seen: list[ContextEvent] = []
    unsub = ctx.subscribe(seen.append)
    ctx.add_user_message("a")
    unsub()
    ctx.add_user_message("b")
    assert len(seen) == 1


def test_transcript_keeps_history_and_eviction_steps() -> None:
    ctx = ConversationContext(max_context_messages=3)
    tr = Transcript(ctx)
    for i in range(6):
        ctx.add_user_message(f"m{i}")
    assert len(tr) == 6
    assert [tr.status(i) for i in range(6)] == [
        "pinned",
        "evicted",
        "evicted",
        "evicted",
        "kept",
        "kept",
    ]
    assert tr[1].evicted_step == 4 and tr[2].evicted_step == 5 and tr[3].evicted_step == 6
    assert tr[0].message == {"role": "user", "content": "m0"}
    assert tr.window_size == len(ctx)
