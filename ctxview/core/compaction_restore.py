"""What Claude Code sends again after it compacts a conversation, sized from what the transcript
showed of it: the part of a post-compaction segment's tools + system + context that the first
segment did not carry.

Claude Code documents what comes back after a compaction (code.claude.com/docs/en/context-window,
"What survives compaction": its table, and the J. Gravelle write-up quoting it as read on
2026-10-19): the system prompt, the project-root CLAUDE.md and auto memory as before (they are
in the first segment's static too); "Files Claude read or edited: up to five come back, most recently
modified first. A file over 5,000 tokens comes back as a path with no content" (Claude Code
reads each from disk then, through its Read tool with that limit: the tool counts the file's
content, and the attachment sends it as a Read result, its lines numbered); the plan written
in plan mode, re-injected from disk; invoked skill bodies "Re-injected, capped at 5,000 tokens
per skill and 25,000 tokens total; oldest dropped first". The todo list persists too (not in
that table; reported by users, e.g. the torqsoftware.com note of 2026-01-20 on Numman Ali's
plan-mode workflow: "plans and To-Do items persist across compaction events"). None of it is logged
in the transcript, but the transcript shows each part as it last was: the files' ``Read`` results
and ``Write`` contents with the edits made since, the plan (the ``ExitPlanMode`` input, or the
prompt that opens :data:`PLAN_OPENING`), the skill bodies (a user text opening
:data:`SKILL_OPENING`) and the last ``TodoWrite`` list. :func:`restored_after` sizes them under
the calibrated rates, one pass over the messages for every compaction.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.core.calibrate import Rates, message_features
from ctxview.core.content import content_texts

#: the files Claude Code restores: this many, each at most this many tokens (a larger file comes
#: back as its path alone), this many in all
RESTORE_FILES = 5
RESTORE_TOKENS_PER_FILE = 5_000
RESTORE_TOKENS = 50_000
#: invoked skills: each at most this many tokens, this many in all, the newest kept
SKILL_TOKENS_PER_SKILL = 5_000
SKILL_TOKENS = 25_000
#: the tools whose ``file_path`` Claude Code tracks as read or edited
FILE_TOOLS = frozenset({"Read", "Edit", "MultiEdit", "Write", "NotebookEdit"})
#: how Claude Code opens the body of an invoked skill (a user text after the ``Skill`` call)
SKILL_OPENING = "Base directory for this skill:"
#: how Claude Code opens the prompt of a session that implements a plan written in plan mode
#: (its "clear context and implement" choice): the plan follows, and its file is the session's
PLAN_OPENING = "Implement the following plan:"
#: files Claude Code sends as context of their own, never among the restored ones
MEMORY_FILES = ("CLAUDE.md", "CLAUDE.local.md")
#: a ``Read`` result's line: its number, then the arrow (the indent is spaces and tabs only: a
#: pattern that let it run over line ends would rescan every run of blank lines from each of its
#: lines, quadratic in a hostile result)
LINE_NUMBER = re.compile(r"^[ \t]*(\d+)\u2192", re.M)
#: the same prefix, to measure a ``Read`` result's content without it
LINE_PREFIX = re.compile(r"^[ \t]*\d+\u2192", re.M)


@dataclass
class _State:
    """What the transcript last showed, up to a point."""

    #: file path -> its estimated tokens as Claude Code sends it back, its lines numbered (None:
    #: never shown whole or in part); insertion order is recency (a path moved to the end when
    #: read or edited again)
    files: dict[str, int | None] = field(default_factory=dict)
    #: file path -> the tokens of its content alone, what the per-file limit is measured on
    content: dict[str, int] = field(default_factory=dict)
    skills: dict[str, int] = field(default_factory=dict)
    plan: int = 0
    todo: int = 0

    def total(self) -> int:
        recent = [(p, t) for p, t in list(self.files.items())[-RESTORE_FILES:] if t is not None]
        files = min(
            RESTORE_TOKENS,
            sum(t for p, t in recent if self.content.get(p, t) <= RESTORE_TOKENS_PER_FILE),
        )
        skills = 0
        for t in reversed(list(self.skills.values())):
            t = min(t, SKILL_TOKENS_PER_SKILL)
            if skills + t > SKILL_TOKENS:
                break
            skills += t
        return files + skills + self.plan + self.todo


def _text_tokens(text: str, rates: Rates, result: bool = False) -> int:
    block: dict[str, Any] = (
        {"type": "tool_result", "content": text} if result else {"type": "text", "text": text}
    )
    return rates.tokens(message_features({"role": "user", "content": [block]}))


def _read_size(text: str, tokens: int, partial: bool) -> int | None:
    """A file's tokens from a ``Read`` result: the result's own when the read was whole; of a
    part (``offset``/``limit``), the part's tokens per line times the last line number it showed
    (the file has at least that many lines)."""
    if not partial:
        return tokens
    numbers = LINE_NUMBER.findall(text[-2_000:]) or LINE_NUMBER.findall(text)
    shown = len(LINE_NUMBER.findall(text))
    if not numbers or not shown:
        return None
    return round(tokens / shown * int(numbers[-1]))


def restored_after(
    messages: Sequence[Mapping[str, Any]], ends: Iterable[int], rates: Rates
) -> dict[int, int]:
    """Per compaction start of ``ends``, the tokens Claude Code re-attaches after it, as the
    messages before it last showed them (see the module docstring)."""
    state = _State()
    uses: dict[str, tuple[str, Mapping[str, Any]]] = {}  # tool_use id -> (name, input)
    todo = sorted(set(ends))
    out: dict[int, int] = {}
    k = 0
    for i, m in enumerate(messages):
        while k < len(todo) and todo[k] <= i:
            out[todo[k]] = state.total()
            k += 1
        if k == len(todo):
            break
        content = m.get("content")
        if isinstance(content, str) and m.get("role") == "user":
            _note_prompt(state, content, rates)
        if not isinstance(content, list):
            continue
        for b in content:
            if not isinstance(b, dict):
                continue
            kind = b.get("type")
            if kind == "tool_use" and isinstance(b.get("id"), str):
                _note_use(state, uses, b, rates)
            elif kind == "tool_result" and b.get("tool_use_id") in uses:
                _note_result(state, uses[b["tool_use_id"]], b, rates)
            elif kind == "text" and m.get("role") == "user" and isinstance(b.get("text"), str):
                _note_prompt(state, b["text"], rates)
    for e in todo[k:]:
        out[e] = state.total()
    return out


def _note_prompt(state: _State, text: str, rates: Rates) -> None:
    """A user text: a plan to implement (:data:`PLAN_OPENING`), or a skill's body."""
    if text.startswith(PLAN_OPENING):
        state.plan = _text_tokens(text[len(PLAN_OPENING) :].lstrip(), rates)
    elif text.startswith(SKILL_OPENING):
        name = text[len(SKILL_OPENING) : len(SKILL_OPENING) + 300].split("\n")[0].strip()
        state.skills.pop(name, None)
        state.skills[name] = _text_tokens(text, rates)


