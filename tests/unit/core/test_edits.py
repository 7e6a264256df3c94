"""Edits through ConversationContext's edit API, and the plans of core/edits.py."""

from __future__ import annotations

from typing import Any

import pytest

from ctxview import ConversationContext, Transcript, check_protocol
from ctxview.core.edits import STUB, EditPlan, drop_plan, preview, repair_plan, stub_plan
from ctxview.core.protocol import errors


def _loop() -> tuple[ConversationContext, Transcript, list[Any]]:
    ctx = ConversationContext(max_context_messages=20)
    tr = Transcript(ctx)
    events: list[Any] = []
    ctx.subscribe(events.append)
    ctx.add_user_message("read a.txt")
    ctx.add_assistant_message(
        [
            {"type": "text", "text": "reading"},
            {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.txt"}},
        ]
    )
    ctx.add_tool_results([{"tool_use_id": "t1", "content": "A" * 4000}])
    ctx.add_assistant_message([{"type": "text", "text": "it is long"}])
    ctx.add_user_message("thanks")
    return ctx, tr, events


def test_replace_remove_readmit_emit_edited_and_keep_the_original() -> None:
    ctx, tr, events = _loop()
    original = tr[2].message
    new = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}],
    }
    ctx.replace_message(2, new)
    assert events[-1].kind == "edited" and events[-1].reason == "replace"
    assert events[-1].ids == (2,)
    assert ctx.messages[2] == new and tr[2].message == new
    assert tr.edited(2) and tr[2].meta["original"] == original
    assert ctx.estimated_tokens < 1000
    ctx.replace_message(2, original)  # back to the original: no longer edited
    assert not tr.edited(2)
    ctx.remove_message(3)
    assert ctx.window_ids == [0, 1, 2, 4] and not tr.in_window(3)
    assert tr[3].meta["removed"] is True and tr.status(3) == "evicted"
    ctx.readmit_message(3, tr[3].message)
    assert ctx.window_ids == [0, 1, 2, 3, 4] and tr.in_window(3)
    assert "removed" not in tr[3].meta
    with pytest.raises(KeyError):
        ctx.replace_message(99, new)
    with pytest.raises(KeyError):
        ctx.remove_message(99)
    # adds go on as before after edits
    ctx.add_user_message("more")
    assert ctx.window_ids[-1] == 5


def test_drop_is_pair_safe_both_ways() -> None:
    ctx, _, _ = _loop()
    plan = drop_plan(ctx.entries(), 1)  # the tool_use: its result goes too
    assert plan.changes == {1: None, 2: None}
    assert "paired" in plan.what
    pv = preview(ctx.entries(), plan)
    assert pv.errors_after == [] and pv.tokens_saved > 900
    plan = drop_plan(ctx.entries(), 2)  # the result: the tool_use block goes, the text stays
    assert plan.changes[2] is None
    assert plan.changes[1] == {
        "role": "assistant",
        "content": [{"type": "text", "text": "reading"}],
    }
    assert preview(ctx.entries(), plan).errors_after == []


def test_stub_keeps_ids_and_saves_tokens() -> None:
    ctx, _, _ = _loop()
    plan = stub_plan(ctx.entries(), 2)
    (new,) = plan.changes.values()
    assert new is not None
    block = new["content"][0]
    assert block["tool_use_id"] == "t1" and block["content"] == STUB.format(n=4000)
    pv = preview(ctx.entries(), plan)
    assert pv.errors_after == [] and pv.tokens_saved > 900
    assert stub_plan(ctx.entries(), 4).empty  # a short user text


def test_repair_plan_of_one_message() -> None:
    ctx = ConversationContext(max_context_messages=3)
    _ = Transcript(ctx)
    ctx.add_user_message("go")
    ctx.add_assistant_message([{"type": "tool_use", "id": "a", "name": "f", "input": {}}])
    ctx.add_tool_results([{"tool_use_id": "a", "content": "r"}])
    ctx.add_assistant_message([{"type": "text", "text": "done"}])  # seed evicts the tool_use
    assert errors(check_protocol(ctx.messages))
    plan = repair_plan(ctx.entries(), only=2)
    assert plan.changes == {2: None} and [f.code for f in plan.fixes] == ["orphan_tool_result"]
    assert repair_plan(ctx.entries(), only=3).reason == "no errors"


