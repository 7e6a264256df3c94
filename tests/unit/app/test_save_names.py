"""The name a save dialog proposes: the real name it saves under, safe to show."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxview.app.files import safe_path


def test_a_plain_path_is_proposed_as_it_is() -> None:
    assert safe_path("/home/me/ünï code.jsonl") == "/home/me/ünï code.jsonl"


@pytest.mark.parametrize(
    ("name", "safe"),
    [
        ("a\x1b[2Jb.jsonl", "a_[2Jb.jsonl"),
        ("line\nbreak.json", "line_break.json"),
        ("bidi\u202egpj.json", "bidi_gpj.json"),
        (os.fsdecode(b"byte\xff.json"), "byte_.json"),
    ],
)
def test_a_name_a_terminal_would_act_on_is_replaced_in_place(name: str, safe: str) -> None:
    assert safe_path(f"/tmp/x/{name}") == f"/tmp/x/{safe}"


def test_a_folder_that_cannot_be_shown_gives_way_to_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert safe_path("/tmp/\x1b]0;x\x07/s.jsonl") == str(tmp_path / "s.jsonl")
