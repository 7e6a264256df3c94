"""``--redact`` on ``export`` and ``repair``: secrets out of what is written, counted, noted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli import run
from tests.support.paths import SAMPLES
from tests.support.secrets import secrets

KEY = next(s for s in secrets() if s.kind == "anthropic-key")
PASSWORD = next(s for s in secrets() if s.kind == "url-password")


def _body(tmp_path: Path, thinking: str = "let me look") -> Path:
    body = {
        "model": "claude-sonnet-4-5",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": KEY.text},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": thinking, "signature": "c2ln" * 40},
                    {"type": "tool_use", "id": "toolu_1", "name": "sh", "input": {"cmd": "env"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "toolu_1", "content": PASSWORD.text}
                ],
            },
        ],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    return path


def test_export_keeps_secrets_unless_asked(capsys, tmp_path):
    path = _body(tmp_path)
    code, out, err = run(capsys, "export", str(path))
    assert code == 0
    assert KEY.secret in out and "REDACTED" not in out and "redacted" not in err


def test_export_redact_replaces_secrets_and_says_how_many(capsys, tmp_path):
    path = _body(tmp_path)
    code, out, err = run(capsys, "export", str(path), "--redact")
    assert code == 0
    body = json.loads(out)
    assert body["messages"][0]["content"] == KEY.redacted
    assert body["messages"][2]["content"][0]["content"] == PASSWORD.redacted
    assert KEY.secret not in out and PASSWORD.secret not in out
    assert "ctxview: redacted 2 secrets (1 anthropic-key, 1 url-password)" in err


def test_export_redact_to_a_file_adds_no_field_the_api_would_refuse(capsys, tmp_path):
    path = _body(tmp_path)
    plain, redacted = tmp_path / "plain.json", tmp_path / "redacted.json"
    assert run(capsys, "export", str(path), "-o", str(plain))[0] == 0
    assert run(capsys, "export", str(path), "--redact", "-o", str(redacted))[0] == 0
    a, b = json.loads(plain.read_text()), json.loads(redacted.read_text())
    assert list(a) == list(b)
    assert KEY.secret in plain.read_text() and KEY.secret not in redacted.read_text()


def test_a_secret_in_a_thinking_block_is_redacted_with_a_warning(capsys, tmp_path):
    path = _body(tmp_path, thinking=f"the user pasted {KEY.secret}, I will not repeat it")
    code, out, err = run(capsys, "export", str(path), "--redact")
    assert code == 0
    assert KEY.secret not in out
    assert (
        f"warning: {path}: messages.1.content.0: a secret was redacted in a thinking block" in err
    )


def _session_with_secret(tmp_path: Path) -> Path:
    doc = json.loads((SAMPLES / "agent_loop.json").read_text())
    doc["transcript"][0]["message"]["content"] = KEY.text
    path = tmp_path / "session.json"
    path.write_text(json.dumps(doc))
    return path


def test_repair_redact_notes_the_count_in_a_session_file(capsys, tmp_path):
    from ctxview.sessions import load_session

    path = _session_with_secret(tmp_path)
    out_path = tmp_path / "out.json"
    code, _, err = run(capsys, "repair", str(path), "--redact", "-o", str(out_path))
    assert code == 0
    doc = json.loads(out_path.read_text())
    assert doc["redacted"] == {
        "total": 1,
        "counts": {"anthropic-key": 1},
        "note": "redacted 1 secret (1 anthropic-key)",
    }
    assert doc["transcript"][0]["message"]["content"] == KEY.redacted
    assert "ctxview: redacted 1 secret (1 anthropic-key)" in err
    assert load_session(out_path).messages[0]["content"] == KEY.redacted


def test_repair_json_reports_the_redaction_or_null(capsys, tmp_path):
    path = _session_with_secret(tmp_path)
    out_path = tmp_path / "out.json"
    code, out, _ = run(capsys, "repair", str(path), "--json", "--redact", "-o", str(out_path))
    report: dict[str, Any] = json.loads(out)
    assert code == 0 and report["redacted"]["counts"] == {"anthropic-key": 1}
    code, out, _ = run(capsys, "repair", str(path), "--json", "--force", "-o", str(out_path))
    assert json.loads(out)["redacted"] is None
    assert KEY.secret in out_path.read_text()


def test_repair_redact_rewrites_its_input_with_force_even_with_nothing_to_fix(capsys, tmp_path):
    path = _body(tmp_path)
    code, _, _ = run(capsys, "repair", str(path), "--redact", "--force", "-o", str(path))
    assert code == 0
    assert KEY.secret not in path.read_text()
