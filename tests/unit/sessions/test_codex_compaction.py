"""A Codex compaction: what its new history holds beyond the items the rollout shows, and where
the request model's segment starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.core.calibrate import segment_statics
from ctxview.core.compaction import COMPACTION_HIDDEN
from ctxview.core.requests.points import segment_starts
from ctxview.sessions import load_session
from ctxview.sessions.codex import compaction_hidden

SYSTEM = "You are Codex." * 40  # 560 bytes: 140 of Codex's tokens


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-07-01T00:00:00Z", "type": kind, "payload": payload})


def _count(prompt: int, total: int) -> str:
    last = {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": 0}
    if not prompt:
        last["total_tokens"] = total
    info = {"total_token_usage": {"input_tokens": total}, "last_token_usage": last}
    return _line("event_msg", {"type": "token_count", "info": info})


def _user(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def _rollout(tmp_path: Path, history: list[dict[str, Any]], estimate: int | None) -> Path:
    lines = [
        _line("session_meta", {"id": "s", "base_instructions": {"text": SYSTEM}}),
        _line("turn_context", {"model": "gpt-5.5"}),
        _line("response_item", _user("first")),
        _line("response_item", {"type": "message", "role": "assistant", "content": "a"}),
        _count(3000, 3000),
        _line("compacted", {"message": "", "replacement_history": history}),
        _line("turn_context", {"model": "gpt-5.5"}),
    ]
    if estimate is not None:
        # Codex's recompute_token_usage: no input, the new history's estimate as the total
        lines.append(_count(0, estimate))
    lines += [
        _line("response_item", {"type": "message", "role": "assistant", "content": "b"}),
        _count(2500, 5500),
    ]
    path = tmp_path / "rollout-c.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def _codex_tokens(item: dict[str, Any]) -> int:
    return -(-len(json.dumps(item, separators=(",", ":")).encode()) // 4)


def test_the_hidden_part_is_codexs_estimate_beyond_the_items_shown(tmp_path: Path) -> None:
    history = [_user("first"), _user("<environment_context>x</environment_context>")]
    shown = 140 + sum(_codex_tokens(i) for i in history)
    assert compaction_hidden(shown + 2_000, SYSTEM, history) == 2_000
    # a redacted compaction item counts as Codex counts its sealed text: nothing
    sealed = {"type": "compaction", "encrypted_content": "REDACTED"}
    assert compaction_hidden(shown + 2_000, SYSTEM, [*history, sealed]) == 2_000
    # a real one counts (len * 3 / 4 - 650) / 4: what it holds is no longer hidden
    real = {"type": "compaction", "encrypted_content": "x" * 4_000}
    assert compaction_hidden(shown + 2_000, SYSTEM, [*history, real]) == 2_000 - 588
    # a ghost snapshot (kept for /undo) is never sent: Codex counts it as nothing
    ghost = {"type": "ghost_snapshot", "ghost_commit": {"id": "abc", "parent": None}}
    assert compaction_hidden(shown + 2_000, SYSTEM, [*history, ghost]) == 2_000
    # a summary the history shows (a local compaction's): nothing hidden
    assert compaction_hidden(shown, SYSTEM, history) == 0
    assert compaction_hidden(None, SYSTEM, history) is None
    assert compaction_hidden(shown, None, history) is None


def test_the_reader_marks_each_replacement_message_with_the_hidden_part(tmp_path: Path) -> None:
    history = [_user("first"), _user("again")]
    shown = 140 + sum(_codex_tokens(i) for i in history)
    s = load_session(_rollout(tmp_path, history, shown + 1_500))
    hidden = [m.get(COMPACTION_HIDDEN) for m in s.metas]
    assert hidden == [None, None, 1_500, 1_500, None]
    # the estimate is no response's usage: the next response has its own
    assert [m.get("usage", {}).get("input_tokens") for m in s.metas][-1] is not None
    assert "usage" not in s.metas[3]
    # without Codex's estimate nothing is assumed
    s = load_session(_rollout(tmp_path, history, None))
    assert not any(COMPACTION_HIDDEN in m for m in s.metas)


def test_a_compaction_item_closing_a_replacement_history_starts_no_segment(
    tmp_path: Path,
) -> None:
    """The API bills the items before it (the re-sent user messages and initial context): the
    segment starts at the history's first item, where the compaction boundary is."""
    history = [_user("first"), {"type": "compaction", "encrypted_content": "REDACTED"}]
    s = load_session(_rollout(tmp_path, history, 4_000))
    assert s.messages[3]["content"][0]["type"] == "compaction"
    assert segment_starts(s) == {2}


def test_the_window_shown_holds_the_items_before_the_closing_compaction_item(
    tmp_path: Path,
) -> None:
    """The window ``inspect`` and the app show after a Codex compaction is what the requests
    send: the replacement history's items before its compaction item are not cut away."""
    from ctxview.core.compaction import has_compaction
    from ctxview.sessions.replay import replay

    context = _user("<environment_context>" + "resent " * 400 + "</environment_context>")
    history = [context, {"type": "compaction", "encrypted_content": "REDACTED"}]
    s = load_session(_rollout(tmp_path, history, 4_000))
    assert not has_compaction(s.messages[3])  # it closes the history: it cuts nothing
    rep = replay(s, as_sent=True)
    estimate = rep.message_estimate()
    shown = rep.summary()["window"]["token_breakdown"]["messages"]
    assert shown == sum(estimate(s.messages[i]) for i in (2, 3, 4)) + rep.carried_tokens(
        [(i, s.messages[i]) for i in (2, 3, 4)]
    )
    assert shown > 400  # the re-sent context is in it


def test_a_segment_with_a_known_hidden_part_starts_from_the_first_segments_static() -> None:
    """A segment of no recorded request sends the first segment's tools + system plus its
    hidden summary, not the segment before it's (whose summary it no longer holds)."""
    by = {(0, "gpt-5.5"): [10_000, 10_100, 10_050], (50, "gpt-5.5"): [14_000, 14_100]}
    keys = {(0, "gpt-5.5"), (50, "gpt-5.5"), (90, "gpt-5.5")}
    without = segment_statics(by, keys, 10_050)
    assert without[(90, "gpt-5.5")] == 14_050
    out = segment_statics(by, keys, 10_050, hidden={50: 4_000, 90: 2_500})
    assert out[(0, "gpt-5.5")] == 10_050 and out[(50, "gpt-5.5")] == 14_050
    assert out[(90, "gpt-5.5")] == 12_550
