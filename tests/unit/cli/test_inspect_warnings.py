"""``inspect --json`` carries what the reader says of the file (``warnings``), as the text view
prints it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import run


def test_the_readers_warnings_are_in_inspects_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    body = {
        "model": "gpt-5",
        "previous_response_id": "resp_1",
        "input": [{"role": "user", "content": "and then?"}],
    }
    path = tmp_path / "body.json"
    path.write_text(json.dumps(body))
    code, out, _ = run(capsys, "inspect", str(path), "--json")
    assert code == 0
    said = "this request continues a stored response (previous_response_id)"
    (warning,) = json.loads(out)["warnings"]
    assert warning.startswith(said)
    code, out, _ = run(capsys, "inspect", str(path))
    assert said in " ".join(out.split())
