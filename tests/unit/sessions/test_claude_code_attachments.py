"""Claude Code 2.1.2xx's ``attachment`` lines: what they send is added to the user message they
follow (a changed file's lines, a rules file, a hook's context, the task reminder) and priced with
it; lines shown to the user only or carrying no text send nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxview.core.content import content_texts
from ctxview.core.requests import simulate
from ctxview.sessions import LoadedSession, load_session
from ctxview.sessions.claude_code_attachments import attachment_text
from tests.support import claude_code_shapes as shapes

SNIPPET = "".join(f"{k}\tfunc f{k}() {{ return {k} }}\n" for k in range(1, 400))


def _session(tmp_path: Path, attachments: list[dict[str, Any]]) -> LoadedSession:
    """A tool round whose result is followed by ``attachments`` (each an attachment line, the
    next response hanging off the last), then one more response."""
    w = shapes.Writer()
    u = w.user(None, "Format the code.")
    last = shapes.grow(w, u, 4, 0, 20_000, 2_000)
    for att in attachments:
        rec = w.base("attachment", last, 1)
        rec["attachment"] = att
        last = w.add(rec)
    w.assistant(last, [{"type": "text", "text": "Done."}], (3, 28_000, 900), "msg_last")
    return load_session(shapes.write(tmp_path / "s.jsonl", w.records))


def _texts(s: LoadedSession) -> list[str]:
    return [t for m in s.messages for t in content_texts(m.get("content")) if isinstance(t, str)]


def test_a_file_changed_by_a_linter_is_sent_with_the_tool_result_it_follows(
    tmp_path: Path,
) -> None:
    edited = {"type": "edited_text_file", "filename": "D:\\src\\config.go", "snippet": SNIPPET}
    plain = _session(tmp_path, [])
    s = _session(tmp_path, [edited, {"type": "command_permissions", "allowedTools": []}])
    assert len(s.messages) == len(plain.messages)
    reminder = [t for t in _texts(s) if "config.go was modified" in t]
    assert len(reminder) == 1 and reminder[0].startswith("<system-reminder>")
    assert SNIPPET in reminder[0]
    # the last user message holds the tool result, then the reminder
    last_user = s.messages[-2]["content"]
    assert [b["type"] for b in last_user] == ["tool_result", "text"]
    # the request after it is priced with the changed lines (the same recorded usage: the
    # fitted rates differ, the estimate still grows by their thousands of tokens)
    grew = simulate(s).requests[-1].input_tokens - simulate(plain).requests[-1].input_tokens
    assert grew > 1_000


def test_what_each_attachment_sends() -> None:
    def text(att: dict[str, Any]) -> str | None:
        return attachment_text({"type": "attachment", "attachment": att})

    memory = {
        "type": "nested_memory",
        "path": "D:\\repo\\.claude\\rules\\go.md",
        "content": {"path": "x", "type": "Project", "content": "Use gofmt."},
    }
    assert "Use gofmt." in (text(memory) or "")
    hook = {
        "type": "hook_additional_context",
        "content": ["CAVEMAN MODE ACTIVE."],
        "hookName": "UserPromptSubmit",
    }
    assert "CAVEMAN MODE ACTIVE." in (text(hook) or "")
    assert "TaskCreate" in (text({"type": "task_reminder", "content": [], "itemCount": 0}) or "")
    queued = {"type": "queued_command", "prompt": "also run the tests"}
    assert "also run the tests" in (text(queued) or "")
    # shown to the user only, or no text for the model
    assert text({"type": "hook_system_message", "content": "Entire CLI will link this."}) is None
    assert text({"type": "command_permissions", "allowedTools": []}) is None
    assert text({"type": "auto_mode", "autoModeConsentFlow": False}) is None
    assert text({"type": "a_type_not_known_yet", "content": "x"}) is None
    assert attachment_text({"type": "user", "message": {}}) is None
