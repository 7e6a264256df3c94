"""Reading back what an HTML report embeds (its data and its messages, as the page's script
reads them)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def embedded(path: Path, what: str = "data") -> Any:
    """The JSON of the report's ``ctxview-data`` (or ``ctxview-messages``) script element."""
    html = path.read_text(encoding="utf-8")
    m = re.search(
        rf'<script type="application/json" id="ctxview-{what}">(.*?)</script>', html, re.S
    )
    assert m is not None, f"no ctxview-{what} element in {path}"
    return json.loads(m.group(1))


#: a message list with what a hostile session holds: markup, a script's end, controls, bidi
HOSTILE = [
    {
        "role": "user",
        "content": "</script><script>window.pwned = 1</script><img src=x onerror=window.pwned=2>",
    },
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "\x1b]0;title\x07 \u202egnp.exe <!-- {{messages}}"},
            {
                "type": "tool_use",
                "id": "toolu_1",
                "name": "<b>Bash</b>",
                "input": {"cmd": "echo '</script>'"},
            },
        ],
    },
    {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok \u2028 done"}],
    },
    {"role": "assistant", "content": "done"},
]
