"""The Claude Code reader's branch: compactions of every shape, parents not in the file, lines on
no branch (``ctxview/sessions/claude_code.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.core.protocol import check_protocol, errors
from ctxview.core.requests import simulate, window_of
from ctxview.sessions import LoadedSession, load_session
from ctxview.sessions.claude_code import Line
from ctxview.sessions.readers import from_lines
from tests.support import claude_code_shapes as shapes
from tests.support.paths import ACCEPTANCE


def _compacted(tmp_path: Path, **kw: int) -> Path:
    return shapes.write(tmp_path / "compact.jsonl", shapes.manual_compact(**kw))


def test_a_manual_compact_of_the_newer_shape_starts_the_conversation_again(
    tmp_path: Path,
) -> None:
    session = load_session(_compacted(tmp_path))
    summary = next(i for i, m in enumerate(session.metas) if m.get("compact_summary"))
    assert session.metas[summary]["compact_boundary"] == {"trigger": "manual", "preTokens": 56_500}
    # the summary's turn: the summary, the caveat, the /compact command, its output, the next
    # prompt (one user message, as the API merges consecutive user turns)
    texts = [b["text"] for b in session.messages[summary]["content"]]
    assert texts[0].startswith("This session is being continued")
    assert texts[1].startswith("<local-command-caveat>")
    assert texts[2].startswith("<command-name>/compact")
    assert texts[-1] == "Now add tests for the parser."
    assert session.messages[summary + 1]["role"] == "assistant"
    log = simulate(session)
    first_after = next(r for r in log.requests if r.message_ids and r.message_ids[0] >= summary)
    assert first_after.cache_break is not None
    assert first_after.cache_break.reason == "compaction"
    window = window_of(session, log, first_after.index)
    assert window[0] == summary  # priced from the compacted history
    assert any("compaction" in w for w in session.warnings)


def test_a_request_that_billed_the_whole_history_keeps_the_lines_under_it(tmp_path: Path) -> None:
    # the response after the command lines billed as much as the history before the compaction:
    # it was sent the history, so the lines keep their parent
    records = shapes.manual_compact()
    boundary = next(k for k, r in enumerate(records) if r.get("subtype") == "compact_boundary")
    first = next(
        r for r in records[boundary:] if r["type"] == "assistant" and "usage" in r["message"]
    )
    first["message"]["usage"]["cache_read_input_tokens"] = 60_000
    session = load_session(shapes.write(tmp_path / "c.jsonl", records))
    assert not any(m.get("compact_summary") for m in session.metas)
    assert not any("compaction" in w for w in session.warnings)


def test_a_parent_missing_from_the_file_does_not_cut_the_branch(tmp_path: Path) -> None:
    path = shapes.write(tmp_path / "d.jsonl", shapes.dangling_progress(rounds=30))
    session = load_session(path)
    assert len(session.messages) == 1 + 2 * 32 + 0  # the prompt, 32 rounds of call + result
    assert session.off_branch == []
    progress = next(
        k + 1 for k, line in enumerate(path.read_text().splitlines()) if '"progress"' in line
    )
    assert session.dangling_parents == [
        {"line": progress, "parent": "ffffffff-dead-4000-8000-000000000000"}
    ]
    assert any("not in the file" in w for w in session.warnings)
    log = simulate(session)
    # no false rewind; the first request read a cache warmed before the file: no break at all
    assert [r.cache_break.reason for r in log.requests if r.cache_break] == []


def test_lines_hanging_off_the_parent_session_are_kept_in_a_compaction_agent_file() -> None:
    # the summariser's sub-agent file: its first lines name parents in the main session
    path = (
        ACCEPTANCE
        / "claude_code"
        / "spotter_4d5611e5-241a-462a-8d15-5122611a9569__subagent_agent-acompact-e1f845.jsonl"
    )
    session = load_session(path)
    assert len(session.messages) == 2
    assert [len(m["content"]) for m in session.messages[:1]] == [4]
    assert [d["line"] for d in session.dangling_parents] == [2, 3]


def test_a_message_line_on_no_branch_is_named(tmp_path: Path) -> None:
    w = shapes.Writer()
    u = w.user(None, "hello")
    a = w.assistant(u, [{"type": "text", "text": "hi"}], (3, 0, 9_000), "msg_1")
    w.user(a, "and then?")
    w.assistant(w.records[-1]["uuid"], [{"type": "text", "text": "then"}], (3, 9_000, 20), "m2")
    # a line written later that hangs off the first prompt: no response answered it
    w.user(u, "a bash-mode command's output", isMeta=True)
    path = shapes.write(tmp_path / "n.jsonl", w.records)
    session = load_session(path)
    assert [m["content"] for m in session.messages][-1] == [{"type": "text", "text": "then"}]
    assert session.unplaced_lines == [5]
    assert any("on no branch" in w for w in session.warnings)


def test_a_rewind_is_not_reported_as_unplaced(tmp_path: Path) -> None:
    w = shapes.Writer()
    u = w.user(None, "hello")
    a = w.assistant(u, [{"type": "text", "text": "hi"}], (3, 0, 9_000), "msg_1")
    old = w.user(a, "first try")
    w.assistant(old, [{"type": "text", "text": "old answer"}], (3, 9_000, 20), "msg_old")
    new = w.user(a, "second try")
    w.assistant(new, [{"type": "text", "text": "new answer"}], (3, 9_000, 25), "msg_new")
    session = load_session(shapes.write(tmp_path / "r.jsonl", w.records))
    assert len(session.off_branch) == 1
    assert session.unplaced_lines == []
    assert session.dangling_parents == []


def test_an_abandoned_branch_shares_each_line_s_message_across_its_responses(
    tmp_path: Path,
) -> None:
    # every response of a long abandoned branch was sent with the branch so far: the messages
    # are one dict per line, not one per line per response (n² dicts on a long branch)
    w = shapes.Writer()
    u = w.user(None, "hello")
    a = w.assistant(u, [{"type": "text", "text": "hi"}], (3, 0, 9_000), "msg_1")
    parent = a
    for k in range(4):
        q = w.user(parent, f"old question {k}")
        parent = w.assistant(q, [{"type": "text", "text": f"old {k}"}], (3, 9_000, 20), f"o{k}")
    new = w.user(a, "second try")
    w.assistant(new, [{"type": "text", "text": "new answer"}], (3, 9_000, 25), "msg_new")
    session = load_session(shapes.write(tmp_path / "r.jsonl", w.records))
    off = session.off_branch
    assert [len(o["messages"]) for o in off] == [1, 3, 5, 7]
    last = off[-1]["messages"]
    for o in off[:-1]:
        for j, m in enumerate(o["messages"]):
            assert m is last[j]
    assert [r.off_branch for r in simulate(session).requests].count(True) == 4


def test_a_line_written_again_under_a_resumed_session_is_one_message(tmp_path: Path) -> None:
    # Claude Code 1.0.95 copied a tool result's line (same uuid) into the resumed session
    w = shapes.Writer()
    u = w.user(None, "hello")
    r = w.tool_round(u, 1, (3, 0, 9_000))
    w.records.append({**w.records[-1], "sessionId": "resumed-session"})
    w.assistant(r, [{"type": "text", "text": "done"}], (3, 9_000, 40), "msg_2")
    session = load_session(shapes.write(tmp_path / "again.jsonl", w.records))
    blocks = [b for m in session.messages if isinstance(m["content"], list) for b in m["content"]]
    results = [b for b in blocks if b["type"] == "tool_result"]
    assert len(results) == 1
    assert errors(check_protocol(session.messages)) == []


def test_every_recorded_transcript_places_every_message_line() -> None:
    for path in sorted((ACCEPTANCE / "claude_code").glob("*.jsonl")):
        session = load_session(path)
        assert session.unplaced_lines == [], path.name
        lines = path.read_text().splitlines()
        for d in session.dangling_parents:
            assert json.loads(lines[d["line"] - 1])["parentUuid"] == d["parent"]


@pytest.mark.parametrize("logical_parent", ["tail", "before"])
def test_messages_a_compaction_kept_are_sent_after_its_summary(
    tmp_path: Path, logical_parent: str
) -> None:
    path = shapes.write(tmp_path / "p.jsonl", shapes.preserved_compact(logical_parent))
    session = load_session(path)
    summary = next(i for i, m in enumerate(session.metas) if m.get("compact_summary"))
    texts = [b["text"] for b in session.messages[summary]["content"]]
    assert texts[0].startswith("This session is being continued")
    assert texts[1] == "Keep the old API as a shim."
    assert session.messages[summary + 1]["content"] == [{"type": "text", "text": "Shim kept."}]
    assert session.messages[summary + 2]["content"] == "Now benchmark it."
    # the history before it is all there, in order, before the summary
    assert session.messages[0]["content"] == "Port the tokenizer."
    assert session.messages[summary - 1]["content"] == [{"type": "text", "text": "Ported."}]
    assert len(session.messages) == 1 + 2 * 8 + 1 + 2 + 1 + 2 * 4
    assert session.unplaced_lines == [] and session.off_branch == []
    log = simulate(session)
    after = next(r for r in log.requests if r.message_ids and r.message_ids[0] >= summary)
    assert after.cache_break is not None and after.cache_break.reason == "compaction"
    assert window_of(session, log, after.index)[0] == summary


def test_a_microcompaction_is_named(tmp_path: Path) -> None:
    w = shapes.Writer()
    last = shapes.grow(w, w.user(None, "go"), 4, 0, 20_000, 500)
    line = w.base("system", last)
    line.update(
        subtype="microcompact_boundary",
        content="Context microcompacted",
        level="info",
        microcompactMetadata={
            "trigger": "auto",
            "preTokens": 22_000,
            "tokensSaved": 1_400,
            "compactedToolIds": ["toolu_main_0000", "toolu_main_0001"],
            "clearedAttachmentUUIDs": [],
        },
    )
    w.add(line)
    shapes.grow(w, line["uuid"], 2, 10, 20_700, 500)
    session = load_session(shapes.write(tmp_path / "m.jsonl", w.records))
    assert len(session.messages) == 1 + 2 * 6
    assert session.warnings == [
        "line 14: Claude Code cleared 2 earlier tool results here (microcompact, about 1,400 "
        "tokens); the requests after it sent them cleared: the messages show them as recorded, "
        "the requests price them cleared"
    ]


@settings(max_examples=40, deadline=None)
@given(
    rounds=st.integers(min_value=1, max_value=12),
    cut=st.integers(min_value=1, max_value=10_000),
    progress=st.booleans(),
)
def test_no_missing_parent_drops_history(rounds: int, cut: int, progress: bool) -> None:
    """Whichever line's parent is missing from the file (the line itself names a lost uuid, or
    a progress line with a lost parent is put before it and it hangs off that), the rebuilt
    conversation is the same, and the line is named."""
    w = shapes.Writer()
    shapes.grow(w, w.user(None, "go"), rounds, 0, 20_000, 300)
    records = w.records
    whole = _loaded(records)
    k = 1 + cut % (len(records) - 1)
    lost = "ffffffff-0000-4000-8000-00000000dead"
    broken = [dict(r) for r in records]
    if progress:
        p = w.base("progress", lost, 0)
        p["data"] = {"type": "hook_progress"}
        broken[k]["parentUuid"] = p["uuid"]
        broken.insert(k, p)
    else:
        broken[k]["parentUuid"] = lost
    session = _loaded(broken)
    assert session.messages == whole.messages
    assert session.off_branch == [] and session.unplaced_lines == []
    assert [d["parent"] for d in session.dangling_parents] == [lost]


def _loaded(records: list[dict[str, object]]) -> LoadedSession:
    lines = [Line(i + 1, r) for i, r in enumerate(records)]
    return from_lines("t.jsonl", "claude-code", lines, [])


@settings(max_examples=25, deadline=None)
@given(pre=st.integers(min_value=1, max_value=8), post=st.integers(min_value=1, max_value=5))
def test_every_request_after_a_manual_compact_starts_at_its_summary(pre: int, post: int) -> None:
    session = _loaded(shapes.manual_compact(pre_rounds=pre, post_rounds=post))
    summary = next(i for i, m in enumerate(session.metas) if m.get("compact_summary"))
    assert len(session.messages) == 1 + 2 * pre + 1 + 1 + 2 * post
    log = simulate(session)
    after = [r for r in log.requests if r.message_ids and r.message_ids[0] >= summary]
    assert len(after) == post
    for r in after:
        assert window_of(session, log, r.index)[0] == summary


def test_a_transcript_names_the_working_directory_and_prompt_it_is_listed_by(
    tmp_path: Path,
) -> None:
    """The session read from a transcript holds the ``cwd`` and first prompt ``ctxview
    sessions`` lists it by (Claude Code's own command and caveat lines are not the prompt)."""
    from ctxview.live.sessions_list import summarise_file
    from ctxview.textfmt import one_line
    from tests.support.transcripts import rec, text

    path = tmp_path / "s.jsonl"
    path.write_text(
        rec("user", "m", None, "Caveat: the messages below were generated", isMeta=True)
        + rec("user", "c", "m", "<command-name>/clear</command-name>", cwd="/work/api")
        + rec("user", "u", "c", text("  Fix the flaky test\nin api/  "), cwd="/work/other")
        + rec("assistant", "a", "u", text("On it."))
    )
    session = load_session(str(path))
    listed = summarise_file(path)
    assert (session.cwd, session.first_prompt) == ("/work/api", "Fix the flaky test\nin api/")
    assert listed.cwd == session.cwd
    assert listed.first_prompt == one_line(session.first_prompt or "", 200)


def _error_reply(w: shapes.Writer, parent: str, text: str) -> str:
    """Claude Code's own reply to a failed request, as 2.1.210 writes it."""
    rec = w.base("assistant", parent)
    rec.update(isApiErrorMessage=True, error="authentication_failed")
    rec["message"] = {
        "model": "<synthetic>",
        "id": "c4c36e8d-2099-4f0d-adfb-6d64d6573d53",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
    }
    return w.add(rec)


def test_an_error_reply_the_api_answered_after_is_not_sent(tmp_path: Path) -> None:
    """A prompt, Claude Code's "Login expired" reply, the ``/login`` command's system lines,
    then the API's response (thinking first) to the prompt retried: the request held no error
    reply (the API rejects thinking after an assistant text), so the rebuilt conversation
    holds none and opens with no protocol problem; an error reply a prompt follows is kept."""
    w = shapes.Writer()
    u = w.user(None, "Review PR #36")
    err = _error_reply(w, u, "Login expired · Please run /login")
    login = w.base("system", err)
    login.update(
        subtype="local_command", content="<local-command-stdout>Login ok</local-command-stdout>"
    )
    w.add(login)
    w.assistant(
        login["uuid"],
        [
            {"type": "thinking", "thinking": "Look at the diff.", "signature": "sig"},
            {"type": "text", "text": "The PR renames one flag."},
        ],
        (3, 0, 20_000),
        "msg_review",
    )
    s = load_session(shapes.write(tmp_path / "s.jsonl", w.records))
    assert [m["role"] for m in s.messages] == ["user", "assistant"]
    assert s.messages[1]["content"][0]["type"] == "thinking"
    assert check_protocol(s.messages) == []
    assert any("error reply was left out" in x for x in s.warnings)

    kept = shapes.Writer()
    u = kept.user(None, "Review PR #36")
    err = _error_reply(kept, u, "You've hit your session limit")
    q = kept.user(err, "Go on.")
    kept.assistant(q, [{"type": "text", "text": "Done."}], (3, 0, 20_000), "msg_done")
    roles = [
        m["role"] for m in load_session(shapes.write(tmp_path / "k.jsonl", kept.records)).messages
    ]
    assert roles == ["user", "assistant", "user", "assistant"]


def test_a_tool_result_written_before_its_call_is_sent_after_it(tmp_path: Path) -> None:
    """An Edit's error result reached the file a few ms before its ``tool_use`` line (unseen4
    gitsync_c6533991, imessagemail_b3a407be); the parent chain says the order it was sent in."""
    w = shapes.Writer()
    u = w.user(None, "Edit the file.")
    tid = "toolu_early"
    call = w.base("assistant", u)
    call["message"] = {
        "model": shapes.MODEL,
        "id": "msg_call",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": tid, "name": "Edit", "input": {}}],
    }
    result = w.base("user", call["uuid"])
    result["message"] = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": tid, "content": "modified since read"}],
    }
    w.add(result)  # written first
    w.add(call)
    w.assistant(result["uuid"], [{"type": "text", "text": "Retrying."}], (3, 100, 10), "msg_next")
    s = load_session(shapes.write(tmp_path / "early.jsonl", w.records))
    kinds = [
        [b["type"] for b in m["content"]] if isinstance(m["content"], list) else "text"
        for m in s.messages
    ]
    assert kinds == ["text", ["tool_use"], ["tool_result"], ["text"]]
    assert errors(check_protocol(s.messages)) == []


