"""The page around the report's data: one HTML file holding its style, its script and its data.

Nothing is fetched: the style and the script are inline, and the page's Content Security Policy
(``default-src 'none'``) forbids every request besides, so a browser opening it from a mail
attachment asks no server for anything. The policy allows the page's own script and style by
their hashes, not any inline script: markup that reached the page some other way would not run.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
from functools import cache
from importlib import resources


@cache
def _asset(name: str) -> str:
    return resources.files("ctxview.html").joinpath(name).read_text(encoding="utf-8")


def _hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def page(*, title: str, data: str, messages: str) -> str:
    """The HTML file: ``title`` (plain text), ``data`` and ``messages`` (JSON made safe for a
    script element, ``embed.script_json``)."""
    css = _asset("report.css")
    js = _asset("report.js")
    policy = (
        f"default-src 'none'; script-src {_hash(js)}; style-src {_hash(css)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    values = {
        "policy": html.escape(policy),
        "title": html.escape(title),
        "css": css,
        "js": js,
        "data": data,
        "messages": messages,
    }
    # one pass over the template: what a value holds (session text) is never read as a
    # placeholder
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], TEMPLATE)


_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")

TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{{policy}}">
<meta name="color-scheme" content="light dark">
<link rel="icon" href="data:,">
<title>{{title}}</title>
<style>{{css}}</style>
</head>
<body>
<header>
  <h1>ctxview report <span id="file"></span></h1>
  <p id="meta"></p>
  <p id="redaction"></p>
</header>
<noscript><p>This report draws its timeline and chart with the script inside this file:
allow scripts for it (nothing is fetched).</p></noscript>
<section id="verdict-section" aria-labelledby="verdict-title">
  <h2 id="verdict-title">Protocol: the next request</h2>
  <p id="verdict"></p>
  <ul id="problems"></ul>
  <ul id="fixes"></ul>
</section>
<section id="figures-section" aria-label="figures">
  <dl id="figures"></dl>
</section>
<section id="timeline-section" aria-labelledby="timeline-title">
  <h2 id="timeline-title">Timeline</h2>
  <div class="toolbar screen-only">
    <span id="legend"></span>
    <label><input type="checkbox" id="show-evicted" checked> evicted rows</label>
    <label>go to # <input type="number" id="goto" min="0" size="7"></label>
    <span class="hint">j / k, arrows, g / G: move · click a row: its blocks</span>
  </div>
  <div class="split">
    <div class="timeline-box">
      <div class="row head" aria-hidden="true"><span class="c-id">#</span><span class="c-role">role</span><span class="c-blocks">blocks</span><span class="c-preview">preview</span><span class="c-tokens">tokens</span><span class="c-status">status</span></div>
      <div id="timeline" tabindex="0" role="listbox" aria-label="messages"><div id="spacer"></div><div id="rows"></div></div>
      <div id="print-rows" class="print-only"></div>
    </div>
    <aside id="detail" aria-live="polite"></aside>
  </div>
</section>
<section id="requests-section" aria-labelledby="requests-title">
  <h2 id="requests-title">Requests</h2>
  <div class="toolbar screen-only">
    <label>agent <select id="agent"></select></label>
    <span class="key k-read">cache read</span><span class="key k-write">cache write</span><span class="key k-uncached">uncached</span><span class="key k-cost">cost</span><span class="key k-break">cache break</span>
  </div>
  <div id="chart-box"><canvas id="chart" height="240"></canvas><div id="tip" hidden></div></div>
  <p id="totals"></p>
  <div id="request-detail"></div>
  <h3>Cache breaks</h3>
  <div id="breaks"></div>
</section>
<section id="ledger-section" aria-labelledby="ledger-title">
  <h2 id="ledger-title">Compaction ledger</h2>
  <div id="ledger"></div>
</section>
<section id="agents-section" aria-labelledby="agents-title">
  <h2 id="agents-title">Sub-agents</h2>
  <div id="agents"></div>
</section>
<section id="compare-section" aria-labelledby="compare-title" hidden>
  <h2 id="compare-title">Strategies compared</h2>
  <div id="compare"></div>
</section>
<footer><p id="notes"></p><p id="made"></p></footer>
<script type="application/json" id="ctxview-data">{{data}}</script>
<script type="application/json" id="ctxview-messages">{{messages}}</script>
<script>{{js}}</script>
</body>
</html>
"""
