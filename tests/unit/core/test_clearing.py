"""The context-editing strategies: ``clear-tool-uses`` and ``clear-thinking``.

Property tests on generated agent loops, after every add: no message is removed, the pinned first
and the newest message are sent unchanged, every tool_use / tool_result id is still there and
paired, a cleared result keeps its tool_use_id and only its content changes (to the placeholder),
the ``keep`` most recent tool uses are intact, ``exclude_tools`` are never cleared, nothing is
cleared below the trigger, the sent form passes the protocol check when the original does, and the
incremental sent form equals one computed from scratch. Then examples, the request model's
pricing, the config / session round trip, export and the chat's server-side form.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview import ConversationContext, check_protocol
from ctxview.core.clearing import (
    PLACEHOLDER,
    ClearThinking,
    ClearToolUses,
    ContextEditing,
    parse_context_editing,
)
from ctxview.core.protocol import errors
from ctxview.core.tokens import estimate_window
from tests.support.agentgen import agent_events, agent_loop, thinking

NAMES = ["read_file", "grep", "memory"]


def _named(history: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Give the generated tool uses a few different names (exclude_tools has something to do)."""
    for m in history:
        if m["role"] == "assistant":
            for b in m["content"]:
                if b.get("type") == "tool_use":
                    b["name"] = NAMES[int(b["id"][-4:]) % 3]
        elif isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    b["content"] = "result " * (int(b["tool_use_id"][-4:]) % 7 * 20 + 1)
    return history


def _uses(msgs: list[dict[str, Any]]) -> list[tuple[int, int, dict[str, Any]]]:
    return [
        (i, k, b)
        for i, m in enumerate(msgs)
        if m["role"] == "assistant" and isinstance(m["content"], list)
        for k, b in enumerate(m["content"])
        if b.get("type") == "tool_use"
    ]


def _results(msgs: list[dict[str, Any]]) -> dict[str, tuple[int, int, dict[str, Any]]]:
    out = {}
    for i, m in enumerate(msgs):
        if m["role"] == "user" and isinstance(m["content"], list):
            for k, b in enumerate(m["content"]):
                if b.get("type") == "tool_result":
                    out.setdefault(b["tool_use_id"], (i, k, b))
    return out


def _ids(msgs: list[dict[str, Any]], kind: str, key: str) -> Counter[str]:
    return Counter(
        b[key]
        for m in msgs
        if isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == kind
    )


def _check_tool_uses(ctx: ConversationContext, history: list[dict[str, Any]]) -> None:
    s = ctx.context_editing.clear_tool_uses
    sent = ctx.messages
    assert len(sent) == len(history) and ctx.window_ids == list(range(len(history)))
    assert ctx.entries() and [m for _, m in ctx.entries()] == history, "originals kept"
    assert sent[0] == history[0] and sent[-1] == history[-1]
    assert _ids(sent, "tool_use", "id") == _ids(history, "tool_use", "id")
    assert _ids(sent, "tool_result", "tool_use_id") == _ids(history, "tool_result", "tool_use_id")
    uses = _uses(history)
    results = _results(history)
    sent_results = _results(sent)
    kept = {b["id"] for _, _, b in uses[len(uses) - s.keep :]} if s.keep else set()
    for i, m in enumerate(history):  # only tool_result content / tool_use input ever change
        if m["content"] != sent[i]["content"]:
            assert m["role"] in ("user", "assistant")
            for a, b in zip(m["content"], sent[i]["content"], strict=True):
                if a != b:
                    assert a["type"] in ("tool_result", "tool_use")
                    if a["type"] == "tool_result":
                        assert b == {**a, "content": PLACEHOLDER}
                    else:
                        assert s.clears_input(a["name"]) and b == {**a, "input": {}}
    any_cleared = False
    for i, k, b in uses:
        tid = b["id"]
        res = results.get(tid)
        cleared = res is not None and sent_results[tid][2]["content"] == PLACEHOLDER
        any_cleared |= cleared or sent[i]["content"][k] != b
        if tid in kept or b["name"] in s.exclude_tools:
            assert sent[i]["content"][k] == b, "a kept or excluded tool use was cleared"
            if res is not None:
                assert sent_results[tid][2] == res[2], "a kept or excluded result was cleared"
    sf = ctx.sent_form()
    assert sf is not None
    if s.trigger_type == "tool_uses":
        triggered = len(uses) > s.trigger
    else:
        triggered = estimate_window(history, ctx.system_prompt) > s.trigger
    if not triggered:
        assert sent == history and sf.cleared_units == 0
    if any_cleared:  # clearing happens only when at least clear_at_least tokens can go
        assert sf._cleared_savings >= s.clear_at_least
    if not errors(check_protocol(history)):
        assert errors(check_protocol(sent)) == []


