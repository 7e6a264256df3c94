"""``ctxview report FILE -o report.html``: what the file holds is what inspect, requests and
compare say of the session; secrets are redacted unless --no-redact; the output is checked as
every writing command's is; a folder is not a session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.support.cli import one_line_error, run
from tests.support.html_report import HOSTILE, embedded
from tests.support.paths import ACCEPTANCE, SAMPLES
from tests.support.secrets import secrets

AGENT = SAMPLES / "agent_loop.json"


def test_the_report_shows_what_inspect_and_requests_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", str(AGENT), "-o", str(out))
    assert code == 1  # as inspect: the window would be rejected
    assert err.startswith(f"wrote {out} (") and "27 messages; redacted 0 secrets" in err
    data = embedded(out)
    _, inspect_out, _ = run(capsys, "inspect", str(AGENT), "--json")
    inspected = json.loads(inspect_out)
    statuses = [row[4] for row in data["rows"]]
    evicted = [e["id"] for e in inspected["evicted"]]
    assert [i for i, s in enumerate(statuses) if s == "evicted"] == evicted
    assert statuses[inspected["pinned_id"]] == "pinned"
    assert data["verdict"]["errors"] == sum(p["severity"] == "error" for p in inspected["problems"])
    assert data["window"]["estimated_tokens"] == inspected["window"]["estimated_tokens"]
    _, requests_out, _ = run(capsys, "requests", str(AGENT), "--json")
    requested = json.loads(requests_out)
    columns = data["requests"]["columns"]
    assert columns["input_tokens"] == [r["input_tokens"] for r in requested["requests"]]
    assert columns["cost_usd"] == [r["cost_usd"] for r in requested["requests"]]
    assert data["requests"]["totals"] == requested["totals"]
    assert data["compare"] is None
    from ctxview.sessions import load_session

    assert embedded(out, "messages") == load_session(str(AGENT)).messages


def test_another_apis_session_is_priced_as_requests_prices_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Gemini session's report has the dollars ``requests`` gives it (its provider's prices),
    not "no price for model"."""
    path = ACCEPTANCE / "gemini_cli" / "aim_control_flash.json"
    out = tmp_path / "r.html"
    assert run(capsys, "report", str(path), "-o", str(out))[0] == 0
    _, requests_out, _ = run(capsys, "requests", str(path), "--json")
    totals = json.loads(requests_out)["totals"]
    assert totals["cost_usd"] and embedded(out)["requests"]["totals"] == totals


def test_compare_adds_the_strategy_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.html"
    run(capsys, "report", str(AGENT), "-o", str(out), "--compare")
    _, compare_out, _ = run(capsys, "compare", str(AGENT), "--json")
    compared = json.loads(compare_out)
    assert embedded(out)["compare"]["strategies"] == compared["strategies"]


def _session_with(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "s.json"
    p.write_text(
        json.dumps([{"role": "user", "content": text}, {"role": "assistant", "content": "ok"}])
    )
    return p


def test_secrets_are_redacted_by_default_and_counted_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    secret = next(s for s in secrets() if s.kind == "anthropic-key")
    session = _session_with(tmp_path, secret.text)
    out = tmp_path / "r.html"
    code, _, err = run(capsys, "report", str(session), "-o", str(out))
    assert code == 0
    html = out.read_text()
    assert secret.secret not in html and "[REDACTED:anthropic-key]" in html
    assert embedded(out)["redactions"]["counts"] == {"anthropic-key": 1}
    assert "redacted 1 secret (1 anthropic-key)" in err
    code, _, err = run(capsys, "report", str(session), "-o", str(out), "--no-redact")
    assert code == 0 and "not redacted (--no-redact)" in err
    assert secret.secret in out.read_text() and embedded(out)["redactions"] is None


def test_hostile_text_is_embedded_as_visible_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session = tmp_path / "hostile.json"
    session.write_text(json.dumps(HOSTILE))
    out = tmp_path / "r.html"
    run(capsys, "report", str(session), "-o", str(out))
    html = out.read_text()
    assert html.count("</script>") == 3  # the data, the messages and the page's own script
    for raw in ("\x1b", "\u202e", "\u2028", "<img", "<b>Bash"):
        assert raw not in html
    messages = embedded(out, "messages")
    assert messages[0]["content"].startswith("</script><script>window.pwned")
    assert messages[1]["content"][0]["text"].startswith("␛]0;title␇ ⟨U+202E⟩gnp.exe")


def test_the_input_is_never_replaced(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    session = tmp_path / "in.json"
    shutil.copy(AGENT, session)
    before = session.read_bytes()
    code, _, err = run(capsys, "report", str(session), "-o", str(session))
    assert code == 2 and "is the input file" in one_line_error(err)
    assert session.read_bytes() == before


def test_an_output_is_required(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "report", str(AGENT))
    assert code == 2
    assert one_line_error(err) == (
        f"ctxview: report {AGENT}: give the HTML file to write: -o report.html"
    )


def test_a_folder_without_requests_is_neither_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert code == 2 and "a folder without requests/ inside" in one_line_error(err)
    assert not (tmp_path / "r.html").exists()


def test_the_api_key_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Redaction off, or a key of no shape a detector knows: the key of the environment still
    never reaches the file."""
    key = "sk-ant-test-0123456789"
    session = _session_with(tmp_path, f"my key is {key}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", key)
    out = tmp_path / "r.html"
    for extra in ([], ["--no-redact"]):
        code, _, err = run(capsys, "report", str(session), "-o", str(out), *extra)
        assert code == 2 and "contains the ANTHROPIC_API_KEY value" in one_line_error(err)
        assert not out.exists()