def test_previews_and_repairs_share_a_memoised_checker_safely() -> None:
    """Changed versions get process-unique keys: a checker memoised on the window's ids (the
    TUI's) never answers for another version."""
    from ctxview.core.protocol import ProtocolChecker

    ctx, _, _ = _loop()
    checker = ProtocolChecker()
    entries = ctx.entries()
    checker.check(entries)
    # dropping only the tool_result breaks the window; the pair-safe drop of the tool_use does not
    broken = EditPlan("x", {2: None})
    safe = drop_plan(entries, 1)
    assert [p.code for p in preview(entries, broken, checker=checker).errors_after] == [
        "unanswered_tool_use"
    ]
    assert preview(entries, safe, checker=checker).errors_after == []
    assert [p.code for p in preview(entries, broken, checker=checker).errors_after] == [
        "unanswered_tool_use"
    ]
    plan = repair_plan([e for e in entries if e[0] != 1], checker=checker)  # the result orphaned
    assert [f.code for f in plan.fixes] == ["orphan_tool_result"]


def test_model_problems_follow_every_edit() -> None:
    """The app model's memoised checks (keyed by ids) see each new version of an edited message."""
    import random

    from ctxview.app.model import SessionModel
    from ctxview.sessions.model import LoadedSession
    from ctxview.sessions.replay import replay

    _, tr0, _ = _loop()
    msgs = [r.message for r in tr0.records]
    model = SessionModel(
        replay(LoadedSession("t.json", "request", msgs, [{} for _ in msgs])), None, "m"
    )
    ctx = model.context
    rng = random.Random(7)
    removed: dict[int, Any] = {}
    for _ in range(60):
        ids = ctx.window_ids
        mid = rng.choice(ids[1:])
        op = rng.randint(0, 4)
        if op == 4:  # a version the API rejects, under the same id
            ctx.replace_message(mid, {"role": msgs[mid]["role"], "content": []})
        elif op == 0:
            plan = stub_plan(ctx.entries(), mid)
            if not plan.empty:
                ctx.replace_message(mid, plan.changes[mid])
        elif op == 1 and len(ids) > 2:
            removed[mid] = model.transcript[mid].message
            ctx.remove_message(mid)
        elif op == 2 and removed:
            back = rng.choice(sorted(removed))
            ctx.readmit_message(back, removed.pop(back))
        else:
            ctx.replace_message(mid, msgs[mid])
        model.after_change()
        assert model.problems == check_protocol(ctx.messages), (op, mid)


def _big_window(n: int = 40) -> list[tuple[int, dict[str, Any]]]:
    """A window well above the minimum cacheable length: each message ~250 tokens."""
    out: list[tuple[int, dict[str, Any]]] = []
    for i in range(n):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"message {i} " + "word " * 200
        content: Any = text if role == "user" else [{"type": "text", "text": text}]
        out.append((i, {"role": role, "content": content}))
    return out


def test_edit_cost_prices_the_cache_break_with_the_request_model() -> None:
    from ctxview.core.edits import edit_cost
    from ctxview.core.pricing import PRICES, cost
    from ctxview.core.tokens import estimate_message

    entries = _big_window()
    toks = [estimate_message(m) for _, m in entries]
    model = "claude-sonnet-5-5"
    price = PRICES["claude-sonnet-5-5"]
    plan = stub_plan(entries, 30)
    c = edit_cost(entries, plan, static_tokens=500, model=model)
    total = 500 + sum(toks)
    assert c.position == 30 and c.cache_break is not None
    assert (c.cache_break.reason, c.cache_break.position) == ("edited", 30)
    # without the edit the whole window is read; with it, the prefix before #30 is read and
    # everything from #30 on is written again
    assert (c.read_before, c.write_before) == (total, 0)
    assert c.read_after == 500 + sum(toks[:30])
    assert c.write_after == c.input_after - c.read_after
    assert c.input_after == total - toks[30] + estimate_message(plan.changes[30] or {})
    assert c.rewritten == c.write_after > 0
    assert c.cost_before == cost(price, uncached=0, cache_read=total)
    assert c.cost_after == cost(
        price, uncached=0, cache_read=c.read_after, cache_write_5m=c.write_after
    )
    assert c.cost_delta is not None and c.cost_delta > 0  # the write costs more than it saves
    lines = "\n".join(c.lines())
    assert "break (edited) at window position 30" in lines
    assert f"at {model} prices" in lines
    # an edit near the end rewrites less than one near the start
    early = edit_cost(entries, stub_plan(entries, 2), static_tokens=500, model=model)
    assert early.rewritten > c.rewritten
    assert early.cost_delta is not None and early.cost_delta > c.cost_delta


