"""Builders of valid agent-loop message sequences, shared by tests and benchmarks."""

from __future__ import annotations

import json
import random
from typing import Any

from hypothesis import strategies as st


def tool_use(tid: str, name: str = "read_file", **inp: Any) -> dict[str, Any]:
    return {"type": "tool_use", "id": tid, "name": name, "input": inp or {"path": "a.txt"}}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def agent_loop(turns: list[list[int]], seed: int = 0) -> list[dict[str, Any]]:
    """turns[i] = list of tool-call counts per round; each user turn is followed by rounds of
    (assistant tool_use x k, user tool_results) and a final assistant text."""
    rng = random.Random(seed)
    msgs: list[dict[str, Any]] = []
    n = 0
    for t, rounds in enumerate(turns):
        msgs.append({"role": "user", "content": f"instruction {t} " + "x" * rng.randint(0, 40)})
        for k in rounds:
            ids = [f"toolu_{n + i:04d}" for i in range(k)]
            n += k
            msgs.append(
                {"role": "assistant", "content": [text("let me look")] + [tool_use(i) for i in ids]}
            )
            msgs.append(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": i,
                            "content": "ok " * rng.randint(1, 30),
                            "is_error": False,
                        }
                        for i in ids
                    ],
                }
            )
        msgs.append(
            {"role": "assistant", "content": [text(("done " * rng.randint(1, 20)).strip())]}
        )
    return msgs


turns_strategy = st.lists(
    st.lists(st.integers(min_value=1, max_value=3), max_size=5), min_size=1, max_size=12
)


def thinking(t: str = "hmm") -> dict[str, Any]:
    return {"type": "thinking", "thinking": t, "signature": "sig_" + t[:8]}


@st.composite
def agent_events(
    draw: Any, live_changes: bool = True, opening_call: bool = False
) -> list[tuple[str, Any]]:
    """A generated agent loop as events: ``("msg", message)``, ``("max", n)``, ``("strategy", s)``.

    Turns are plain (user, assistant), tool rounds of 1-3 parallel calls (assistant tool_use x k,
    then one user message of k tool_results), failed replies (the user's message stays and the next
    user message follows it: consecutive user messages, after a question or after tool results),
    and thinking blocks before text or tool calls. Every generated history is valid for the API
    (consecutive user turns are merged by it). ``opening_call``: the history may open with an
    assistant message calling tools (a conversation handed over mid-loop), answered next.
    """
    events: list[tuple[str, Any]] = []
    n_tool = 0
    if opening_call and draw(st.booleans()):
        k = draw(st.integers(min_value=1, max_value=3))
        ids = [f"toolu_open_{i}" for i in range(k)]
        events.append(("msg", {"role": "assistant", "content": [tool_use(i) for i in ids]}))
        results = [{"type": "tool_result", "tool_use_id": i, "content": "ok"} for i in ids]
        events.append(("msg", {"role": "user", "content": results}))
    events.append(("msg", {"role": "user", "content": "instruction 0"}))
    for t in range(draw(st.integers(min_value=0, max_value=14))):
        think = draw(st.booleans())
        rounds = draw(st.lists(st.integers(min_value=1, max_value=3), max_size=3))
        failed_at = draw(st.sampled_from(["none", "none", "none", "start", "after_tools"]))
        if t:
            events.append(("msg", {"role": "user", "content": f"question {t}"}))
        if failed_at == "start":  # the reply failed: the user asks again
            events.append(("msg", {"role": "user", "content": f"again {t}"}))
        for k in rounds:
            ids = [f"toolu_{n_tool + i:04d}" for i in range(k)]
            n_tool += k
            blocks = ([thinking(f"t{t}")] if think else []) + [text("calling")]
            events.append(
                ("msg", {"role": "assistant", "content": blocks + [tool_use(i) for i in ids]})
            )
            events.append(
                (
                    "msg",
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": i,
                                "content": "ok",
                                "is_error": False,
                            }
                            for i in ids
                        ],
                    },
                )
            )
        if failed_at == "after_tools" and rounds:
            events.append(("msg", {"role": "user", "content": f"continue {t}"}))
        blocks = ([thinking(f"f{t}")] if think else []) + [text(f"answer {t}")]
        events.append(("msg", {"role": "assistant", "content": blocks}))
        if live_changes and draw(st.integers(0, 4)) == 0:
            events.append(("max", draw(st.integers(min_value=1, max_value=12))))
        if live_changes and draw(st.integers(0, 6)) == 0:
            events.append(
                (
                    "strategy",
                    draw(st.sampled_from(["seed", "pair-safe", "token-budget", "low-water"])),
                )
            )
    return events


