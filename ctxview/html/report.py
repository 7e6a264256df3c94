"""The report's data, taken from the session and request model, and the page that shows it.

What the page shows is what ``inspect --json`` (the verdict, the window), ``requests --json``
(each request, the sub-agents, the totals) and ``compare --json`` computed, handed in as those
objects; each message's status, tokens and row words are the session's (``Session.status``,
``Session.message_estimate``, ``sessions.rowtext``), as the terminal's timeline shows them.

Redaction comes before anything else is derived from the messages: a row's preview is cut from
redacted text, so a secret cut in half by the preview is never left for the detector to miss.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxview.html.embed import script_json, shown
from ctxview.html.page import page
from ctxview.sessions.rowtext import row_text

if TYPE_CHECKING:
    from ctxview.core.redact import Redactions
    from ctxview.sessions.session import Session

#: characters of a row's preview in the report (the detail shows the whole message)
PREVIEW = 100


def build_report(
    rep: Session,
    summary: Mapping[str, Any],
    requests: Mapping[str, Any],
    compare: Mapping[str, Any] | None = None,
    *,
    redact: bool = True,
    version: str = "",
) -> tuple[str, Redactions | None]:
    """(the HTML page, what was redacted; None with ``redact`` False) for a replayed session:
    ``summary`` is ``inspect --json``'s object for it, ``requests`` ``requests --json``'s,
    ``compare`` ``compare --json``'s (None: no compare table)."""
    records = rep.transcript.records
    messages: list[Any] = [r.message for r in records]
    rest = {
        "verdict": _verdict(summary),
        "requests": _requests(requests),
        "agents": requests.get("agents", []),
        "notes": requests.get("notes", []),
        "ledger": [c.to_dict() for c in rep.ledger()],
        "compare": None if compare is None else dict(compare),
        "file": summary["file"],
    }
    redactions = None
    if redact:
        from ctxview.core.redact import redact_value

        messages, redactions = redact_value(messages)
        rest, more = redact_value(rest)
        redactions.merge(more)
    estimate = rep.message_estimate()
    rows = []
    for r, message in zip(records, messages, strict=True):
        role, blocks, preview, error = row_text(message, r.meta)
        rows.append(
            [
                role,
                blocks,
                preview[:PREVIEW],
                # tokens of what was sent (a result a microcompaction cleared: cleared; a hosted
                # search at what the file's usage measured), not of the redacted text
                rep.sent_tokens(r.id, r.message, estimate),
                rep.status(r.id),
                1 if error else 0,
                r.added_step,
                r.evicted_step,
            ]
        )
    data = {
        **rest,
        "ctxview": version,
        "format": summary["format"],
        "provider": summary.get("provider"),  # a reader of another provider's files says so
        "mode": summary["mode"],
        "strategy": summary["strategy"],
        "max_context_messages": summary["max_context_messages"],
        "model": requests.get("model"),
        "window": {
            k: summary["window"][k] for k in ("size", "estimated_tokens", "token_breakdown")
        },
        "evicted": len(summary["evicted"]),
        "redactions": None if redactions is None else redactions.to_json(),
        "rows": rows,
    }
    title = f"ctxview report · {summary['file']}"
    if redactions is not None:
        title = redact_value(title)[0]  # the file's name may itself hold a secret
    html = page(
        title=shown(title),
        data=script_json(shown(data)),
        messages=script_json(shown(messages)),
    )
    return html, redactions


def _verdict(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The protocol verdict of the window: its problems, each with the message it is about
    (``index`` is a position in the window: -1, the request's own fields), and the fixes."""
    ids = summary["window"]["ids"]
    problems = [
        {**p, "message_id": ids[p["index"]] if 0 <= p["index"] < len(ids) else None}
        for p in summary["problems"]
    ]
    return {
        "errors": sum(1 for p in problems if p["severity"] == "error"),
        "problems": problems,
        "fixes": summary["fixes"],
    }


#: the columns of the request table the page draws its chart from, in ``requests --json``'s
#: words (``last_id``: the newest message the request sent; ``break``: its cache break's reason)
REQUEST_COLUMNS = (
    "index",
    "agent",
    "last_id",
    "window_size",
    "input_tokens",
    "cache_read",
    "cache_write",
    "uncached",
    "cost_usd",
    "break",
    "break_position",
    "api_reason",
    "timestamp",
)


def _requests(report: Mapping[str, Any]) -> dict[str, Any]:
    """``requests --json``'s requests as columns (a list per field: 50,000 requests do not
    repeat every key 50,000 times), with its totals."""
    reqs = report["requests"]
    breaks = [r["cache_break"] or {} for r in reqs]
    columns: dict[str, list[Any]] = {
        "index": [r["index"] for r in reqs],
        "agent": [r["agent"] for r in reqs],
        "last_id": [r["message_ids"][-1] if r["message_ids"] else None for r in reqs],
        "break": [b.get("reason") for b in breaks],
        "break_position": [b.get("position") for b in breaks],
        "api_reason": [b.get("api_reason") for b in breaks],
    }
    for key in REQUEST_COLUMNS:
        if key not in columns:
            columns[key] = [r[key] for r in reqs]
    return {"columns": columns, "totals": report["totals"]}