def _check_thinking(ctx: ConversationContext, history: list[dict[str, Any]]) -> None:
    keep = ctx.context_editing.clear_thinking.keep
    sent = ctx.messages
    assert len(sent) == len(history)
    assert sent[0] == history[0] and sent[-1] == history[-1]
    for m, x in zip(history, sent, strict=True):
        if m["role"] != "assistant" or not isinstance(m["content"], list):
            assert m == x
            continue
        rest = [b for b in m["content"] if b.get("type") not in ("thinking", "redacted_thinking")]
        assert x["content"] in (m["content"], rest) and x["content"], "only thinking leaves"
    # the thinking of the `keep` most recent turns holding thinking is intact
    turns: list[list[int]] = []
    open_turn = False
    for i, m in enumerate(history):
        c = m["content"]
        if m["role"] == "user" and not (
            isinstance(c, list) and any(b.get("type") == "tool_result" for b in c)
        ):
            open_turn = False
        elif m["role"] == "assistant":
            if not open_turn:
                turns.append([])
                open_turn = True
            if any(b.get("type") == "thinking" for b in c):
                turns[-1].append(i)
    with_thinking = [t for t in turns if t]
    recent = with_thinking[-keep:] if keep else []
    for t in recent if keep is not None else with_thinking:
        for i in t:
            assert sent[i] == history[i], "thinking of a kept turn was cleared"
    if not errors(check_protocol(history)):
        assert errors(check_protocol(sent)) == []


tool_settings = st.builds(
    ClearToolUses,
    trigger_type=st.sampled_from(["input_tokens", "tool_uses"]),
    trigger=st.integers(min_value=1, max_value=600),
    keep=st.integers(min_value=0, max_value=5),
    clear_at_least=st.sampled_from([0, 0, 20, 200, 5000]),
    exclude_tools=st.sampled_from([(), ("memory",), ("grep", "memory")]),
    clear_tool_inputs=st.sampled_from([False, True, ("grep",)]),
)


@pytest.mark.slow
@settings(max_examples=120, deadline=None)
@given(agent_events(live_changes=False), tool_settings)
def test_clear_tool_uses_invariants(events: list[tuple[str, Any]], s: ClearToolUses) -> None:
    history = _named([m for kind, m in events if kind == "msg"])
    ctx = ConversationContext(
        3, strategy="clear-tool-uses", context_editing=ContextEditing(clear_tool_uses=s)
    )
    added: list[dict[str, Any]] = []
    for m in history:
        ctx.add_message(m)
        added.append(m)
        _check_tool_uses(ctx, added)
        # the incremental sent form is the one computed from scratch
        fresh = ConversationContext(
            3, strategy="clear-tool-uses", context_editing=ctx.context_editing
        )
        for x in added:
            fresh.add_message(x)
        assert fresh.messages == ctx.messages
    assert ctx.window_notes() == [] or all(p.code != "over_max" for p in ctx.window_notes())


@settings(max_examples=80, deadline=None)
@given(agent_events(live_changes=False), st.sampled_from([None, 1, 2, 3]))
def test_clear_thinking_invariants(events: list[tuple[str, Any]], keep: int | None) -> None:
    history = [m for kind, m in events if kind == "msg"]
    ed = ContextEditing(clear_thinking=ClearThinking(keep))
    ctx = ConversationContext(3, strategy="clear-thinking", context_editing=ed)
    added: list[dict[str, Any]] = []
    for m in history:
        ctx.add_message(m)
        added.append(m)
        _check_thinking(ctx, added)
    fresh = ConversationContext(3, strategy="clear-thinking", context_editing=ed)
    for x in added:
        fresh.add_message(x)
    assert fresh.messages == ctx.messages