#: what :func:`damaged_loops` may do to a message (each an API rule broken, or a shape to model)
DAMAGE = (
    "orphan_result",
    "duplicate_result",
    "drop_result",
    "empty_string",
    "empty_list",
    "none_content",
    "empty_text",
    "blank_text",
    "trailing_space",
    "thinking_last",
    "thinking_after_text",
    "redacted_thinking",
    "server_tool",
    "orphan_server_result",
    "mcp_tool",
    "text_before_result",
    "tool_use_in_user",
    "tool_result_in_assistant",
    "not_a_block",
    "unknown_block",
    "no_type",
    "duplicate_message",
    "system_message",
    "system_with_blocks",
    "invalid_role",
    "user_blocks_before",
    "compaction",
)


@st.composite
def damaged_loops(
    draw: Any, compaction: bool = True, invalid_roles: bool = True, max_damage: int = 8
) -> list[dict[str, Any]]:
    """A generated agent loop (``agent_events``: thinking, parallel tool calls, consecutive
    user messages) broken here and there by up to ``max_damage`` of :data:`DAMAGE`."""
    msgs: list[dict[str, Any]] = [
        json.loads(json.dumps(m))
        for kind, m in draw(agent_events(live_changes=False))
        if kind == "msg"
    ]
    kinds = [
        d
        for d in DAMAGE
        if (compaction or d != "compaction") and (invalid_roles or d != "invalid_role")
    ]
    for _ in range(draw(st.integers(0, max_damage))):
        if not msgs:
            break
        k = draw(st.integers(0, len(msgs) - 1))
        m = msgs[k]
        d = draw(st.sampled_from(kinds))
        content = m.get("content")
        blocks = content if isinstance(content, list) else [text(content or "x")]
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        if d == "orphan_result":
            msgs[k] = {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"gone_{k}", "content": "?"}],
            }
        elif d == "duplicate_result" and results:
            m["content"] = [*blocks, dict(results[0])]
        elif d == "drop_result" and results:
            m["content"] = [b for b in blocks if b is not results[-1]] or [text("no results")]
        elif d == "empty_string":
            m["content"] = ""
        elif d == "empty_list":
            m["content"] = []
        elif d == "none_content":
            m["content"] = None
        elif d == "empty_text":
            m["content"] = [*blocks, text("")]
        elif d == "blank_text":
            m["content"] = [text(" \n"), *blocks]
        elif d == "trailing_space":
            m["content"] = [*blocks, text("ends in space ")]
        elif d == "thinking_last":
            m["content"] = [*blocks, thinking("late")]
        elif d == "thinking_after_text":
            m["content"] = [text("first"), thinking("second"), *blocks]
        elif d == "redacted_thinking":
            m["content"] = [{"type": "redacted_thinking", "data": "xx"}, *blocks]
        elif d == "server_tool":
            m["content"] = [
                *blocks,
                {"type": "server_tool_use", "id": f"srv_{k}", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "tool_use_id": f"srv_{k}", "content": []},
            ]
        elif d == "orphan_server_result":
            m["content"] = [
                {"type": "web_fetch_tool_result", "tool_use_id": f"srv_{k}", "content": {}},
                *blocks,
            ]
        elif d == "mcp_tool":
            m["content"] = [
                {"type": "mcp_tool_use", "id": f"mcp_{k}", "name": "x", "server_name": "s"},
                *blocks,
                {"type": "mcp_tool_result", "tool_use_id": f"mcp_{k - 1}", "content": []},
            ]
        elif d == "text_before_result" and results:
            m["content"] = [text("here you go"), *blocks]
        elif d == "tool_use_in_user":
            m["content"] = [*blocks, tool_use(f"toolu_u{k}")]
        elif d == "tool_result_in_assistant":
            m["content"] = [{"type": "tool_result", "tool_use_id": "toolu_0000"}, *blocks]
        elif d == "not_a_block":
            m["content"] = [*blocks, "just a string"]
        elif d == "unknown_block":
            m["content"] = [{"type": "hologram"}, *blocks]
        elif d == "no_type":
            m["content"] = [*blocks, {"text": "untyped"}]
        elif d == "duplicate_message":
            msgs.insert(k, json.loads(json.dumps(m)))
        elif d == "system_message":
            msgs.insert(k, {"role": "system", "content": draw(st.sampled_from(["note", ""]))})
        elif d == "system_with_blocks":
            msgs.insert(k, {"role": "system", "content": [text(" "), tool_use("toolu_s")]})
        elif d == "invalid_role":
            msgs.insert(k, {"role": "tool", "content": "out of band"})
        elif d == "user_blocks_before":
            msgs.insert(k, {"role": "user", "content": [text("one more thing")]})
        elif d == "compaction" and m.get("role") == "assistant":
            m["content"] = [{"type": "compaction", "content": "summary so far"}, *blocks]
    return msgs
