"""Generated OpenAI conversations: Chat Completions messages and Responses input items, valid
as the API takes them (the tests damage them where they need invalid ones)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st


@st.composite
def chat_conversation(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A valid Chat Completions conversation: user turns, each answered by rounds of parallel
    tool calls (their tool messages in any order) and a final text."""
    wire: list[dict[str, Any]] = []
    n = 0
    for _ in range(draw(st.integers(1, 5))):
        wire.append({"role": "user", "content": draw(st.sampled_from(["go", "", "more"]))})
        for _ in range(draw(st.integers(0, 3))):
            ids = [f"call_{n + k}" for k in range(draw(st.integers(1, 3)))]
            n += len(ids)
            wire.append(
                {
                    "role": "assistant",
                    "content": draw(st.sampled_from([None, "", "working"])),
                    "tool_calls": [
                        {"id": i, "type": "function", "function": {"name": "f", "arguments": "{}"}}
                        for i in ids
                    ],
                }
            )
            for i in draw(st.permutations(ids)):
                wire.append({"role": "tool", "tool_call_id": i, "content": "ok"})
        wire.append({"role": "assistant", "content": "done"})
    return wire


@st.composite
def responses_conversation(draw: st.DrawFn) -> list[Any]:
    """A valid Responses input as Codex writes it: developer and user messages, reasoning,
    parallel function calls, their outputs in any order, developer messages between a call and
    its output (Codex adds one when the sandbox changes mid-call)."""
    items: list[Any] = [{"type": "message", "role": "developer", "content": "rules"}]
    n = 0
    # a stored response's items carry ids (rs_, fc_, msg_); Codex sends them without
    stored = draw(st.booleans())

    def item(kind: str, **fields: Any) -> dict[str, Any]:
        nonlocal n
        n += 1
        return {"type": kind, **({"id": f"{kind[:2]}_{n}"} if stored else {}), **fields}

    for _ in range(draw(st.integers(1, 4))):
        items.append({"type": "message", "role": "user", "content": "task"})
        for _ in range(draw(st.integers(0, 3))):
            items.append(item("reasoning", summary=[], encrypted_content="x"))
            ids = [f"call_{n + k}" for k in range(draw(st.integers(1, 2)))]
            for i in ids:
                items.append(item("function_call", call_id=i, name="f", arguments="{}"))
            for i in draw(st.permutations(ids)):
                for _ in range(draw(st.integers(0, 2))):
                    items.append({"type": "message", "role": "developer", "content": "note"})
                items.append({"type": "function_call_output", "call_id": i, "output": "ok"})
        if draw(st.booleans()):
            items.append(item("reasoning", summary=[], encrypted_content="x"))
        items.append(item("message", role="assistant", content="done"))
    return items
