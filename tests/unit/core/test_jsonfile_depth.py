"""Nesting limits of ``ctxview.core.jsonfile``: a big text, parsed under a recursion limit for
speed, is refused at the same depth as a small one, whatever the stack it is parsed from."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from ctxview.core import jsonfile


class _Through:
    """Calls ``fn`` under ``levels`` class instantiations: each is a C call (``type.__call__``)
    that counts against the recursion limit and shows no frame of its own."""

    def __init__(self, levels: int, fn: Callable[[], object]) -> None:
        self.value = _Through(levels - 1, fn).value if levels else fn()


@pytest.mark.parametrize("hidden", [8, 0])
def test_a_big_text_one_level_too_deep_is_refused_whatever_was_parsed_first(hidden: int) -> None:
    """The bounded parse of a big text (a megabyte and more) measures the parser's recursion
    overhead where it parses: a big text first parsed under C calls must not leave a limit
    that lets one nested a level too deep through later."""
    pad = " " * jsonfile.BOUNDED_MIN_CHARS

    def nested(levels: int) -> str:
        return "[" * levels + pad + "]" * levels

    deepest_allowed = jsonfile.MAX_DEPTH + 1
    assert _Through(hidden, lambda: jsonfile.loads_checked(nested(deepest_allowed))).value
    with pytest.raises(ValueError, match="nested more than"):
        jsonfile.loads_checked(nested(deepest_allowed + 1))
    with pytest.raises(ValueError, match="nested more than"):
        _Through(hidden, lambda: jsonfile.loads_checked(nested(deepest_allowed + 1)))
