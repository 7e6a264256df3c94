"""Data put into a page: the session's strings made visible, and JSON that is safe inside a
``<script>`` element.

Session text is hostile: ``</script>`` in a message would end the element and run what follows;
``<!--`` would change how the parser reads the rest. Every ``<``, ``>`` and ``&`` in the JSON is
written as a ``\\u`` escape (legal only inside JSON strings, where these characters can occur),
and U+2028/U+2029 with the C1 controls and bidi overrides as ``json_text`` writes them. The
page's script reads the element's text with ``JSON.parse`` and puts every string on the page as
text (``textContent``), never as markup."""

from __future__ import annotations

from typing import Any

from ctxview.textfmt import json_text, visible


def script_json(value: Any) -> str:
    """``value`` as JSON text that can stand between ``<script type="application/json">`` and
    ``</script>`` whatever its strings hold."""
    # three scans of the text, not str.translate, which walks it a character at a time
    return json_text(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def shown(value: Any) -> Any:
    """A JSON value with every string (keys too) through ``visible``: controls and bidi
    overrides made visible symbols, as the terminal shows them. What holds none is returned as
    it is, not copied (a 100,000-message session is not held twice); the input is never
    changed."""
    t = type(value)
    if t is str:
        text = visible(value)
        return value if text == value else text
    if t is list:
        out: list[Any] | None = None
        for i, v in enumerate(value):
            s = shown(v)
            if s is not v:
                if out is None:
                    out = list(value)
                out[i] = s
        return value if out is None else out
    if t is dict:
        pairs = [(shown(k), shown(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    return value