# -- examples ----------------------------------------------------------------------------------
def _loop(n_rounds: int = 10, size: int = 400) -> list[dict[str, Any]]:
    msgs = agent_loop([[1] * n_rounds])
    for m in msgs:
        if m["role"] == "user" and isinstance(m["content"], list):
            for b in m["content"]:
                b["content"] = "x" * size
    return msgs


def _ctx(msgs: list[dict[str, Any]], **kw: Any) -> ConversationContext:
    ctx = ConversationContext(
        5, strategy="clear-tool-uses", context_editing=ContextEditing(ClearToolUses(**kw))
    )
    for m in msgs:
        ctx.add_message(m)
    return ctx


def test_default_trigger_is_100k_tokens_and_keep_3() -> None:
    msgs = _loop()
    ctx = _ctx(msgs)
    assert ctx.messages == msgs  # ~1k tokens: below the default trigger, nothing is cleared
    ctx = _ctx(msgs, trigger=500)
    sent = ctx.messages
    placeholders = [
        i for i, m in enumerate(sent) if m["role"] == "user" and "cleared" in json.dumps(m)
    ]
    # 10 tool uses, the 3 most recent kept: the results of the first 7 are cleared
    assert placeholders == [2, 4, 6, 8, 10, 12, 14]
    assert sent[2]["content"][0] == {
        "type": "tool_result",
        "tool_use_id": "toolu_0000",
        "content": PLACEHOLDER,
        "is_error": False,
    }
    assert len(ctx.entries()) == len(msgs) == len(sent)
    sf = ctx.sent_form()
    assert sf is not None and sf.cleared_units == 7 and sf.cleared_tokens > 7 * 90
    assert sf.applied_edits() == [
        {
            "type": "clear_tool_uses_20250919",
            "cleared_tool_uses": 7,
            "cleared_input_tokens": sf.cleared_tokens,
        }
    ]
    assert ctx.estimated_tokens == estimate_window(sent)


def test_trigger_in_tool_uses_and_clear_at_least() -> None:
    msgs = _loop()
    assert _ctx(msgs, trigger_type="tool_uses", trigger=10).messages == msgs  # 10 uses: not > 10
    assert _ctx(msgs, trigger_type="tool_uses", trigger=9).messages != msgs
    # 7 results of ~100 tokens can be cleared: at least 5,000 cannot, so nothing is
    assert _ctx(msgs, trigger=500, clear_at_least=5000).messages == msgs
    assert _ctx(msgs, trigger=500, clear_at_least=600).messages != msgs


def test_clear_tool_inputs_and_exclude_tools() -> None:
    msgs = _loop()
    msgs[1]["content"][1]["name"] = "memory"
    ctx = _ctx(msgs, trigger=500, clear_tool_inputs=True, exclude_tools=("memory",))
    sent = ctx.messages
    assert sent[1] == msgs[1] and sent[2] == msgs[2]  # the memory tool: untouched
    assert sent[3]["content"][1]["input"] == {} and sent[3]["content"][1]["id"] == "toolu_0001"
    assert sent[4]["content"][0]["content"] == PLACEHOLDER


def test_keep_zero_never_changes_the_newest_message() -> None:
    msgs = _loop(3)[:-1]  # ends with a tool_result message
    ctx = _ctx(msgs, trigger=1, keep=0, clear_tool_inputs=True)
    sent = ctx.messages
    assert sent[-1] == msgs[-1]
    assert sent[-2]["content"][1]["input"] == {}  # its tool_use's input may go
    ctx.add_message({"role": "assistant", "content": [{"type": "text", "text": "done"}]})
    assert ctx.messages[-2]["content"][0]["content"] == PLACEHOLDER  # no longer the newest


def test_thinking_keep_and_all() -> None:
    msgs: list[dict[str, Any]] = []
    for t in range(4):
        msgs.append({"role": "user", "content": f"q{t}"})
        msgs.append(
            {"role": "assistant", "content": [thinking(f"t{t}"), {"type": "text", "text": "a"}]}
        )
    ctx = ConversationContext(
        3,
        strategy="clear-thinking",
        context_editing=ContextEditing(clear_thinking=ClearThinking(2)),
    )
    for m in msgs:
        ctx.add_message(m)
    sent = ctx.messages
    assert [len(m["content"]) for m in sent if m["role"] == "assistant"] == [1, 1, 2, 2]
    ctx.set_context_editing(ContextEditing(clear_thinking=ClearThinking(None)))
    assert ctx.messages == msgs  # keep "all"


