"""``ctxview diff``: an eviction, an edit, a system change and a tool change."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.cli import main
from ctxview.core.diff import _opcodes, diff_requests, first_difference
from tests.support.paths import ACCEPTANCE

TOOL_A = {"name": "read_file", "description": "Read a file", "input_schema": {"type": "object"}}
TOOL_B = {"name": "grep", "description": "Search", "input_schema": {"type": "object"}}


def body() -> dict[str, Any]:
    return {
        "model": "claude-x",
        "max_tokens": 100,
        "system": [{"type": "text", "text": "You are careful."}],
        "tools": [TOOL_A, TOOL_B],
        "messages": [
            {"role": "user", "content": "fix the test"},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "reading"},
                    {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a"}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x = 1\n"}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": "x is one"}]},
            {"role": "user", "content": "thanks"},
        ],
    }


def test_first_difference() -> None:
    assert first_difference("abc", "abd") == 2
    assert first_difference("ab", "abc") == 2
    assert first_difference("", "") == 0


def test_identical() -> None:
    d = diff_requests(body(), body())
    assert d.identical and d.messages == [] and d.cache is None


def test_eviction() -> None:
    a = body()
    b = copy.deepcopy(a)
    del b["messages"][1:3]  # the tool pair left the window
    d = diff_requests(a, b)
    assert [(m.op, m.a_index, m.role) for m in d.messages] == [
        ("removed", 1, "assistant"),
        ("removed", 2, "user"),
    ]
    assert d.cache is not None and d.cache.to_dict() == {
        "section": "messages",
        "index": 1,
        "block": 0,
        "shared_tokens": d.cache.shared_tokens,
    }
    assert d.cache.shared_tokens > 0
    assert d.tools == {"added": [], "removed": [], "changed": []} and d.system is None


def test_append_parts_at_the_end() -> None:
    a = body()
    b = copy.deepcopy(a)
    b["messages"].append({"role": "assistant", "content": [{"type": "text", "text": "bye"}]})
    d = diff_requests(a, b)
    assert [(m.op, m.b_index) for m in d.messages] == [("added", 5)]
    assert d.cache is not None and (d.cache.section, d.cache.index, d.cache.block) == (
        "messages",
        5,
        None,
    )


def test_edit_names_the_block_and_first_character() -> None:
    a = body()
    b = copy.deepcopy(a)
    b["messages"][2]["content"][0]["content"] = "x = 2\n"  # a stubbed/edited tool_result
    d = diff_requests(a, b)
    (m,) = d.messages
    assert (m.op, m.a_index, m.b_index, m.role) == ("changed", 2, 2, "user")
    (blk,) = m.blocks
    assert (blk.op, blk.a_block, blk.type, blk.at) == ("changed", 0, "tool_result", 4)
    assert blk.a == "x = 1\n" and blk.b == "x = 2\n"
    assert d.cache is not None and (d.cache.section, d.cache.index, d.cache.block) == (
        "messages",
        2,
        0,
    )


def test_system_change() -> None:
    a = body()
    b = copy.deepcopy(a)
    b["system"][0]["text"] = "You are brief."
    d = diff_requests(a, b)
    assert d.messages == [] and d.system is not None
    assert (d.system["at"], d.system["a"], d.system["b"]) == (
        8,
        "You are careful.",
        "You are brief.",
    )
    assert d.cache is not None and (d.cache.section, d.cache.index) == ("system", 0)
    assert d.cache.shared_tokens > 0  # the tools before it are still shared


def test_tool_change() -> None:
    a = body()
    b = copy.deepcopy(a)
    b["tools"][1] = {**TOOL_B, "description": "Search files"}
    b["tools"].append({"name": "write_file", "input_schema": {"type": "object"}})
    d = diff_requests(a, b)
    assert d.tools["added"] == ["write_file"] and d.tools["removed"] == []
    assert [c["name"] for c in d.tools["changed"]] == ["grep"]
    assert d.cache is not None and (d.cache.section, d.cache.index) == ("tools", 1)
    assert d.messages == [] and d.system is None


def test_cli_diff(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    a = body()
    b = copy.deepcopy(a)
    b["messages"][3]["content"][0]["text"] = "x is \x1b[31mone"
    b["temperature"] = 0.5
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    assert main(["diff", str(pa), str(pb)]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out
    assert "~ A messages[3] → B messages[3] assistant changed" in out
    assert "content[0] text at character 5" in out
    assert "field temperature: null → 0.5" in out  # the JSON's words, not Python's None
    assert "prompt cache: the prefixes part at messages[3].content[0]" in out
    assert main(["diff", str(pa), str(pb), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["provider"] == {"a": "anthropic", "b": "anthropic"}
    assert set(report) == {
        "a",
        "b",
        "provider",
        "identical",
        "fields",
        "tools",
        "system",
        "messages",
        "cache_prefix",
        "config_used",
    }
    assert main(["diff", str(pa), str(pa)]) == 0
    assert "identical requests" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("[1,")
    assert main(["diff", str(pa), str(tmp_path / "bad.json")]) == 2
    assert "invalid JSON" in capsys.readouterr().err


def test_cli_diff_of_two_sessions_final_windows(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.support.paths import ROOT

    s = str(ROOT / "sample_sessions" / "agent_loop.json")
    assert main(["diff", s, s]) == 0
    capsys.readouterr()
    assert main(["diff", s, str(ROOT / "sample_sessions" / "tool_errors.json"), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["system"] is not None or report["tools"]["changed"] or report["messages"]


def test_cli_diff_of_two_gemini_or_responses_bodies_compares_their_messages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A Gemini body holds its conversation in ``contents``, a Responses body in ``input``: the
    diff compares them message by message and says where the cached prefixes part, instead of
    one changed field and "the prefixes never part"."""
    gemini = ACCEPTANCE / "gemini"
    a, b = gemini / "llmgemini_tools_req2.json", gemini / "llmgemini_tools_req3.json"
    assert main(["diff", str(a), str(b), "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert not [f for f in report["fields"] if f["key"] == "contents"]
    assert [(m["op"], m["b_index"]) for m in report["messages"]] == [("added", 3), ("added", 4)]
    assert (report["cache_prefix"]["section"], report["cache_prefix"]["index"]) == ("messages", 3)
    ra, rb = tmp_path / "a.json", tmp_path / "b.json"
    ra.write_text(json.dumps({"model": "gpt-5", "input": [{"role": "user", "content": "hi"}]}))
    turn = {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "yo"}],
    }
    rb.write_text(
        json.dumps({"model": "gpt-5", "input": [{"role": "user", "content": "hi"}, turn]})
    )
    assert main(["diff", str(ra), str(rb)]) == 1
    out = capsys.readouterr().out
    assert "+ B messages[1] assistant added" in out and "never part" not in out
    assert main(["diff", str(ra), str(ra)]) == 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f"]), max_size=40),
    st.lists(
        st.tuples(st.integers(0, 2), st.integers(0, 60), st.sampled_from(["a", "x", "y"])),
        max_size=8,
    ),
)
def test_alignment_rebuilds_b_from_a(a: list[str], edits: list[tuple[int, int, str]]) -> None:
    """The opcodes cover both sequences in order, equal runs are equal, and every other run of B
    is what was inserted or changed (a patience diff, checked on repeated elements)."""
    b = list(a)
    for op, at, value in edits:
        if op == 0 and b:
            del b[at % len(b)]
        elif op == 1:
            b.insert(at % (len(b) + 1), value)
        elif b:
            b[at % len(b)] = value
    i = j = 0
    rebuilt: list[str] = []
    for op, i1, i2, j1, j2 in _opcodes(a, b):
        assert (i1, j1) == (i, j)
        if op == "equal":
            assert a[i1:i2] == b[j1:j2]
        rebuilt.extend(b[j1:j2])
        i, j = i2, j2
    assert (i, j) == (len(a), len(b)) and rebuilt == b
    if a == b:
        assert all(op == "equal" for op, *_ in _opcodes(a, b))


