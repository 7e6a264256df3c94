"""The pre-send check: whether pair-safe would fix a window the current strategy breaks."""

from __future__ import annotations


def test_pair_safe_would_fix_when_the_orphan_is_not_the_newest() -> None:
    from ctxview.chat.presend import pair_safe_would_fix
    from ctxview.core.context import ConversationContext

    ctx = ConversationContext(max_context_messages=3, strategy="seed")
    ctx.add_user_message("go")
    ctx.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        }
    )
    ctx.add_tool_results([{"tool_use_id": "t", "content": "r"}])
    ctx.add_message({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    # seed at max 3: [go, tool_result (orphan), done]; pair-safe drops the orphan
    assert pair_safe_would_fix(ctx.entries(), 3, True)
    ctx2 = ConversationContext(max_context_messages=2, strategy="seed")
    ctx2.add_user_message("go")
    ctx2.add_message(
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        }
    )
    ctx2.add_tool_results([{"tool_use_id": "t", "content": "r"}])
    # seed at max 2: [go, tool_result]: the orphan is the newest, pair-safe keeps it
    assert not pair_safe_would_fix(ctx2.entries(), 2, True)


def test_not_in_window_is_a_pure_check() -> None:
    from ctxview.chat.presend import not_in_window, raised_max

    assert not_in_window([0, 3, 4], 4, 3) is None
    text = not_in_window([0], 4, 1)
    assert text is not None and "not in the window" in text and "#4" in text
    assert raised_max(1, 1) == 3