def test_edits_and_strategy_changes_rebuild_the_sent_form() -> None:
    msgs = _loop()
    ctx = _ctx(msgs, trigger=500)
    assert ctx.messages != msgs
    ctx.set_strategy("pair-safe")  # not an editing strategy: evicts down to max 5, sends as is
    assert ctx.messages == [m for _, m in ctx.entries()]
    ctx = _ctx(msgs, trigger=500)
    ctx.replace_message(2, {**msgs[2], "content": [{**msgs[2]["content"][0], "content": "y"}]})
    assert ctx.messages[2]["content"][0]["content"] == PLACEHOLDER
    ctx.set_context_editing(ContextEditing(ClearToolUses(trigger=10**9)))
    assert ctx.messages[2]["content"][0]["content"] == "y"


# -- the request model ------------------------------------------------------------------------
class _Session:
    def __init__(self, msgs: list[dict[str, Any]]) -> None:
        self.format = "messages"
        self.messages = msgs
        self.metas: list[dict[str, Any]] = [{} for _ in msgs]
        self.system = ""
        self.tools: list[Any] = []
        self.model = "claude-sonnet-4-5"


def test_requests_price_clearing_as_an_edited_break() -> None:
    from ctxview.core.requests import compare, simulate

    msgs = _loop(40, 2000)
    session = _Session(msgs)
    ed = ContextEditing(ClearToolUses(trigger=8000, keep=3))
    log = simulate(session, strategy="clear-tool-uses", context_editing=ed, cache="automatic")
    breaks = [r for r in log.requests if r.cache_break is not None]
    assert breaks[0].cache_break is not None and breaks[0].cache_break.reason == "first"
    edited = [r for r in log.requests if r.cache_break and r.cache_break.reason == "edited"]
    assert edited, "the first clearing breaks the cache"
    first = edited[0]
    assert first.cache_break is not None and first.cache_break.position == 2  # the first result
    assert [r.window_size for r in log.requests] == [2 * k + 1 for k in range(41)]
    # once the prompt passes the trigger, the estimate stays near it (results cleared)
    assert max(r.input_tokens for r in log.requests) < 8000 + 6 * 520
    plain = simulate(session, strategy="pair-safe", max_context_messages=10_000)
    assert log.totals()["input_tokens"] < plain.totals()["input_tokens"]
    # a clear_at_least above what can be cleared: no clearing, no edited break
    big = ContextEditing(ClearToolUses(trigger=8000, keep=3, clear_at_least=10**7))
    log2 = simulate(session, strategy="clear-tool-uses", context_editing=big)
    assert not any(r.cache_break and r.cache_break.reason == "edited" for r in log2.requests)
    rows = {
        r["name"]: r
        for r in compare(
            session,
            max_context_messages=20,
            defaults={"context_editing": {"clear_tool_uses": {"trigger": 8000}}},
        )
    }
    assert {"clear-tool-uses", "clear-thinking"} <= set(rows)
    assert rows["clear-tool-uses"]["evicted_messages"] == 0
    assert rows["clear-tool-uses"]["rejected_requests"] == 0
    assert rows["clear-tool-uses"]["input_tokens"] == log.totals()["input_tokens"]


# -- config and session files -------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({"clear_tool_uses": {"keep": -1}}, "context_editing.clear_tool_uses.keep: expected"),
        ({"clear_tool_uses": {"trigger": {"type": "messages", "value": 3}}}, ".trigger.type"),
        ({"clear_tool_uses": {"exclude_tools": "memory"}}, ".exclude_tools: expected a list"),
        ({"clear_tool_uses": {"kep": 3}}, "clear_tool_uses.kep: unknown key"),
        ({"clear_thinking": {"keep": 0}}, "clear_thinking.keep: expected an integer >= 1"),
        ({"server_side": "yes"}, "context_editing.server_side: expected true or false"),
        ([1], "context_editing: expected a table"),
    ],
)
def test_bad_parameters_name_the_key(value: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace(".", r"\.")):
        parse_context_editing(value)


