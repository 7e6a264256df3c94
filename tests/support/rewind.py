"""A Claude Code rewind, made from a real transcript: what the file looks like after the user
pressed esc-esc, went back to an earlier prompt, edited it and went on.

Claude Code keeps every line it wrote: the abandoned branch stays in the file, and the edited
prompt is a new line whose ``parentUuid`` is the parent of the prompt it replaces; the responses
after it are new lines (new uuids, new ``message.id``, new tool ids) written later. ``rewound``
rebuilds exactly that from a real transcript: the turn starting at line ``prompt`` (and the lines
after it, up to ``upto``) stay as the abandoned branch; a copy of them, edited and re-linked, is
appended with later timestamps.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.paths import ACCEPTANCE

TOOL_HEAVY = ACCEPTANCE / "claude_code" / "spotter_tool_heavy.jsonl"


def _ts(s: str) -> datetime:
    return datetime.fromisoformat(s.replace("Z", "+00:00"))


def _fmt(t: datetime) -> str:
    return t.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"


def rewound(
    source: Path = TOOL_HEAVY,
    *,
    prompt: int = 25,
    upto: int = 38,
    edit: str = " (edited: only the scrollback, please)",
    pause: float = 60.0,
) -> list[dict[str, Any]]:
    """The records of ``source`` with the turn at line index ``prompt`` rewound and edited: lines
    ``prompt..upto-1`` are copied after the file's end (new uuids, message ids and tool ids,
    timestamps shifted to ``pause`` seconds after the last line), the copy of the prompt gets
    ``edit`` appended to its text."""
    recs = [json.loads(s) for s in source.read_text().splitlines() if s.strip()]
    last = max(_ts(r["timestamp"]) for r in recs if isinstance(r.get("timestamp"), str))
    start = _ts(recs[prompt]["timestamp"])
    shift = last + timedelta(seconds=pause) - start
    new_uuid: dict[str, str] = {}
    out = list(recs)
    for k in range(prompt, upto):
        r = recs[k]
        if r.get("type") not in ("user", "assistant", "progress", "system"):
            continue  # snapshots and queue operations are not part of the tree
        text = json.dumps(r)
        # new tool ids and message ids: the responses of the new branch are new API calls
        text = re.sub(r'"(toolu_[A-Za-z0-9]+)"', r'"\1R"', text)
        text = re.sub(r'"(msg_[A-Za-z0-9]+)"', r'"\1R"', text)
        c = json.loads(text)
        if r.get("uuid"):
            new_uuid[r["uuid"]] = r["uuid"][:-4] + "beef"
            c["uuid"] = new_uuid[r["uuid"]]
        parent = r.get("parentUuid")
        c["parentUuid"] = new_uuid.get(parent, parent) if parent else parent
        for key in ("sourceToolAssistantUUID",):
            if key in c:
                c[key] = new_uuid.get(c[key], c[key])
        if isinstance(r.get("timestamp"), str):
            c["timestamp"] = _fmt(_ts(r["timestamp"]) + shift)
        if k == prompt:
            content = c["message"]["content"]
            if isinstance(content, str):
                c["message"]["content"] = content + edit
            else:
                content[0]["text"] += edit
        out.append(c)
    return out


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
