"""Builders of valid agent-loop message sequences, shared by tests and benchmarks."""

from __future__ import annotations

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
def agent_events(draw: Any, live_changes: bool = True) -> list[tuple[str, Any]]:
    """A generated agent loop as events: ``("msg", message)``, ``("max", n)``, ``("strategy", s)``.

    Turns are plain (user, assistant), tool rounds of 1-3 parallel calls (assistant tool_use x k,
    then one user message of k tool_results), failed replies (the user's message stays and the next
    user message follows it: consecutive user messages, after a question or after tool results),
    and thinking blocks before text or tool calls. Every generated history is valid for the API
    (consecutive user turns are merged by it).
    """
    events: list[tuple[str, Any]] = []
    n_tool = 0
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
