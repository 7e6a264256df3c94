"""Reading a session file a line at a time (``ctxview.core.jsonfile.TextFile``): the same lines
and the same refusals as reading it whole, whatever the chunk size, and the start that tells a
JSONL file from a JSON one."""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.core import jsonfile
from ctxview.core.jsonfile import SessionError, head_is_enough, open_text, read_text


def _whole(path: Path) -> list[tuple[int, str]] | str:
    try:
        return list(enumerate(read_text(str(path), 1 << 30).split("\n"), start=1))
    except SessionError as exc:
        return str(exc)


def _streamed(path: Path) -> list[tuple[int, str]] | str:
    try:
        with open_text(str(path), 1 << 30) as source:
            return list(source.lines())
    except SessionError as exc:
        return str(exc)


PIECES = [b"{}", b"\n", b"\r\n", b" ", b"\xc3\xa9", b"\xe2\x86\x92", b"\xe2", b"\xff", b"x"]


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    parts=st.lists(st.sampled_from(PIECES), min_size=1, max_size=30),
    bom=st.booleans(),
    chunk=st.sampled_from([1, 2, 3, 7, 1 << 20]),
)
def test_lines_are_the_whole_text_split_whatever_the_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts: list[bytes], bom: bool, chunk: int
) -> None:
    # every line, the cut last character dropped, invalid UTF-8 named at the same line and
    # byte offset as when the file is decoded whole
    monkeypatch.setattr(jsonfile, "CHUNK_BYTES", chunk)
    path = tmp_path / "f.jsonl"
    path.write_bytes((codecs.BOM_UTF8 if bom else b"") + b"".join(parts))
    assert _streamed(path) == _whole(path)


def test_invalid_utf8_far_into_a_file_is_refused_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    good = b'{"type": "user"}\n'
    path.write_bytes(good * 100_000 + b'{"x": "\xff"}\n' + good)
    with open_text(str(path), 1 << 30) as source:
        assert not source.whole  # the start alone was decoded
        with pytest.raises(SessionError) as exc:
            for _ in source.lines():
                pass
    assert str(exc.value) == _whole(path)
    assert "invalid byte 0xff at line 100001, byte offset 1700007" in str(exc.value)


def test_a_file_grown_past_the_cap_while_read_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_bytes(b"{}\n" * 10)
    with open_text(str(path), 40) as source:
        path.write_bytes(b"{}\n" * 20)  # a writer appends after the open
        with pytest.raises(SessionError, match="grew while being read"):
            list(source.lines())


def test_the_start_holds_the_first_line_and_what_follows_it() -> None:
    pad = "x" * 300
    assert head_is_enough('{"a": 1}\n{"b": 2} ' + pad)
    assert not head_is_enough('{"a": 1}\n   \n ')  # what follows is still to come
    assert not head_is_enough('{"a": 1, "long": "' + pad)  # the first line goes on
    assert head_is_enough("[1, 2, " + pad)  # no JSONL, whatever follows
    assert not head_is_enough("\u3000\n  ")


def test_a_long_first_line_is_read_whole_before_the_format_is_told(tmp_path: Path) -> None:
    path = tmp_path / "long.jsonl"
    first = '{"type": "user", "pad": "' + "p" * 300_000 + '"}'
    path.write_text(first + "\n{}\n")
    with open_text(str(path), 1 << 30) as source:
        assert source.head.startswith(first + "\n{")
    path.write_text("[" + "1, " * 200_000 + "1]")  # one line, not "{": the start tells
    with open_text(str(path), 1 << 30) as source:
        assert len(source.head) < 100_000 and source.text() == path.read_text()
