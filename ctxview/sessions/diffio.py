"""``ctxview diff``: the request bodies of two files, compared (see :mod:`ctxview.core.diff`).

A request body is compared as it is; any other file (a ctxview session, bare messages, a Claude
Code transcript) as the request ctxview would send next: its final window, system and tools.
Headless: no Textual, no SDK.
"""

from __future__ import annotations

import json
from typing import Any

from ctxview.core.diff import RequestDiff
from ctxview.sessions.readers import load_session
from ctxview.sessions.replay import replay
from ctxview.textfmt import fmt_tokens, one_line

#: the fields a body without ``messages`` holds its conversation in (Gemini's ``contents`` and
#: system instruction, OpenAI Responses' ``input`` and ``instructions``)
_CONVERSATION = frozenset(
    ("contents", "systemInstruction", "system_instruction", "input", "instructions")
)


def side_of(path: str, fmt: str | None, defaults: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """(the request body a file stands for, the provider it goes to); raises SessionError or
    ValueError. A Gemini or OpenAI Responses body is compared in ctxview's one message model:
    its conversation as ``messages``, ``system`` and ``tools`` (compared message by message, and
    where the cached prefixes part), every other field as that API's body has it. A body with
    ``messages`` (OpenAI Chat Completions') is compared as it is: its indices are the wire's."""
    session = load_session(path, fmt)
    rep = replay(session, defaults=defaults)
    body = rep.request_body(defaults)
    if "messages" not in body:
        body = {k: v for k, v in body.items() if k not in _CONVERSATION and k != "tools"}
        body["messages"] = rep.window_messages()
        if rep.system:
            body["system"] = rep.system
        if session.tools:
            body["tools"] = session.tools
    return body, session.provider


def _q(text: Any) -> str:
    return '"' + one_line(str(text), 80) + '"'


def _json(value: Any) -> str:
    """A field's value as the body's JSON writes it (``true``, ``null``, double quotes), not as
    Python prints it (``True``, ``None``); an absent field is ``null``."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = str(value)
    return one_line(text, 60)


def render(diff: RequestDiff) -> list[str]:
    """The diff as lines of text (untrusted text made visible and kept on one line)."""
    lines: list[str] = []
    if diff.identical:
        return ["identical requests"]
    for f in diff.fields:
        lines.append(f"field {one_line(str(f['key']))}: {_json(f['a'])} → {_json(f['b'])}")
    t = diff.tools
    for n in t["added"]:
        lines.append(f"tools: + {one_line(n)} added")
    for n in t["removed"]:
        lines.append(f"tools: - {one_line(n)} removed")
    for c in t["changed"]:
        lines.append(
            f"tools: ~ {one_line(c['name'])} changed at character {c['at']}: "
            f"{_q(c['a'])} → {_q(c['b'])}"
        )
    if diff.system is not None:
        s = diff.system
        lines.append(f"system: changed at character {s['at']}: {_q(s['a'])} → {_q(s['b'])}")
    for m in diff.messages:
        if m.op == "removed":
            lines.append(f"- A messages[{m.a_index}] {one_line(m.role)} removed")
        elif m.op == "added":
            lines.append(f"+ B messages[{m.b_index}] {one_line(m.role)} added")
        else:
            lines.append(
                f"~ A messages[{m.a_index}] → B messages[{m.b_index}] {one_line(m.role)} changed"
            )
            for b in m.blocks:
                if b.op == "changed":
                    where = f"content[{b.a_block}]" if b.a_block is not None else "message"
                    lines.append(
                        f"    ~ {where} {one_line(b.type)} at character {b.at}: "
                        f"{_q(b.a)} → {_q(b.b)}"
                    )
                elif b.op == "removed":
                    lines.append(f"    - content[{b.a_block}] {one_line(b.type)} removed")
                else:
                    lines.append(f"    + content[{b.b_block}] {one_line(b.type)} added")
    c = diff.cache
    if c is None:
        lines.append("prompt cache: the prefixes never part")
    else:
        lines.append(
            f"prompt cache: the prefixes part at {c.describe()} "
            f"(tools → system → messages); ~{fmt_tokens(c.shared_tokens)} tokens shared"
        )
    return lines