def test_a_sliding_window_aligns_by_content() -> None:
    """Evictions at the front and appends at the end of a long window (no common suffix) come out
    as removed and added messages, the rest equal."""
    msgs = [{"role": "user" if k % 2 == 0 else "assistant", "content": f"m{k}"} for k in range(400)]
    a = {"messages": msgs[:300]}
    b = {"messages": [msgs[0], *msgs[11:310]]}
    d = diff_requests(a, b)
    assert [(m.op, m.a_index) for m in d.messages if m.op == "removed"] == [
        ("removed", k) for k in range(1, 11)
    ]
    assert [m.b_index for m in d.messages if m.op == "added"] == list(range(290, 300))
    assert not [m for m in d.messages if m.op == "changed"]


# -- requests of a simulated session (the request model and the diff agree) ---------------------


def _session(n_turns: int, **meta_at: dict[str, Any]) -> Any:
    """A ctxview-format session of tool rounds; ``meta_at["r<i>"]`` is merged into the meta of
    the i-th assistant response (a proxy recording's per-request system / tools)."""
    from types import SimpleNamespace

    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    replies = 0
    for k in range(n_turns):
        msgs.append({"role": "user", "content": f"question {k} " + "w " * 400})
        metas.append({})
        for m in (
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"reading {k}"},
                    {"type": "tool_use", "id": f"t{k}", "name": "read_file", "input": {}},
                ],
            },
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "r " * 500}],
            },
            {"role": "assistant", "content": [{"type": "text", "text": f"answer {k}"}]},
        ):
            msgs.append(m)
            meta: dict[str, Any] = {}
            if m["role"] == "assistant":
                meta = {"model": "claude-sonnet-5-5", **meta_at.get(f"r{replies}", {})}
                replies += 1
            metas.append(meta)
    return SimpleNamespace(
        path="s.json",
        format="ctxview",
        messages=msgs,
        metas=metas,
        system=[{"type": "text", "text": "You are careful. " * 200}],
        tools=[TOOL_A, TOOL_B],
        model="claude-sonnet-5-5",
    )


