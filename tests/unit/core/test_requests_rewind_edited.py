"""Cache-break reasons ``rewind`` and ``edited`` in the request model.

``rewind``: a Claude Code transcript where the user went back to an earlier prompt and edited it
(made from a real transcript by tests/support/rewind.py: the abandoned branch stays in the file, the new
one is appended, as Claude Code writes it). The reader keeps the abandoned branch's responses
(``LoadedSession.off_branch``); the request model prices them as the API calls they were, and the
first request of the new branch breaks the cache with ``rewind`` at the first message that
differs.

``edited``: a ctxview session where a message inside the cached prefix was edited (replaced or
dropped) between two requests: the request after the edit breaks with ``edited`` at its position.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview import ConversationContext, Transcript
from ctxview.core.requests import compare, simulate
from ctxview.sessions import load_session
from ctxview.sessions.store import save_session, session_document
from tests.support.rewind import TOOL_HEAVY, rewound, write


def _rewound_session(tmp_path: Path, **kw: Any) -> Any:
    return load_session(str(write(tmp_path / "rewound.jsonl", rewound(**kw))))


def test_the_reader_keeps_the_abandoned_branch_s_responses(tmp_path: Path) -> None:
    s = _rewound_session(tmp_path)
    original = load_session(str(TOOL_HEAVY))
    assert original.off_branch == []  # the real file has no rewind
    # the current branch is the edited one: same shape as the original, the prompt edited
    assert len(s.messages) == len(original.messages)
    assert "edited: only the scrollback" in json.dumps(s.messages[4])
    assert "edited: only the scrollback" not in json.dumps(original.messages[4])
    ids = [m.get("message_id") for m in s.metas if m.get("message_id")]
    assert all(i.endswith("R") for i in ids[2:])  # the new branch's responses
    # the two responses of the abandoned turn, with their recorded usage and timestamps
    assert [ob["message_id"] for ob in s.off_branch] == [i.removesuffix("R") for i in ids[2:]]
    a1, a2 = s.off_branch
    assert a1["usage"]["cache_read_input_tokens"] == 18014
    assert a1["timestamp"] == "2026-02-10T22:59:25.207Z"
    # both left the branch inside message 4 (the user turn holding the edited prompt)
    assert a1["fork"] == a2["fork"] == 4
    assert a2["path"][: len(a1["path"])] == a1["path"]  # the second extends the first
    assert "still does not work" in json.dumps(a1["messages"][-1])
    assert "(edited" not in json.dumps(a1["messages"])


def test_rewind_breaks_the_cache_at_the_first_differing_message(tmp_path: Path) -> None:
    s = _rewound_session(tmp_path)
    log = simulate(s)
    reqs = log.requests
    assert [r.off_branch for r in reqs] == [False, False, True, True, False, False]
    # in the order they were sent
    assert [r.timestamp for r in reqs] == sorted(r.timestamp or "" for r in reqs)
    first_new = reqs[4]
    assert first_new.cache_break is not None
    assert first_new.cache_break.to_dict() == {
        "reason": "rewind",
        "position": 4,
        "api_reason": "messages_changed",
    }
    # it reads what the abandoned requests shared with it (up to message 4), writes the rest
    assert 0 < first_new.cache_read < first_new.input_tokens
    assert first_new.cache_read > reqs[1].input_tokens  # messages 0-3 and the system prompt
    # the abandoned requests extend the branch and each other: no break among them
    assert reqs[2].cache_break is None and reqs[3].cache_break is None
    assert reqs[3].cache_read >= reqs[2].input_tokens
    # the request after the rewind goes on normally
    assert reqs[5].cache_break is None
    # they are API calls: recorded usage and cost count in the totals
    assert reqs[2].recorded is not None and reqs[2].recorded["cache_read_input_tokens"] == 18014
    t = log.totals()
    assert t["requests"] == 6
    assert any("off-branch" in n for n in log.notes)
    # the estimate of an abandoned request's size holds against what was billed
    for r in reqs:
        assert r.recorded_total is not None
        assert abs(r.input_tokens - r.recorded_total) / r.recorded_total < 0.05
    d = reqs[2].to_dict()
    assert d["off_branch"] is True and d["response_id"] is None


def test_without_the_abandoned_responses_there_is_no_rewind(tmp_path: Path) -> None:
    s = _rewound_session(tmp_path)
    s.off_branch = []
    reasons = [r.cache_break.reason for r in simulate(s).requests if r.cache_break]
    assert "rewind" not in reasons


def test_a_rewind_to_the_first_prompt(tmp_path: Path) -> None:
    """Back to the very first prompt: the abandoned requests share no message with the new
    branch (fork 0); the new branch's first request breaks at position 0."""
    s = _rewound_session(tmp_path, prompt=3, upto=17)
    assert len(s.off_branch) == 4  # every response of the original session was abandoned
    assert {ob["fork"] for ob in s.off_branch} == {0}
    assert "edited: only the scrollback" in json.dumps(s.messages[0])
    reqs = simulate(s).requests
    assert [r.off_branch for r in reqs] == [True] * 4 + [False] * 2
    # the first request read the tools and system cached before the file starts: no break
    assert reqs[0].cache_break is None and reqs[0].cache_read > 0
    assert [r.cache_break for r in reqs[1:4]] == [None, None, None]
    brk = reqs[4].cache_break
    assert brk is not None and brk.to_dict() == {
        "reason": "rewind",
        "position": 0,
        "api_reason": "messages_changed",
    }
    assert reqs[5].cache_break is None


