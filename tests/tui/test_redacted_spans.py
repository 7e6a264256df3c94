"""Redacted spans (``[REDACTED:kind]``) stand out in the timeline and the detail pane."""

from __future__ import annotations

import json
from pathlib import Path

from rich.style import Style

from tests.support.apphelp import make_app, settle

MARKED = Style.parse("bold reverse")


def _session(tmp_path: Path) -> str:
    body = {
        "model": "claude-test",
        "max_tokens": 64,
        "messages": [
            {"role": "user", "content": "[REDACTED:jwt] or [REDACTED:x]"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t1", "name": "env", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "HOME=/root"}],
                    }
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t2",
                        "name": "login",
                        "input": {"pw": "[REDACTED:url-password]"},
                    },
                ],
            },
        ],
    }
    path = tmp_path / "redacted.json"
    path.write_text(json.dumps(body))
    return str(path)


def _marked(style: Style) -> bool:
    return bool(style.bold and style.reverse)


async def test_a_redaction_marker_is_marked_in_the_timeline_and_the_detail(tmp_path: Path) -> None:
    app = make_app(_session(tmp_path))
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(pilot)
        tl = app.timeline
        rows = [list(tl.render_line(y)) for y in range(tl.size.height)]
        row = next(r for r in rows if "[REDACTED:jwt] or" in "".join(s.text for s in r))
        marked = [s.text for s in row if s.style is not None and _marked(s.style)]
        assert marked == ["[REDACTED:jwt]", "[REDACTED:x]"]
        # the text around them is not marked
        plain = [s for s in row if s.text.startswith(" or")]
        assert plain and not _marked(plain[0].style)
        app.timeline.cursor = app.model.row_of(0)
        await settle(pilot)
        assert _marked_in_detail(app) == ["[REDACTED:jwt]", "[REDACTED:x]"]
        # a tool input, shown as JSON
        app.timeline.cursor = app.model.row_of(3)
        await settle(pilot)
        assert _marked_in_detail(app) == ['"[REDACTED:url-password]"'[1:-1]]


def _reversed(style: object) -> bool:
    """A span's style, a string or a Style object, reverses the colours."""
    return "reverse" in style if isinstance(style, str) else bool(getattr(style, "reverse", False))


def _marked_in_detail(app: object) -> list[str]:
    """The texts the detail pane shows reversed (its Statics hold a Text or a Content)."""
    found: list[str] = []
    for w in app.detail.query("Static"):  # type: ignore[attr-defined]
        shown = w.visual
        plain = shown.plain
        found += [plain[sp.start : sp.end] for sp in shown.spans if _reversed(sp.style)]
    return found
