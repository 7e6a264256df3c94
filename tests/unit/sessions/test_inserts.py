"""A repair's new message in an open session's history (sessions/inserts.py): in place, the
messages after it numbered on, the window, evictions, pins and steps as they stood, the old
session untouched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.core.repair import INTERRUPTED
from ctxview.sessions import load_session, replay
from ctxview.sessions.inserts import END, with_inserts

CALL = {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.txt"}}
ANSWER = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": INTERRUPTED, "is_error": True}
    ],
}


def _body(tmp_path: Path, messages: list[dict[str, Any]]) -> Path:
    path = tmp_path / "req.json"
    path.write_text(
        json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 10, "messages": messages})
    )
    return path


def _conversation(n: int) -> list[dict[str, Any]]:
    msgs: list[dict[str, Any]] = []
    for k in range(n):
        msgs.append({"role": "user", "content": f"question {k}"})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]})
    return msgs


def test_the_new_message_goes_before_its_window_message_and_later_ids_move_on(
    tmp_path: Path,
) -> None:
    msgs = _conversation(6)
    msgs[5] = {"role": "assistant", "content": [CALL]}  # #6 (a user message) follows it
    rep = replay(load_session(str(_body(tmp_path, msgs))), max_context_messages=8)
    ctx = rep.context
    ctx.pin(6)
    assert ctx.window_ids[0] == 0 and 3 not in ctx.window_ids  # the seed strategy evicted some
    before_window, before_records = ctx.window_ids, [r.message for r in rep.transcript.records]
    done = with_inserts(rep, {6: [ANSWER]})
    new = done.session
    assert done.ids == [6]
    assert done.new_id == [*range(6), *range(7, len(msgs) + 1)]
    assert [r.message for r in new.transcript.records] == [*msgs[:6], ANSWER, *msgs[6:]]
    assert new.transcript[6].meta["inserted_by"] == "repair"
    # the window as it stood, the new message in it; the evicted stay evicted, the pin moved on
    assert new.context.window_ids == [done.new_id[i] for i in before_window if i < 6] + [6] + [
        done.new_id[i] for i in before_window if i >= 6
    ]
    assert new.transcript.status(3) == "evicted"
    assert new.context.pinned_ids == [7] and new.transcript.status(7) == "pinned"
    assert new.context.max_context_messages == 8 and new.context.strategy == ctx.strategy
    assert new.transcript[6].added_step == ctx.step + 1 == new.context.step
    # the old session is left as it was
    assert ctx.window_ids == before_window
    assert [r.message for r in rep.transcript.records] == before_records
    # a change in the new one does not reach the old one's records
    new.context.replace_message(7, {"role": "user", "content": "changed"})
    assert "original" not in rep.transcript[6].meta


def test_as_sent_stays_as_sent_and_a_new_message_can_go_after_the_last(tmp_path: Path) -> None:
    msgs = _conversation(3)
    rep = replay(load_session(str(_body(tmp_path, msgs))), as_sent=True)
    assert rep.as_sent is not None
    done = with_inserts(rep, {END: [{"role": "user", "content": "more"}]})
    assert done.session.as_sent == rep.as_sent
    assert done.session.context.window_ids == list(range(len(msgs) + 1))
    assert done.ids == [len(msgs)]
    # a chat or a followed transcript adds on as sent: nothing is truncated
    for k in range(3):
        done.session.context.add_user_message(f"more {k}")
    assert len(done.session.context) == len(msgs) + 4 and not done.session.context.cut