def _note_use(
    state: _State,
    uses: dict[str, tuple[str, Mapping[str, Any]]],
    block: Mapping[str, Any],
    rates: Rates,
) -> None:
    name, inp = block.get("name"), block.get("input")
    if not isinstance(name, str) or not isinstance(inp, Mapping):
        return
    if name == "TodoWrite" and isinstance(inp.get("todos"), list):
        todos = inp["todos"]
        state.todo = _text_tokens(json.dumps(todos), rates) if todos else 0
    elif name == "ExitPlanMode" and isinstance(inp.get("plan"), str):
        state.plan = _text_tokens(inp["plan"], rates)
    elif name in FILE_TOOLS:
        uses[block["id"]] = (name, inp)


def _note_result(
    state: _State, use: tuple[str, Mapping[str, Any]], block: Mapping[str, Any], rates: Rates
) -> None:
    name, inp = use
    path = inp.get("file_path") or inp.get("notebook_path")
    if not isinstance(path, str) or block.get("is_error"):
        return
    if path.rsplit("/", 1)[-1] in MEMORY_FILES:
        return
    known = state.files.pop(path, None)
    bare = state.content.pop(path, None)
    if name == "Read":
        text = "\n".join(t for t in content_texts(block.get("content")) if isinstance(t, str))
        partial = bool(inp.get("offset") or inp.get("limit"))
        size = _read_size(text, _text_tokens(text, rates, result=True), partial)
        own = _read_size(text, _text_tokens(LINE_PREFIX.sub("", text), rates, result=True), partial)
        if size is not None:
            # a part shows at least that much of the file; a whole read, all of it
            known = max(size, known or 0) if partial else size
        if own is not None:
            bare = max(own, bare or 0) if partial else own
    elif name == "Write" and isinstance(inp.get("content"), str):
        known = bare = _text_tokens(inp["content"], rates, result=True)
    elif name in ("Edit", "MultiEdit") and known is not None:
        # Claude Code reads the file from disk when it compacts: what the transcript last showed
        # of it, with the edits made since
        edits = inp.get("edits") if name == "MultiEdit" else [inp]
        change = sum(
            _text_tokens(e["new_string"], rates, result=True)
            - _text_tokens(e["old_string"], rates, result=True)
            for e in (edits if isinstance(edits, list) else ())
            if isinstance(e, Mapping)
            and isinstance(e.get("new_string"), str)
            and isinstance(e.get("old_string"), str)
        )
        known = max(0, known + change)
        if bare is not None:
            bare = max(0, bare + change)
    state.files[path] = known
    if bare is not None:
        state.content[path] = bare
