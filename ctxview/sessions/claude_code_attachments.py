"""What Claude Code sends for the ``attachment`` lines of its transcripts (2.1.2xx): context it
adds to the user message they follow, as ``<system-reminder>`` text the transcript does not show
as a message — a file a linter or the user changed (``edited_text_file``: its changed lines), a
rules file the model's reads pulled in (``nested_memory``), a hook's additional context, a prompt
queued while a turn ran, the listings of skills, agents, deferred tools and MCP servers'
instructions as they change, the task reminder. The requests bill them: in the fresh diagnosis
transcripts the recorded prompt grew by 3,933 and 2,625 tokens beyond the visible messages at
the two requests after an ``edited_text_file`` of ~8,200 characters, and by a median ~140 tokens
after each ``task_reminder``.

The wording is Claude Code's as far as its transcripts and published prompts show it; where they
do not (the task reminder), it is an approximation of the same length. Lines that are shown to the
user only (``hook_system_message``) or carry no text for the model (``command_permissions``,
``auto_mode``) send nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: the reminder Claude Code adds when its task tools went unused for a while (``task_reminder``
#: with no items); an approximation of its wording, of its length (the recorded prompts grew by
#: a median ~140 tokens after one)
TASK_REMINDER = (
    "The task tools haven't been used recently. If you're working on tasks that would benefit "
    "from tracking progress, consider using TaskCreate to add new tasks and TaskUpdate to update "
    "task status (set to in_progress when starting, completed when done). Also consider cleaning "
    "up the task list if it has become stale. Only use these if relevant to the current work. "
    "This is just a gentle reminder - ignore if not applicable. Make sure that you NEVER mention "
    "this reminder to the user"
)
EDITED_FILE = (
    "Note: {filename} was modified, either by the user or by a linter. This change was "
    "intentional, so make sure to take it into account as you proceed (ie. don't revert it "
    "unless the user asks you to). Don't tell the user this, since they are already aware. Here "
    "are the relevant changes (shown with line numbers):\n{snippet}"
)


def _strs(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _text(att: Mapping[str, Any]) -> str | None:
    kind = att.get("type")
    if kind == "edited_text_file":
        snippet = att.get("snippet")
        if isinstance(snippet, str) and snippet:
            return EDITED_FILE.format(filename=att.get("filename", ""), snippet=snippet)
        return None
    if kind == "nested_memory":
        content = att.get("content")
        inner = content.get("content") if isinstance(content, Mapping) else content
        if isinstance(inner, str) and inner:
            return f"Contents of {att.get('path', '')}:\n\n{inner}"
        return None
    if kind in ("hook_additional_context", "hook_success"):
        content = att.get("content")
        text = "\n".join(_strs(content)) if isinstance(content, list) else content
        if isinstance(text, str) and text.strip():
            return f"{att.get('hookName', 'hook')} hook additional context: {text}"
        return None
    if kind == "queued_command":
        prompt = att.get("prompt")
        return prompt if isinstance(prompt, str) and prompt else None
    if kind == "task_reminder":
        items = att.get("content")
        if isinstance(items, list) and items:
            return "The task list:\n" + "\n".join(str(i) for i in items)
        return TASK_REMINDER
    if kind == "skill_listing":
        content = att.get("content")
        if isinstance(content, str) and content:
            return "The following skills are available for use with the Skill tool:\n\n" + content
        return None
    if kind in ("deferred_tools_delta", "agent_listing_delta"):
        added = _strs(att.get("addedLines")) or _strs(att.get("addedNames"))
        removed = _strs(att.get("removedNames")) or _strs(att.get("removedTypes"))
        parts = [*added, *(f"No longer available: {n}" for n in removed)]
        return "\n".join(parts) if parts else None
    if kind == "mcp_instructions_delta":
        parts = _strs(att.get("addedBlocks"))
        return "\n\n".join(parts) if parts else None
    return None


def attachment_text(record: Mapping[str, Any]) -> str | None:
    """The ``<system-reminder>`` text Claude Code sends for an ``attachment`` line, or None when
    it sends none (or the line is not one)."""
    att = record.get("attachment")
    if not isinstance(att, Mapping):
        return None
    text = _text(att)
    return None if text is None else f"<system-reminder>\n{text}\n</system-reminder>"