def test_api_forms_and_round_trip() -> None:
    raw = {
        "server_side": True,
        "clear_tool_uses": {
            "trigger": {"type": "tool_uses", "value": 30},
            "keep": 5,
            "clear_at_least": {"type": "input_tokens", "value": 5000},
            "exclude_tools": ["memory"],
            "clear_tool_inputs": ["bash"],
        },
        "clear_thinking": {"keep": "all"},
    }
    ed = parse_context_editing(raw)
    assert ed.context_management("clear-tool-uses") == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "tool_uses", "value": 30},
                "keep": {"type": "tool_uses", "value": 5},
                "clear_at_least": {"type": "input_tokens", "value": 5000},
                "exclude_tools": ["memory"],
                "clear_tool_inputs": ["bash"],
            }
        ]
    }
    assert ed.context_management("clear-thinking") == {
        "edits": [{"type": "clear_thinking_20251015", "keep": "all"}]
    }
    assert ed.context_management("seed") is None
    assert parse_context_editing(ed.to_dict()) == ed
    assert parse_context_editing(None) == ContextEditing()


def test_config_reads_and_reports_context_editing(tmp_path: Path) -> None:
    from ctxview.config import context_editing, load_config

    p = tmp_path / "config.toml"
    p.write_text('[context_editing.clear_tool_uses]\nkeep = 5\nexclude_tools = ["memory"]\n')
    cfg = load_config(p)
    assert cfg.errors == []
    assert context_editing(cfg).clear_tool_uses.keep == 5
    p.write_text("[context_editing.clear_tool_uses]\nkeep = -2\n")
    cfg = load_config(p)
    assert len(cfg.errors) == 1 and "context_editing.clear_tool_uses.keep" in cfg.errors[0]
    assert context_editing(cfg) == ContextEditing()


def test_session_file_round_trip_and_old_files(tmp_path: Path) -> None:
    from ctxview.sessions.readers import load_session
    from ctxview.sessions.replay import replay
    from ctxview.sessions.store import save_session, session_document

    msgs = _loop()
    ctx = _ctx(msgs, trigger=500, keep=2)
    from ctxview.core.transcript import Transcript

    tr = Transcript()
    tr2 = ConversationContext(5, strategy="clear-tool-uses", context_editing=ctx.context_editing)
    tr.attach(tr2)
    for m in msgs:
        tr2.add_message(m)
    doc = session_document(tr2, tr)
    assert doc["settings"]["context_editing"]["clear_tool_uses"]["keep"] == {
        "type": "tool_uses",
        "value": 2,
    }
    path = tmp_path / "s.ctxview.json"
    save_session(path, doc)
    rep = replay(load_session(str(path)))
    assert rep.context.strategy == "clear-tool-uses"
    assert rep.context.context_editing == ctx.context_editing
    assert rep.context.messages == ctx.messages
    # a file without context_editing (older ctxview) still opens, with the defaults
    del doc["settings"]["context_editing"]
    save_session(path, doc)
    assert replay(load_session(str(path))).context.context_editing == ContextEditing()
    doc["settings"]["context_editing"] = {"clear_tool_uses": {"keep": "three"}}
    save_session(path, doc)
    from ctxview.sessions.model import SessionError

    with pytest.raises(SessionError, match=r"settings\.context_editing\.clear_tool_uses\.keep"):
        load_session(str(path))


# -- export and the chat's server-side form -----------------------------------------------------
def test_export_edited_or_with_context_management(tmp_path: Path) -> None:
    from ctxview.cli import main

    msgs = _loop()
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(msgs))
    cfg = Path(__import__("os").environ["CTXVIEW_CONFIG"])
    cfg.write_text("[context_editing.clear_tool_uses]\ntrigger = 500\n")
    out = tmp_path / "body.json"
    assert main(["export", str(path), "--strategy", "clear-tool-uses", "-o", str(out)]) == 0
    body = json.loads(out.read_text())
    assert "context_management" not in body and len(body["messages"]) == len(msgs)
    assert body["messages"][2]["content"][0]["content"] == PLACEHOLDER
    rc = main(
        [
            "export",
            str(path),
            "--strategy",
            "clear-tool-uses",
            "--context-management",
            "-o",
            str(out),
        ]
    )
    assert rc == 0
    body = json.loads(out.read_text())
    assert body["messages"] == msgs
    assert body["context_management"] == {
        "edits": [
            {
                "type": "clear_tool_uses_20250919",
                "trigger": {"type": "input_tokens", "value": 500},
                "keep": {"type": "tool_uses", "value": 3},
            }
        ]
    }
    assert main(["export", str(path), "--strategy", "seed", "--context-management"]) == 2