def test_a_response_of_thinking_alone_is_not_sent_again_but_its_request_is_kept(
    tmp_path: Path,
) -> None:
    """Interrupted after its thinking (unseen4 gitsync_5b613073): Claude Code leaves the
    thinking-only message out of later requests, which the API answered; its own request
    stays, with the usage it recorded."""
    w = shapes.Writer()
    u = w.user(None, "Drop Q7.")
    a = w.assistant(u, [{"type": "text", "text": "Sure."}], (3, 1_000, 100), "msg_1")
    q = w.user(a, "And the atomic wording.")
    t = w.assistant(
        q, [{"type": "thinking", "thinking": "", "signature": "sig"}], (3, 1_100, 20), "msg_2"
    )
    stop = w.user(t, [{"type": "text", "text": "[Request interrupted by user]"}])
    w.assistant(stop, [{"type": "text", "text": "Already gone."}], (3, 1_100, 30), "msg_3")
    s = load_session(shapes.write(tmp_path / "thinking.jsonl", w.records))
    assert not any(
        b.get("type") == "thinking"
        for m in s.messages
        if isinstance(m["content"], list)
        for b in m["content"]
    )
    assert errors(check_protocol(s.messages)) == []
    log = simulate(s)
    assert [r.recorded_total for r in log.requests] == [1_103, 1_123, 1_133]
    assert [r.off_branch for r in log.requests] == [False, True, False]


