"""``ctxview repair``: every file inspect rejects repairs to one inspect accepts, in its
own format, touching only the messages a problem names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.core.repair import INTERRUPTED
from tests.support.cli import run
from tests.support.paths import ACCEPTANCE, FIXTURES, ROOT

SAMPLES = ROOT / "sample_sessions"


def _window(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> tuple[int, Any]:
    code, out, _ = run(capsys, "inspect", str(path), "--json", *extra)
    return code, json.loads(out)


def test_seed_broken_sample_repairs_to_a_valid_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = SAMPLES / "agent_loop.json"
    code, before = _window(capsys, src)
    assert code == 1
    code, out, _ = run(capsys, "repair", str(src), "--dry-run", "--json")
    assert code == 0
    plan = json.loads(out)
    assert plan["fixes"] and all(
        set(f) == {"index", "code", "action", "detail", "path"} for f in plan["fixes"]
    )
    assert {f["code"] for f in plan["fixes"]} == {"orphan_tool_result"}
    assert {f["index"] for f in plan["fixes"]} == {1}
    assert not (tmp_path / "out.json").exists()
    dst = tmp_path / "out.json"
    code, _, err = run(capsys, "repair", str(src), "-o", str(dst))
    assert code == 0 and "wrote" in err
    code, after = _window(capsys, dst)
    assert code == 0 and after["format"] == "ctxview"
    # the transcript keeps every message; only window position 1 left (its results were orphans)
    assert after["messages_total"] == before["messages_total"]
    assert after["window"]["ids"] == [before["window"]["ids"][0], *before["window"]["ids"][2:]]
    saved = json.loads(dst.read_text())
    orig = json.loads(src.read_text())
    dropped = before["window"]["ids"][1]
    for rec, old in zip(saved["transcript"], orig["transcript"], strict=True):
        assert rec["message"] == old["message"]
        if rec["id"] == dropped:
            assert rec["meta"]["edited"][-1] == "dropped from the window by repair"
        else:
            assert "edited" not in (rec.get("meta") or {})


@pytest.mark.parametrize("max_", range(2, 16))
@pytest.mark.parametrize("name", ["agent_loop", "tool_errors", "thinking_image", "long_chat"])
def test_every_seed_window_of_the_samples_repairs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, name: str, max_: int
) -> None:
    src = SAMPLES / f"{name}.json"
    args = ("--max", str(max_), "--strategy", "seed")
    code, before = _window(capsys, src, *args)
    if code == 0:
        return
    dst = tmp_path / "out.json"
    code, out, _ = run(capsys, "repair", str(src), *args, "-o", str(dst), "--json")
    assert code == 0, out
    code, after = _window(capsys, dst)
    assert code == 0, after["problems"]
    fixes = json.loads(out)["fixes"]
    named = {f["index"] for f in fixes}
    saved = json.loads(dst.read_text())["transcript"]
    ids = before["window"]["ids"]
    for pos, mid in enumerate(ids):
        if "edited" in (saved[mid].get("meta") or {}):
            # a touched message sits in the turn of a problem (or the user turn after it)
            assert any(0 <= pos - i <= 2 for i in named), (pos, named)


def _rejected() -> list[Path]:
    files = sorted(FIXTURES.glob("*/*.json*")) + sorted(ACCEPTANCE.glob("*/*.json*"))
    return [f for f in files if not f.name.endswith(".error.json")]


def test_real_cases_inspect_rejects_repair(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    seen = {}
    for src in _rejected():
        code, _, _ = run(capsys, "inspect", str(src), "--json")
        if code != 1:
            continue
        dst = tmp_path / (src.stem + ".out.json")
        code, out, err = run(capsys, "repair", str(src), "-o", str(dst), "--json")
        seen[src.name] = code
        report = json.loads(out)
        if src.name == "mirascope_handles-empty-string-content_req1.json":
            # its only message is empty: dropping it leaves nothing to send, so no safe fix
            assert code == 1 and report["unfixable"][0]["code"] == "empty_content"
            assert "no safe fix" in err
            continue
        assert code == 0, (src, report)
        # read back as the format repair says it wrote (another API's file: that API's body)
        code, _, _ = run(capsys, "inspect", str(dst), "--format", report["format"])
        assert code == 0, src
    assert "cclog_edge_cases.jsonl" in seen


def test_claude_code_transcript_becomes_a_request_body(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = FIXTURES / "claude_code" / "cclog_edge_cases.jsonl"
    dst = tmp_path / "req.json"
    code, out, _ = run(capsys, "repair", str(src), "-o", str(dst), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["format"] == "request"
    assert [f["action"] for f in report["fixes"]] == ["answer_tool_use"]
    body = json.loads(dst.read_text())
    assert {"model", "max_tokens", "messages"} <= set(body)
    answers = [
        b
        for m in body["messages"]
        for b in (m["content"] if isinstance(m["content"], list) else [])
        if b.get("content") == INTERRUPTED
    ]
    assert answers and answers[0]["is_error"] is True


def _broken_request(tmp_path: Path) -> Path:
    body = {
        "model": "claude-x",
        "max_tokens": 100,
        "temperature": 0.2,
        "metadata": {"user_id": "u"},
        "system": [{"type": "text", "text": "sys"}],
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "f", "input": {}}],
            },
            {"role": "user", "content": [{"type": "text", "text": "and?"}]},
            {
                "role": "assistant",
                "content": [{"type": "text", "text": ""}, {"type": "text", "text": "ok"}],
            },
            {"role": "user", "content": "bye"},
        ],
        "tools": [{"name": "f", "input_schema": {"type": "object"}}],
    }
    src = tmp_path / "req.json"
    src.write_text(json.dumps(body))
    return src


def test_request_body_keeps_every_field_and_untouched_messages(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    src = _broken_request(tmp_path)
    code, out, err = run(capsys, "repair", str(src))
    assert code == 0 and "answer_tool_use" in err
    body = json.loads(out)
    orig = json.loads(src.read_text())
    assert {k: v for k, v in body.items() if k != "messages"} == {
        k: v for k, v in orig.items() if k != "messages"
    }
    m, o = body["messages"], orig["messages"]
    assert [m[0], m[1], m[4]] == [o[0], o[1], o[4]]
    assert m[2]["content"][0]["tool_use_id"] == "t1" and m[2]["content"][1] == o[2]["content"][0]
    assert m[3]["content"] == [{"type": "text", "text": "ok"}]
    # --dry-run writes nothing and lists the fixes on stdout
    code, out, _ = run(capsys, "repair", str(src), "--dry-run")
    assert code == 0 and "messages.1: unanswered_tool_use: answer_tool_use" in out
    assert "messages.3: empty_text_block: drop_block" in out


def test_bare_messages_stay_messages(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    msgs = [
        {"role": "user", "content": "hi"},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "gone", "content": "x"}],
        },
        {"role": "assistant", "content": "ok"},
    ]
    src = tmp_path / "m.json"
    src.write_text(json.dumps(msgs))
    dst = tmp_path / "out.json"
    assert run(capsys, "repair", str(src), "-o", str(dst))[0] == 0
    assert json.loads(dst.read_text()) == [msgs[0], msgs[2]]
    assert run(capsys, "inspect", str(dst))[0] == 0


def test_unfixable_and_unreadable(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    code, _, err = run(capsys, "repair", str(bad))
    assert code == 2 and "invalid JSON" in err and "Traceback" not in err
    body = {
        "model": "m",
        "max_tokens": 5,
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_result", "tool_use_id": "x", "content": "r"}],
            },
        ],
    }
    src = tmp_path / "u.json"
    src.write_text(json.dumps(body))
    code, out, err = run(capsys, "repair", str(src), "--json")
    assert code == 1
    report = json.loads(out)
    assert report["unfixable"][0]["code"] == "tool_result_in_assistant"
    assert "messages.1: tool_result_in_assistant: no safe fix" in err
    (tmp_path / "file").write_text("")
    code, _, err = run(capsys, "repair", str(src), "-o", str(tmp_path / "file" / "x.json"))
    assert code == 2 and "cannot write" in err
    code, _, err = run(capsys, "repair", str(src), "-o", str(tmp_path / "\0.json"))
    assert code == 2 and "cannot write" in err


def test_inserted_answer_in_a_ctxview_session_renumbers_the_transcript(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from ctxview.core.context import ConversationContext
    from ctxview.core.transcript import Transcript
    from ctxview.sessions.store import save_session, session_document

    ctx = ConversationContext(max_context_messages=10)
    tr = Transcript(ctx)
    ctx.add_user_message("hi")
    ctx.add_assistant_message([{"type": "tool_use", "id": "t1", "name": "f", "input": {}}])
    ctx.add_message({"role": "system", "content": "be brief"})
    ctx.add_assistant_message([{"type": "text", "text": "done"}])
    src = tmp_path / "s.json"
    save_session(src, session_document(ctx, tr))
    assert run(capsys, "inspect", str(src))[0] == 1
    dst = tmp_path / "o.json"
    assert run(capsys, "repair", str(src), "-o", str(dst))[0] == 0
    code, after = _window(capsys, dst)
    assert code == 0 and after["window"]["ids"] == [0, 1, 2, 3, 4]
    recs = json.loads(dst.read_text())["transcript"]
    assert recs[2]["message"]["content"][0]["content"] == INTERRUPTED
    assert recs[3]["message"]["role"] == "system"


def test_repair_and_diff_json_on_an_unreadable_file_print_one_error_object(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """As ``inspect --json``: scripts parse stdout, so a file that cannot be read gives
    ``{"file", "error", "exit": 2}`` there (the one line on stderr too)."""
    missing = tmp_path / "missing.json"
    code, out, err = run(capsys, "repair", str(missing), "--json")
    assert code == 2
    obj = json.loads(out)
    assert obj["exit"] == 2 and obj["file"] == str(missing) and "no such file" in obj["error"]
    assert "no such file" in err
    code, out, err = run(capsys, "diff", str(SAMPLES / "agent_loop.json"), str(missing), "--json")
    assert code == 2
    obj = json.loads(out)
    assert obj["exit"] == 2 and obj["b"] == str(missing) and "no such file" in obj["error"]


def test_repair_names_its_output_with_control_characters_visible(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The ``wrote OUT`` line goes to a terminal: an escape sequence in the output's name is shown,
    never sent (as export's ``wrote`` line and every error line do)."""
    dst = tmp_path / "out\x1b]0;pwned\x07.json"
    code, _, err = run(capsys, "repair", str(SAMPLES / "agent_loop.json"), "-o", str(dst))
    assert code == 0 and dst.exists()
    assert "\x1b" not in err and "\x07" not in err
    assert "wrote " in err and "]0;pwned" in err


