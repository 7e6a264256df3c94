"""A Claude Code background-task notification delivered as a prompt of its own: the request it
starts is predicted to read only the tools and system and write the history again (reason
``notification``), in every window source; a notification quoted inside another message, or in
a format that is not a Claude Code transcript, changes nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ctxview.core.clearing import parse_context_editing
from ctxview.core.requests import simulate
from ctxview.core.requests.points import history_resends
from ctxview.sessions import load_session
from ctxview.sessions.model import LoadedSession
from tests.support import claude_code_shapes as shapes

NOTICE = (
    "<task-notification>\n<task-id>b0be39e</task-id>\n<status>completed</status>\n"
    '<summary>Background command "Run the tests" completed (exit code 0)</summary>\n'
    "</task-notification>\nRead the output file to retrieve the result: /tmp/b0be39e.output"
)


#: a Claude Code version whose background command notifications broke the cache
OLD_CLIENT = "2.1.39"


def _session(
    tmp_path: Path, notice: Any, read: int = 20_000, version: str = OLD_CLIENT
) -> LoadedSession:
    """A tool loop that ends its turn, then ``notice`` as the next user line (written by Claude
    Code ``version``) and a response whose usage read ``read`` tokens (the rest of its 32,500
    written)."""
    w = shapes.Writer()
    u = w.user(None, "Fix the failing build.")
    last = shapes.grow(w, u, 6, 0, 20_000, 2_000)
    end = w.assistant(
        last, [{"type": "text", "text": "Done: the build passes."}], (3, 32_000, 200), "msg_end"
    )
    n = w.user(end, notice, version=version)
    w.assistant(
        n,
        [{"type": "text", "text": "The background run passed too."}],
        (3, read, 32_500 - read),
        "msg_after",
    )
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_a_notification_prompt_resends_the_history(tmp_path: Path) -> None:
    s = _session(tmp_path, NOTICE)
    log = simulate(s)
    last = log.requests[-1]
    assert last.cache_break is not None
    assert (last.cache_break.reason, last.cache_break.position) == ("notification", 0)
    assert last.cache_break.api_reason == "messages_changed"
    # the tools and system are read (the head the recorded breaks read, within the calibrated
    # static), every message written again
    assert last.cache_read == 20_000 < log.static_tokens
    assert last.cache_write == last.input_tokens - 20_000
    assert last.recorded_miss is not None and last.recorded_miss.reason == "notification"
    assert all(r.cache_break is None for r in log.requests[1:-1])


def test_a_predicted_break_the_api_did_not_make_is_named_beside_it(tmp_path: Path) -> None:
    """The disagreement is named: the predicted reason, and ``rec:hit`` (the API read the
    previous prompt); where the API broke too, nothing is added."""
    hit = simulate(_session(tmp_path, NOTICE, read=32_200)).requests[-1]
    assert hit.cache_break is not None and hit.recorded_miss is None
    assert hit.recorded_label() == "rec:hit"
    assert hit.recorded_label(as_sent=False) is None  # another prompt than the one recorded
    broke = simulate(_session(tmp_path, NOTICE)).requests[-1]
    assert broke.recorded_label() is None


def test_a_notification_in_a_text_block_after_an_interrupt_resends_too(tmp_path: Path) -> None:
    s = _session(
        tmp_path,
        [
            {"type": "text", "text": "[Request interrupted by user for tool use]"},
            {"type": "text", "text": NOTICE},
        ],
    )
    brk = simulate(s).requests[-1].cache_break
    assert brk is not None and brk.reason == "notification"


#: a background agent's notification as Claude Code 2.1.215 delivers it
AGENT_NOTICE = (
    "<task-notification>\n<task-id>a3041e6767649dcd3</task-id>\n"
    "<tool-use-id>toolu_01KcK868W9Whrm5ySr6Efr4f</tool-use-id>\n"
    "<output-file>C:\\Temp\\claude\\tasks\\a3041e6767649dcd3.output</output-file>\n"
    '<status>completed</status>\n<summary>Agent "T4: schema and docs" finished</summary>\n'
    "<result>Schema and docs updated.</result>\n</task-notification>"
)


def test_a_background_agents_notification_reads_the_whole_previous_prompt(
    tmp_path: Path,
) -> None:
    """Only a background command's notification was seen to break the cache; an agent's read
    the whole previous prompt every time: no break, and the recorded hit agrees."""
    s = _session(tmp_path, AGENT_NOTICE, read=32_200)
    assert history_resends(s) == {}
    *_, before, last = simulate(s).requests
    assert last.cache_break is None and last.recorded_miss is None
    assert last.cache_read == before.input_tokens


@pytest.mark.parametrize("version", ["2.1.49", "2.1.217"])
def test_a_newer_clients_notification_reads_the_whole_previous_prompt(
    tmp_path: Path, version: str
) -> None:
    """From Claude Code 2.1.49 on a background command's notification was seen to keep the
    cache: no break."""
    s = _session(tmp_path, NOTICE, read=32_200, version=version)
    assert history_resends(s) == {}
    *_, before, last = simulate(s).requests
    assert last.cache_break is None and last.cache_read == before.input_tokens


def test_a_quoted_notification_is_an_ordinary_prompt(tmp_path: Path) -> None:
    s = _session(tmp_path, "What does this mean?\n" + NOTICE)
    assert history_resends(s) == {}
    assert simulate(s).requests[-1].cache_break is None


@pytest.mark.parametrize(
    "kw",
    [
        {"strategy": "seed", "max_context_messages": 8},
        {
            "strategy": "clear-tool-uses",
            "max_context_messages": 100,
            "context_editing": parse_context_editing({"clear_tool_uses": {"trigger": 100_000}}),
        },
        {},
    ],
    ids=["range", "editing", "as-sent"],
)
def test_every_window_source_predicts_it_alike(tmp_path: Path, kw: dict[str, Any]) -> None:
    s = _session(tmp_path, NOTICE)
    fast = simulate(s, **kw)
    ref = simulate(s, _reference=True, **kw)
    assert fast.requests == ref.requests
    brk = fast.requests[-1].cache_break
    assert brk is not None and brk.reason == "notification"


def test_only_claude_code_transcripts_are_resent(tmp_path: Path) -> None:
    from dataclasses import replace

    s = replace(_session(tmp_path, NOTICE), format="messages")
    assert history_resends(s) == {}


def _resumed(tmp_path: Path, answer: str) -> LoadedSession:
    """A turn, an ``/exit`` (its caveat; the command's own lines are on no branch), the session
    resumed: Claude Code's ``<synthetic>`` ``answer`` after the caveat, then a prompt and a
    response whose usage read only the tools and system (16,606 of its 33,000)."""
    w = shapes.Writer()
    u = w.user(None, "Fix the failing build.")
    last = shapes.grow(w, u, 6, 0, 20_000, 2_000)
    end = w.assistant(last, [{"type": "text", "text": "Done."}], (3, 32_000, 200), "msg_end")
    caveat = w.user(
        end,
        "<local-command-caveat>Caveat: The messages below were generated by the user while "
        "running local commands.</local-command-caveat>",
        isMeta=True,
    )
    rec = w.base("assistant", caveat, 60)
    rec["message"] = {
        "model": "<synthetic>",
        "id": "b3860ee7-8224-4972-ba46-172cc1c559c8",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": answer}],
    }
    synthetic = w.add(rec)
    q = w.user(synthetic, "Merge the parent branch in.")
    w.assistant(q, [{"type": "text", "text": "Merged."}], (3, 16_606, 16_391), "msg_after")
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_the_first_request_after_a_resumed_session_resends_the_history(tmp_path: Path) -> None:
    s = _resumed(tmp_path, "No response requested.")
    assert list(history_resends(s).values()) == ["resume"]
    for reference in (False, True):
        last = simulate(s, _reference=reference).requests[-1]
        assert last.cache_break is not None
        assert (last.cache_break.reason, last.cache_break.position) == ("resume", 0)
        assert last.cache_break.api_reason == "messages_changed"
        assert last.recorded_miss is not None and last.recorded_miss.reason == "resume"
    # another synthetic answer is no resume
    assert history_resends(_resumed(tmp_path, "API Error: overloaded")) == {}


def _mcp_delta(
    tmp_path: Path, delta: dict[str, Any], read: int, tools: list[str] | None = None
) -> LoadedSession:
    """A turn, then a prompt followed by an ``mcp_instructions_delta`` attachment line (as Claude
    Code 2.1.2xx writes it, the response hanging off it) and a response whose usage read
    ``read`` tokens of its 33,000; ``tools``: the deferred tools a ``deferred_tools_delta`` line
    written just before it removed (None: no such line)."""
    w = shapes.Writer()
    u = w.user(None, "Fix the failing build.")
    last = shapes.grow(w, u, 6, 0, 20_000, 2_000)
    end = w.assistant(last, [{"type": "text", "text": "Done."}], (3, 32_000, 200), "msg_end")
    q = w.user(end, "Can Render take both kinds?")
    if tools is not None:
        att = w.base("attachment", q, 1)
        att["attachment"] = {
            "type": "deferred_tools_delta",
            "addedNames": [],
            "addedLines": [],
            "removedNames": tools,
        }
        q = w.add(att)
    att = w.base("attachment", q, 1)
    att["attachment"] = {"type": "mcp_instructions_delta", **delta}
    w.add(att)
    w.assistant(att["uuid"], [{"type": "text", "text": "Yes."}], (3, read, 33_000 - read), "m2")
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_a_disconnected_mcp_server_changes_the_system_prompt(tmp_path: Path) -> None:
    """Claude Code drops a disconnected server's instructions from the system prompt: the
    request breaks the cache with ``system`` (the API's ``system_changed``), reading the
    cached head; a server added (its instructions sent as a message delta) changes nothing."""
    removed = {"addedNames": [], "addedBlocks": [], "removedNames": ["context7"]}
    s = _mcp_delta(tmp_path, removed, read=20_000)
    assert list(history_resends(s).values()) == ["system"]
    for reference in (False, True):
        last = simulate(s, _reference=reference).requests[-1]
        assert last.cache_break is not None
        assert (last.cache_break.reason, last.cache_break.position) == ("system", 0)
        assert last.cache_break.api_reason == "system_changed"
        assert last.recorded_miss is not None and last.recorded_miss.reason == "system"
    # with the server's deferred tools removed as well (every such removal in unseen3 and
    # unseen4 broke)
    tools = ["mcp__context7__query-docs", "mcp__context7__resolve-library-id"]
    s = _mcp_delta(tmp_path, removed, read=20_000, tools=tools)
    assert list(history_resends(s).values()) == ["system"]
    added = {"addedNames": ["context7"], "addedBlocks": ["## context7\nUse it."]}
    s = _mcp_delta(tmp_path, {**added, "removedNames": []}, read=32_200)
    assert history_resends(s) == {}
    assert simulate(s).requests[-1].cache_break is None


def test_a_disconnected_mcp_server_whose_tools_stayed_changes_nothing(tmp_path: Path) -> None:
    """A server removed while the ``deferred_tools_delta`` written with it removed no tool:
    unseen4 ``gitsync_b2f87a4e`` #14 (Claude Code 2.1.172, ``cloudflare-observability``,
    re-added 12 s later) read the whole previous prompt, as did the next prompt; the seven
    removals of unseen3 and unseen4 whose tools delta removed the server's tools broke."""
    removed = {"addedNames": [], "addedBlocks": [], "removedNames": ["cloudflare-observability"]}
    s = _mcp_delta(tmp_path, removed, read=32_200, tools=[])
    assert history_resends(s) == {}
    assert simulate(s).requests[-1].cache_break is None


def _stop_hooks(w: shapes.Writer, parent: str) -> str:
    """The ``stop_hook_summary`` line Claude Code writes once a turn's Stop hooks ran."""
    rec = w.base("system", parent, 1)
    rec.update(subtype="stop_hook_summary", hookCount=1, hookInfos=[], hookErrors=[])
    return w.add(rec)


def _turn_duration(w: shapes.Writer, parent: str) -> str:
    """The ``turn_duration`` line Claude Code writes once a turn ended."""
    rec = w.base("system", parent, 1)
    rec.update(subtype="turn_duration", durationMs=25_313)
    return w.add(rec)


def _unhooked_turn(tmp_path: Path, second_end: Any, hooks: bool = True) -> LoadedSession:
    """Two turns, the first followed by its Stop hooks' summary line (``hooks``), the second
    ending on the ``second_end`` line(s) with no summary after it, then a typed prompt whose
    response read only the head (20,000 of 40,000 tokens)."""
    w = shapes.Writer()
    u = w.user(None, "Fix the failing build.")
    last = shapes.grow(w, u, 6, 0, 20_000, 2_000)
    end = w.assistant(last, [{"type": "text", "text": "Done."}], (3, 32_000, 200), "msg_end")
    if hooks:
        end = _stop_hooks(w, end)
    q = w.user(end, "Now commit it.")
    a = w.assistant(q, [{"type": "text", "text": "Committed."}], (3, 32_200, 800), "msg_2")
    for line in second_end(w, a):
        a = line
    p = w.user(a, "Push the branch.")
    w.assistant(p, [{"type": "text", "text": "Pushed."}], (3, 20_000, 20_000), "msg_3")
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_a_prompt_after_a_turn_its_stop_hooks_never_closed_is_a_restart(tmp_path: Path) -> None:
    """In a session whose turns end with a Stop hooks' summary line, a turn whose answer has
    none before the next typed prompt was not finished by the Claude Code process that answered
    it: the prompt comes from a new one, whose rebuilt system prompt breaks the cache
    (``restart``, the API's ``system_changed``)."""
    s = _unhooked_turn(tmp_path, lambda w, a: [])
    assert list(history_resends(s).values()) == ["restart"]
    for reference in (False, True):
        last = simulate(s, _reference=reference).requests[-1]
        assert last.cache_break is not None
        assert (last.cache_break.reason, last.cache_break.position) == ("restart", 0)
        assert last.cache_break.api_reason == "system_changed"
        assert last.recorded_miss is not None and last.recorded_miss.reason == "restart"


def test_a_turn_closed_interrupted_or_without_hooks_is_no_restart(tmp_path: Path) -> None:
    # its Stop hooks ran
    assert history_resends(_unhooked_turn(tmp_path, lambda w, a: [_stop_hooks(w, a)])) == {}
    # the turn's duration line closes it as the summary does: a session whose Stop hooks went
    # away part-way writes only that one after each turn
    assert history_resends(_unhooked_turn(tmp_path, lambda w, a: [_turn_duration(w, a)])) == {}
    # interrupted: no Stop hook runs after an interruption
    note = [{"type": "text", "text": "[Request interrupted by user]"}]
    assert history_resends(_unhooked_turn(tmp_path, lambda w, a: [w.user(a, note)])) == {}

    # a <synthetic> limit message ends the turn, no Stop hook runs either
    def limit(w: shapes.Writer, a: str) -> list[str]:
        rec = w.base("assistant", a)
        rec["message"] = {
            "id": "synthetic-1",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": "You've hit your session limit"}],
        }
        return [w.add(rec)]

    assert history_resends(_unhooked_turn(tmp_path, limit)) == {}
    # a session that writes no summary lines (no Stop hooks) shows nothing
    assert history_resends(_unhooked_turn(tmp_path, lambda w, a: [], hooks=False)) == {}


def _tool_search(tmp_path: Path, version: str, loads: int = 1) -> LoadedSession:
    """A tool loop, then ``loads`` tool searches (``ToolSearch`` results of ``tool_reference``
    blocks, written by Claude Code ``version``), each answered by a response whose usage read
    the whole previous prompt."""
    w = shapes.Writer()
    u = w.user(None, "Track the work in tasks.")
    last = shapes.grow(w, u, 6, 0, 20_000, 2_000)
    total = 32_000
    for k in range(loads):
        tid = f"toolu_search_{k}"
        a = w.assistant(
            last,
            [{"type": "tool_use", "id": tid, "name": "ToolSearch", "input": {"query": "select:X"}}],
            (3, total, 200),
            f"msg_search_{k}",
        )
        total += 200
        ref = [{"type": "tool_reference", "tool_name": f"Tool{k}"}]
        last = w.user(
            a, [{"type": "tool_result", "tool_use_id": tid, "content": ref}], version=version
        )
    w.assistant(last, [{"type": "text", "text": "Loaded."}], (3, total, 300), "msg_after")
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_an_old_clients_first_tool_search_changes_the_tools(tmp_path: Path) -> None:
    """Claude Code before 2.1.209 changed its tools when the session's first tool search
    loaded deferred tools (the API diagnosed ``tools_changed``): that request reads the head
    and writes the history again; a later search changes nothing."""
    s = _tool_search(tmp_path, "2.1.179", loads=2)
    found = history_resends(s)
    assert list(found.values()) == ["tools"]
    log = simulate(s)
    broke = [r for r in log.requests if r.cache_break is not None and r.index]
    assert len(broke) == 1
    brk = broke[0].cache_break
    assert brk is not None and (brk.reason, brk.position, brk.api_reason) == (
        "tools",
        0,
        "tools_changed",
    )
    assert broke[0].message_ids[-1] == min(found)
    assert broke[0].cache_read < log.static_tokens


def test_a_newer_clients_tool_search_keeps_the_cache(tmp_path: Path) -> None:
    assert history_resends(_tool_search(tmp_path, "2.1.209")) == {}
    assert all(
        r.cache_break is None for r in simulate(_tool_search(tmp_path, "2.1.217")).requests[1:]
    )


def test_a_first_tool_search_of_2_1_101_to_2_1_110_keeps_the_tools(tmp_path: Path) -> None:
    """Claude Code 2.1.101-2.1.110 kept its tools at the first tool search (five sessions of
    unseen4 read the whole previous prompt there); 2.1.91 and 2.1.112 changed them."""
    for version in ("2.1.101", "2.1.110"):
        assert history_resends(_tool_search(tmp_path, version)) == {}
    for version in ("2.1.91", "2.1.112"):
        assert list(history_resends(_tool_search(tmp_path, version)).values()) == ["tools"]


def _first_prompt(tmp_path: Path, version: str) -> LoadedSession:
    """A first prompt written by Claude Code ``version`` whose request read the head warm,
    wrote the rest of the system prompt and billed its messages uncached (as 2.1.159-2.1.205
    did), then a tool loop whose first request wrote them."""
    path = shapes.first_prompt_loop(
        tmp_path / "s.jsonl", version, (6_000, 10_000, 4_000), (3, 14_000, 8_000), 22_000
    )
    return load_session(path)


def test_a_first_request_of_2_1_159_to_2_1_205_caches_its_tools_and_system_only(
    tmp_path: Path,
) -> None:
    from ctxview.core.requests.points import first_messages_uncached

    s = _first_prompt(tmp_path, "2.1.179")
    assert first_messages_uncached(s)
    for kw in ({}, {"strategy": "seed", "max_context_messages": 4}):
        log = simulate(s, **kw)
        first, second = log.requests[:2]
        assert first.uncached > 0 and first.cache_read + first.cache_write == log.static_tokens
        # the next request reads the whole of what the first cached, as its usage recorded it
        # (10,000 read + 4,000 written), and writes the messages
        assert second.cache_read == 14_000
        assert second.cache_write == second.input_tokens - 14_000
        assert simulate(s, _reference=True, **kw).requests == log.requests
    for version in ("2.1.150", "2.1.209"):
        other = _first_prompt(tmp_path, version)
        assert not first_messages_uncached(other)
        assert simulate(other).requests[0].uncached == 0


def _away(tmp_path: Path, recap: bool) -> LoadedSession:
    """A tool loop on 5-minute entries, a turn's end, (Claude Code's recap of it 184 s later,
    an ``away_summary`` line,) and a prompt 450 s after the last response whose request read
    the whole previous prompt."""
    w = shapes.Writer()
    u = w.user(None, "Open the PR and wait for the review.")
    last = shapes.grow(w, u, 6, 0, 20_000, 2_000)
    end = w.assistant(last, [{"type": "text", "text": "Waiting."}], (3, 32_000, 200), "msg_end")
    for rec in w.records:
        usage = rec.get("message", {}).get("usage")
        if usage:  # 5-minute entries
            usage["cache_creation"] = {
                "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                "ephemeral_1h_input_tokens": 0,
            }
    parent = end
    if recap:
        away = w.base("system", end, 184)
        away.update(subtype="away_summary", content="We opened the PR; the review is pending.")
        parent = w.add(away)
    q = w.base("user", parent, 450 - 184 if recap else 450)
    q["message"] = {"role": "user", "content": "Any review yet?"}
    w.add(q)
    w.assistant(q["uuid"], [{"type": "text", "text": "No."}], (3, 32_200, 100), "msg_after", gap=2)
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_claude_codes_recap_while_the_user_was_away_refreshes_the_cache(tmp_path: Path) -> None:
    from ctxview.core.requests.points import cache_refreshes

    without = simulate(_away(tmp_path, recap=False)).requests[-1]
    assert without.cache_break is not None and without.cache_break.reason == "ttl"
    s = _away(tmp_path, recap=True)
    assert len(cache_refreshes(s)) == 1
    for kw in ({}, {"strategy": "seed", "max_context_messages": 100}):
        last = simulate(s, **kw).requests[-1]
        assert last.cache_break is None and last.cache_write < last.input_tokens / 2
        assert simulate(s, _reference=True, **kw).requests[-1] == last


def test_a_longer_lived_entry_past_the_lookback_is_not_read(tmp_path: Path) -> None:
    """1-hour entries, then 5-minute ones for 12 more tool rounds (24 messages: more blocks than
    the API looks back from a breakpoint), then a prompt 400 s later: the 5-minute entries
    expired, and the 1-hour one, still live, ends too far back to be found (as the API did on
    diag4 entgraph_fc71f2f6 #127, reading only the head): a break."""
    w = shapes.Writer()
    u = w.user(None, "Profile the diff command.")
    last = shapes.grow(w, u, 4, 0, 20_000, 2_000)
    one_hour = len(w.records)
    last = shapes.grow(w, last, 12, 4, 28_000, 1_000)
    for rec in w.records[one_hour:]:
        usage = rec.get("message", {}).get("usage")
        if usage:  # 5-minute entries from here on
            usage["cache_creation"] = {
                "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                "ephemeral_1h_input_tokens": 0,
            }
    q = w.base("user", last, 400)
    q["message"] = {"role": "user", "content": "And now?"}
    w.add(q)
    w.assistant(q["uuid"], [{"type": "text", "text": "Faster."}], (3, 10_000, 30_100), "m_end")
    s = load_session(shapes.write(tmp_path / "s.jsonl", w.records))
    for reference in (False, True):
        last_req = simulate(s, _reference=reference).requests[-1]
        assert last_req.cache_break is not None and last_req.cache_break.reason == "ttl"
        assert last_req.predicted_break


def _expired(tmp_path: Path, version: str) -> LoadedSession:
    """A 5-minute session written by Claude Code ``version`` whose first request read 16,000
    tokens warm from other sessions, then a prompt 20 minutes after the last response: its
    request read those 16,000 again and wrote the rest."""
    w = shapes.Writer()
    u = w.user(None, "Fix the failing build.")
    a = w.assistant(u, [{"type": "text", "text": "Looking."}], (3, 16_000, 4_000), "msg_first")
    q = w.user(a, "Go on.")
    last = shapes.grow(w, q, 6, 0, 20_200, 2_000)
    end = w.assistant(last, [{"type": "text", "text": "Done."}], (3, 32_200, 200), "msg_end")
    w.seconds += 1_200
    p = w.user(end, "Now commit it.")
    w.assistant(p, [{"type": "text", "text": "Committed."}], (3, 16_000, 15_200), "msg_after")
    for rec in w.records:
        rec["version"] = version
        usage = rec.get("message", {}).get("usage")
        if isinstance(usage, dict):
            usage["cache_creation"] = {
                "ephemeral_5m_input_tokens": usage["cache_creation_input_tokens"],
                "ephemeral_1h_input_tokens": 0,
            }
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def test_a_newer_clients_expired_5_minute_entry_still_reads_the_warm_head(tmp_path: Path) -> None:
    """Claude Code from 2.1.101 on: once a 5-minute session's own entries expired, its next
    request reads the prefix its first request read warm (unseen4, 2.1.112 and 2.1.199: four
    requests), as 1-hour sessions do; a 2.1.39 session's read nothing."""
    from ctxview.core.requests.points import head_kept_warm

    s = _expired(tmp_path, "2.1.199")
    assert head_kept_warm(s)
    for reference in (False, True):
        log = simulate(s, _reference=reference)
        first, last = log.requests[0], log.requests[-1]
        assert last.cache_break is not None and last.cache_break.reason == "ttl"
        assert last.cache_read == first.cache_read == 16_000
        assert not last.predicted_break and not last.recorded_break
    old = _expired(tmp_path, "2.1.39")
    assert not head_kept_warm(old)
    assert simulate(old).requests[-1].cache_read == 0
