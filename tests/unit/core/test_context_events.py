"""Context events: delivered once the window is consistent; a raising subscriber cannot corrupt
the window nor keep the event from the others; async subscribers are refused."""

from __future__ import annotations

from typing import Any

import pytest

from ctxview import ContextEvent, ConversationContext, Transcript


def test_added_is_delivered_after_the_strategy_ran() -> None:
    ctx = ConversationContext(max_context_messages=2)
    sizes: list[tuple[str, int]] = []
    ctx.subscribe(lambda e: sizes.append((e.kind, len(ctx))))
    for n in range(3):
        ctx.add_user_message(f"m{n}")
    assert sizes == [("added", 1), ("added", 2), ("added", 2), ("evicted", 2)]


def test_a_raising_subscriber_leaves_the_window_consistent_and_is_reraised() -> None:
    ctx = ConversationContext(max_context_messages=2)
    history = Transcript(ctx)

    def broken(event: ContextEvent) -> None:
        if event.kind == "added":
            raise RuntimeError("subscriber bug")

    later: list[str] = []
    ctx.subscribe(broken)
    ctx.subscribe(lambda e: later.append(e.kind))
    for text in ("a", "b", "c"):
        with pytest.raises(RuntimeError, match="subscriber bug"):
            ctx.add_user_message(text)
    assert len(ctx) == 2  # not max + 1
    assert ctx.window_ids == [0, 2]
    assert later[-2:] == ["added", "evicted"]  # the others had every event
    assert history[1].evicted_step == 3 and history.window_size == 2


def test_two_raising_subscribers_the_first_raises_with_a_note() -> None:
    ctx = ConversationContext()

    def one(event: ContextEvent) -> None:
        raise KeyError("one")

    def two(event: ContextEvent) -> None:
        raise ValueError("two")

    ctx.subscribe(one)
    ctx.subscribe(two)
    with pytest.raises(KeyError) as err:
        ctx.add_user_message("x")
    assert any("ValueError('two')" in n for n in err.value.__notes__)
    assert ctx.next_id == 1


def test_async_subscribers_are_refused() -> None:
    ctx = ConversationContext()

    async def on_event(event: ContextEvent) -> None:
        return None

    class Handler:
        async def __call__(self, event: ContextEvent) -> None:
            return None

    for callback in (on_event, Handler()):
        with pytest.raises(TypeError, match="is async"):
            ctx.subscribe(callback)  # type: ignore[arg-type]


def test_a_callback_returning_a_coroutine_is_reported_not_left_unawaited() -> None:
    ctx = ConversationContext()

    async def later(event: ContextEvent) -> None:
        return None

    ctx.subscribe(lambda e: later(e))  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match="is async"):
        ctx.add_user_message("x")
    assert ctx.messages == [{"role": "user", "content": "x"}]


def test_a_raising_strategy_still_reports_the_add() -> None:
    class Broken:
        name = "broken"
        description = "raises"

        def truncate(self, window: Any) -> None:
            raise RuntimeError("strategy bug")

    ctx = ConversationContext(strategy=Broken())
    history = Transcript(ctx)
    with pytest.raises(RuntimeError, match="strategy bug"):
        ctx.add_user_message("x")
    assert len(history) == 1 and ctx.window_ids == [0]