def _attachment(w: shapes.Writer, parent: str) -> str:
    rec = w.base("attachment", parent, 1)
    rec["attachment"] = {"type": "hook_success", "hookEvent": "PostToolUse", "content": ""}
    return w.add(rec)


def test_the_text_of_each_of_parallel_skill_calls_is_sent(tmp_path: Path) -> None:
    """Two Skill calls in one response (judge7 fl_1e-0b3c4f1c3e line 485, fl_a5-0158cfad4d
    lines 644 and 653): each result has the skill's text (isMeta, ``sourceToolUseID``) under it,
    through an attachment line, and the next response hangs off the last skill's lines alone.
    Both texts were sent: the request after them billed both skills."""
    w = shapes.Writer()
    u = w.user(None, "Use /ponytail and /boris.")
    calls = [
        {"type": "tool_use", "id": f"toolu_skill{k}", "name": "Skill", "input": {"skill": s}}
        for k, s in enumerate(("ponytail", "boris"))
    ]
    w.assistant(u, calls, (3, 1_000, 100), "msg_skills")
    call_lines = [r["uuid"] for r in w.records if r["type"] == "assistant"]
    last = ""
    for k, (line, call) in enumerate(zip(call_lines, calls, strict=True)):
        r = w.user(
            line,
            [{"type": "tool_result", "tool_use_id": call["id"], "content": "Launching skill"}],
            sourceToolAssistantUUID=line,
        )
        text = [{"type": "text", "text": f"Base directory for this skill: /skills/{k}"}]
        meta = w.user(_attachment(w, r), text, isMeta=True, sourceToolUseID=call["id"])
        last = _attachment(w, meta)
    w.assistant(last, [{"type": "text", "text": "Both loaded."}], (3, 1_100, 200), "msg_next")
    s = load_session(shapes.write(tmp_path / "skills.jsonl", w.records))
    texts = [
        b.get("text")
        for m in s.messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
    ]
    assert [t for t in texts if t and t.startswith("Base directory")] == [
        "Base directory for this skill: /skills/0",
        "Base directory for this skill: /skills/1",
    ]
    assert errors(check_protocol(s.messages)) == []


