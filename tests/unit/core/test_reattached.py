"""What Claude Code re-attaches after a compaction, estimated from the transcript before it
(``ctxview/core/requests/reattached.py``)."""

from __future__ import annotations

from typing import Any

from ctxview.core.requests.reattached import MAX_CHARS_PER_FILE, reattached_chars


def _read(k: int, path: str, chars: int) -> list[dict[str, Any]]:
    call = {"type": "tool_use", "id": f"r{k}", "name": "Read", "input": {"file_path": path}}
    result = {"type": "tool_result", "tool_use_id": f"r{k}", "content": "x" * chars}
    return [{"role": "assistant", "content": [call]}, {"role": "user", "content": [result]}]


def test_the_five_files_used_last_each_cut_at_its_limit() -> None:
    msgs: list[dict[str, Any]] = []
    for k, (path, chars) in enumerate(
        [("a", 100), ("b", 200), ("c", 300), ("d", 400), ("e", 50_000), ("f", 600)]
    ):
        msgs += _read(k, path, chars)
    edit = {"type": "tool_use", "id": "e1", "name": "Edit", "input": {"file_path": "a"}}
    write = {
        "type": "tool_use",
        "id": "w1",
        "name": "Write",
        "input": {"file_path": "g", "content": "y" * 700},
    }
    msgs.append({"role": "assistant", "content": [edit, write]})
    summary = len(msgs)
    msgs.append({"role": "user", "content": "This session is being continued ..."})
    # g (written), a (edited last), f, e (cut), d; b and c are older than the five
    assert reattached_chars(msgs, summary) == 700 + 100 + 600 + MAX_CHARS_PER_FILE + 400
    assert reattached_chars(msgs, summary, since=summary - 1) == 700 + 0  # a: size unseen
    assert reattached_chars(msgs, 0) == 0
