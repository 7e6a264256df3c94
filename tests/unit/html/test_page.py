"""The report's page: its placeholders filled once, and a Content Security Policy that lets its
own script and style run and nothing else be fetched or run."""

from __future__ import annotations

import base64
import hashlib
import re

from ctxview.html.page import page


def _inline(html: str, tag: str) -> str:
    m = re.search(rf"<{tag}>(.*?)</{tag}>", html, re.S)
    assert m is not None
    return m.group(1)


def test_a_value_holding_a_placeholder_is_not_filled_again() -> None:
    html = page(title="t", data='{"x": "{{messages}} {{js}}"}', messages="[1]")
    assert (
        '<script type="application/json" id="ctxview-data">{"x": "{{messages}} {{js}}"}</script>'
        in html
    )
    assert '<script type="application/json" id="ctxview-messages">[1]</script>' in html


def test_the_title_is_text() -> None:
    html = page(title="<b>a & b</b>", data="{}", messages="[]")
    assert "<title>&lt;b&gt;a &amp; b&lt;/b&gt;</title>" in html


def test_the_policy_allows_the_pages_own_script_and_style_by_hash_and_fetches_nothing() -> None:
    html = page(title="t", data="{}", messages="[]")
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    assert policy is not None
    rules = dict(r.strip().split(" ", 1) for r in policy.group(1).replace("&#x27;", "'").split(";"))

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert rules["default-src"] == "'none'"
    assert rules["script-src"] == digest(_inline(html, "script"))
    assert rules["style-src"] == digest(_inline(html, "style"))
    assert not re.search(r'(src|href)="(https?:)?//', html)  # nothing from elsewhere
