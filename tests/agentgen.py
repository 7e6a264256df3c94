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
