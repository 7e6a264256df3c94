"""What every strategy's window holds after any change, checked by the property tests of the
strategies and of pins."""

from __future__ import annotations

from typing import Any

from ctxview import ConversationContext, check_protocol
from ctxview.core.protocol import errors
from ctxview.core.tokens import estimate_window


def assert_window_basics(
    ctx: ConversationContext,
    history: list[dict[str, Any]],
    gone: set[int],
    why: object = None,
    protocol: bool = True,
) -> None:
    """The first message is kept; the window is an in-order subsequence of what was added, the
    messages themselves; nothing evicted comes back; a safe strategy never breaks a protocol the
    history keeps; the token estimate is the window's. ``why``: added to a protocol failure;
    ``protocol=False``: ``seed`` dropped what no strategy can bring back (the answer of the
    first message's tool_use), so a safe strategy chosen later cannot keep the protocol."""
    ids = ctx.window_ids
    window = ctx.messages
    assert ids and ids[0] == 0 and window[0] == history[0], "first message kept"
    assert ids == sorted(ids) and len(set(ids)) == len(ids), "in-order subsequence"
    assert window == [history[i] for i in ids]
    assert not (gone & set(ids)), "an evicted message came back"
    if protocol and ctx.strategy != "seed" and not errors(check_protocol(history)):
        assert errors(check_protocol(window)) == [], repr((ctx.strategy, ids, why))
    assert ctx.estimated_tokens == estimate_window(window, ctx.system_prompt)