def test_logged_requests_that_differ_by_an_eviction() -> None:
    from ctxview.core.diff import diff_logged_requests
    from ctxview.core.requests import simulate

    session = _session(6)
    log = simulate(session, max_context_messages=6, strategy="pair-safe")
    assert not log.windows.keys() - {len(log.requests) - 1}  # windows are not kept by default
    k = next(r.index for r in log.requests if r.cache_break and r.cache_break.reason == "evicted")
    d = diff_logged_requests(session, log, k - 1, k)
    removed = [m for m in d.messages if m.op == "removed"]
    assert removed and all(m.a_index is not None and m.a_index >= 1 for m in removed)
    assert d.system is None and d.tools == {"added": [], "removed": [], "changed": []}
    assert d.cache is not None and d.cache.section == "messages"
    # where the diff says the prefixes part is where the request model puts the break
    brk = log.requests[k].cache_break
    assert brk is not None and d.cache.index == brk.position
    # B is A without the removed messages, plus the added ones (windows kept by a simulate)
    kept = simulate(session, max_context_messages=6, strategy="pair-safe", keep_windows=[k - 1, k])
    wa = [session.messages[t] for t in kept.windows[k - 1]]
    wb = [session.messages[t] for t in kept.windows[k]]
    gone = {m.a_index for m in removed}
    added = [m.b_index for m in d.messages if m.op == "added"]
    assert not [m for m in d.messages if m.op == "changed"]
    assert [m for i, m in enumerate(wa) if i not in gone] + [wb[j] for j in added] == wb


def test_logged_requests_that_differ_by_a_system_change() -> None:
    from ctxview.core.diff import diff_logged_requests
    from ctxview.core.requests import simulate

    system_b = [{"type": "text", "text": "You are careless. " * 200}]
    session = _session(3, r3={"system": system_b}, r4={"system": system_b})
    log = simulate(session, max_context_messages=100)
    assert log.requests[3].cache_break is not None
    assert log.requests[3].cache_break.reason == "system"
    d = diff_logged_requests(session, log, 2, 3)
    assert d.system is not None and d.system["at"] == len("You are care")
    assert (d.cache.section, d.cache.index) == ("system", 0) if d.cache else False
    assert [m.op for m in d.messages] == ["added", "added"]  # the turn in between
    assert diff_logged_requests(session, log, 3, 4).system is None  # same system on both


def test_logged_requests_that_differ_by_a_tool_change() -> None:
    from ctxview.core.diff import diff_logged_requests
    from ctxview.core.requests import simulate

    tools_b = [TOOL_A, {**TOOL_B, "description": "Search files"}]
    session = _session(3, r2={"tools": tools_b})
    log = simulate(session, max_context_messages=100)
    assert log.requests[2].cache_break is not None
    assert log.requests[2].cache_break.reason == "tools"
    d = diff_logged_requests(session, log, 1, 2)
    assert [c["name"] for c in d.tools["changed"]] == ["grep"]
    assert d.cache is not None and (d.cache.section, d.cache.index) == ("tools", 1)
    assert d.system is None
    # back to the session's tools at request 3: changed again, the other way
    back = diff_logged_requests(session, log, 2, 3)
    assert [c["name"] for c in back.tools["changed"]] == ["grep"]