def _transcript_line(k: int, message: Any) -> dict[str, Any]:
    role = message.get("role") if isinstance(message, dict) else "user"
    return {
        "type": role if role in ("user", "assistant") else "user",
        "uuid": f"u{k}",
        "parentUuid": f"u{k - 1}" if k else None,
        "sessionId": "s",
        "timestamp": f"2025-01-01T00:00:{k % 60:02d}Z",
        "message": {"id": f"m{k}", "model": "claude-sonnet-4-5", **message}
        if role == "assistant"
        else message,
    }


def test_repair_output_always_reads_again(capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever a file holds (damaged loops, blocks whose type or text is an object, as a
    request body or a Claude Code transcript), what ``repair`` writes is a file ``inspect``
    reads: it exits 0 or 1 on it, never 2 (unreadable)."""
    import tempfile

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    from tests.support.agentgen import damaged_loops

    odd_blocks = st.sampled_from(
        [
            {"type": {"an": "object"}, "text": "x"},
            {"type": "text", "text": {}},
            {"type": "text", "text": None},
            {"type": "tool_use", "id": "t", "name": "f", "input": "x"},
            {"type": "tool_result", "tool_use_id": "t", "content": {"an": "object"}},
            "a string",
        ]
    )

    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(
        msgs=damaged_loops(compaction=False), odd=st.lists(odd_blocks, max_size=2), data=st.data()
    )
    def check(msgs: list[Any], odd: list[Any], data: Any) -> None:
        if odd and msgs:
            k = data.draw(st.integers(0, len(msgs) - 1))
            content = msgs[k].get("content")
            msgs[k]["content"] = [*(content if isinstance(content, list) else []), *odd]
        with tempfile.TemporaryDirectory() as tmp:
            body = Path(tmp) / "body.json"
            body.write_text(json.dumps({"model": "m", "max_tokens": 5, "messages": msgs}))
            lines = Path(tmp) / "t.jsonl"
            lines.write_text(
                "".join(json.dumps(_transcript_line(k, m)) + "\n" for k, m in enumerate(msgs))
            )
            for src in (body, lines):
                out = Path(tmp) / f"{src.stem}.repaired.json"
                code, _, err = run(capsys, "repair", str(src), "-o", str(out))
                assert "Traceback" not in err
                if code == 2:  # the input itself is unreadable: nothing written
                    assert not out.exists()
                    continue
                code, _, err = run(capsys, "inspect", str(out))
                assert code in (0, 1), err

    check()