def test_compare_counts_the_abandoned_requests(tmp_path: Path) -> None:
    s = _rewound_session(tmp_path)
    rows = compare(s, ["seed", "pair-safe"], max_context_messages=100)
    assert all(r["requests"] == 6 for r in rows)
    assert all(r["rejected_requests"] == 0 for r in rows)


# -- edited -----------------------------------------------------------------------------------
def _usage(n: int) -> dict[str, Any]:
    return {"usage": {"input_tokens": n, "output_tokens": 10}}


def _chat(tmp_path: Path, edit: str) -> Any:
    """A ctxview chat session: two turns, an edit of message 1 (or its drop), a third turn,
    saved and opened again."""
    ctx = ConversationContext(max_context_messages=50)
    tr = Transcript(ctx)
    long = "background " * 600  # about 1,600 tokens: above the minimum cacheable length
    ctx.add_message({"role": "user", "content": "question one " + long})
    ctx.add_message({"role": "assistant", "content": "answer one " + long}, meta=_usage(3000))
    ctx.add_message({"role": "user", "content": "question two " + long})
    ctx.add_message({"role": "assistant", "content": "answer two " + long}, meta=_usage(4800))
    if edit == "replace":
        ctx.replace_message(1, {"role": "assistant", "content": "answer one, stubbed"})
    elif edit == "drop":
        ctx.remove_message(2)
        ctx.remove_message(3)
    ctx.add_message({"role": "user", "content": "question three"})
    ctx.add_message({"role": "assistant", "content": "answer three"}, meta=_usage(5000))
    doc = session_document(ctx, tr, model="claude-sonnet-4-5", system="be brief")
    path = tmp_path / "chat.ctxview.json"
    save_session(str(path), doc)
    return load_session(str(path))


def test_an_edit_inside_the_cached_prefix_breaks_with_edited(tmp_path: Path) -> None:
    s = _chat(tmp_path, "replace")
    assert s.metas[1]["edited_at_step"] > s.saved_added_steps[3]
    reqs = simulate(s).requests
    assert len(reqs) == 3
    assert reqs[1].cache_break is None
    assert reqs[2].cache_break is not None
    assert reqs[2].cache_break.to_dict() == {
        "reason": "edited",
        "position": 1,
        "api_reason": "messages_changed",
    }
    # only what precedes the edited message is read: the first request's prompt
    assert reqs[2].cache_read == reqs[0].input_tokens
    # the requests before the edit sent the message as recorded, the one after it the edit
    s_all = _chat(tmp_path, "replace")
    del s_all.metas[1]["edited_at_step"]  # an edit not placed in time: sent edited throughout
    timeless = simulate(s_all).requests
    assert reqs[1].input_tokens > timeless[1].input_tokens + 1000
    assert reqs[2].input_tokens == timeless[2].input_tokens
    assert timeless[2].cache_break is None


def test_dropping_messages_breaks_with_edited(tmp_path: Path) -> None:
    s = _chat(tmp_path, "drop")
    reqs = simulate(s).requests
    assert reqs[2].cache_break is not None
    assert reqs[2].cache_break.to_dict() == {
        "reason": "edited",
        "position": 2,
        "api_reason": "messages_changed",
    }
    assert reqs[2].window_size == 3  # messages 0, 1 and 4
    # messages 0 and 1 are read (request 1 wrote them), the rest is written
    assert reqs[0].input_tokens < reqs[2].cache_read < reqs[1].input_tokens


def test_without_edits_nothing_breaks(tmp_path: Path) -> None:
    s = _chat(tmp_path, "none")
    reqs = simulate(s).requests
    assert [r.cache_break for r in reqs[1:]] == [None, None]


def test_an_edit_after_the_last_request_leaves_the_requests_as_sent(tmp_path: Path) -> None:
    ctx = ConversationContext(max_context_messages=50)
    tr = Transcript(ctx)
    long = "background " * 600
    ctx.add_message({"role": "user", "content": "q " + long})
    ctx.add_message({"role": "assistant", "content": "a " + long}, meta=_usage(3000))
    ctx.replace_message(0, {"role": "user", "content": "q"})  # after the only request
    path = tmp_path / "c.ctxview.json"
    save_session(str(path), session_document(ctx, tr, model="claude-sonnet-4-5"))
    s = load_session(str(path))
    (r,) = simulate(s).requests
    assert r.input_tokens > 1500  # sent with the message as it was then, not as edited
