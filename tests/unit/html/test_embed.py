"""Data put into the report's page: JSON a ``<script>`` element cannot be broken out of, and
strings whose controls are made visible."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxview.html.embed import script_json, shown

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_script_json_reads_back_and_holds_nothing_a_script_element_parses(value: Any) -> None:
    text = script_json(value)
    assert json.loads(text) == value
    for unsafe in ("<", ">", "&", "\u2028", "\u2029"):
        assert unsafe not in text


def test_a_closing_script_tag_in_the_session_stays_inside_the_string() -> None:
    text = script_json({"t": "</script><script>alert(1)</script><!-- &amp;"})
    assert text == (
        '{"t": "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e'
        '\\u003c!-- \\u0026amp;"}'
    )


def test_shown_makes_controls_and_bidi_overrides_visible_in_keys_and_values() -> None:
    value = {"a\u202eb": ["\x1b[31mred", {"k": "x\u2066y"}], "n": 3, "t": True, "z": None}
    assert shown(value) == {
        "a⟨U+202E⟩b": ["␛[31mred", {"k": "x⟨U+2066⟩y"}],
        "n": 3,
        "t": True,
        "z": None,
    }
    assert value["a\u202eb"][0] == "\x1b[31mred"  # the input is not changed


def test_shown_returns_what_holds_no_control_as_it_is() -> None:
    clean = [{"role": "user", "content": [{"type": "text", "text": "naïve ✓"}]}, 3, None]
    assert shown(clean) is clean
    dirty = [clean[0], {"t": "a\x1bb"}]
    out = shown(dirty)
    assert out[0] is clean[0] and out[1] == {"t": "a␛b"} and dirty[1] == {"t": "a\x1bb"}