def test_requests_that_differ_by_an_edit_agree_with_its_preview() -> None:
    """A stub through the core edit API: the diff of the request bodies before and after names
    the block and its first differing character, and parts the cache where ``edit_cost`` puts
    the break."""
    from ctxview import ConversationContext
    from ctxview.core.edits import edit_cost, stub_plan
    from ctxview.sessions.request import build_request

    session = _session(4)
    ctx = ConversationContext(max_context_messages=100)
    for m in session.messages:
        ctx.add_message(m)
    before = build_request(ctx, model="claude-sonnet-5-5", max_tokens=100, tools=session.tools)
    plan = stub_plan(ctx.entries(), 6)
    price = edit_cost(ctx.entries(), plan, static_tokens=0, model="claude-sonnet-5-5")
    new = plan.changes[6]
    assert new is not None
    ctx.replace_message(6, new)
    after = build_request(ctx, model="claude-sonnet-5-5", max_tokens=100, tools=session.tools)
    d = diff_requests(before, after)
    (m,) = d.messages
    assert (m.op, m.a_index, m.b_index, m.role) == ("changed", 6, 6, "user")
    (blk,) = m.blocks
    assert (blk.op, blk.type, blk.at) == ("changed", "tool_result", 0)
    assert blk.b.startswith("[stubbed by ctxview")
    assert d.cache is not None and (d.cache.section, d.cache.index, d.cache.block) == (
        "messages",
        6,
        0,
    )
    assert price.cache_break is not None and price.cache_break.position == d.cache.index


def test_logged_request_diff_of_hostile_text_is_visible_text() -> None:
    from ctxview.core.diff import diff_logged_requests
    from ctxview.core.requests import simulate
    from ctxview.sessions.diffio import render

    hostile = [{"type": "text", "text": "You are \x1b[2J\x1b]0;title\x07 \u202eevil\x9b"}]
    session = _session(3, r2={"system": hostile})
    log = simulate(session, max_context_messages=100)
    lines = render(diff_logged_requests(session, log, 1, 2))
    text = "\n".join(lines)
    assert "system: changed at character 8" in text
    assert not any(c in text for c in ("\x1b", "\x07", "\u202e", "\x9b"))


def test_logged_diff_shares_the_prefix_the_requests_view_prices() -> None:
    """On a Claude Code transcript (no system or tools in the file, calibrated rates), the shared
    prefix of two requests where B only adds messages is A's whole prompt as the log prices it."""

    from ctxview.core.diff import diff_logged_requests
    from ctxview.core.requests import simulate
    from ctxview.sessions import load_session

    path = ACCEPTANCE / "claude_code"
    session = load_session(path / "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    log = simulate(session)
    b = len(log.requests) - 1
    a = b - 11
    d = diff_logged_requests(session, log, a, b)
    assert not [m for m in d.messages if m.op != "added"]
    assert d.cache is not None and d.cache.section == "messages"
    want = log.requests[a].input_tokens
    assert abs(d.cache.shared_tokens - want) <= 0.02 * want, (d.cache.shared_tokens, want)


def test_cli_diff_writes_field_values_as_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A changed field is shown as the body's JSON has it: `null`, `true`, `"any"`, `{"a": 1}`
    (it printed Python's `None`, `True` and `{'a': 1}`)."""
    a = body()
    b = copy.deepcopy(a)
    b["tool_choice"] = {"type": "any", "disable_parallel_tool_use": True}
    b["stop_sequences"] = ["END"]
    b["metadata"] = {"user_id": "u-1"}
    a["metadata"] = {"user_id": "ü-0"}
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    pa.write_text(json.dumps(a))
    pb.write_text(json.dumps(b))
    assert main(["diff", str(pa), str(pb)]) == 1
    out = capsys.readouterr().out
    assert 'field tool_choice: null → {"type": "any", "disable_parallel_tool_use": true}' in out
    assert 'field stop_sequences: null → ["END"]' in out
    assert 'field metadata: {"user_id": "ü-0"} → {"user_id": "u-1"}' in out


def test_cli_diff_of_two_apis_requests_says_they_share_no_cache(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An OpenAI body against a Gemini one: where their bodies part is shown, and a note says
    the two APIs share no prompt cache (the prefix line alone read as if they did)."""
    from tests.support.paths import ACCEPTANCE

    openai = ACCEPTANCE / "openai_chat" / "pai_complex_agent_run_req3.json"
    gemini = ACCEPTANCE / "unseen4" / "gemini"
    gemini = gemini / "fantasy_testgooglecommon_gemini_2_5_flash_multi_tool_req2.json"
    assert main(["diff", str(openai), str(gemini)]) == 1
    out = capsys.readouterr().out
    assert "note: A goes to openai's API, B to gemini's: they share no prompt cache" in out
    assert main(["diff", str(openai), str(openai)]) == 0
    assert "note:" not in capsys.readouterr().out