async def test_chat_sends_context_management_through_the_beta_api(fake_api: Any) -> None:
    from ctxview.chat.backends import AnthropicBackend

    ctx = _ctx(_loop(), trigger=500)
    from ctxview.sessions.request import build_request

    body = build_request(ctx, model="claude-sonnet-5-5", max_tokens=100, context_management=True)
    backend = AnthropicBackend(api_key="sk-test-not-real", base_url=fake_api.url, timeout=5)
    reply = await backend.reply(body, lambda s: None)
    assert reply.complete
    sent = fake_api.requests[0]
    assert sent["context_management"] == body["context_management"]
    assert sent["messages"] == [m for _, m in ctx.entries()]  # the full history: the API edits
    assert "context-management-2025-06-27" in fake_api.headers[0].get("anthropic-beta", "")
    # without the server-side form: the edited messages, the plain API, no beta flag
    body2 = build_request(ctx, model="claude-sonnet-5-5", max_tokens=100)
    await backend.reply(body2, lambda s: None)
    assert fake_api.requests[1]["messages"] == ctx.messages
    assert "context_management" not in fake_api.requests[1]
    assert "context-management" not in fake_api.headers[1].get("anthropic-beta", "")


def test_inspect_reports_what_is_sent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ctxview.cli import main

    msgs = _loop()
    path = tmp_path / "loop.json"
    path.write_text(json.dumps(msgs))
    Path(__import__("os").environ["CTXVIEW_CONFIG"]).write_text(
        "[context_editing.clear_tool_uses]\ntrigger = 500\n"
    )
    assert main(["inspect", str(path), "--strategy", "clear-tool-uses", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["context_editing"]["cleared_ids"] == [2, 4, 6, 8, 10, 12, 14]
    assert out["context_editing"]["applied_edits"][0]["cleared_tool_uses"] == 7
    assert out["window"]["size"] == len(msgs) and out["evicted"] == []
    ctx = _ctx(msgs, trigger=500)
    assert out["window"]["estimated_tokens"] == estimate_window(ctx.messages)
    assert main(["inspect", str(path), "--strategy", "pair-safe", "--json"]) == 0
    assert "context_editing" not in json.loads(capsys.readouterr().out)


def test_requests_clear_thinking_breaks_where_thinking_leaves() -> None:
    from ctxview.core.requests import simulate

    msgs: list[dict[str, Any]] = []
    for t in range(6):
        msgs.append({"role": "user", "content": f"question {t} " + "q" * 4000})
        msgs.append(
            {
                "role": "assistant",
                "content": [thinking("think " * 400), {"type": "text", "text": "answer"}],
            }
        )
    session = _Session(msgs)
    log = simulate(session, strategy="clear-thinking", cache="automatic")  # keep 1 thinking turn
    reasons = [
        (r.index, r.cache_break.reason, r.cache_break.position)
        for r in log.requests
        if r.cache_break
    ]
    # each new turn drops the thinking of the turn before the newest kept one
    assert reasons[0][1] == "first"
    assert [x for x in reasons if x[1] == "edited"] == [
        (k, "edited", 2 * k - 3) for k in range(2, 6)
    ]
    keep_all = ContextEditing(clear_thinking=ClearThinking(None))
    log2 = simulate(session, strategy="clear-thinking", context_editing=keep_all)
    assert not any(r.cache_break and r.cache_break.reason == "edited" for r in log2.requests)
    assert log.totals()["input_tokens"] < log2.totals()["input_tokens"]


def test_config_set_takes_an_inline_table(capsys: pytest.CaptureFixture[str]) -> None:
    from ctxview.cli import main
    from ctxview.config import context_editing, load_config

    assert main(["config", "set", "context_editing", "{clear_tool_uses = {keep = 5}}"]) == 0
    assert context_editing(load_config()).clear_tool_uses.keep == 5
    assert main(["config", "set", "context_editing", "{clear_tool_uses = {keep = -5}}"]) == 2
    err = capsys.readouterr().err
    assert "context_editing.clear_tool_uses.keep: expected an integer >= 0" in err
    assert main(["config", "set", "context_editing", "not toml {"]) == 2
    assert "expected a TOML inline table" in capsys.readouterr().err