def test_edit_cost_writes_at_the_sessions_cache_lifetime() -> None:
    """A session whose usage shows 1-hour cache writes pays 2x input for what an edit writes
    again, not the 5-minute 1.25x."""
    from ctxview.core.edits import edit_cost
    from ctxview.core.pricing import PRICES, cost

    entries = _big_window()
    model = "claude-sonnet-5-5"
    price = PRICES[model]
    plan = stub_plan(entries, 30)
    five = edit_cost(entries, plan, static_tokens=500, model=model)
    hour = edit_cost(entries, plan, static_tokens=500, model=model, ttl="1h")
    assert (hour.read_after, hour.write_after) == (five.read_after, five.write_after)
    assert hour.cost_after == cost(
        price, uncached=0, cache_read=hour.read_after, cache_write_1h=hour.write_after
    )
    assert five.cost_after is not None and hour.cost_after is not None
    assert hour.cost_after > five.cost_after
    assert hour.cost_before == five.cost_before  # nothing written without the edit


def test_edit_cost_of_an_unknown_model_is_unknown_never_guessed() -> None:
    from ctxview.core.edits import edit_cost

    entries = _big_window()
    plan = drop_plan(entries, 10)
    for model, why in [("claude-nonexistent-9", "no price for model"), (None, "no model named")]:
        c = edit_cost(entries, plan, static_tokens=0, model=model)
        assert c.cost_before is None and c.cost_after is None and c.cost_delta is None
        text = "\n".join(c.lines())
        assert f"next request: cost unknown ({why}" in text
        assert "$" not in text
        assert c.cache_break is not None and c.tokens_saved > 0  # the tokens are still known


def test_edit_cost_of_a_pin_changes_nothing_now() -> None:
    from ctxview.core.edits import edit_cost

    entries = _big_window()
    c = edit_cost(
        entries, EditPlan("pin #5"), static_tokens=0, model="claude-sonnet-5-5", kept_tokens=900
    )
    assert c.position is None and c.cache_break is None and c.cost_delta == 0
    text = "\n".join(c.lines())
    assert "nothing written again" in text and "~900 pinned tokens stay" in text


def test_edit_cost_short_line() -> None:
    from ctxview.core.edits import edit_cost

    entries = _big_window()
    c = edit_cost(entries, stub_plan(entries, 30), static_tokens=0, model="claude-sonnet-5-5")
    assert c.short().startswith("cache break at window position 30: ~")
    assert "next request +$" in c.short()
    unknown = edit_cost(entries, stub_plan(entries, 30), static_tokens=0, model=None)
    assert unknown.short().endswith("next request: cost unknown")


def test_edit_cost_line_never_shows_two_equal_figures_for_different_costs() -> None:
    """A small window: the two costs differ in the fifth decimal; the line shows enough
    decimals that "$A instead of $B" reads as the difference it states."""
    import re

    from ctxview.core.edits import edit_cost

    msgs = [
        {"role": "user", "content": "The test suite fails, please look"},
        {"role": "assistant", "content": "Looking at it now, one moment please."},
        {"role": "user", "content": "Thanks. " * 6},
        {"role": "assistant", "content": "Done."},
    ]
    entries = list(enumerate(msgs))
    c = edit_cost(entries, drop_plan(entries, 2), static_tokens=0, model="claude-sonnet-5-5")
    assert c.cost_before is not None and c.cost_after is not None
    assert c.cost_before != c.cost_after
    line = next(ln for ln in c.lines() if ln.startswith("next request:"))
    after, before = re.findall(r"\$(\d+\.\d+) instead of \$(\d+\.\d+)", line)[0]
    assert after != before, line


def test_edit_words_agree_with_their_counts() -> None:
    """One paired block in one other message: no "block(s)", no "message(s)"."""
    ctx, _, _ = _loop()
    plan = drop_plan(ctx.entries(), 1)
    assert plan.what == "drop #1 with 1 paired block in 1 other message"
    assert "(s)" not in stub_plan(ctx.entries(), 2).what


def test_a_saving_too_small_to_show_is_never_minus_zero() -> None:
    """A stub that saves a few tokens at cache-read prices read "(-$0.0000 a request ...)"."""
    from ctxview.core.edits import edit_cost

    msgs = [
        {"role": "user", "content": "short question"},
        {"role": "assistant", "content": "Sure: " + "word " * 30},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": "ok"},
    ]
    entries = list(enumerate(msgs))
    c = edit_cost(entries, drop_plan(entries, 3), static_tokens=0, model="claude-sonnet-5-5")
    later = [ln for ln in c.lines() if ln.startswith("later requests")]
    assert later and all("$0.0000" not in ln for ln in later), later
    assert any("under $0.0001 a request" in ln for ln in later), later