def test_a_call_streamed_after_earlier_calls_were_answered_joins_its_response(
    tmp_path: Path,
) -> None:
    """Claude Code runs a response's calls as they stream: two results are written before the
    response's third call (the same message id), whose result comes with the next user line
    (unseen5 fl_77-78b19c8aaf lines 43-56). The request after it sent the response whole, then
    the three results: one request, no unanswered call."""
    w = shapes.Writer()
    u = w.user(None, "Check the mirror.")
    calls = [
        {"type": "tool_use", "id": f"toolu_read{k}", "name": "Read", "input": {"n": k}}
        for k in range(3)
    ]
    last = w.assistant(u, calls[:2], (3, 1_000, 100), "msg_stream")
    hook = {"type": "text", "text": "<system-reminder>PostToolUse hook context</system-reminder>"}
    for c in calls[:2]:
        result = {"type": "tool_result", "tool_use_id": c["id"], "content": f"file {c['id']}"}
        last = w.user(last, [result, hook])
    last = w.assistant(last, calls[2:], (3, 1_000, 100), "msg_stream")
    last = w.user(last, [{"type": "tool_result", "tool_use_id": "toolu_read2", "content": "f"}])
    w.assistant(last, [{"type": "text", "text": "Found it."}], (3, 1_100, 300), "msg_next")
    s = load_session(shapes.write(tmp_path / "streamed.jsonl", w.records))
    assert [m["role"] for m in s.messages] == ["user", "assistant", "user", "assistant"]
    assert [b["id"] for b in s.messages[1]["content"]] == [c["id"] for c in calls]
    results = [b for b in s.messages[2]["content"] if b["type"] == "tool_result"]
    assert [b["tool_use_id"] for b in results] == [c["id"] for c in calls]
    assert errors(check_protocol(s.messages)) == []
